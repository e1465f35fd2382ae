"""The student's compile command, from the build's compile_commands.json, and what can be run
from it: the preprocessor that lists the files the source includes (-M), the host compiler's
view of the source (preprocess_host), and the include directories of the system and the CUDA
toolkit that the include rule (source_rules.py) accepts headers from."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path

from grader import runner
from grader.errors import EXIT_INTERNAL, GraderError
from grader.policy import tools
from grader.policy.tools import (COMPILER_TIMEOUT_S, DEFAULT_CUDA_ROOT, TOOL_OUTPUT_CAP,
                                 real)

# System include directories (besides the CUDA toolkit's, found from the compiler's path).
# /usr/local/include is NOT here: what lives there was installed by hand (GoogleTest and
# Google Benchmark built from source, say), and nothing in it is needed by a kernel file.
SYSTEM_INCLUDE_DIRS = ("/usr/include", "/usr/lib/gcc", "/usr/lib/llvm-*/lib/clang",
                       "/usr/lib/clang")

# Compiler options dropped from the compile command before running the preprocessor.
_DROP_WITH_VALUE = ("-o", "--output-file", "-MT", "-MF", "-MQ", "--dependency-output",
                    "--dependency-target-name", "--output-directory", "-odir")
_DROP = ("-c", "--compile", "-MD", "-MMD", "-MP", "-M", "-MM", "-E", "--preprocess",
         "--generate-dependencies", "--generate-nonsystem-dependencies",
         "--generate-dependencies-with-compile",
         "--generate-nonsystem-dependencies-with-compile", "-cuda", "--cuda")

_COMPILER_LAUNCHERS = ("ccache", "sccache", "distcc", "icecc")


def load(path: Path) -> list:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise GraderError(f"policy check: cannot read {path}: {e}", EXIT_INTERNAL)
    if not isinstance(data, list):
        raise GraderError(f"policy check: {path} is not a compile_commands.json (a list)",
                          EXIT_INTERNAL)
    return data


def find_entry(commands: list, source: Path, where: Path) -> dict:
    want = real(source)
    for e in commands:
        if not isinstance(e, dict) or not isinstance(e.get("file"), str) \
                or not isinstance(e.get("directory", "."), str):
            continue
        directory = e.get("directory", ".")
        if real(os.path.join(directory, e["file"])) != want:
            continue
        try:
            args = e.get("arguments") or shlex.split(str(e.get("command", "")))
        except ValueError as err:
            raise GraderError(f"policy check: {where}: the compile command of {source} cannot "
                              f"be read ({err})", EXIT_INTERNAL) from None
        if not args or not isinstance(args, list):
            break
        args = [str(a) for a in args]
        while len(args) > 1 and os.path.basename(args[0]) in _COMPILER_LAUNCHERS:
            args = args[1:]                               # ccache nvcc ...: run nvcc itself
        return {"directory": directory, "args": args, "file": e["file"]}
    raise GraderError(f"policy check: {where} has no compile command for {source}",
                      EXIT_INTERNAL)


def base_args(entry: dict) -> list:
    """The compile command without its output, compile-only and dependency options."""
    args, out, skip = entry["args"], [], False
    for i, a in enumerate(args):
        if i == 0:
            out.append(a)
            continue
        if skip:
            skip = False
            continue
        if a in _DROP_WITH_VALUE:
            skip = True
            continue
        if a in _DROP or any(a.startswith(o + "=") for o in _DROP_WITH_VALUE):
            continue
        out.append(a)
    return out


def boxed(entry: dict, cmd: list) -> list:
    """`cmd`, a compiler run on the student's file, through the build sandbox when the build
    has one (entry["sandbox"]: grader/buildbox.py's command prefix), as the compile itself: the
    preprocessor reads what the compiler may read, no more (an `#include` of a hidden file
    then fails with "Permission denied" instead of listing, or echoing, what it holds)."""
    return list(entry.get("sandbox") or []) + list(cmd)


def is_nvcc(entry: dict) -> bool:
    return "nvcc" in os.path.basename(entry["args"][0])


def parse_deps(text: str) -> list:
    """The prerequisites of a make rule as the compiler writes it (-M)."""
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    deps = []
    for line in tools.lines(text):
        _, sep, rest = line.partition(": ")
        if not sep:
            _, sep, rest = line.partition(":")
            if not sep:
                continue
        for token in re.findall(r"(?:\\.|[^\s\\])+", rest):
            deps.append(re.sub(r"\\(.)", r"\1", token).replace("$$", "$"))
    return deps


def toolkit_roots(entry: dict) -> list:
    """The CUDA toolkit's include directories, found from the compiler's own path."""
    compiler = entry["args"][0]
    if not os.path.isabs(compiler):
        compiler = shutil.which(compiler) or compiler
    roots = []
    if is_nvcc(entry):
        roots.append(os.path.dirname(os.path.dirname(real(compiler))))
    roots.append(real(DEFAULT_CUDA_ROOT))
    dirs = []
    for root in roots:
        dirs.append(os.path.join(root, "include"))
        dirs += [str(p) for p in Path(root).glob("targets/*/include")]
    return sorted({real(d) for d in dirs if os.path.isdir(d)})


def host_compiler(entry: dict) -> str:
    """The C++ compiler behind the compile command: nvcc's -ccbin, else the g++ nvcc would
    find on PATH; for a C++ command, the compiler itself."""
    args = entry["args"]
    if not is_nvcc(entry):
        return args[0]
    for i, a in enumerate(args):
        for flag in ("-ccbin", "--compiler-bindir"):
            if a == flag and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(flag + "="):
                return a.split("=", 1)[1]
    return "g++"


_COMPILER_DIRS: dict = {}


def compiler_include_dirs(compiler: str) -> list:
    """The compiler's own system include directories (`-E -v`: "#include <...> search starts
    here:"), e.g. /opt/gcc/include/c++/13 for a GCC installed outside /usr. /usr/local/include
    is left out, as in SYSTEM_INCLUDE_DIRS."""
    if compiler in _COMPILER_DIRS:
        return _COMPILER_DIRS[compiler]
    if os.path.isdir(compiler):  # -ccbin may name a folder
        compiler = os.path.join(compiler, "g++")
    found = []
    try:
        proc = runner.run([compiler, "-E", "-x", "c++", "-v", "/dev/null"], COMPILER_TIMEOUT_S,
                          cap=TOOL_OUTPUT_CAP)
        listing, inside = tools.lines(proc.output), False
        for line in listing:
            if line.startswith("#include <...> search starts here"):
                inside = True
            elif line.startswith("End of search list"):
                inside = False
            elif inside and line.startswith(" "):
                d = real(line.strip())
                if os.path.isdir(d) and not under(d, "/usr/local/include"):
                    found.append(d)
    except OSError:
        found = []
    _COMPILER_DIRS[compiler] = found
    return found


def system_roots(entry: dict | None = None) -> list:
    dirs = []
    for pattern in SYSTEM_INCLUDE_DIRS:
        dirs += [str(p) for p in Path("/").glob(pattern.lstrip("/"))] if "*" in pattern \
            else [pattern]
    roots = {real(d) for d in dirs if os.path.isdir(d)}
    if entry is not None:
        roots.update(compiler_include_dirs(host_compiler(entry)))
    return sorted(roots)


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def first_error(output: str) -> str:
    for line in output.splitlines():
        if "error" in line.lower() or "fatal" in line.lower():
            return line.strip()
    return (output.strip().splitlines() or ["(no message)"])[0]


def preprocess_host(entry: dict) -> str | None:
    """The student's file as the host compiler sees it: macros expanded, comments gone, every
    function (device ones too) present, with __CUDA_ARCH__ undefined.

    For nvcc that is the host preprocessing step of `nvcc -cuda` (its "cpp4.ii"), run alone: the
    rest of -cuda compiles the device code (cicc, ptxas), as long as the build itself, and then
    hands on only cudafe's host stubs. The step is read from `nvcc --dryrun`; where it cannot
    be found there, the whole `nvcc -cuda` runs instead.
    None when it cannot be made: then the build fails too (same command), so nothing runs."""
    with tempfile.TemporaryDirectory(prefix="policy-") as tmp:
        out_file = os.path.join(tmp, "host.ii")
        if is_nvcc(entry):
            cmd = nvcc_host_preprocess(entry, out_file) or \
                base_args(entry) + ["-cuda", "-o", out_file]
        else:
            cmd = base_args(entry) + ["-E", "-o", out_file]
        proc = runner.run(boxed(entry, cmd), COMPILER_TIMEOUT_S, cwd=entry["directory"],
                          cap=64 * 1024)
        if proc.timed_out or proc.returncode != 0 or not os.path.isfile(out_file):
            return None
        return Path(out_file).read_text(errors="replace")


def nvcc_host_preprocess(entry: dict, out_file: str) -> list | None:
    """The host compiler's preprocessing command that `nvcc -cuda` would run for this entry,
    writing to out_file; None when nvcc's dry run does not show exactly one such step in a form
    that needs no shell (no variables, no substitutions)."""
    proc = runner.run(boxed(entry, base_args(entry) + ["-cuda", "--dryrun", "-o", out_file]), 60,
                      cwd=entry["directory"], cap=256 * 1024)
    if proc.timed_out or proc.returncode != 0:
        return None
    found = []
    for line in tools.lines(proc.stdout + proc.stderr):
        if not line.startswith("#$ ") or "$" in line[3:] or "`" in line:
            continue
        try:
            argv = shlex.split(line[3:])
        except ValueError:
            continue
        if ("-E" in argv and "-D__CUDACC__" in argv and "-o" in argv[:-1]
                and not any(a.startswith("-D__CUDA_ARCH__") for a in argv)
                and argv[argv.index("-o") + 1].endswith(".cpp4.ii")):
            argv[argv.index("-o") + 1] = out_file
            found.append(argv)
    return found[0] if len(found) == 1 else None
