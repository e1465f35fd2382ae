"""The test judge (<lab>_test): list its tests, run them all in one process, read its verdicts.

The judge contains no student code: it starts the worker (the student's code) itself and
reports one JSON line per test on a pipe only it holds (--labkit-results-fd). A verdict is
read from that pipe and nowhere else: not from the judge's console output (the worker's output
may be mixed into it), not from files, not from exit codes. A test without a line on the pipe
did not pass. A failed test's line may carry, beside its message, "where": the failed
comparison as data, computed by the judge (TestResult.where).
"""

from __future__ import annotations

import bisect
import dataclasses
import fnmatch
import json
from pathlib import Path

from grader import judge, runner
from grader.results import TestResult

# host_compute: the worker spent CPU time the call cannot need (common/src/judge.cpp): the lab
# earns no correctness points (grade.py).
JUDGE_STATUSES = ("passed", "failed", "crashed", "timeout", "skipped", "host_compute")
MAX_MESSAGE = 20000   # characters kept of one test's message
MAX_WHERE = 64000     # characters of one test's where data (the judge's are a few thousand)


# gtest filter syntax: 'a*:b*-c*' = (a* or b*) and not c*
def matches_filter(name: str, gtest_filter: str) -> bool:
    positive, _, negative = gtest_filter.partition("-")
    pos = [p for p in positive.split(":") if p] or ["*"]
    neg = [p for p in negative.split(":") if p]
    return (any(fnmatch.fnmatchcase(name, p) for p in pos)
            and not any(fnmatch.fnmatchcase(name, p) for p in neg))


def positive_union(filters) -> str:
    """One gtest filter that selects at least every test any of `filters` selects: their
    positive patterns joined. Negative patterns are dropped (a '-' in a joined filter would
    apply to all groups); tests it selects beyond a group's are ignored when the results are
    mapped to groups with matches_filter."""
    patterns = []
    for f in filters:
        pos = [p for p in f.partition("-")[0].split(":") if p]
        if not pos:
            return "*"
        patterns += [p for p in pos if p not in patterns]
    return ":".join(patterns) or "*"


def json_test_names(data: dict, status: str | None = None) -> list:
    """Full test names in a GoogleTest JSON report or listing, in its order; with `status`, only
    the tests of that status ('RUN': those that ran)."""
    return [f"{suite['name']}.{test['name']}" for suite in data.get("testsuites", [])
            for test in suite.get("testsuite", [])
            if status is None or test.get("status") == status]


def case_of(name: str, variant: str | None) -> str:
    """The case a test checks, the same for every version of the lab: its full name less the
    version ('Sizes/Scan.Matches/v1_naive_f32_n1' of variant 'v1_naive' -> 'Sizes/Scan.Matches/
    _f32_n1'). A test without a variant (none listed, or its name does not hold it where the
    judge puts it) is a case of its own."""
    head, sep, last = name.rpartition("/")
    if not variant or not sep or not last.startswith(variant):
        return name
    return f"{head}/{last[len(variant):]}"


def list_tests(binary: Path, timeout_s: float = 60, cases: dict | None = None) -> list:
    """Full test names ('Suite/Fixture.Test/param') in the binary's order. With `cases`, fills
    it with each test's case (case_of, from the variant the judge lists as the test's value
    parameter).

    The judge is trusted and starts no worker to list: no student code runs here. Its JSON goes
    to a file in a private directory."""
    with judge.private_dir() as tmp:
        out = tmp / "list.json"
        try:
            proc = runner.run([str(binary), "--gtest_list_tests", f"--gtest_output=json:{out}"],
                              timeout_s, cwd=str(tmp), base_env=judge.scrubbed_env())
        except OSError as e:
            raise RuntimeError(f"could not start {binary.name}: {e.strerror}") from None
        if proc.timed_out or proc.returncode != 0 or not out.is_file():
            raise RuntimeError(f"could not list the tests of {binary.name}: "
                               f"exit {proc.returncode}, {proc.output[-2000:]}")
        try:
            data = json.loads(out.read_text(encoding="utf-8"))
            names = json_test_names(data)
            if cases is not None:
                for suite in data.get("testsuites", []):
                    for test in suite.get("testsuite", []):
                        name = f"{suite['name']}.{test['name']}"
                        param = test.get("value_param")
                        cases[name] = case_of(name, param if isinstance(param, str) else None)
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError,
                AttributeError) as e:
            raise RuntimeError(f"could not list the tests of {binary.name}: its JSON listing "
                               f"is unreadable ({e})") from None
    return names


@dataclasses.dataclass
class JudgeRun:
    """What one run of the test judge reported."""
    tests: dict                  # name -> TestResult, from the results pipe only
    proc: runner.ProcResult
    timeout_s: float             # the whole run's limit
    sandbox: dict | None = None  # the 'worker' event, less 'event'
    done: int | None = None      # the 'done' event's test count
    warnings: list = dataclasses.field(default_factory=list)
    # When each line arrived in the pipe, in seconds since the judge started, on the grader's
    # clock (for the per-stage times, grade.judge_stages): test name -> its first verdict's
    # arrival; worker_at: the 'worker' event's (the judge and its first worker started).
    arrivals: dict = dataclasses.field(default_factory=dict)
    worker_at: float | None = None


def worker_args(worker: Path, routes: dict | None = None, no_shared_memory: bool = False) -> list:
    """The judges' worker flags: `worker` runs every variant but those in `routes` (variant ->
    the binary that runs it instead: manifest.LabPaths.worker_routes), tests and benchmarks
    alike. `no_shared_memory`: the lab refuses shared memory (no_shared_memory below), and the
    executor refuses every launch that asks for dynamic shared memory."""
    return ([f"--labkit-worker={worker}"]
            + [f"--labkit-worker-for={variant}={path}"
               for variant, path in sorted((routes or {}).items())]
            + (["--labkit-no-shared-memory"] if no_shared_memory else []))


def no_shared_memory(policy) -> bool:
    """Whether a lab's policy (config.LabConfig.policy) refuses shared memory in its device code:
    then its executor refuses dynamic shared memory too, which no SASS rule can see (a kernel
    may reach the window through a generic address it was never seen to make)."""
    return "shared_memory" in tuple(getattr(policy, "forbid_device_instructions", ()) or ())


# The longest a judge's compute-sanitizer replay of one call may take (common/src/judge.cpp,
# Worker::sanitize: the longer of its deadlines, racecheck's).
SANITIZER_REPLAY_S = 300


def judge_command(binary: Path, gtest_filter: str, worker: Path, call_timeout_s: float,
                  sanitizer: str | None, fd: int, memcheck: bool = True,
                  routes: dict | None = None, memory_lock: Path | None = None,
                  budget_s: float | None = None, streaks: Path | None = None,
                  no_shared_memory: bool = False) -> list:
    """The judge's command line. The sanitizer serves both graded race checks (a lab's tests)
    and memcheck re-runs of failing calls; `memcheck` False turns off only the latter.
    `memory_lock`: the GPU's memory lock file (gpulock.memory_lock_path), which large calls
    take in turns. `streaks`: a file the judges of one lab's tests share, where each variant's
    run of hangs and crashes is counted across them (WorkerOptions::streaks)."""
    cmd = [str(binary), f"--gtest_filter={gtest_filter}", "--gtest_color=no",
           f"--labkit-results-fd={fd}", "--labkit-seed-stdin",
           *worker_args(worker, routes, no_shared_memory),
           f"--labkit-call-timeout={call_timeout_s:g}"]
    if budget_s is not None:
        cmd.append(f"--labkit-test-budget={budget_s:g}")
    if sanitizer:
        cmd.append(f"--labkit-sanitizer={sanitizer}")
        if not memcheck:
            cmd.append("--labkit-memcheck=0")
    if memory_lock is not None:
        cmd.append(f"--labkit-memory-lock={Path(memory_lock).absolute()}")
    if streaks is not None:
        cmd.append(f"--labkit-streaks={Path(streaks).absolute()}")
    return cmd


def shard_of(names: list, gtest_filter: str, shards: int, cases: dict | None = None) -> dict:
    """test name -> the shard (0 .. shards-1) that runs it when `shards` judges split the tests
    `gtest_filter` selects from `names` (the binary's order, list_tests). Without `cases`, as
    GoogleTest's own sharding (GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX): the i-th selected test
    goes to shard i % shards. With `cases` (test -> its case, list_tests), the i-th case goes
    to shard i % shards with every version of it: one judge draws what they share (a matrix,
    an input) once, where a test each way round drew it in every judge."""
    selected = [n for n in names if matches_filter(n, gtest_filter)
                and not any(part.startswith("DISABLED_") for part in n.split("."))]
    if cases is None:
        return {name: i % shards for i, name in enumerate(selected)}
    order: dict = {}
    for name in selected:
        order.setdefault(cases.get(name, name), len(order))
    return {name: order[cases.get(name, name)] % shards for name in selected}


def run_judge(binary: Path, gtest_filter: str, expected: int, *, worker: Path, seed: int,
              call_timeout_s: float, sanitizer: str | None = None, memcheck: bool = True,
              env: dict | None = None, routes: dict | None = None,
              memory_lock: Path | None = None, shard: tuple | None = None,
              budget_s: float | None = None, streaks: Path | None = None,
              no_shared_memory: bool = False) -> JudgeRun:
    """Runs every test `gtest_filter` selects in one judge process; with `shard` (index, total),
    only that shard of them (shard_of says which).

    `expected`: how many tests that is; the whole run may take (expected + 5) * call_timeout_s,
    and with `budget_s` (the judge's own limit for its tests, after which it fails the rest
    without running them) no more than that plus one call and a race check's replay, before the
    judge is killed with its process group. Raises RuntimeError when it cannot be started at
    all."""
    timeout_s = (expected + 5) * call_timeout_s
    if budget_s is not None:
        timeout_s = min(timeout_s, budget_s + call_timeout_s + SANITIZER_REPLAY_S)
    env = dict(env if env is not None else judge.scrubbed_env())
    if shard is not None:
        env.update(GTEST_SHARD_INDEX=str(shard[0]), GTEST_TOTAL_SHARDS=str(shard[1]))
    with judge.private_dir() as cwd:
        try:
            proc = runner.run_with_results(
                lambda fd: judge_command(binary, gtest_filter, worker, call_timeout_s, sanitizer,
                                         fd, memcheck, routes, memory_lock, budget_s,
                                         streaks, no_shared_memory),
                timeout_s, stdin_data=f"{seed}\n".encode(), cwd=str(cwd), env=env)
        except OSError as e:
            raise RuntimeError(f"could not start {binary.name}: {e.strerror}") from None
    return parse_results(proc, timeout_s)


def parse_results(proc: runner.ProcResult, timeout_s: float) -> JudgeRun:
    run = JudgeRun(tests={}, proc=proc, timeout_s=timeout_s)
    if proc.results_truncated:
        run.warnings.append(f"the test judge wrote more than {runner.RESULTS_CAP} bytes of "
                            f"results; the rest was ignored")
    sizes = [size for size, _ in proc.results_arrivals]
    end = -1
    for i, raw in enumerate(proc.results.split(b"\n"), 1):
        end += len(raw) + 1   # the index of this line's newline
        if not raw.strip():
            continue
        # The read that brought this line's newline (or its last byte) into the pipe's buffer.
        at = bisect.bisect_left(sizes, min(end, len(proc.results) - 1) + 1)
        arrived = proc.results_arrivals[at][1] if at < len(sizes) else proc.seconds
        event = _decode(raw)
        kind = event.get("event") if event is not None else None
        if kind == "test":
            result = _test_result(event)
            if result is None:
                run.warnings.append(f"ignored a malformed test line {i} from the test judge: "
                                    f"{_excerpt(raw)}")
                continue
            run.arrivals.setdefault(result.name, arrived)
            if result.name in run.tests:
                run.warnings.append(f"the test judge reported {result.name} twice")
                # Never upgrade: a second line may turn a pass into a failure, not back.
                if run.tests[result.name].passed:
                    run.tests[result.name] = result
            else:
                run.tests[result.name] = result
        elif kind == "worker":
            if run.sandbox is None:
                run.sandbox = {k: v for k, v in event.items()
                               if k != "event" and isinstance(v, (str, int, float, bool))}
                run.worker_at = arrived
        elif kind == "done":
            if isinstance(event.get("tests"), int) and not isinstance(event["tests"], bool):
                run.done = event["tests"]
        else:
            run.warnings.append(f"ignored a malformed line {i} from the test judge: "
                                f"{_excerpt(raw)}")
    return run


def _decode(raw: bytes) -> dict | None:
    try:
        event = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return event if isinstance(event, dict) else None


def _test_result(event: dict) -> TestResult | None:
    name, status = event.get("name"), event.get("status")
    message, seconds = event.get("message", ""), event.get("seconds", 0.0)
    if (not isinstance(name, str) or not name or status not in JUDGE_STATUSES
            or not isinstance(message, str) or isinstance(seconds, bool)
            or not isinstance(seconds, (int, float)) or not seconds >= 0):
        return None
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE] + f"\n[... {len(message) - MAX_MESSAGE} characters cut]"
    return TestResult(name=name, status=status, message=message, seconds=float(seconds),
                      where=_where(event.get("where"), status))


def _where(where, status: str) -> dict | None:
    """A test line's where data (a failed comparison, common/src/compare.cpp), kept as the
    judge wrote it when it is a JSON object of sane size on a test that did not pass; else
    nothing (the verdict and the message stand without it). Drawing checks it field by field
    (wheremap.from_dict)."""
    if status == "passed" or not isinstance(where, dict):
        return None
    try:
        size = len(json.dumps(where))
    except (ValueError, RecursionError):
        return None
    return where if size <= MAX_WHERE else None


def _excerpt(raw: bytes, n: int = 120) -> str:
    text = raw.decode("utf-8", errors="replace")
    return repr(text[:n]) + (" ..." if len(text) > n else "")


def result_for(run: JudgeRun, name: str) -> TestResult:
    """The judge's verdict on `name`; a test it did not report crashed (or timed out, when the
    judge was killed at the run's limit): never passed."""
    if name in run.tests:
        return run.tests[name]
    proc = run.proc
    if proc.timed_out:
        status = "timeout"
        how = (f"the test judge was still running at the limit of {run.timeout_s:g} s for the "
               f"whole run and was killed")
    elif proc.signal_name:
        status, how = "crashed", f"the test judge crashed ({proc.signal_name})"
    else:
        status, how = "crashed", f"the test judge ended (exit code {proc.returncode})"
    tail = proc.output[-1500:]
    message = f"{how} before reporting this test: no verdict, so it did not pass"
    if tail:
        message += f"\n  the judge's last output:\n{_indent(tail)}"
    return TestResult(name=name, status=status, message=message, seconds=0.0)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())
