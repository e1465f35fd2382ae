"""The benchmark judge (<lab>_bench): run a lab's graded benchmarks in one process, read the
Google Benchmark JSON document it writes to the results pipe, return each entry's counters.

Like the test judge, the bench judge holds no student code (the worker it starts does) and its
document is read from a pipe only it holds, never from a file or its console.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path

from grader import gtest, judge, runner

# Characters special in both regex dialects Google Benchmark may be built with (std::regex's
# ECMAScript and POSIX extended): escaped with a backslash, which both read as a literal.
# (re.escape also escapes '-', '#', '&', '~' and space, which POSIX leaves undefined.)
_REGEX_SPECIAL = set("\\.^$|?*+()[]{}")


class BenchError(Exception):
    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def regex_escape(text: str) -> str:
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


def benchmark_filter(names) -> str:
    """Selects exactly the named benchmarks. Google Benchmark appends the run's settings to a
    registered name ('matmul/v1_naive/4096/iterations:10/manual_time'), so a name also matches
    when a '/' follows it, never when another character does (4096 is not 40960)."""
    return "^(" + "|".join(regex_escape(n) for n in names) + ")(/|$)"


def _matches(entry: dict, name: str) -> bool:
    entry_name = entry.get("run_name", entry.get("name", ""))
    return isinstance(entry_name, str) and (entry_name == name or entry_name.startswith(name + "/"))


# How long a bench judge started ahead (start_benchmarks) may take to get ready: its GPU context,
# its workers' start (each bounded by the judge itself) and its instances. One that is not ready
# by then is not waited for: its run, from its 'go' on, is bounded by run_benchmarks' timeout.
READY_TIMEOUT_S = 60.0
# The profile stage: the bench judge's limit on one profiled replay (Worker::profile, 120 s).
PROFILE_LIMIT_S = 120.0
# The race audit: the bench judge's limit on one racecheck replay (labkit::bench::kRaceAuditLimitS),
# and the counter's values (race_audit: hazards fail the benchmark instead).
RACE_AUDIT_LIMIT_S = 300.0
RACE_AUDIT_CLEAN, RACE_AUDIT_NO_VERDICT = 1, -1


@dataclasses.dataclass(frozen=True)
class Options:
    """How a bench judge runs, besides its benchmarks, worker and seed (from the lab's
    LabConfig: options_for). `routes`: the variants that run in a worker of their own
    (gtest.worker_args); a benchmark's calls go to its variant's worker. `no_shared_memory`:
    the lab refuses shared memory (gtest.no_shared_memory). `profiler`: ncu, to profile one
    timed call of each benchmark (the profile stage; counters prof_*), or of those named in
    `profile_only`. `race_audit`: compute-sanitizer, to replay each benchmark's last timed call
    under racecheck (counter race_audit; hazards fail the benchmark)."""
    routes: dict | None = None
    no_shared_memory: bool = False
    profiler: str | None = None
    profile_only: tuple = ()
    race_audit: str | None = None


class Started:
    """A bench judge started ahead of its benchmarks (start_benchmarks), given its seed: it
    makes its GPU context, starts its workers and draws its benchmarks' instances, then waits
    for 'go', which run_benchmarks sends. Until then it times nothing and no worker has seen an
    input. Leaving the `with` kills it if it did not run."""

    def __init__(self, binary: Path, names: list, *, worker: Path, seed: int,
                 env: dict | None = None, options: Options | None = None):
        self.binary, self.names, self.seed = binary, list(names), seed
        options = options or Options()
        self._stack = contextlib.ExitStack()
        try:
            cwd = self._stack.enter_context(judge.private_dir())
            self.run = self._stack.enter_context(runner.Started(
                lambda fd, ready_fd: _command(binary, names, fd, ready_fd, worker, options),
                ready=True, cwd=str(cwd),
                env=env if env is not None else judge.scrubbed_env()))
            self.run.send(f"{seed}\n".encode())
        except OSError as e:
            self._stack.close()
            raise BenchError("failed", f"could not start {binary.name}: {e.strerror}") from None
        except BaseException:
            self._stack.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def wait_ready(self, timeout_s: float | None = None) -> bool:
        """True once the judge is ready for its 'go' (False: it ended, or is not ready within
        `timeout_s`, by default READY_TIMEOUT_S)."""
        return self.run.wait_ready(READY_TIMEOUT_S if timeout_s is None else timeout_s)

    def close(self) -> None:
        self._stack.close()


def _command(binary: Path, names: list, fd: int, ready_fd: int | None, worker: Path,
             options: Options) -> list:
    o = options
    return [str(binary), f"--benchmark_filter={benchmark_filter(names)}",
            f"--labkit-results-fd={fd}", "--labkit-seed-stdin",
            *([f"--labkit-ready-fd={ready_fd}"] if ready_fd is not None else []),
            *gtest.worker_args(worker, o.routes, o.no_shared_memory),
            *([f"--labkit-profiler={o.profiler}"] if o.profiler else []),
            *([f"--labkit-profile-only={','.join(o.profile_only)}"]
              if o.profiler and o.profile_only else []),
            *([f"--labkit-sanitizer={o.race_audit}", "--labkit-race-audit"] if o.race_audit
              else [])]


def start_benchmarks(binary: Path, names: list, *, worker: Path, seed: int,
                     env: dict | None = None, options: Options | None = None) -> Started:
    """Starts the bench judge for the named benchmarks (Started), run as `options` says: what
    it does before its 'go' (its GPU context, its workers' start, its instances) may overlap
    other labs' tests, so the GPU's exclusive hold covers only the benchmarks themselves.
    Raises BenchError('failed') when it cannot be started."""
    return Started(binary, names, worker=worker, seed=seed, env=env, options=options)


def run_benchmarks(binary: Path, names: list, timeout_s: float, *, worker: Path, seed: int,
                   env: dict | None = None, options: Options | None = None,
                   started: Started | None = None) -> dict:
    """Runs the named benchmarks in one bench-judge process, run as `options` says; returns
    name -> entry (a dict: name, real_time, counters...) or name -> BenchError('failed', why)
    for a benchmark that reported an error or is missing. `started`: that judge, already
    started by start_benchmarks for these `names` and `seed` (it is sent 'go' now; `timeout_s`
    counts from then); it is closed here either way.

    Raises BenchError('timeout'|'failed', message) when the run as a whole gave no document:
    a hang (killed with its process group at `timeout_s`), a crash, unreadable JSON."""
    if started is None:
        started = start_benchmarks(binary, names, worker=worker, seed=seed, env=env,
                                   options=options)
    elif list(started.names) != list(names) or started.seed != seed:
        started.close()
        raise ValueError("run_benchmarks: the started judge runs other benchmarks or seed")
    with started:
        proc = started.run.finish(timeout_s, stdin_data=b"go\n")
    if proc.timed_out:
        raise BenchError("timeout", f"the benchmarks did not finish within {timeout_s:g} s and "
                                    f"were killed (a very slow or hanging kernel)")
    data = None
    if proc.results.strip() and not proc.results_truncated:
        try:
            data = json.loads(proc.results.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            data = None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks", []), list):
        why = (f"crashed ({proc.signal_name})" if proc.signal_name
               else f"exit code {proc.returncode}")
        raise BenchError("failed", f"the benchmark judge gave no result ({why}):\n"
                                   f"{proc.output[-1500:]}")
    entries = [e for e in data.get("benchmarks", []) if isinstance(e, dict)]
    found = {}
    for name in names:
        entry = next((e for e in entries if _matches(e, name)), None)
        if entry is None:
            found[name] = BenchError("failed", f"no benchmark named '{name}' in the output "
                                               f"(exit code {proc.returncode}):\n"
                                               f"{proc.output[-1000:]}")
        elif entry.get("error_occurred"):
            message = entry.get("error_message")
            found[name] = BenchError("failed", message if isinstance(message, str) and message
                                     else "the benchmark reported an error")
        else:
            found[name] = entry
    return found
