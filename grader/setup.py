"""The grader's set-up: before it configures a build, what the build needs must be there
(g++, binutils, CMake >= 3.25, Ninja, GoogleTest, Google Benchmark).

scripts/install-deps decides, the same for both README commands: `--check` says whether
anything is missing and whether this user can install it (root, or sudo without a password).
When it can, it installs (its output is shown: apt takes a while); when it cannot, the grader
stops before building, with one line naming what is missing and the one command that installs
it (exit 2), never a traceback. matplotlib is not needed to grade (only for --html, which says
so itself), so it never stops a grading here. Standard library only.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from grader.errors import EXIT_USAGE, GraderError

REPO = Path(__file__).resolve().parent.parent
INSTALL_DEPS = Path("scripts") / "install-deps"
TOOLS_BIN = Path("build") / "tools" / "venv" / "bin"   # PyPI's CMake, where apt's is too old
CHECK_TIMEOUT_S = 120
INSTALL_TIMEOUT_S = 1800

# install-deps --check's exit statuses
CHECK_OK, CHECK_INSTALLABLE, CHECK_NOT_HERE = 0, 1, 3

_MISSING = re.compile(r"^install-deps: missing: (.*)$", re.M)
_COMMAND = re.compile(r"^install-deps: install with(?: \(as root\))?: (.*)$", re.M)

_done: set = set()   # repositories whose set-up passed in this process


class SetupError(GraderError):
    """What the build needs is missing: nothing was graded, so the grading stops with this one
    line rather than a results table of labs that were never built."""

    def __init__(self, message: str):
        super().__init__(message, EXIT_USAGE)


def cmake_command(repo: Path = REPO) -> str | None:
    """The cmake the suite builds with: build/tools/venv's where install-deps put one (the one
    on PATH was too old), else PATH's; None when there is none."""
    tools = repo / TOOLS_BIN / "cmake"
    if os.access(tools, os.X_OK) and tools.is_file():
        return str(tools)
    return shutil.which("cmake")


def _script(repo: Path) -> list:
    return ["bash", str(repo / INSTALL_DEPS)]


def explain(output: str, returncode: int, again: str = "python3 -m grader grade") -> str:
    """One line from install-deps --check's output: what is missing and, last on the line (to
    copy), the one command that installs it; first what must be there before anything can be
    installed for you (nvcc on PATH, Python >= 3.11), in install-deps' own words."""
    first = [line.removeprefix("install-deps: needed first: ") for line in output.splitlines()
             if line.startswith("install-deps: needed first: ")]
    missing = _MISSING.search(output)
    command = _COMMAND.search(output)
    parts = list(first)
    if missing and command:
        what = "them" if ", " in missing.group(1) else "it"
        who = "" if first else ("This user cannot install packages (not root, no sudo without "
                                "a password). ")
        parts.append(f"missing {missing.group(1)}. {who}Install {what} with this one command, "
                     f"then run {again} again: {command.group(1)}")
        return "cannot build: " + "; ".join(parts)
    if missing:
        other = [line.removeprefix("install-deps: ") for line in output.splitlines()
                 if line.startswith("install-deps: ") and not line.startswith(
                     ("install-deps: missing", "install-deps: needed first: "))]
        parts.append(f"missing {missing.group(1)}" + (f" ({'; '.join(other)})" if other else ""))
    if not parts:
        parts.append(f"scripts/install-deps --check exited {returncode}: "
                     f"{output.strip()[-300:] or 'no output'}")
    return "cannot build: " + "; ".join(parts) + f". Then run {again} again."


def ensure_build_tools(repo: Path = REPO, log=None) -> str:
    """Checks (and, where this user can, installs) what building needs; returns the cmake to
    use. Raises SetupError (exit 2) with one line when something is missing that cannot be
    installed here. `log` receives install-deps' output while it installs (default: stderr).
    Done once per process."""
    if repo in _done:
        return _cmake_or_fail(repo)
    script = repo / INSTALL_DEPS
    if not script.is_file():
        # a copy of the grader without the script: leave it to CMake to say what it lacks
        _done.add(repo)
        return _cmake_or_fail(repo)
    check = _run_check(repo)
    installed = False
    if check.returncode == CHECK_INSTALLABLE:
        with _install_lock(repo):
            check = _run_check(repo)   # another grader may have installed it meanwhile
            if check.returncode == CHECK_INSTALLABLE:
                _install(repo, log or sys.stderr)
                installed = True
                check = _run_check(repo)
    if check.returncode != CHECK_OK:
        output = check.stdout + check.stderr
        missing = _MISSING.search(output)
        if installed and check.returncode == CHECK_INSTALLABLE and missing:
            raise SetupError(f"the set-up did not complete: after scripts/install-deps (its "
                             f"output is above) still missing: {missing.group(1)}")
        raise SetupError(explain(output, check.returncode))
    _done.add(repo)
    return _cmake_or_fail(repo)


def _cmake_or_fail(repo: Path) -> str:
    cmake = cmake_command(repo)
    if cmake is None:
        raise SetupError("'cmake' was not found on PATH: scripts/install-deps installs it "
                         "(see README.md, Requirements)")
    return cmake


def _run_check(repo: Path) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(_script(repo) + ["--check"], cwd=repo, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, errors="replace",
                              timeout=CHECK_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SetupError(f"scripts/install-deps --check could not run: {e}") from None


def _install(repo: Path, log) -> None:
    print("grader: setting up what the build needs (scripts/install-deps):", file=log, flush=True)
    try:
        proc = subprocess.Popen(_script(repo), cwd=repo, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
    except OSError as e:
        raise SetupError(f"scripts/install-deps could not run: {e.strerror}") from None
    timer = threading.Timer(INSTALL_TIMEOUT_S, proc.kill)   # a hung apt-get
    timer.start()
    try:
        with proc:
            for line in proc.stdout:
                print(f"  {line.rstrip()}", file=log, flush=True)
    finally:
        timer.cancel()
    if proc.returncode and proc.returncode < 0:
        raise SetupError(f"scripts/install-deps did not finish within {INSTALL_TIMEOUT_S} s: "
                         f"stopped")
    # Its verdict is the --check that follows.


class _install_lock:
    """One grader installs at a time (a batch starts several): an flock on
    build/tools/.install-lock, skipped where that cannot be created."""

    def __init__(self, repo: Path):
        self.path = repo / "build" / "tools" / ".install-lock"
        self.fd = None

    def __enter__(self):
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError:
            if self.fd is not None:
                os.close(self.fd)
            self.fd = None
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
        return False
