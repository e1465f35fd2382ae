"""The tools the policy check runs: binutils (nm, readelf, objdump, c++filt) with a time limit
and their whole output, and the small text helpers every rule uses."""

from __future__ import annotations

import os
import shutil

from grader import runner
from grader.errors import EXIT_INTERNAL, EXIT_USAGE, GraderError

TOOL_TIMEOUT_S = 120        # one nm / readelf / objdump / c++filt call
COMPILER_TIMEOUT_S = 300    # one preprocessor run of the student's file (nvcc -M, nvcc -cuda)
TOOL_OUTPUT_CAP = 256 * 1024 * 1024  # keep all of a tool's output: a cut listing could hide a name
DEFAULT_CUDA_ROOT = "/usr/local/cuda"


def cuda_tool_env(tool_path: str) -> dict:
    """The environment a CUDA tool (cuobjdump) runs in: the C locale, and its own folder first on
    PATH (it starts its siblings, such as nvdisasm, from there)."""
    return {"LC_ALL": "C",
            "PATH": os.path.dirname(tool_path) + os.pathsep + os.environ.get("PATH", "")}


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise GraderError(f"'{name}' was not found on PATH: the policy check needs GNU binutils "
                          f"(Debian/Ubuntu: apt-get install binutils)", EXIT_USAGE)
    return path


class ListingTooLarge(Exception):
    """A tool's listing of the student's object was longer than TOOL_OUTPUT_CAP: the rules
    cannot read all of it, so the object is refused (check_submission makes it a violation).
    A red team's lab 02 file (round 13) padded its machine code so that cuobjdump printed 318
    MB, and the instructions in the cut middle escaped every device rule."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def run_tool(args: list, what: str) -> str:
    proc = runner.run(args, TOOL_TIMEOUT_S, cap=TOOL_OUTPUT_CAP, env={"LC_ALL": "C"})
    if proc.timed_out:
        raise GraderError(f"policy check: {what} did not finish within {TOOL_TIMEOUT_S} s",
                          EXIT_INTERNAL)
    if proc.returncode != 0:
        raise GraderError(f"policy check: {what} failed: {proc.stderr.strip()[:500]}",
                          EXIT_INTERNAL)
    if proc.stdout_cut:
        raise ListingTooLarge(what)
    return proc.stdout


def lines(text: str) -> list:
    """A tool's listing as lines, split at newlines only. str.splitlines also splits at \\v,
    \\f, \\x1c-\\x1e, \\x85 and \\u2028/9, which a student's text (a PTX comment that
    cuobjdump -elf prints with the object's PTX, a symbol's name) can carry into a listing: a red
    team's vertical tabs forged a kernel's parameter size that way (round 14). A parser that
    reads a listing line by line reads it through this."""
    out = text.split("\n")
    return out[:-1] if out and out[-1] == "" else out


def real(path) -> str:
    return os.path.realpath(os.fspath(path))


def short(text: str, limit: int = 140) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."
