"""What every trusted process the grader starts (judges, the GPU probe) runs with.

A scrubbed environment: the grader's caller may have set GoogleTest flags (sharding, repeat,
filters) that would leave tests unrun, LABKIT_* settings that change what the harness does, or
LD_PRELOAD; none of it reaches a judge. A private working directory (mode 0700, removed
afterwards), so nothing a judge writes relative to its cwd lands where a submission or another
user could read or plant it. And the binaries are checked against the hashes taken right after
they were built (BinaryHashes) before each start.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from grader.errors import EXIT_INTERNAL, GraderError

_PASSED_THROUGH = ("PATH", "HOME", "TMPDIR", "CUDA_VISIBLE_DEVICES", "CUDA_HOME",
                   "LD_LIBRARY_PATH")
_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def scrubbed_env(extra: dict | None = None, environ=None) -> dict:
    """PATH, HOME, TMPDIR, CUDA_VISIBLE_DEVICES, CUDA_HOME, LD_LIBRARY_PATH and NVIDIA_* from
    the grader's environment where set, LANG=C.UTF-8, plus `extra`; nothing else."""
    environ = os.environ if environ is None else environ
    env = {k: environ[k] for k in _PASSED_THROUGH if environ.get(k)}
    env.update({k: v for k, v in environ.items() if k.startswith("NVIDIA_")})
    env.setdefault("PATH", _DEFAULT_PATH)
    env["LANG"] = "C.UTF-8"
    env.update(extra or {})
    return env


@contextlib.contextmanager
def private_dir(prefix: str = "labs-judge-"):
    """A fresh directory only this user can enter (mkdtemp makes it 0700), removed on exit."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        os.chmod(path, 0o700)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def find_sanitizer(environ=None) -> str | None:
    """compute-sanitizer: on PATH, else in $CUDA_HOME/bin, else in /usr/local/cuda/bin."""
    return _find_cuda_tool("compute-sanitizer", environ)


def find_profiler(environ=None) -> str | None:
    """Nsight Compute's ncu: on PATH, else in $CUDA_HOME/bin, else in /usr/local/cuda/bin."""
    return _find_cuda_tool("ncu", environ)


def _find_cuda_tool(name: str, environ=None) -> str | None:
    environ = os.environ if environ is None else environ
    found = shutil.which(name, path=environ.get("PATH", _DEFAULT_PATH))
    if found:
        return str(Path(found).resolve())
    candidates = []
    if environ.get("CUDA_HOME"):
        candidates.append(Path(environ["CUDA_HOME"]) / "bin" / name)
    candidates.append(Path("/usr/local/cuda/bin") / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c.resolve())
    return None


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class TamperedError(GraderError):
    """A binary differs from what the build produced: it must not be run."""

    def __init__(self, name: str):
        super().__init__(f"the {name} binary changed after it was built (tampering?): not run",
                         EXIT_INTERNAL)
        self.name = name


class BinaryHashes:
    """sha256 of each binary taken right after its build; verify() before each start.

    The worker runs the student's code as a separate process; should it reach the build tree
    (same user, no sandbox), a judge rewritten between two runs would give verdicts the student
    chose. A changed binary is never run."""

    def __init__(self):
        self._known = {}    # name -> (path, sha256)

    def record(self, name: str, path: Path) -> str:
        digest = file_sha256(path)
        self._known[name] = (Path(path), digest)
        return digest

    def digest(self, name: str) -> str:
        return self._known[name][1]

    def verify(self, *names: str) -> None:
        """Raises TamperedError naming the first binary that is gone or differs."""
        for name in names:
            path, digest = self._known[name]
            try:
                now = file_sha256(path)
            except OSError:
                now = None
            if now != digest:
                raise TamperedError(name)
