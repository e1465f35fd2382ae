#!/usr/bin/env python3
"""The last word of a preset's test step: how many tests did not run, and why.

CTest ends with "100% tests passed, 0 tests failed out of 179" when no test that ran failed,
even when every one of them was skipped (a GPU test skips on a machine without a GPU). After
that summary CTest runs this (CTEST_CUSTOM_POST_TEST, written by cmake/TestSummary.cmake), which
prints, where tests were skipped, one line such as

  NOTE: 472 of 586 tests did not run: no CUDA GPU on this machine (the CUDA runtime found no
  device); they are not passed

  python3 cmake/test_summary.py RESULTS.xml

RESULTS.xml is the JUnit XML that the presets' test step writes (output.outputJUnitFile in
CMakePresets.json); this reads it and removes it, so that a later plain `ctest` run, which
writes none, never reports the counts of an older run. Without the file it prints nothing.
It never fails (CTest would count a failing post-test command as a failed run): the exit status
is always 0. Standard library only.
"""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET

GPU_REASON = re.compile(r"no CUDA GPU: ([^\n]*)")
GTEST_SKIP = re.compile(r":\d+: Skipped\n([^\n]+)")
# How the labkit programs end their no-GPU reason (common/include/labkit/gpu.hpp,
# common/src/bench_suite.cpp): dropped from the reason shown.
REASON_TAILS = (" (this test needs one; it was skipped, not passed)", "; benchmark skipped")


def skip_reason(case: ET.Element) -> tuple:
    """-> (True, why there is no GPU) for a test that skipped for want of a GPU, else
    (False, the test's own skip message). A GoogleTest skip message comes first ("file:line:
    Skipped" then the message); a program that exits with the skip code (a benchmark) says
    "no CUDA GPU: ..." where it stops."""
    out = "".join(e.text or "" for e in case.iter("system-out"))
    m = GTEST_SKIP.search(out)
    message = m.group(1).strip() if m else ""
    if not message:
        m = GPU_REASON.search(out)
        if m:
            message = m.group(0).strip()
    if message.startswith("no CUDA GPU: "):
        reason = message[len("no CUDA GPU: "):]
        for tail in REASON_TAILS:
            if reason.endswith(tail):
                reason = reason[:-len(tail)]
        return True, reason
    if message:
        return False, message
    skipped = case.find("skipped")
    attr = skipped.get("message", "") if skipped is not None else ""
    return False, f"skipped ({attr})" if attr else "skipped"


def summarize(root: ET.Element) -> list:
    """The NOTE lines for one run's JUnit tree (none when every test ran)."""
    cases = list(root.iter("testcase"))
    total = len(cases)
    gpu, gpu_why, other = 0, {}, {}
    for case in cases:
        if case.find("skipped") is None:
            continue
        is_gpu, why = skip_reason(case)
        if is_gpu:
            gpu += 1
            gpu_why[why] = gpu_why.get(why, 0) + 1
        else:
            other[why] = other.get(why, 0) + 1
    skipped = gpu + sum(other.values())
    if not skipped:
        return []
    head = f"NOTE: {skipped} of {total} tests did not run"
    no_gpu = "no CUDA GPU on this machine"
    if gpu_why:
        no_gpu += " (" + "; ".join(sorted(gpu_why, key=lambda w: -gpu_why[w])) + ")"
    if not other:
        return [f"{head}: {no_gpu}; they are not passed"]
    parts = ([f"{gpu} need a GPU: {no_gpu}"] if gpu else []) + \
        [f"{n}: {why}" for why, n in sorted(other.items(), key=lambda kv: -kv[1])]
    return [f"{head}; they are not passed: " + "; ".join(parts)]


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: test_summary.py RESULTS.xml", file=sys.stderr)
        return 0
    path = argv[1]
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        return 0          # a plain `ctest` run: no results file, nothing to say
    except (OSError, ET.ParseError) as e:
        print(f"NOTE: the test results in {path} could not be read ({e}): look above for "
              f"tests that did not run", flush=True)
        return 0
    finally:
        try:
            os.remove(path)
        except OSError:
            pass
    for line in summarize(root):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception as e:   # never fail CTest's run
        print(f"NOTE: test_summary.py: {e}", flush=True)
        sys.exit(0)
