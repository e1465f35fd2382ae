"""Runs one command in its own process group with a time limit and capped output.

A hang (a kernel that never ends only stops on SIGKILL) is killed with its whole group;
output beyond the cap is cut from the middle, keeping its start and end.

run_with_results also hands the command the write end of a pipe (the judges' results
descriptor) and data for its standard input, and collects what comes down the pipe.
"""

from __future__ import annotations

import dataclasses
import os
import select
import signal
import subprocess
import tempfile
import time

OUTPUT_CAP = 64 * 1024  # bytes kept of each of stdout and stderr
RESULTS_CAP = 16 * 1024 * 1024   # bytes kept of a results descriptor; the rest is drained


@dataclasses.dataclass
class ProcResult:
    returncode: int | None       # None when killed on timeout
    timed_out: bool
    seconds: float
    stdout: str
    stderr: str
    results: bytes = b""          # what came down the results pipe (run_with_results)
    stdout_cut: bool = False      # stdout was longer than the cap: its middle is not in `stdout`
    results_truncated: bool = False
    # When the results arrived, on the grader's clock: (bytes of `results` read so far,
    # seconds since the command started), one pair per read (run_with_results).
    results_arrivals: list = dataclasses.field(default_factory=list)

    @property
    def signal_name(self) -> str | None:
        if self.returncode is not None and self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return None

    @property
    def output(self) -> str:
        return (self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr).strip()


def _longer_than(f, cap: int) -> bool:
    f.seek(0, os.SEEK_END)
    return f.tell() > cap


def _read_capped(f, cap: int) -> str:
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(0)
    if size <= cap:
        data = f.read()
    else:
        head = f.read(cap // 4)
        f.seek(size - (cap - cap // 4))
        tail = f.read()
        data = head + f"\n[... {size - cap} bytes of output cut ...]\n".encode() + tail
    return data.decode("utf-8", errors="replace")


def _environment(env: dict | None, base_env: dict | None) -> dict:
    full_env = dict(os.environ if base_env is None else base_env)
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    return full_env


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(cmd: list, timeout_s: float, env: dict | None = None, cwd: str | None = None,
        cap: int = OUTPUT_CAP, base_env: dict | None = None) -> ProcResult:
    """Runs `cmd`; never raises for the command's own failures (only for a missing program).

    `env` adds to the environment (the grader's own, or `base_env` when given: then nothing
    else is inherited); a value of None removes that variable."""
    full_env = _environment(env, base_env)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=full_env, cwd=cwd, start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            proc.wait()
        else:
            # Leave nothing behind: children the command started in its group go too.
            _kill_group(proc)
        seconds = time.monotonic() - start
        return ProcResult(returncode=None if timed_out else proc.returncode, timed_out=timed_out,
                          seconds=seconds, stdout=_read_capped(out, cap),
                          stderr=_read_capped(err, cap), stdout_cut=_longer_than(out, cap))


class _Collector:
    """Bytes read from a non-blocking descriptor, the first `cap` of them kept."""

    def __init__(self, fd: int, cap: int):
        self.fd, self.cap = fd, cap
        self.chunks, self.size, self.truncated, self.eof = [], 0, False, False
        self.arrivals = []   # (self.size after a read, time.monotonic() of that read)

    def read_available(self) -> None:
        while not self.eof:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            if not data:
                self.eof = True
                return
            keep = max(0, min(len(data), self.cap - self.size))
            if keep:
                self.chunks.append(data[:keep])
                self.size += keep
                self.arrivals.append((self.size, time.monotonic()))
            if keep < len(data):
                self.truncated = True

    def data(self) -> bytes:
        return b"".join(self.chunks)


def run_with_results(make_cmd, timeout_s: float, *, stdin_data: bytes = b"",
                     env: dict | None = None, cwd: str | None = None, cap: int = OUTPUT_CAP,
                     results_cap: int = RESULTS_CAP, poll_s: float = 0.05) -> ProcResult:
    """Runs make_cmd(fd), where fd is the number, in the child, of a pipe's write end that only
    the child holds; returns what it wrote there in ProcResult.results.

    `env` is the whole environment of the command (nothing is inherited when it is given).
    `stdin_data` is written to the command's standard input, which is then closed. The pipe is
    read while the command runs (a full pipe never blocks it). At the time limit, or when the
    command ends, its whole process group is killed; then what is left in the pipe is read
    without waiting, so a process that escaped the group and still holds the write end cannot
    hold up the grader."""
    r, w = os.pipe()    # both ends close-on-exec: only `w`, passed below, reaches the child
    collector = _Collector(r, results_cap)
    try:
        os.set_blocking(r, False)
        cmd = make_cmd(w)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            start = time.monotonic()
            try:
                proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.PIPE,
                                        env=env, cwd=cwd, start_new_session=True, pass_fds=(w,))
            finally:
                os.close(w)  # the parent's copy: EOF once the child's copies are gone
                w = -1
            try:
                proc.stdin.write(stdin_data)
                proc.stdin.close()
            except OSError:   # it exited (or closed its stdin) without reading: its business
                pass
            deadline = start + timeout_s
            timed_out = False
            while proc.poll() is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                if collector.eof:
                    try:
                        proc.wait(timeout=remaining)
                    except subprocess.TimeoutExpired:
                        pass
                    continue
                try:
                    select.select([r], [], [], min(remaining, poll_s))
                except InterruptedError:
                    pass
                collector.read_available()
            _kill_group(proc)
            proc.wait()
            collector.read_available()
            seconds = time.monotonic() - start
            return ProcResult(returncode=None if timed_out else proc.returncode,
                              timed_out=timed_out, seconds=seconds,
                              stdout=_read_capped(out, cap), stderr=_read_capped(err, cap),
                              stdout_cut=_longer_than(out, cap),
                              results=collector.data(), results_truncated=collector.truncated,
                              results_arrivals=[(size, t - start)
                                                for size, t in collector.arrivals])
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
