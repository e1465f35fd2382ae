"""Stages and builds a submission with CMake: the harness and tests once, the student's file
per lab."""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

from grader import buildbox, elf, manifest, runner, setup
from grader.errors import EXIT_INTERNAL, EXIT_USAGE, GraderError
from grader.manifest import MANIFEST_NAME
from grader.results import BuildResult

CONFIGURE_TIMEOUT_S = 300
BUILD_TIMEOUT_S = 900


class BadFilesError(GraderError):
    """A lab's student files cannot be taken: missing, a link, not a regular file, too large."""


def find_tool(name: str) -> str:
    path = setup.cmake_command() if name == "cmake" else shutil.which(name)
    if path is None:
        raise GraderError(f"'{name}' was not found on PATH: install it (see README.md, Requirements)",
                          EXIT_USAGE)
    return path


def ensure_build_tools() -> None:
    """The set-up before a configure (grader/setup.py): this grader's own repository's
    scripts/install-deps, never anything of the submission."""
    setup.ensure_build_tools()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


_KINDS = ((stat.S_ISLNK, "is a symbolic link (links are not followed: submit the file itself)"),
          (stat.S_ISDIR, "is a directory, not a file"),
          (stat.S_ISFIFO, "is a named pipe (FIFO), not a regular file"),
          (stat.S_ISSOCK, "is a socket, not a regular file"),
          (stat.S_ISCHR, "is a device, not a regular file"),
          (stat.S_ISBLK, "is a device, not a regular file"))


def _kind_problem(st: os.stat_result) -> str | None:
    for test, words in _KINDS:
        if test(st.st_mode):
            return words
    return None if stat.S_ISREG(st.st_mode) else "is not a regular file"


def _open_lab_dir(root_fd: int, lab: str, shown: str) -> int | None:
    """The lab's folder under the submission root (None if there is none), refusing a link or
    anything not a folder."""
    try:
        st = os.stat(lab, dir_fd=root_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise BadFilesError(f"{lab}: {shown} is a symbolic link, not a folder: refused (links "
                            f"are not followed: submit the folder itself)")
    if not stat.S_ISDIR(st.st_mode):
        raise BadFilesError(f"{lab}: {shown} is not a folder")
    try:
        fd = os.open(lab, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                     dir_fd=root_fd)
    except OSError as e:   # replaced by a link since the lstat, or unreadable
        raise BadFilesError(f"{lab}: cannot open {shown}: {os.strerror(e.errno)}") from None
    if (os.fstat(fd).st_dev, os.fstat(fd).st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise BadFilesError(f"{lab}: {shown} changed while it was being read")
    return fd


_MAGIC = ((b"\x7fELF", "an ELF object or program"), (b"PK\x03\x04", "a zip archive"),
          (b"\x1f\x8b", "a gzip archive"), (b"!<arch>", "an ar archive"))


def _binary_problem(data: bytes) -> str | None:
    """A source file never holds a NUL byte; one that does is a compiled or packed file handed
    in by mistake, and its bytes must not be echoed back as compiler or policy messages."""
    at = data.find(b"\0")
    if at < 0:
        return None
    kind = next((what for magic, what in _MAGIC if data.startswith(magic)), "binary data")
    return (f"is not a source file: it is {kind} (a NUL byte at offset {at}); "
            f"hand in the source text")


def _read_student_file(dir_fd: int, name: str, cap: int, max_kib: int):
    """(bytes, None) or (None, problem). lstat first, so that a FIFO or device is never opened;
    then open without following links and without blocking, and read through that descriptor
    (what was checked is what is read)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None, None
    problem = _kind_problem(st)
    if problem:
        return None, f"{name} {problem}"
    limit = f"the limit is {max_kib} KiB ([lab] max_file_kib in grading.toml)"
    if st.st_size > cap:
        return None, f"{name} is {st.st_size / 1024:.1f} KiB ({st.st_size} bytes); {limit}"
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
                     | os.O_NOCTTY, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return None, f"{name} {_KINDS[0][1]}"
        return None, f"{name} cannot be opened: {os.strerror(e.errno)}"
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            return None, f"{name} changed while it was being read"
        chunks, size = [], 0
        while size <= cap:
            block = os.read(fd, min(1 << 20, cap + 1 - size))
            if not block:
                break
            chunks.append(block)
            size += len(block)
        if size > cap:
            return None, f"{name} is over {max_kib} KiB; {limit}"
        data = b"".join(chunks)
        problem = _binary_problem(data)
        return (None, f"{name} {problem}") if problem else (data, None)
    finally:
        os.close(fd)


def _holds(path: Path, data: bytes) -> bool:
    """`path` is a regular file (not a link) whose content is `data`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(data):
            return False
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(len(data) + 1) == data
    finally:
        os.close(fd)


def stage_submission(submission: Path, lab: str, files: tuple, stage_dir: Path,
                     max_file_kib: int = 256) -> dict:
    """Copies the lab's student files into stage_dir/<lab>/; returns name -> sha256.

    Only regular files are taken, each at most max_file_kib, and no path component below the
    submission root may be a link: a symlink to another student's file or to a grader secret
    would otherwise be compiled, and its content echoed in compiler errors. Raises
    BadFilesError naming every problem (never showing what a link points at), before anything
    is written. Files are written afresh (new mtime), so the build always recompiles exactly
    what is being graded; except when the staged copies hold these very bytes and the last build
    from them completed (mark_built): then they are left as they are, and the build is reused."""
    src_dir = submission / lab
    cap = max_file_kib * 1024
    try:
        # O_NOFOLLOW: the folder itself may not be a link either (api.check_submission_dir
        # refuses one before; this holds should it have become one since)
        root_fd = os.open(submission, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        why = ("it is a symbolic link: refused (links are not followed)"
               if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(submission)
               else os.strerror(e.errno))
        raise BadFilesError(f"{lab}: cannot open the submission folder {submission}: "
                            f"{why}") from None
    try:
        lab_fd = _open_lab_dir(root_fd, lab, str(src_dir))
        if lab_fd is None:
            hint = ""
            if (submission / "labs" / lab).is_dir() and not (submission / "labs").is_symlink():
                hint = (f"; {submission} looks like a repository root: the submission is its "
                        f"labs/ folder (--submission {submission / 'labs'})")
            raise BadFilesError(f"{lab}: the submission has no {', '.join(files)} "
                                f"(looked in {src_dir}){hint}")
        try:
            contents, missing, problems = {}, [], []
            for f in files:
                data, problem = _read_student_file(lab_fd, f, cap, max_file_kib)
                if problem:
                    problems.append(problem)
                elif data is None:
                    missing.append(f)
                else:
                    contents[f] = data
        finally:
            os.close(lab_fd)
    finally:
        os.close(root_fd)
    if missing:
        problems.insert(0, f"the submission has no {', '.join(missing)} (looked in {src_dir})")
    if problems:
        raise BadFilesError(f"{lab}: " + "; ".join(problems))
    dst_dir = stage_dir / lab
    dst_dir.mkdir(parents=True, exist_ok=True)
    hashes = {f: hashlib.sha256(data).hexdigest() for f, data in contents.items()}
    marker = dst_dir / BUILT_MARKER
    if _built_from(marker) == hashes and all(_holds(dst_dir / f, d) for f, d in contents.items()):
        return hashes
    _remove(marker)
    for f, data in contents.items():
        _write_fresh(dst_dir / f, data)
    return hashes


# Beside the staged files: {file: sha256} of the staged copies that the last completed build of
# the lab was made from. Removed before files are staged afresh, written only after a build
# succeeded: a build cut short (a killed compiler can leave a partial object newer than its
# source) never leaves it, so its staged files are written afresh and rebuilt next time.
BUILT_MARKER = ".built.json"


def mark_built(stage_dir: Path, lab: str, hashes: dict) -> None:
    """The lab's staged files, `hashes`, were built completely."""
    marker = stage_dir / lab / BUILT_MARKER
    _remove(marker)
    try:
        _write_fresh(marker, json.dumps(hashes, sort_keys=True).encode())
    except GraderError:
        pass            # only a missed reuse next time


def _built_from(marker: Path) -> dict | None:
    try:
        if marker.is_symlink():
            return None
        data = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _write_fresh(path: Path, data: bytes) -> None:
    """A new file at `path`, never through a link someone left there."""
    if path.is_symlink() or path.exists():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644)
    except OSError as e:
        raise GraderError(f"cannot write the staged copy {path}: {os.strerror(e.errno)}",
                          EXIT_INTERNAL) from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def cache_settings(repo: Path, stage_dir: Path, labs: list, sandbox: bool = True) -> dict:
    """The cache entries this grader configures with. `sandbox`: the student's compile runs in
    the build sandbox (LABS_SANDBOX_BUILD, grader/buildbox.py); off only where no sandbox is
    possible and the instructor said to build without one (build_sandbox_check)."""
    return {"CMAKE_BUILD_TYPE": "Release", "LABS_SUBMISSION_DIR": str(stage_dir),
            "LABS_ONLY": ";".join(labs), "LABS_WITH_SOLUTIONS": "OFF",
            "LABS_TEST_SUBMISSION": "OFF", "CMAKE_EXPORT_COMPILE_COMMANDS": "ON",
            "LABS_SANDBOX_BUILD": "ON" if sandbox else "OFF"}


UNSANDBOXED_FLAG = "--unsandboxed-build"


def build_sandbox_check(allow_unsandboxed: bool = False) -> tuple:
    """(sandbox, warning): whether the student's compile can run in the build sandbox here
    (grader/buildbox.py: Landlock, else a user and mount namespace), and, when it cannot, the
    warning every graded lab records. Without a sandbox the compiler reads any file the
    grader's user can read (hidden tests, solutions, other submissions, a secret) into the
    student's object, so this refuses to grade (GraderError, exit 2) unless the instructor
    passed --unsandboxed-build."""
    how = buildbox.probe()
    if how.get("mechanism"):
        return True, None
    why = how.get("why", "unknown")
    if not allow_unsandboxed:
        raise GraderError(f"no build sandbox is possible on this machine ({why}): the student's "
                          f"compile could read any file this user can read (hidden tests, "
                          f"solutions, other submissions) into its object, so nothing was "
                          f"graded. Grade on a machine with Landlock (Linux 5.13+) or "
                          f"unprivileged user namespaces, or pass {UNSANDBOXED_FLAG} to build "
                          f"without the sandbox (recorded in the results)", EXIT_USAGE)
    return False, (f"built WITHOUT the build sandbox ({UNSANDBOXED_FLAG}; {why}): the "
                   f"student's compile could read any file the grader's user can read")


def read_cache(cache: Path) -> dict:
    """CMakeCache.txt's entries, 'NAME:TYPE=VALUE' -> {NAME: VALUE}."""
    entries = {}
    try:
        text = cache.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return entries
    for line in text.splitlines():
        if not line or line.startswith(("#", "//")):
            continue
        m = re.match(r"^([^:=]+)(?::[^=]*)?=(.*)$", line)
        if m:
            entries[m.group(1).strip('"')] = m.group(2)
    return entries


_TRUE = {"ON", "TRUE", "YES", "Y", "1"}


def _same(a: str | None, b: str) -> bool:
    if a is None:
        return False
    if b in ("ON", "OFF"):
        return (a.upper() in _TRUE) == (b == "ON")
    return a == b


def configure_is_current(repo: Path, build_dir: Path, stage_dir: Path, labs: list,
                         sandbox: bool = True) -> bool:
    """True when build_dir is already configured from this repository with these settings
    (and wrote its manifest): configuring again would change nothing, so it is skipped. The
    build step reruns CMake by itself when a CMakeLists changed."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file() or not (build_dir / MANIFEST_NAME).is_file():
        return False
    entries = read_cache(cache)
    if not _same(entries.get("CMAKE_HOME_DIRECTORY"), str(repo)):
        return False
    return all(_same(entries.get(k), v)
               for k, v in cache_settings(repo, stage_dir, labs, sandbox).items())


# Compilers run in the idle scheduling class (SCHED_IDLE, `chrt --idle 0`), and niced: on a
# machine that grades several submissions at once (a batch) they take a core only when nothing
# else wants it, so a benchmark judge timing short GPU calls is never kept waiting. Measured on
# an H100 (16 cores), labs 06 and 07 graded beside three builds: at nice 10 or 19 alone the
# judge's calibration overhead rose from 0.6 ms to 4-14 ms and 3 to 5 of 8 entries per grading
# lost points; with the builds under SCHED_IDLE, 3 gradings kept every entry's full points. Where
# the idle class is refused (some sandboxed kernels), nice alone. Alone on a machine neither
# changes anything.
BUILD_NICENESS = 10


@functools.lru_cache(maxsize=None)
def _idle_prefix() -> tuple:
    """('chrt', '--idle', '0') where this machine lets this user run a command in the idle
    scheduling class, else ()."""
    chrt = shutil.which("chrt")
    if chrt is None:
        return ()
    try:
        ok = subprocess.run([chrt, "--idle", "0", "true"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return (chrt, "--idle", "0") if ok else ()


def _niced(args: list) -> list:
    nice = shutil.which("nice")
    return [*_idle_prefix(), *([nice, "-n", str(BUILD_NICENESS)] if nice else []), *args]


def _forget_another_checkouts_cache(repo: Path, build_dir: Path) -> None:
    """A checkout moved or copied elsewhere keeps build folders whose CMake cache names the old
    source folder, and CMake then refuses to configure ("does not match the source ... used to
    generate cache"): every grading would fail to build. The cache and CMake's own files go
    (what CMake asks for); the objects stay and are rebuilt where they changed."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return
    home = read_cache(cache).get("CMAKE_HOME_DIRECTORY")
    if home is None or _same(home, str(repo)):
        return
    try:
        cache.unlink()
        shutil.rmtree(build_dir / "CMakeFiles", ignore_errors=True)
    except OSError:
        pass   # CMake's own message follows


def configure(repo: Path, build_dir: Path, stage_dir: Path, labs: list,
              sandbox: bool = True) -> BuildResult:
    if configure_is_current(repo, build_dir, stage_dir, labs, sandbox):
        return BuildResult(ok=True, seconds=0.0)
    ensure_build_tools()   # installs what is missing where it can, or stops naming it (exit 2)
    cmake = find_tool("cmake")
    args = [cmake, "-S", str(repo), "-B", str(build_dir)]
    args += [f"-D{k}={v}" for k, v in cache_settings(repo, stage_dir, labs, sandbox).items()]
    cache = build_dir / "CMakeCache.txt"
    _forget_another_checkouts_cache(repo, build_dir)
    if not cache.is_file() and shutil.which("ninja"):
        args += ["-G", "Ninja"]
    proc = runner.run(_niced(args), CONFIGURE_TIMEOUT_S)
    ok = proc.returncode == 0
    return BuildResult(ok=ok, seconds=proc.seconds,
                       log="" if ok else _trim(proc.output, 80),
                       hint="" if ok else "CMake could not configure the project: see the log")


def build_targets(build_dir: Path, targets: list, jobs: int | None = None) -> BuildResult:
    cmake = find_tool("cmake")
    args = [cmake, "--build", str(build_dir), "--target", *targets]
    if jobs:
        args += ["--parallel", str(jobs)]
    proc = runner.run(_niced(args), BUILD_TIMEOUT_S)
    if proc.timed_out:
        return BuildResult(ok=False, seconds=proc.seconds, log=_trim(proc.output, 40),
                           hint=f"the build did not finish within {BUILD_TIMEOUT_S} s")
    ok = proc.returncode == 0
    if ok:
        refused = check_linked_workers(build_dir, targets)
        if refused:
            return BuildResult(ok=False, seconds=proc.seconds, log="", hint=refused,
                               refused=True)
    return BuildResult(ok=ok, seconds=proc.seconds, log="" if ok else _relevant_log(proc.output),
                       hint="" if ok else explain_build_failure(proc.output))


def build_together(build_dir: Path, targets: list, jobs: int | None = None) -> None:
    """Builds `targets` in one run, going on past failures: several labs' targets compile side
    by side. Nothing is decided here: each lab's own build_targets afterwards finds its targets
    up to date, or fails again with its own log (and checks its linked workers)."""
    if not targets:
        return
    generator = ""
    try:
        for line in (build_dir / "CMakeCache.txt").read_text(errors="replace").splitlines():
            if line.startswith("CMAKE_GENERATOR:"):
                generator = line.split("=", 1)[1]
    except OSError:
        return
    keep_going = {"Ninja": ["-k", "0"], "Unix Makefiles": ["-k"]}.get(generator)
    args = [find_tool("cmake"), "--build", str(build_dir), "--target", *targets]
    if jobs:
        args += ["--parallel", str(jobs)]
    if keep_going:
        args += ["--", *keep_going]
    runner.run(_niced(args), BUILD_TIMEOUT_S)


WORKER_MEMORY_WHY = ("memory that is both writable and executable lets a program write machine "
                     "code and then run it, past every check made on your compiled object, so "
                     "the worker was not run (an executable .note.GNU-stack section, or a "
                     "section with flags \"awx\", in your file does this: remove it)")


def worker_memory_problem(path: Path) -> str | None:
    """Why a linked worker must not run (an executable stack, a writable and executable
    segment), or None. Its program headers are read by grader/elf.py; a file that cannot be
    read is refused too."""
    try:
        problems = elf.executable_memory_problems(path)
    except elf.ElfError as e:
        return f"the worker {path.name} cannot be checked ({e}), so it was not run"
    if not problems:
        return None
    return (f"the worker linked from your file was refused: {'; '.join(problems)}. "
            f"{WORKER_MEMORY_WHY[0].upper()}{WORKER_MEMORY_WHY[1:]}")


FATBIN_SECTION = elf.FATBIN_SECTION


def linked_device_code_problem(worker: Path, objects) -> str | None:
    """Why a linked worker must not run because its device code is not what the policy read,
    or None. The executor loads the worker's .nv_fatbin (common/src/executor.cpp,
    extract_fatbin); the policy read the student's object's one .nv_fatbin with cuobjdump
    (grader/policy/device.py). The worker's must be exactly that (zero bytes of alignment at
    its end aside): then what runs is what was read, whatever was done to make the two
    differ (a second section, code from another object, a linker trick)."""
    try:
        # cuobjdump reads the first section of that name in an object (the policy refuses a
        # second one, check_device_sections): that is what the policy read.
        read = [sections[0] for sections in (elf.section_bytes(obj, FATBIN_SECTION)
                                             for obj in objects) if sections]
        linked = elf.section_bytes(worker, FATBIN_SECTION)
    except (OSError, elf.ElfError) as e:
        return (f"the device code of the worker {worker.name} could not be compared with your "
                f"object's ({e}), so it was not run")
    expected = b"".join(read)
    got = linked[0] if len(linked) == 1 else None
    if len(linked) > 1:
        why = f"it has {len(linked)} sections named {FATBIN_SECTION}"
    elif got is None:
        why = "" if not expected else f"it has no {FATBIN_SECTION} section"
    elif got.rstrip(b"\0") != expected.rstrip(b"\0"):
        why = (f"its {FATBIN_SECTION} ({len(got)} bytes) is not your object's "
               f"({len(expected)} bytes)")
    else:
        return None
    if not why:
        return None
    return (f"the worker linked from your file was refused: {why}, so the device code it would "
            f"run is not the code the policy check read")


def linked_refusal_rule(hint: str) -> str:
    """The policy rule a linked worker's refusal (check_linked_workers) is recorded under."""
    return "linked_device_code" if FATBIN_SECTION in hint else "executable_memory"


def check_linked_workers(build_dir: Path, targets: list) -> str | None:
    """After a build: every worker among `targets` (the binaries that link a student's
    object, found in the build's manifest) is checked for writable and executable memory, and
    for device code other than the object's the policy read (linked_device_code_problem),
    before anything can run it. A refused worker is deleted, so that nothing runs it later
    without linking (and so checking) it again. Returns the first refusal, or None."""
    workers = [t for t in targets if str(t).endswith("_worker")]
    if not workers:
        return None
    try:
        labs = manifest.load_manifest(build_dir).labs.values()
    except GraderError as e:
        return f"the worker could not be checked after linking ({e.message}), so it was not run"
    by_target = {w.target: (w.path, lab.student_objects) for lab in labs for w in lab.workers}
    for target in workers:
        path, objects = by_target.get(target, (None, ()))
        if path is None:
            return (f"the build's {MANIFEST_NAME} does not list {target}, so it cannot be "
                    f"checked and was not run")
        problem = worker_memory_problem(path) or linked_device_code_problem(path, objects)
        if problem:
            try:
                os.unlink(path)
            except OSError:
                pass
            return problem
    return None


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
