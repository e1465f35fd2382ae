"""One grading at a time per results file.

Two graders started from one clone (or given the same -o) would each write grade-results.json
at the end, the last one silently replacing the other's results. A grading therefore holds an
advisory lock (flock) on its results file for as long as it runs: `.<name>.lock` beside it,
which names the holder (pid, host, start, command). A second grading asking for the same file
is refused at once (GraderError, exit 2) with that name, before it builds anything; it does not
wait, since after the wait it would replace the first one's results all the same. The results
themselves are written beside their name and renamed over it (cli.write_output), so a reader
never sees half a file.

The lock file is removed by its holder when the grading ends (a grading killed outright leaves
it behind, unlocked: the next one takes it). A taker checks, once it holds the lock, that the
file it locked is still the one at that name (one that ended may have removed it meanwhile),
and tries again otherwise."""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import os
import shlex
import socket
import sys
from pathlib import Path

from grader.errors import EXIT_USAGE, GraderError


def lock_path(output: Path) -> Path:
    return output.parent / f".{output.name}.lock"


def _holder() -> str:
    started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    command = shlex.join(["python3", "-m", "grader", *sys.argv[1:]])
    return f"pid {os.getpid()} on {socket.gethostname()}, started {started}: {command}"


@contextlib.contextmanager
def output_lock(output: Path, flag: str = "--output"):
    """Held while a grading that writes `output` runs; GraderError (exit 2) naming the other
    grading when one holds it."""
    output = Path(os.path.abspath(output))
    lock = lock_path(output)
    for _ in range(100):
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise GraderError(f"{flag}: {lock} (the lock of {output.name}) is a symbolic "
                                  f"link; remove it") from None
            raise GraderError(f"{flag}: cannot create {lock} (the lock of {output.name}): "
                              f"{e.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                other = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
            except OSError:
                other = ""
            os.close(fd)
            raise GraderError(
                f"{flag}: another grading is writing {output} ({other or 'pid unknown'}); "
                f"wait for it to end, or give this one another -o FILE", EXIT_USAGE) from None
        except OSError as e:
            os.close(fd)
            raise GraderError(f"{flag}: cannot lock {lock}: {e.strerror}") from None
        try:
            same = os.stat(lock, follow_symlinks=False)
            mine = os.fstat(fd)
        except FileNotFoundError:
            os.close(fd)
            continue
        if (same.st_dev, same.st_ino) != (mine.st_dev, mine.st_ino):
            os.close(fd)           # removed and made anew by others meanwhile: not ours
            continue
        break
    else:
        raise GraderError(f"{flag}: cannot take the lock {lock}: it keeps changing")
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, (_holder() + "\n").encode("utf-8", "backslashreplace"), 0)
    except OSError:
        pass                        # the name of the holder is a courtesy
    try:
        yield lock
    finally:
        try:
            os.unlink(lock)         # while still held: a taker that opened it sees it gone
        except OSError:
            pass
        os.close(fd)
