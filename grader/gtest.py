"""GoogleTest binaries: list their tests and run one test per process, reading JSON output."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import tempfile
from pathlib import Path

from grader import runner
from grader.results import TestResult

# gtest filter syntax: 'a*:b*-c*' = (a* or b*) and not c*
def matches_filter(name: str, gtest_filter: str) -> bool:
    positive, _, negative = gtest_filter.partition("-")
    pos = [p for p in positive.split(":") if p] or ["*"]
    neg = [p for p in negative.split(":") if p]
    return (any(fnmatch.fnmatchcase(name, p) for p in pos)
            and not any(fnmatch.fnmatchcase(name, p) for p in neg))


def list_tests(binary: Path, timeout_s: float = 60) -> list:
    """Full test names ('Suite/Fixture.Test/param') in the binary's order."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "list.json"
        proc = runner.run([str(binary), "--gtest_list_tests", f"--gtest_output=json:{out}"],
                          timeout_s)
        if proc.timed_out or proc.returncode != 0 or not out.is_file():
            raise RuntimeError(f"could not list the tests of {binary.name}: "
                               f"exit {proc.returncode}, {proc.output[-2000:]}")
        data = json.loads(out.read_text())
    names = []
    for suite in data.get("testsuites", []):
        for test in suite.get("testsuite", []):
            names.append(f"{suite['name']}.{test['name']}")
    return names


_CUDA_ERROR = re.compile(r"(cudaError\w+[^\n]*)")


def _crash_message(proc: runner.ProcResult, timeout_s: float) -> tuple:
    """(status, message) for a test process that gave no result."""
    tail = proc.output[-1500:]
    if proc.timed_out:
        return ("timeout",
                f"did not finish within {timeout_s:g} s and was killed: a kernel that never "
                f"ends (a loop whose condition never changes?) or a launcher that waits forever")
    cuda = _CUDA_ERROR.search(proc.output)
    if proc.signal_name:
        msg = f"the test process crashed ({proc.signal_name})"
        if cuda:
            msg += f"; CUDA reported {cuda.group(1)}"
        return ("crashed", msg + (f"\n  last output:\n{_indent(tail)}" if tail else ""))
    msg = (f"the test process ended with exit code {proc.returncode} before reporting a result "
           f"(did the code call exit() or abort()?)")
    if cuda:
        msg += f"; CUDA reported {cuda.group(1)}"
    return ("crashed", msg + (f"\n  last output:\n{_indent(tail)}" if tail else ""))


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def run_test(binary: Path, name: str, timeout_s: float, env: dict) -> TestResult:
    """Runs one test in a fresh process and reads its verdict from GoogleTest's JSON."""
    # GoogleTest settings inherited from the caller's shell (sharding, repeat, filters) could
    # leave the test unrun; only this call's flags count.
    env = {**{k: None for k in os.environ if k.startswith("GTEST_")}, **env}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        proc = runner.run([str(binary), f"--gtest_filter={name}", f"--gtest_output=json:{out}",
                           "--gtest_color=no"], timeout_s, env=env)
        record = None
        if out.is_file() and not proc.timed_out:
            try:
                data = json.loads(out.read_text())
                for suite in data.get("testsuites", []):
                    for test in suite.get("testsuite", []):
                        if f"{suite['name']}.{test['name']}" == name:
                            record = test
            except (json.JSONDecodeError, KeyError):
                record = None
    if record is None:
        status, message = _crash_message(proc, timeout_s)
        return TestResult(name=name, status=status, message=message, seconds=proc.seconds)
    failures = [f.get("failure", "") for f in record.get("failures", [])]
    if failures:
        return TestResult(name=name, status="failed", message="\n".join(failures).strip(),
                          seconds=proc.seconds)
    if record.get("result") == "SKIPPED" or record.get("status") == "NOTRUN":
        skipped = _skip_reason(proc.stdout)
        return TestResult(name=name, status="skipped", message=skipped, seconds=proc.seconds)
    if proc.returncode != 0:
        how = f"crashed ({proc.signal_name})" if proc.signal_name else f"exit code {proc.returncode}"
        return TestResult(name=name, status="crashed",
                          message=f"the test's checks passed, but its process then failed ({how}): "
                                  f"did the code call exit() or leave the GPU in an error state?"
                                  f"\n  last output:\n{_indent(proc.output[-1500:])}",
                          seconds=proc.seconds)
    return TestResult(name=name, status="passed", message="", seconds=proc.seconds)


def _skip_reason(stdout: str) -> str:
    for line in stdout.splitlines():
        if "no CUDA GPU" in line:
            return line.strip()
    return "skipped"
