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
    with Started(lambda fd, _ready: make_cmd(fd), env=env, cwd=cwd, cap=cap,
                 results_cap=results_cap) as started:
        return started.finish(timeout_s, stdin_data=stdin_data, poll_s=poll_s)


class Started:
    """A command started now and finished later (run_with_results in two steps): make_cmd(fd,
    ready_fd) gets the numbers, in the child, of the results pipe's write end and of a second
    pipe's (`ready_fd`, None unless `ready` is asked for), on which the child says it is ready
    for its standard input (wait_ready). Until finish(), the child runs with no time limit of
    its own: the caller bounds it (wait_ready's timeout, then finish's). Leaving the `with`
    without finish() kills its process group."""

    def __init__(self, make_cmd, *, ready: bool = False, env: dict | None = None,
                 cwd: str | None = None, cap: int = OUTPUT_CAP, results_cap: int = RESULTS_CAP):
        self._cap = cap
        self._r, w = os.pipe()   # close-on-exec: only `w`, passed below, reaches the child
        self._ready_r, ready_w = os.pipe() if ready else (-1, -1)
        self._collector = _Collector(self._r, results_cap)
        self._out = tempfile.TemporaryFile()
        self._err = tempfile.TemporaryFile()
        self.proc = None
        try:
            os.set_blocking(self._r, False)
            cmd = make_cmd(w, ready_w if ready else None)
            self.start = time.monotonic()
            self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=self._err,
                                         stdin=subprocess.PIPE, env=env, cwd=cwd,
                                         start_new_session=True,
                                         pass_fds=(w, ready_w) if ready else (w,))
        except BaseException:
            self.close()
            raise
        finally:
            # The parent's copies: EOF once the child's copies are gone
            os.close(w)
            if ready_w >= 0:
                os.close(ready_w)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data: bytes) -> None:
        """Writes `data` to the child's standard input, leaving it open (finish closes it)."""
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except OSError:   # it exited (or closed its stdin) without reading: its business
            pass

    def wait_ready(self, timeout_s: float) -> bool:
        """True once the child wrote a line on its ready pipe; False when it closed the pipe or
        ended without one, or at `timeout_s` (then it goes on running). The results pipe is read
        meanwhile."""
        if self._ready_r < 0:
            return False
        deadline = time.monotonic() + timeout_s
        said = b""
        while b"\n" not in said:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                readable, _, _ = select.select([self._ready_r, self._r], [], [],
                                               min(remaining, 0.05))
            except InterruptedError:
                continue
            self._collector.read_available()
            if self._ready_r in readable:
                chunk = os.read(self._ready_r, 64)
                if not chunk:
                    return False
                said += chunk
        return True

    def finish(self, timeout_s: float, *, stdin_data: bytes = b"",
               poll_s: float = 0.05) -> ProcResult:
        """Writes `stdin_data` to the child's standard input and closes it, then reads the
        results pipe until the child ends or `timeout_s` (from now) passes; kills its process
        group either way. ProcResult.seconds counts from now."""
        proc, collector, r = self.proc, self._collector, self._r
        start = time.monotonic()
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
        out, err, cap = self._out, self._err, self._cap
        return ProcResult(returncode=None if timed_out else proc.returncode,
                          timed_out=timed_out, seconds=seconds,
                          stdout=_read_capped(out, cap), stderr=_read_capped(err, cap),
                          stdout_cut=_longer_than(out, cap),
                          results=collector.data(), results_truncated=collector.truncated,
                          results_arrivals=[(size, max(0.0, t - start))
                                            for size, t in collector.arrivals])

    def close(self) -> None:
        """Kills the child's process group (if it still runs) and frees the pipes and files."""
        if self.proc is not None:
            _kill_group(self.proc)
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            self.proc.wait()
            self.proc = None
        for fd in (self._r, self._ready_r):
            if fd >= 0:
                os.close(fd)
        self._r = self._ready_r = -1
        self._out.close()
        self._err.close()
