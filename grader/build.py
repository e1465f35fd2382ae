"""Builds a submission with CMake: the harness and tests once, the student's file per lab."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from grader import runner
from grader.errors import EXIT_USAGE, GraderError
from grader.results import BuildResult

CONFIGURE_TIMEOUT_S = 300
BUILD_TIMEOUT_S = 900


def find_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise GraderError(f"'{name}' was not found on PATH: install it (see README.md, Requirements)",
                          EXIT_USAGE)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stage_submission(submission: Path, lab: str, files: tuple, stage_dir: Path) -> dict:
    """Copies the lab's student files into stage_dir/<lab>/; returns name -> sha256.

    Raises GraderError naming what is missing. Files are written afresh (new mtime), so the
    build always recompiles exactly what is being graded."""
    src_dir = submission / lab
    missing = [f for f in files if not (src_dir / f).is_file()]
    if missing:
        raise GraderError(f"{lab}: the submission has no {', '.join(missing)} "
                          f"(looked in {src_dir})")
    dst_dir = stage_dir / lab
    dst_dir.mkdir(parents=True, exist_ok=True)
    hashes = {}
    for f in files:
        data = (src_dir / f).read_bytes()
        (dst_dir / f).write_bytes(data)
        hashes[f] = hashlib.sha256(data).hexdigest()
    return hashes


def configure(repo: Path, build_dir: Path, stage_dir: Path, labs: list) -> BuildResult:
    cmake = find_tool("cmake")
    args = [cmake, "-S", str(repo), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
            f"-DLABS_SUBMISSION_DIR={stage_dir}", f"-DLABS_ONLY={';'.join(labs)}",
            "-DLABS_WITH_SOLUTIONS=OFF", "-DLABS_TEST_SUBMISSION=OFF"]
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file() and shutil.which("ninja"):
        args += ["-G", "Ninja"]
    proc = runner.run(args, CONFIGURE_TIMEOUT_S)
    ok = proc.returncode == 0
    return BuildResult(ok=ok, seconds=proc.seconds,
                       log="" if ok else _trim(proc.output, 80),
                       hint="" if ok else "CMake could not configure the project: see the log")


def build_targets(build_dir: Path, targets: list, jobs: int | None = None) -> BuildResult:
    cmake = find_tool("cmake")
    args = [cmake, "--build", str(build_dir), "--target", *targets]
    if jobs:
        args += ["--parallel", str(jobs)]
    proc = runner.run(args, BUILD_TIMEOUT_S)
    if proc.timed_out:
        return BuildResult(ok=False, seconds=proc.seconds, log=_trim(proc.output, 40),
                           hint=f"the build did not finish within {BUILD_TIMEOUT_S} s")
    ok = proc.returncode == 0
    return BuildResult(ok=ok, seconds=proc.seconds, log="" if ok else _relevant_log(proc.output),
                       hint="" if ok else explain_build_failure(proc.output))


# GNU ld: "undefined reference to `f(int)'"; lld and mold: "undefined symbol: f(int)".
_UNDEFINED = re.compile(r"undefined reference to [`'‘]([^'’`]+)|undefined symbol: (.+)$", re.M)


def explain_build_failure(log: str) -> str:
    """One or two sentences a student can act on."""
    undefined = sorted({(a or b).strip() for a, b in _UNDEFINED.findall(log)})
    if undefined:
        return (f"link error: nothing defines {', '.join(undefined)}. Your file must define every "
                f"function declared in the lab's header with exactly that signature (same "
                f"parameter types, same name); do not rename or remove the launcher.")
    if re.search(r"multiple definition of", log):
        return "link error: a function is defined twice (in your file and in the harness?)"
    if re.search(r"\berror\b", log):
        return "your file does not compile: the first error is shown below (file:line: message)"
    return "the build failed: see the log below"


def _relevant_log(log: str) -> str:
    """The error lines, each with the two lines after it (nvcc's source line and caret)."""
    lines = log.splitlines()
    keep, i = [], 0
    while i < len(lines):
        line = lines[i]
        if re.search(r"\berror\b|undefined reference|undefined symbol|multiple definition", line,
                     re.IGNORECASE):
            keep.append(line)
            for extra in lines[i + 1:i + 3]:
                if re.search(r"\berror\b|^FAILED|^ninja|^\[", extra):
                    break
                keep.append(extra)
                i += 1
        i += 1
    return _trim("\n".join(keep) if keep else log, 60)


def readable(log: str, stage_dir: Path) -> str:
    """Build output in the student's terms: their file's path, CUDA's type names."""
    return (log.replace(str(stage_dir) + "/", "").replace("CUstream_st*", "cudaStream_t"))


def _trim(text: str, max_lines: int) -> str:
    lines = text.strip().splitlines()
    if len(lines) <= max_lines:
        return "\n".join(lines)
    return "\n".join(lines[:max_lines]) + f"\n[... {len(lines) - max_lines} more lines ...]"
