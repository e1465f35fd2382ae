"""Helpers for the grader's tests: fake GoogleTest and Google Benchmark executables.

The fakes are small Python scripts (run by this interpreter, via their shebang) that parse the
command line flags the grader passes and write JSON in the real tools' formats. What each test or
benchmark does is chosen by its name. Not a test module itself (no test_ prefix).
"""

from __future__ import annotations

import stat
import sys
import textwrap
from pathlib import Path

# Run first in every fake: no core files from the deliberate crashes; lock_state() for the
# fakes that record how the grader holds the GPU lock while they run.
_PRELUDE = """\
import json, os, re, signal, sys, time
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
'''


def write_executable(path: Path, body: str) -> Path:
    """Writes an executable Python script at `path` (shebang: this interpreter)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n" + _PRELUDE + textwrap.dedent(body), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# --- GoogleTest ------------------------------------------------------------------------------

# Behaviours of one test, by keyword:
#   pass, fail (message "expected 1 but got 2\n  at C[0,0]"), skip (prints 'no CUDA GPU: ...'),
#   segv (SIGSEGV), abort_cuda (prints a CUDA error to stderr, then SIGABRT), hang (sleeps 100 s),
#   exit0 (exit(0) before writing JSON), pass_exit1 (writes a pass, then exits with 1),
#   seed (passes only when LABKIT_SEED == '1234'; otherwise fails naming the seed it saw).
FAIL_MESSAGE = "expected 1 but got 2\n  at C[0,0]"
SKIP_LINE = "[ labkit  ] GPU: no CUDA GPU: CUDA driver version is insufficient"
CUDA_ERROR = "cudaErrorIllegalAddress (an illegal memory access was encountered)"

_GTEST_BODY = """
TESTS = {tests!r}          # [suite, test, behaviour], in the binary's order
FAIL_MESSAGE = {fail!r}
SKIP_LINE = {skip!r}
CUDA_ERROR = {cuda!r}
LOG = {log!r}              # a file each run appends its argv and LABKIT_SEED to (or None)
LOCK = {lock!r}            # a GPU lock file whose state each run records (or None)



def matches(name, flt):
    import fnmatch
    pos, _, neg = flt.partition("-")
    pos = [p for p in pos.split(":") if p] or ["*"]
    neg = [p for p in neg.split(":") if p]
    return (any(fnmatch.fnmatchcase(name, p) for p in pos)
            and not any(fnmatch.fnmatchcase(name, p) for p in neg))


def suites(entries):
    out = []
    for suite, test in entries:
        if not out or out[-1]["name"] != suite:
            out.append({{"name": suite, "testsuite": []}})
        out[-1]["testsuite"].append(test)
    return {{"testsuites": out}}


def write(path, data):
    if path:
        with open(path, "w") as f:
            json.dump(data, f)


def main():
    listing, flt, out = False, "*", None
    for a in sys.argv[1:]:
        if a == "--gtest_list_tests":
            listing = True
        elif a.startswith("--gtest_filter="):
            flt = a[len("--gtest_filter="):]
        elif a.startswith("--gtest_output=json:"):
            out = a[len("--gtest_output=json:"):]
    if LOG:
        with open(LOG, "a") as f:
            f.write(json.dumps({{"argv": sys.argv[1:], "seed": os.environ.get("LABKIT_SEED"),
                                 "lock": lock_state(LOCK)}}) + "\\n")
    if listing:
        for suite, test, _ in TESTS:
            print(suite + ".")
            print("  " + test)
        write(out, suites([(s, {{"name": t}}) for s, t, _ in TESTS]))
        return 0
    ran, code = [], 0
    for suite, test, how in TESTS:
        if not matches(suite + "." + test, flt):
            continue
        record = {{"name": test, "status": "RUN", "result": "COMPLETED"}}
        print("[ RUN      ] " + suite + "." + test, flush=True)
        if how == "pass":
            pass
        elif how == "fail":
            record["failures"] = [{{"failure": FAIL_MESSAGE, "type": ""}}]
        elif how == "seed":
            seed = os.environ.get("LABKIT_SEED")
            if seed != "1234":
                record["failures"] = [{{"failure": "wrong seed: %r" % seed, "type": ""}}]
        elif how == "skip":
            print(SKIP_LINE, flush=True)
            record["result"] = "SKIPPED"
        elif how == "segv":
            print("about to crash", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
            time.sleep(5)
        elif how == "abort_cuda":
            sys.stderr.write("CUDA error at matmul.cu:42: " + CUDA_ERROR + "\\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGABRT)
            time.sleep(5)
        elif how == "hang":
            time.sleep(100)
        elif how == "exit0":
            print("calling exit(0) in the middle of a test", flush=True)
            os._exit(0)
        elif how == "pass_exit1":
            code = 1
        else:
            raise SystemExit("fake gtest: unknown behaviour " + how)
        ran.append((suite, record))
    write(out, suites(ran))
    return code


sys.exit(main())
"""


def fake_gtest(path: Path, tests: list, log: Path | None = None,
               lock: Path | None = None) -> Path:
    """A fake GoogleTest binary. `tests`: [(suite, test, behaviour), ...] (see above)."""
    body = _GTEST_BODY.format(tests=[list(t) for t in tests], fail=FAIL_MESSAGE, skip=SKIP_LINE,
                              cuda=CUDA_ERROR, log=str(log) if log else None,
                              lock=str(lock) if lock else None)
    return write_executable(path, body)


# --- Google Benchmark ------------------------------------------------------------------------

# Behaviours of one benchmark family, by keyword:
#   ok (writes counters), error (error_occurred with ERROR_MESSAGE), segv (crashes before
#   writing), hang (sleeps 100 s), no_ratio (writes an entry without the 'ratio' counter).
ERROR_MESSAGE = "output differs from cuBLAS before timing: C[3,7] = 1.5, expected 2.5"

_BENCH_BODY = """
BENCHES = {benches!r}      # [name, behaviour, counters]
ERROR_MESSAGE = {error!r}
LOG = {log!r}
LOCK = {lock!r}



def main():
    flt, out = ".", None
    for a in sys.argv[1:]:
        if a.startswith("--benchmark_filter="):
            flt = a[len("--benchmark_filter="):]
        elif a.startswith("--benchmark_out="):
            out = a[len("--benchmark_out="):]
    if LOG:
        with open(LOG, "a") as f:
            f.write(json.dumps({{"argv": sys.argv[1:], "seed": os.environ.get("LABKIT_SEED"),
                                 "lock": lock_state(LOCK)}}) + "\\n")
    entries = []
    for name, how, counters in BENCHES:
        if not re.search(flt, name):
            continue
        if how == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
            time.sleep(5)
        if how == "hang":
            time.sleep(100)
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
        print(name, flush=True)
        entries.append(entry)
    if not entries:
        print("Failed to match any benchmarks against regex: " + flt, file=sys.stderr)
    if out:
        with open(out, "w") as f:
            json.dump({{"context": {{"date": "2024-01-01", "num_cpus": 2}},
                        "benchmarks": entries}}, f)
    return 0


sys.exit(main())
"""


def fake_bench(path: Path, benches: list, log: Path | None = None,
               lock: Path | None = None) -> Path:
    """A fake Google Benchmark binary. `benches`: [(full name, behaviour, {counter: value}), ...]."""
    body = _BENCH_BODY.format(benches=[[n, how, dict(c)] for n, how, c in benches],
                              error=ERROR_MESSAGE, log=str(log) if log else None,
                              lock=str(lock) if lock else None)
    return write_executable(path, body)


def read_log(log: Path) -> list:
    """The runs a fake recorded: [{'argv': [...], 'seed': ..., 'lock': ...}, ...]."""
    import json
    if not Path(log).is_file():
        return []
    return [json.loads(line) for line in Path(log).read_text().splitlines() if line.strip()]


__all__ = ["write_executable", "fake_gtest", "fake_bench", "read_log", "FAIL_MESSAGE",
           "SKIP_LINE", "CUDA_ERROR", "ERROR_MESSAGE"]
