"""Helpers for the grader's tests: fake judges, workers, GPU probes, build manifests and a fake
policy module.

The fake binaries are small Python scripts (run by this interpreter, via their shebang) that
parse the command line flags the grader passes, read the seed from stdin and write results in
the real judges' formats to the descriptor given by --labkit-results-fd (docs/architecture.md).
What each test or benchmark does is chosen by its name. Not a test module itself (no test_
prefix).
"""

from __future__ import annotations

import importlib
import json
import stat
import sys
import textwrap
import types
from pathlib import Path
from unittest import mock

# Run first in every fake: no core files from the deliberate crashes; lock_state() for the
# fakes that record how the grader holds the GPU lock while they run; the flags every judge
# takes.
_PRELUDE = """\
import json, os, re, signal, sys, time
nan, inf = float("nan"), float("inf")     # so that repr() of counters reads back
try:
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
except Exception:
    pass
""" + '''

def lock_state(path):
    # how another process holds the GPU lock file: 'free', 'shared' or 'exclusive'
    if not path:
        return None
    import fcntl
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(f, fcntl.LOCK_UN)
            return "free"
        except OSError:
            pass
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(f, fcntl.LOCK_UN)
            return "shared"
        except OSError:
            return "exclusive"


def flags():
    out = {"args": []}
    for a in sys.argv[1:]:
        if a.startswith("--") and "=" in a:
            k, v = a[2:].split("=", 1)
            out[k] = v
        elif a.startswith("--"):
            out[a[2:]] = True
        else:
            out["args"].append(a)
    return out


def read_seed(f):
    return sys.stdin.readline().strip() if f.get("labkit-seed-stdin") else None


def log_run(path, f, seed, lock):
    if path:
        with open(path, "a") as out:
            out.write(json.dumps({"argv": sys.argv[1:], "seed": seed, "lock": lock_state(lock),
                                  "cwd": os.getcwd(), "env": dict(os.environ),
                                  "cwd_mode": os.stat(os.getcwd()).st_mode & 0o777}) + "\\n")


def results_stream(f):
    fd = f.get("labkit-results-fd")
    return os.fdopen(int(fd), "w") if fd else None
'''


def write_executable(path: Path, body: str) -> Path:
    """Writes an executable Python script at `path` (shebang: this interpreter)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n" + _PRELUDE + textwrap.dedent(body), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# --- the test judge --------------------------------------------------------------------------

# Behaviours of one test, by keyword; the judge reports on the results descriptor:
#   pass, fail (message FAIL_MESSAGE), skip (SKIP_LINE), worker_crash (status crashed, as a
#   judge reports a worker that died), worker_timeout (status timeout),
#   seed (passes only when the seed read from stdin is '1234'; otherwise fails naming it),
#   double (reports passed, then failed, for the same test),
#   append:<path> (appends a line to <path>, as a worker tampering with the build tree would,
#   and reports passed),
#   sleep:<seconds> (takes that long, then reports passed: the per-stage times),
#   where (fails with FAIL_MESSAGE and the where data WHERE, as a failed comparison does),
#   where_passed (passes, with WHERE all the same), where_bad (fails, with where data that is a
#   string, not an object).
# Behaviours that leave this test and every later one without a line:
#   judge_crash (the judge dies of SIGSEGV), judge_exit (the judge exits 1), hang (the judge
#   sleeps 100 s: the grader's limit for the whole run kills it).
# Lines the grader must not believe:
#   malformed (a non-JSON line and a test line without a status, nothing valid for this test),
#   stdout_liar (GoogleTest's '[  PASSED  ]' lines and a JSON 'passed' line on stdout, a
#   gtest JSON file in its cwd, nothing on the descriptor).
FAIL_MESSAGE = "expected 1 but got 2\n  at C[0,0]"
# A failed comparison's where data, as the judge records it (common/src/compare.cpp).
WHERE = {"kind": "matrix", "name": "C", "shape": [7, 3], "exact": False, "checked": 21,
         "wrong": 1, "never_written": 0, "nonfinite": 0, "worst_ratio": 1e6,
         "first": [{"index": 0, "at": [0, 0], "got": 2, "expected": 1, "bound": 1e-6}],
         "map": {"cell": [32, 32], "rows": ["x"]},
         "wrong_rows": {"ranges": [[0, 0]], "ranges_total": 1, "count": 1, "of": 7},
         "wrong_cols": {"ranges": [[0, 0]], "ranges_total": 1, "count": 1, "of": 3}}
SKIP_LINE = "[ labkit  ] GPU: no CUDA GPU: CUDA driver version is insufficient"
WORKER_EVENT = {"event": "worker", "sandbox": "uid 65534 (root dropped), no network",
                "device": "Fake GPU 80GB"}

_JUDGE_BODY = """
TESTS = {tests!r}          # [suite, test, behaviour(, variant)], in the binary's order
FAIL_MESSAGE = {fail!r}
WHERE = {where!r}
SKIP_LINE = {skip!r}
WORKER_EVENT = {worker!r}
LOG = {log!r}              # a file each run appends its argv, seed, env, cwd to (or None)
LOCK = {lock!r}            # a GPU lock file whose state each run records (or None)
FILTERING = {filtering!r}  # --gtest_filter honoured (else every test runs)
SHARDING = {sharding!r}    # GoogleTest's sharding variables honoured (the i-th selected test
                           # runs in shard i % GTEST_TOTAL_SHARDS), as the real judges do


def matches(name, flt):
    import fnmatch
    pos, _, neg = flt.partition("-")
    pos = [p for p in pos.split(":") if p] or ["*"]
    neg = [p for p in neg.split(":") if p]
    return (any(fnmatch.fnmatchcase(name, p) for p in pos)
            and not any(fnmatch.fnmatchcase(name, p) for p in neg))


def main():
    f = flags()
    seed = read_seed(f)
    log_run(LOG, f, seed, LOCK)
    if f.get("gtest_list_tests"):
        suites = []
        for suite, test, _, *variant in TESTS:
            print(suite + ".")
            print("  " + test)
            if not suites or suites[-1]["name"] != suite:
                suites.append({{"name": suite, "testsuite": []}})
            entry = {{"name": test}}
            if variant:   # as the real judges list it (labkit::cases::register_suites)
                entry["value_param"] = variant[0]
            suites[-1]["testsuite"].append(entry)
        out = f.get("gtest_output", "")
        if out.startswith("json:"):
            with open(out[5:], "w") as fh:
                json.dump({{"testsuites": suites}}, fh)
        return 0
    res = results_stream(f)

    def emit(obj):
        if res is not None:
            res.write(json.dumps(obj) + "\\n")
            res.flush()

    def test_line(name, status, message="", **more):
        emit(dict({{"event": "test", "name": name, "status": status, "message": message,
                    "seconds": 0.01}}, **more))

    if WORKER_EVENT:
        emit(WORKER_EVENT)
    flt = f.get("gtest_filter", "*")
    shards = int(os.environ.get("GTEST_TOTAL_SHARDS", "1")) if SHARDING else 1
    shard = int(os.environ.get("GTEST_SHARD_INDEX", "0")) if SHARDING else 0
    count, code, selected, ran = 0, 0, -1, []
    for suite, test, how, *_ in TESTS:
        name = suite + "." + test
        if FILTERING and not matches(name, flt):
            continue
        selected += 1
        if selected % shards != shard:
            continue
        count += 1
        ran.append((suite, test))
        print("[ RUN      ] " + name, flush=True)
        if how == "pass":
            test_line(name, "passed")
        elif how == "fail":
            test_line(name, "failed", FAIL_MESSAGE)
            code = 1
        elif how == "skip":
            test_line(name, "skipped", SKIP_LINE)
        elif how == "where":
            test_line(name, "failed", FAIL_MESSAGE, where=WHERE)
        elif how == "where_passed":
            test_line(name, "passed", where=WHERE)
        elif how == "where_bad":
            test_line(name, "failed", FAIL_MESSAGE, where="map of the 7 x 3 output: x")
        elif how == "worker_crash":
            test_line(name, "crashed", "the worker crashed (SIGSEGV) during call 1 of 1")
        elif how == "worker_timeout":
            test_line(name, "timeout", "the worker did not answer within "
                      + f.get("labkit-call-timeout", "?") + " s and was killed")
        elif how == "seed":
            if seed == "1234":
                test_line(name, "passed")
            else:
                test_line(name, "failed", "wrong seed: %r" % seed)
        elif how == "double":
            test_line(name, "passed")
            test_line(name, "failed", "second thoughts")
        elif how.startswith("append:"):
            with open(how[len("append:"):], "a") as fh:
                fh.write("# tampered\\n")
            test_line(name, "passed")
        elif how.startswith("sleep:"):
            time.sleep(float(how[len("sleep:"):]))
            test_line(name, "passed")
        elif how == "judge_crash":
            print("about to crash", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
            time.sleep(5)
        elif how == "judge_exit":
            print("giving up", flush=True)
            sys.exit(1)
        elif how == "hang":
            print("waiting forever", flush=True)
            time.sleep(100)
        elif how == "malformed":
            if res is not None:
                res.write("this is not json\\n")
                res.write(json.dumps({{"event": "test", "name": name}}) + "\\n")
                res.write(json.dumps({{"event": "test", "name": name, "status": "PASSED"}}) + "\\n")
                res.write(json.dumps(["event", "test", name, "passed"]) + "\\n")
                res.flush()
        elif how == "stdout_liar":
            print("[       OK ] " + name + " (0 ms)")
            print(json.dumps({{"event": "test", "name": name, "status": "passed"}}))
            with open("test_detail.json", "w") as fh:
                json.dump({{"testsuites": [{{"name": suite, "testsuite": [
                    {{"name": test, "status": "RUN", "result": "COMPLETED"}}]}}]}}, fh)
        else:
            raise SystemExit("fake judge: unknown behaviour " + how)
    print("[  PASSED  ] %d tests." % count, flush=True)
    emit({{"event": "done", "tests": count}})
    out = f.get("gtest_output", "")
    if out.startswith("json:"):
        suites = []
        for suite, test in ran:
            if not suites or suites[-1]["name"] != suite:
                suites.append({{"name": suite, "testsuite": []}})
            suites[-1]["testsuite"].append({{"name": test, "status": "RUN"}})
        with open(out[5:], "w") as fh:
            json.dump({{"testsuites": suites}}, fh)
    return code


sys.exit(main())
"""


def fake_judge(path: Path, tests: list, log: Path | None = None, lock: Path | None = None,
               worker_event: dict | None = WORKER_EVENT, sharding: bool = True,
               filtering: bool = True) -> Path:
    """A fake test judge. `tests`: [(suite, test, behaviour[, variant]), ...] (see above; the
    variant is listed as the test's value parameter, as the real judges list it). `sharding`
    False: it runs every selected test whatever GoogleTest's sharding variables say;
    `filtering` False: every test, whatever its filter says."""
    body = _JUDGE_BODY.format(tests=[list(t) for t in tests], fail=FAIL_MESSAGE, where=WHERE,
                              skip=SKIP_LINE, sharding=sharding, filtering=filtering,
                              worker=worker_event, log=str(log) if log else None,
                              lock=str(lock) if lock else None)
    return write_executable(path, body)


# --- the bench judge -------------------------------------------------------------------------

# Behaviours of one benchmark, by keyword:
#   ok (writes its counters), error (error_occurred with ERROR_MESSAGE), segv (the judge crashes
#   before writing anything), hang (sleeps 100 s), no_ratio (an entry without 'ratio'),
#   garbage (writes half a JSON document), stdout_only (writes the document to stdout, nothing
#   on the descriptor), seed (ratio as given when the seed from stdin is '1234', else 0.001),
#   exit_before_ready (the judge exits 3 at once), never_ready (sleeps 100 s before it says it
#   is ready). With --labkit-ready-fd the judge reads its seed, writes 'ready' there (logging
#   the GPU lock's state then to <log>.ready) and waits for 'go' on stdin (else it exits 2).
ERROR_MESSAGE = "output differs from cuBLAS before timing: C[3,7] = 1.5, expected 2.5"

_BENCH_BODY = """
BENCHES = {benches!r}      # [name, behaviour, counters]
ERROR_MESSAGE = {error!r}
LOG = {log!r}
LOCK = {lock!r}


def main():
    f = flags()
    hows = [how for _, how, _ in BENCHES]
    ready = f.get("labkit-ready-fd")
    if "exit_before_ready" in hows:
        return 3
    if "never_ready" in hows:
        time.sleep(100)
    seed = read_seed(f)
    if ready:
        # the GPU lock as it is when this judge says it is ready (before its 'go')
        with open(str(LOG) + ".ready", "a") if LOG else open(os.devnull, "w") as out:
            out.write(json.dumps({{"lock": lock_state(LOCK), "seed": seed}}) + "\\n")
        os.write(int(ready), b"ready\\n")
        os.close(int(ready))
        if sys.stdin.readline() != "go\\n":
            return 2
    log_run(LOG, f, seed, LOCK)
    flt = f.get("benchmark_filter", ".")
    res = results_stream(f)
    entries, to_stdout = [], False
    for name, how, counters in BENCHES:
        if not re.search(flt, name):
            continue
        if how == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
            time.sleep(5)
        if how == "hang":
            time.sleep(100)
        if how == "garbage":
            res.write('{{"context": {{}}, "benchmarks": [')
            res.flush()
            return 1
        entry = {{"name": name, "family_index": 0, "per_family_instance_index": 0,
                  "run_name": name, "run_type": "iteration", "repetitions": 1,
                  "repetition_index": 0, "threads": 1, "iterations": 10,
                  "real_time": 45.5, "cpu_time": 0.02, "time_unit": "ms"}}
        if how == "error":
            entry["error_occurred"] = True
            entry["error_message"] = ERROR_MESSAGE
        else:
            entry.update(counters)
            if how == "no_ratio":
                entry.pop("ratio", None)
            if how == "seed" and seed != "1234":
                entry["ratio"] = 0.001
            to_stdout = to_stdout or how == "stdout_only"
        print(name, flush=True)
        entries.append(entry)
    if not entries:
        print("Failed to match any benchmarks against regex: " + flt, file=sys.stderr)
    doc = json.dumps({{"context": {{"date": "2024-01-01", "num_cpus": 2}}, "benchmarks": entries}})
    if to_stdout:
        print(doc)
    elif res is not None:
        res.write(doc)
        res.flush()
    return 0


sys.exit(main())
"""


def fake_bench(path: Path, benches: list, log: Path | None = None,
               lock: Path | None = None) -> Path:
    """A fake bench judge. `benches`: [(full name, behaviour, {counter: value}), ...]."""
    body = _BENCH_BODY.format(benches=[[n, how, dict(c)] for n, how, c in benches],
                              error=ERROR_MESSAGE, log=str(log) if log else None,
                              lock=str(lock) if lock else None)
    return write_executable(path, body)


def fake_worker(path: Path) -> Path:
    """Stands in for <lab>_worker: the fake judges never start it; only its hash matters."""
    return write_executable(path, "print('fake worker')\n")


# What the fake labkit_gpu_ceilings prints: an H100 SXM's figures (common/src/gpu_ceilings_main.cu).
FAKE_CEILINGS = {"sgemm_gflops": 50900.0, "copy_gbps": 2970.0, "fp32_peak_gflops": 65900.0,
                 "read_gbps": 3040.0, "sgemm_n": 4096.0, "samples": 7.0}


def fake_gpu_info(path: Path, gpu: dict, ceilings: dict | None = FAKE_CEILINGS) -> Path:
    """A fake labkit_gpu_info printing `gpu`; beside it, unless `ceilings` is None, a fake
    labkit_gpu_ceilings printing `ceilings` (the grader runs it from the probe's folder)."""
    if ceilings is not None:
        fake_gpu_ceilings(Path(path).parent / "labkit_gpu_ceilings", ceilings)
    return write_executable(path, f"""
        print("some driver chatter")
        print(json.dumps({gpu!r}))
        sys.exit(0 if {gpu.get('available')!r} else 1)
    """)


def fake_gpu_ceilings(path: Path, ceilings: dict | None = FAKE_CEILINGS,
                      exit_code: int = 0, stderr: str = "") -> Path:
    """A fake labkit_gpu_ceilings: prints `ceilings` as its JSON line (nothing when None),
    `stderr` on stderr, and exits `exit_code`."""
    return write_executable(path, f"""
        if {stderr!r}:
            print({stderr!r}, file=sys.stderr)
        if {ceilings!r} is not None:
            print(json.dumps({ceilings!r}))
        sys.exit({exit_code!r})
    """)


def read_log(log: Path) -> list:
    """The runs a fake recorded: [{'argv': [...], 'seed': ..., 'lock': ..., 'env': ...}, ...]."""
    if not Path(log).is_file():
        return []
    return [json.loads(line) for line in Path(log).read_text().splitlines() if line.strip()]


# --- the build manifest ----------------------------------------------------------------------

def write_manifest(build_dir: Path, labs: dict, gpu_info: Path,
                   compile_commands: Path | None = None) -> Path:
    """<build_dir>/labs-manifest.json. `labs`: name -> {test, bench, worker: Path,
    objects, sources, headers: [Path], optionally helper_worker: (Path, [variant])} (targets
    are named <lab>_test ...)."""
    data = {"version": 1, "gpu_info": str(gpu_info),
            "compile_commands": str(compile_commands) if compile_commands else None, "labs": {}}
    for name, lab in labs.items():
        data["labs"][name] = {
            "student_target": f"{name}_student",
            "student_sources": [str(p) for p in lab.get("sources", [])],
            "student_objects": [str(p) for p in lab["objects"]],
            "interface_headers": [str(p) for p in lab.get("headers", [])],
            "worker": {"target": f"{name}_worker", "path": str(lab["worker"])},
            "test": {"target": f"{name}_test", "path": str(lab["test"])},
            "bench": {"target": f"{name}_bench", "path": str(lab["bench"])},
        }
        if "helper_worker" in lab:    # (path, [variants]): the worker of those variants
            helper, variants = lab["helper_worker"]
            data["labs"][name]["helper_worker"] = {"target": f"{name}_helper_worker",
                                                   "path": str(helper), "variants": variants}
    path = Path(build_dir) / "labs-manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


# --- grader.policy ---------------------------------------------------------------------------

class FakeViolation:
    def __init__(self, rule: str, symbol: str, message: str):
        self.rule, self.symbol, self.message = rule, symbol, message


class FakePolicyResult:
    def __init__(self, violations: list, seconds: float = 0.25, kernels: list | None = None):
        self.violations = list(violations)
        self.ok = not self.violations
        self.seconds = seconds
        self.kernels = kernels      # as grader.policy.PolicyResult: None, not read

    def report(self) -> str:
        if self.ok:
            return "policy: ok"
        return "\n".join(f"{v.rule}: {v.symbol}: {v.message}" for v in self.violations)


class FakePolicy(types.ModuleType):
    """Stands in for grader.policy (its API, as docs/architecture.md's grader uses it).

    check_submission returns `violations` (FakeViolation) or raises `error`; every call is
    recorded in `calls`."""

    def __init__(self, violations=(), error: Exception | None = None):
        super().__init__("grader.policy")
        self.violations, self.error, self.calls = list(violations), error, []

        class PolicyRules:
            def __init__(self, table, where):
                self.table, self.where = dict(table), where

            @classmethod
            def from_toml(cls, table, where):
                if not isinstance(table, dict):
                    raise TypeError("the [policy] table must be a table")
                return cls(table, where)

        self.PolicyRules = PolicyRules

    def check_submission(self, objects, sources, interface_headers, compile_commands, rules,
                         sandbox=()):
        self.calls.append({"objects": objects, "sources": sources,
                           "interface_headers": interface_headers,
                           "compile_commands": compile_commands, "rules": rules,
                           "sandbox": sandbox})
        if self.error is not None:
            raise self.error
        return FakePolicyResult(self.violations)


def use_policy(module):
    """Context manager / patcher: `module` is grader.policy for the grader while it is active."""
    return mock.patch.dict(sys.modules, {"grader.policy": module})


def run_cli(argv) -> tuple:
    """(exit status, stdout, stderr) of `python3 -m grader ARGV...`, run in this process with a
    FakePolicy standing for grader.policy."""
    import contextlib
    import io

    from grader import cli
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), \
            use_policy(FakePolicy()):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def real_or_fake_policy():
    """grader.policy when it exists (someone else writes it), else a FakePolicy."""
    try:
        return importlib.import_module("grader.policy")
    except ImportError:
        return FakePolicy()


__all__ = ["write_executable", "fake_judge", "fake_bench", "fake_worker", "fake_gpu_info",
           "fake_gpu_ceilings", "FAKE_CEILINGS",
           "read_log", "write_manifest", "FakePolicy", "FakeViolation", "use_policy", "run_cli",
           "real_or_fake_policy", "FAIL_MESSAGE", "SKIP_LINE", "ERROR_MESSAGE", "WORKER_EVENT"]
