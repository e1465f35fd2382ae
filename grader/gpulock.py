"""One timed run on a GPU at a time: an advisory file lock shared by one user's graders.

Correctness tests hold it shared (they may run side by side); a benchmark holds it
exclusively, so no other grader's test or benchmark runs on the GPU while it is timed. Takers
pass through a turnstile beside it (gpu_lock), so a waiting benchmark goes before tests that
asked after it.

With LABS_GPU_LOCK_EXCLUSIVE=1 (grader/batch.py sets it) a grading holds the lock exclusively
once, from its first test to its last benchmark (whole_grading): its own labs' tests still run
side by side, no other grading's run on the GPU meanwhile, and the others build on the CPUs.

The lock is per user and per GPU: a file in a directory this user owns with mode 0700
($XDG_RUNTIME_DIR/cuda-labs-gpu-<UUID>.lock when that is set, a directory, owned by us and
private; else /tmp/cuda-labs-<uid>/gpu-<UUID>.lock), named after the UUID of the GPU the
grading probed (use_gpu; the grader's CUDA_VISIBLE_DEVICES chooses it), so that one user's
gradings on two GPUs of a host never wait for each other, and two on one GPU always take turns.
Before a probe (or where it gave no UUID) the name has no UUID. A shared lock in /tmp could be created first, or held
forever, by any other user, and so block or stall every grading on the machine. The price:
graders of DIFFERENT users on one machine do not coordinate through it (their benchmarks may
overlap); run one user's graders per GPU (grader/batch.py points them all at one lock with
LABS_GPU_LOCK).

LABS_GPU_LOCK names another lock file (grader/batch.py uses one per GPU, in /tmp by default):
it gets the same checks: the file is opened with O_NOFOLLOW (a symbolic link is refused) and
must be a regular file owned by this user (fstat); its directory must be ours and writable by
no one else, or sticky like /tmp (where only the file's owner can replace it). Anything else
raises GpuLockError, and nothing runs.

The same code locks a build folder (build_lock): one grading at a time per build folder, held
from staging the submission's files to the end of the grading, so that two graders started on
one build folder (the default build/grade) never build or run each other's files; the second
waits, saying so."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import threading
from pathlib import Path

from grader.errors import EXIT_USAGE, GraderError

LOCK_NAME = "cuda-labs-gpu.lock"
BUILD_LOCK_NAME = ".grading.lock"   # in the build folder: held for a whole grading


class GpuLockError(GraderError):
    """The lock file or its directory is not safely ours."""

    def __init__(self, message: str):
        super().__init__(message, EXIT_USAGE)


def _private_dir_ok(path: str, uid: int) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == uid
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


# The GPU this process grades on, by its UUID (use_gpu), or None before a probe.
_GPU_UUID: str | None = None
_UUID = re.compile(r"(GPU|MIG)-[0-9A-Za-z-]{8,80}")


def use_gpu(uuid) -> None:
    """Names the default lock after the GPU this process grades on (its UUID, from the GPU
    probe: grader/grade.py); anything that is not a UUID names none."""
    global _GPU_UUID
    _GPU_UUID = uuid if isinstance(uuid, str) and _UUID.fullmatch(uuid) else None


def default_lock_path() -> Path:
    """LABS_GPU_LOCK, else $XDG_RUNTIME_DIR/cuda-labs-gpu-<UUID>.lock when that directory is
    ours and private, else /tmp/cuda-labs-<uid>/gpu-<UUID>.lock (the directory made on first
    use); without a GPU named by use_gpu, the same names without '-<UUID>'."""
    override = os.environ.get("LABS_GPU_LOCK")
    if override:
        return Path(override)
    uid = os.getuid()
    suffix = f"-{_GPU_UUID}" if _GPU_UUID else ""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and _private_dir_ok(runtime, uid):
        return Path(runtime) / LOCK_NAME.replace(".lock", f"{suffix}.lock")
    return Path(f"/tmp/cuda-labs-{uid}") / f"gpu{suffix}.lock"


# The path gpu_lock() uses when none is given: None means default_lock_path(), read at each
# call (so LABS_GPU_LOCK set after import counts). Tests patch this to a file of their own.
DEFAULT_LOCK: Path | None = None


def memory_lock_path(path: Path | None = None) -> Path:
    """The GPU's memory lock, beside its GPU lock (same folder, `.memory` added): the test
    judges take it exclusively around calls of more than 4 GiB of buffers and their own large
    work on the GPU (labkit::MemoryLock), so the large tests of gradings side by side take turns
    instead of failing to allocate and retrying. Opened by the judges (as this user); the
    folder is the GPU lock's, which gpu_lock() has checked and made by then."""
    path = Path(path or DEFAULT_LOCK or default_lock_path())
    return path.with_name(path.name + ".memory")


def _ensure_dir(directory: Path, uid: int) -> None:
    """The lock's directory: made 0700 when missing; refused when it is a link or not a
    directory, or when someone else could replace the lock file in it: it must be ours and
    writable by no one else, or sticky (like /tmp, for a LABS_GPU_LOCK there: in a sticky
    directory only the file's owner may remove or rename it, and the file is checked below)."""
    try:
        os.makedirs(directory, 0o700, exist_ok=True)
    except OSError as e:
        raise GpuLockError(f"GPU lock: cannot create the directory {directory}: "
                           f"{os.strerror(e.errno)}") from None
    try:
        st = os.lstat(directory)
    except OSError as e:
        raise GpuLockError(f"GPU lock: cannot read {directory}: {os.strerror(e.errno)}") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise GpuLockError(f"GPU lock: {directory} is not a directory (a symbolic link or a "
                           f"file): refused; remove it or set LABS_GPU_LOCK")
    sticky = bool(st.st_mode & stat.S_ISVTX)
    if st.st_uid != uid and not (sticky and st.st_uid == 0):
        raise GpuLockError(f"GPU lock: {directory} belongs to uid {st.st_uid}, not to this user "
                           f"({uid}): refused (another user could hold or replace the lock); "
                           f"remove it or set LABS_GPU_LOCK")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not sticky:
        raise GpuLockError(f"GPU lock: {directory} is writable by other users (mode "
                           f"{stat.S_IMODE(st.st_mode):o}): refused; chmod 700 it or set "
                           f"LABS_GPU_LOCK")


def open_lock(path: Path, what: str = "GPU lock", private: bool = True) -> int:
    """A descriptor of the lock file, opened without following a link, and checked: a regular
    file owned by this user in a directory that is ours and private. `private` False (a build
    folder's lock, which is as much ours as the build in that folder): a regular file, not a
    link, wherever it is; its folder is made when missing."""
    uid = os.getuid()
    path = Path(path)
    if private:
        _ensure_dir(path.parent, uid)
    else:
        try:
            os.makedirs(path.parent, exist_ok=True)
        except OSError as e:
            raise GpuLockError(f"{what}: cannot create the folder {path.parent}: "
                               f"{os.strerror(e.errno)}") from None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
                     | os.O_NONBLOCK, 0o600)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise GpuLockError(f"{what}: {path} is a symbolic link: refused") from None
        raise GpuLockError(f"{what}: cannot open {path}: {os.strerror(e.errno)}") from None
    st = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(st.st_mode):
        problem = "is not a regular file"
    elif private and st.st_uid != uid:
        problem = f"belongs to uid {st.st_uid}, not to this user ({uid})"
    if problem:
        os.close(fd)
        raise GpuLockError(f"{what}: {path} {problem}: refused")
    return fd


def _take(fd: int, mode: int, on_wait=None) -> None:
    """flock(fd, mode), blocking; when another holder makes it wait, on_wait() first."""
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    if on_wait is not None:
        on_wait()
    fcntl.flock(fd, mode)


def turnstile_path(path: Path) -> Path:
    """The GPU lock's turnstile, beside it: every taker of the GPU lock passes through it."""
    return path.with_name(path.name + ".turn")


# This thread's exclusive holds of GPU locks: {path: depth}. A grading holds the GPU once for
# all its benchmarks (grade.py); the per-lab gpu_lock() calls inside, in the same thread, are
# then already covered (a second flock of the same file would wait for the first).
_HELD = threading.local()


def _held() -> dict:
    if not hasattr(_HELD, "depth"):
        _HELD.depth = {}
    return _HELD.depth


# This process's whole-grading holds (whole_grading): {path: depth}, seen by every thread.
_PROCESS_HELD: dict = {}
_PROCESS_HELD_LOCK = threading.Lock()


def whole_grading_requested() -> bool:
    """LABS_GPU_LOCK_EXCLUSIVE=1: a grading holds the GPU alone from its first test to its last
    benchmark (grader/batch.py: one grading at a time on each GPU while the others build)."""
    return os.environ.get("LABS_GPU_LOCK_EXCLUSIVE") == "1"


@contextlib.contextmanager
def whole_grading(path: Path | None = None, on_wait=None):
    """Holds the GPU lock exclusively for this process: every gpu_lock() inside, in any of its
    threads (the labs of one grading, tested side by side), holds nothing more."""
    key = str(Path(path or DEFAULT_LOCK or default_lock_path()).absolute())
    with gpu_lock(path=path, on_wait=on_wait):
        with _PROCESS_HELD_LOCK:
            _PROCESS_HELD[key] = _PROCESS_HELD.get(key, 0) + 1
        try:
            yield
        finally:
            with _PROCESS_HELD_LOCK:
                _PROCESS_HELD[key] -= 1
                if _PROCESS_HELD[key] == 0:
                    del _PROCESS_HELD[key]


@contextlib.contextmanager
def gpu_lock(shared: bool = False, path: Path | None = None, on_wait=None):
    """Holds the GPU lock (shared: correctness tests; exclusive: a benchmark). `on_wait`: called
    once, before blocking, when another grader holds it (the caller's per-stage times).

    Writers first: a taker passes through the turnstile (an exclusive flock of the file beside
    the lock, held only while it takes the lock), so an exclusive taker waiting for the tests
    that hold the lock shared keeps new tests out until it had its turn. Without it a benchmark
    waited for a moment when no grader on the GPU was testing, which with several graders side
    by side came minutes late. Inside this process's exclusive hold of the same lock, a nested
    call (in the same thread, or in any thread inside whole_grading) holds nothing more."""
    path = Path(path or DEFAULT_LOCK or default_lock_path())
    key = str(path.absolute())
    with _PROCESS_HELD_LOCK:
        inside_whole_grading = _PROCESS_HELD.get(key, 0) > 0
    if inside_whole_grading:
        yield
        return
    held = _held()
    if held.get(key, 0) > 0:
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    waited = []

    def wait_once():
        if not waited and on_wait is not None:
            on_wait()
        waited.append(True)

    fd = open_lock(path)
    try:
        turn = open_lock(turnstile_path(path), what="GPU lock's turnstile")
        try:
            _take(turn, fcntl.LOCK_EX, wait_once)
            try:
                _take(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX, wait_once)
            finally:
                fcntl.flock(turn, fcntl.LOCK_UN)
        finally:
            os.close(turn)
        if not shared:
            held[key] = 1
        try:
            yield
        finally:
            if not shared:
                held.pop(key, None)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _holder_pid(fd: int) -> int | None:
    """The pid the holder of a build lock wrote into it, when that process is still alive."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    except OSError:
        return None
    if not (text.isascii() and text.isdigit()) or int(text) <= 0:
        return None
    pid = int(text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return pid


@contextlib.contextmanager
def build_lock(build_dir: Path, on_wait=None):
    """One grading at a time in `build_dir`: an exclusive flock on <build_dir>/.grading.lock,
    held until the block ends (the descriptor is close-on-exec: no judge or worker inherits
    it). When another grading holds it, on_wait(pid) is called once (pid: the holder's, which
    it writes into the file, or None when unknown), then this waits for it."""
    fd = open_lock(Path(build_dir) / BUILD_LOCK_NAME, what="build folder lock", private=False)
    try:
        _take(fd, fcntl.LOCK_EX, None if on_wait is None else lambda: on_wait(_holder_pid(fd)))
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield
        finally:
            try:
                os.ftruncate(fd, 0)
            except OSError:
                pass
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
