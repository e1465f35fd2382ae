"""Runs one command in its own process group with a time limit and capped output.

A hang (a kernel that never ends only stops on SIGKILL) is killed with its whole group;
output beyond the cap is cut from the middle, keeping its start and end.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import tempfile
import time

OUTPUT_CAP = 64 * 1024  # bytes kept of each of stdout and stderr


@dataclasses.dataclass
class ProcResult:
    returncode: int | None       # None when killed on timeout
    timed_out: bool
    seconds: float
    stdout: str
    stderr: str

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


def run(cmd: list, timeout_s: float, env: dict | None = None, cwd: str | None = None,
        cap: int = OUTPUT_CAP) -> ProcResult:
    """Runs `cmd`; never raises for the command's own failures (only for a missing program).

    `env` adds to the environment; a value of None removes that variable."""
    full_env = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=full_env, cwd=cwd, start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        else:
            # Leave nothing behind: children the command started in its group go too.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        seconds = time.monotonic() - start
        return ProcResult(returncode=None if timed_out else proc.returncode, timed_out=timed_out,
                          seconds=seconds, stdout=_read_capped(out, cap),
                          stderr=_read_capped(err, cap))
