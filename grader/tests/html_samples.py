"""Results to render as HTML in the tests (grader/tests/test_html_report.py, test_html_browser.py):
a submission with failing tests whose where data (TestResult.where) is each kind of map, hostile
text, a lab that did not build, measured performance with roofline counters and ceilings; and a
batch of such submissions for the class page. Figures are made up, of plausible size."""

from __future__ import annotations

import random

from grader.results import (BuildResult, GradeResult, GroupResult, LabResult, PerfResult,
                            PolicyReport, TestResult)
from grader.tests.test_wheremap import matrix_where, nchw_where, vector_where

SCRIPT = "<script>document.title='pwned';window.pwned=1</script>"
NASTY_NAME = 'Hidden.<img src=x onerror="window.pwned=2">&amp;$x^2$'


def _message(lead: str, where: dict) -> str:
    """A failing comparison's message, in the judge's words (its text map is left out: the
    page must draw the map from the data alone)."""
    return (f"{lead}{where['wrong']} of {where['checked']} elements wrong\n"
            f"  first wrong elements: got / expected, allowed error\n"
            f"    {where['name']}[7]: 1.25 / 1.5, |error| <= 1e-05\n")


def matrix_failure() -> TestResult:
    rows, cols = 300, 200
    flags = [[0] * cols for _ in range(rows)]
    for i in range(256, rows):          # the last partial row of tiles: a bounds bug
        for j in range(cols):
            flags[i][j] = 1
    flags[10][150] = 2
    where = matrix_where(flags)
    return TestResult("MatmulHidden.Tall300x200", "failed",
                      _message("the output of call 1 (300 x 200, K = 77) is wrong: ", where),
                      0.4, where)


def vector_failure() -> TestResult:
    n = 5000
    flags = [1 if 4096 <= i < 4200 else 0 for i in range(n)]
    where = vector_where(flags, 256, group=lambda i: "rows of length 1-32" if i < 4000
                         else "rows of length 33-4096")
    return TestResult("ReduceHidden.Segments", "failed", _message("the output y is wrong: ", where),
                      where=where)


def nchw_failure() -> TestResult:
    h, w = 28, 28
    plane = [[1 if (y == 0 or x == 27) else 0 for x in range(w)] for y in range(h)]
    where = nchw_where(plane, image=1, channel=2, stride=2)
    return TestResult("ReduceHidden.Conv", "failed", _message("", where), where=where)


def perf(name, metric, target, floor, points, reference=None, gflops=None, gbps=None,
         base_gflops=None, status="measured", metric_name="ratio", label="speed / cuBLAS"):
    counters = {}
    if gflops is not None:
        counters.update(GFLOPS=gflops, baseline_GFLOPS=base_gflops)
    if gbps is not None:
        counters.update(GBps=gbps, baseline_GBps=gbps * (base_gflops or gflops or 1) /
                        (gflops or 1))
    if metric is not None:
        counters.update({metric_name: metric, f"{metric_name}_lo": metric * 0.97,
                         f"{metric_name}_hi": metric * 1.02})
    return PerfResult(max_points=20.0, points=points, status=status, metric=metric,
                      target=target, floor=floor, label=label, name=name, benchmark=name,
                      metric_name=metric_name, bands=4,
                      band=None if metric is None else 2,
                      metric_lo=None if metric is None else metric * 0.97,
                      metric_hi=None if metric is None else metric * 1.02,
                      counters=counters, reference=reference,
                      message="" if status == "measured" else "not measured: correctness first")


def submission(ceilings=True, seed=1) -> GradeResult:
    matmul = LabResult(
        lab="01_naive_matmul", title="Naive matmul", max_points=100.0, points=61.0, seed=seed,
        build=BuildResult(ok=True, seconds=11.0), policy=PolicyReport(ok=True, seconds=0.4),
        groups=[GroupResult("public", "*MatmulPublic*", 30.0, 30.0, [
                    TestResult("MatmulPublic.Square64", "passed", "", 0.2),
                    TestResult("MatmulPublic.Odd7x3", "passed", "", 0.2)]),
                GroupResult("hidden", "*MatmulHidden*", 50.0, 16.67, [
                    matrix_failure(),
                    TestResult(NASTY_NAME, "failed", "got 1 <b>bold</b> " + SCRIPT, 0.1),
                    TestResult("MatmulHidden.Square512", "passed", "", 0.3)])],
        performance=[perf("v1 4096", 0.061, 0.07, 0.015, 15.0, reference=0.066,
                          gflops=3050.0, gbps=18.0, base_gflops=50000.0)])
    reduce_ = LabResult(
        lab="05_reduction", title="Parallel reduction", max_points=100.0, points=80.0, seed=seed,
        build=BuildResult(ok=True, seconds=3.0),
        groups=[GroupResult("public", "*ReducePublic*", 30.0, 30.0,
                            [TestResult("ReducePublic.Small", "passed")]),
                GroupResult("hidden", "*ReduceHidden*", 40.0, 30.0, [
                    vector_failure(),
                    nchw_failure(),
                    TestResult("ReduceHidden.Big", "passed")]),
                GroupResult("races", "*ReduceHiddenRace*", 10.0, 10.0,
                            [TestResult("ReduceHiddenRace.v4", "passed")])],
        performance=[perf("v4 2^28", 0.75, 0.9, 0.3, 10.0, reference=0.95, gflops=95.0,
                          gbps=380.0, base_gflops=127.0, label="speed / CUB")])
    broken = LabResult(lab="02_tiled", title="Tiled matmul", max_points=100.0,
                       status="build_failed", build=BuildResult(
                           ok=False, seconds=2.0,
                           log="tiled.cu(12): error: identifier \"TILE\" is undefined " + SCRIPT))
    gpu = {"available": True, "name": "NVIDIA H200", "compute_capability": "9.0"}
    if ceilings:
        gpu["ceilings"] = {"sgemm_gflops": 51000.0, "copy_gbps": 4100.0}
    else:
        gpu["ceilings"] = {"error": "labkit_gpu_ceilings was not built"}
    return GradeResult(submission="/subs/<alice>/labs", seed=None, grader_version="0.2.0",
                       status="build_failed", exit_code=4, gpu=gpu,
                       labs=[matmul, broken, reduce_], started="2025-01-01T10:00:00+00:00",
                       seconds=123.0)


def batch(n: int = 30) -> list:
    """[(name, GradeResult)]: n submissions with scattered scores and speeds."""
    rng = random.Random(11)
    out = []
    for k in range(n):
        r = submission(seed=k)
        for lab in r.labs:
            for g in lab.groups:
                for t in g.tests:
                    if rng.random() < 0.3:
                        t.status = "passed" if t.status != "passed" else "failed"
                g.points = round(g.max_points * g.passed_count / max(len(g.tests), 1), 2)
            for p in lab.performance:
                if rng.random() < 0.15:
                    p.status, p.metric = "gated", None
                else:
                    p.metric = p.target * rng.uniform(0.2, 1.3)
                    p.points = 20.0 * min(1.0, max(0.0, (p.metric - p.floor) /
                                                   (p.target - p.floor)))
            lab.points = round(sum(g.points for g in lab.groups)
                               + sum(p.points for p in lab.performance), 2)
        out.append((f"student{k:02d}", r))
    return out
