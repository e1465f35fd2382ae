#!/usr/bin/env python3
"""A failed comparison's where data, from the judge to the grader (CTest
labkit:where_reaches_the_grader): runs labkit_where_demo (where_demo.cpp: the real labkit::check
against a fake worker, no GPU) the way the grader runs a lab's test judge, and checks what each
test's TestResult carries: the where data of a wrong output, with its coordinates and its map,
and none for a pass or a failure that is not a comparison. Then the same property in
GoogleTest's own --gtest_output=json file.

usage: where_to_grader.py <labkit_where_demo> <labkit_fake_worker_sandboxed>
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from grader import gtest, wheremap  # noqa: E402

TESTS = 6   # in where_demo.cpp


def check(what: str, got, want) -> list:
    return [] if got == want else [f"{what}: got {got!r}, want {want!r}"]


def main() -> int:
    demo, worker = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    run = gtest.run_judge(demo, "WhereDemo.*", TESTS, worker=worker, seed=1, call_timeout_s=30)
    results = {name.split(".", 1)[1]: gtest.result_for(run, name)
               for name in (f"WhereDemo.{t}" for t in ("Matrix", "Vector", "Nchw", "Right",
                                                       "WrongWithoutAComparison",
                                                       "PassesAfterAnExpectedFailure"))}
    errors = check("warnings", run.warnings, [])
    errors += check("statuses", {k: r.status for k, r in results.items()},
                    {"Matrix": "failed", "Vector": "failed", "Nchw": "failed", "Right": "passed",
                     "WrongWithoutAComparison": "failed", "PassesAfterAnExpectedFailure": "passed"})
    for name in ("Right", "WrongWithoutAComparison", "PassesAfterAnExpectedFailure"):
        errors += check(f"{name}: where", results[name].where, None)

    m = results["Matrix"].where or {}
    errors += check("Matrix: message", "C is wrong: 960 of 3500 elements wrong" in
                    results["Matrix"].message, True)
    errors += check("Matrix: counts", (m.get("kind"), m.get("shape"), m.get("checked"),
                                       m.get("wrong")), ("matrix", [70, 50], 3500, 960))
    errors += check("Matrix: first", [(e.get("at"), e.get("got"), e.get("expected"))
                                      for e in m.get("first", [])[:2]],
                    [([40, 0], 0, 1), ([40, 1], 0, 1)])
    errors += check("Matrix: rows", m.get("wrong_rows"),
                    {"ranges": [[40, 69]], "ranges_total": 1, "count": 30, "of": 70})
    drawn = wheremap.from_dict(m)
    errors += check("Matrix: map", drawn and (drawn.title, drawn.cells, drawn.cell_rows),
                    ("the 70 x 50 output", ["..", "x.", "X."], 32))

    v = results["Vector"].where or {}
    errors += check("Vector: first", [e.get("at") for e in v.get("first", [])], [[600], [601],
                                                                                 [602], [603],
                                                                                 [604]])
    errors += check("Vector: groups", v.get("groups"),
                    [{"name": "low half", "wrong": 0, "total": 500},
                     {"name": "high half", "wrong": 400, "total": 500}])
    drawn = wheremap.from_dict(v)
    errors += check("Vector: map", drawn and (drawn.title, drawn.cells), ("y[0..1000)", ["..xX"]))

    n = results["Nchw"].where or {}
    errors += check("Nchw: first", [e.get("at") for e in n.get("first", [])][:2],
                    [[1, 2, 4, 0], [1, 2, 4, 1]])
    drawn = wheremap.from_dict(n)
    errors += check("Nchw: map", drawn and (drawn.title, drawn.cells),
                    ("image 1, channel 2 (5 x 7)", ["......."] * 4 + ["XXXXXXX"]))

    # GoogleTest's own JSON report holds the same data, as the test's property.
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "gtest.json"
        subprocess.run([str(demo), "--gtest_filter=WhereDemo.Matrix", f"--labkit-worker={worker}",
                        f"--gtest_output=json:{out}"], capture_output=True, timeout=120,
                       check=False)
        report = json.loads(out.read_text())
        (case,) = [t for s in report["testsuites"] for t in s["testsuite"]]
        errors += check("gtest JSON: labkit_where", json.loads(case.get("labkit_where", "null")),
                        m)

    for e in errors:
        print(f"where_to_grader: {e}", file=sys.stderr)
    if not errors:
        print(f"where_to_grader: {TESTS} tests: the where data of each failed comparison reached "
              f"TestResult.where with its coordinates and map; none elsewhere")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
