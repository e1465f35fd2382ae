"""The plausibility check: a benchmark measured faster than the GPU's ceilings (measured in the
same grading by labkit_gpu_ceilings) earns nothing and is flagged; without the ceilings no
performance points are awarded. Pure scoring on fake counters, grade_lab and grade.grade on the
fake judges (test_grade_pipeline's fake build dir), the reports, and the [plausibility] table of
grading.toml. No GPU, no CUDA.
"""

import copy
import importlib.util
import json
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

from grader import build, console_report, grade, reports, scoring
from grader.config import load_lab_config, parse_lab_config
from grader.errors import GraderError
from grader.results import BuildResult, GradeResult, LabResult, PerfResult
from grader.tests import fakes
from grader.tests import test_grade_pipeline as pipeline

REPO = Path(__file__).resolve().parents[2]

# An H100 SXM, as labkit_gpu_ceilings measured it (common/src/gpu_ceilings_main.cu).
CEILINGS = dict(fakes.FAKE_CEILINGS)
PEAK, READ = CEILINGS["fp32_peak_gflops"], CEILINGS["read_gbps"]
FLOP_LIMIT = PEAK * (1 + scoring.FLOP_MARGIN)
BYTE_LIMIT = READ * (1 + scoring.BYTE_MARGIN)


def measured(gflops=None, gbps=None, ratio=0.9, **counters) -> PerfResult:
    """A measured entry as grade._benchmark leaves it: ratio 0.9 between floor 0.5 and target 1,
    band 3 of 4."""
    c = {"ratio": ratio, **counters}
    if gflops is not None:
        c["GFLOPS"] = gflops
    if gbps is not None:
        c["GBps"] = gbps
    return PerfResult(max_points=20.0, status="measured", metric=ratio, target=1.0, floor=0.5,
                      bands=4, band=scoring.perf_band(ratio, 1.0, 0.5, 4), name="v1 4096^3",
                      benchmark="matmul/v1/4096", metric_name="ratio", counters=c)


def checked(perf: PerfResult, ceilings=CEILINGS, flop_factor=1.0) -> PerfResult:
    scoring.check_plausibility([perf], ceilings, flop_factor)
    perf.points = scoring.score_performance(perf)
    return perf


class CeilingLimitsTest(unittest.TestCase):
    def test_peak_and_bandwidth(self):
        self.assertEqual(scoring.ceiling_limits(CEILINGS), (PEAK, READ, ""))

    def test_the_higher_of_the_fma_peak_and_sgemm_and_of_read_and_copy(self):
        c = dict(CEILINGS, sgemm_gflops=PEAK + 100, copy_gbps=READ + 50)
        self.assertEqual(scoring.ceiling_limits(c), (PEAK + 100, READ + 50, ""))

    def test_unusable_ceilings_say_why(self):
        cases = {
            "labkit_gpu_ceilings exited 1: the FMA kernel's thread 0 wrote 0":
                {"error": "labkit_gpu_ceilings exited 1:\n  the FMA kernel's thread 0 wrote 0"},
            "they were not measured": None,
            "labkit_gpu_ceilings reported no fp32_peak_gflops":
                {"sgemm_gflops": 50000.0, "copy_gbps": 3000.0, "read_gbps": 3000.0},
            "labkit_gpu_ceilings reported no fp32_peak_gflops or read_gbps":
                {"sgemm_gflops": 50000.0, "copy_gbps": 3000.0},
            "labkit_gpu_ceilings reported no read_gbps": dict(CEILINGS, read_gbps=0.0),
        }
        for why, c in cases.items():
            with self.subTest(why=why):
                self.assertEqual(scoring.ceiling_limits(c), (None, None, why))


class CheckPlausibilityTest(unittest.TestCase):
    def test_765x_cublas_gets_nothing_and_says_why(self):
        p = checked(measured(gflops=765 * 50900.0, ratio=765.0, baseline_GFLOPS=50900.0))
        self.assertTrue(p.implausible)
        self.assertEqual((p.status, p.points, p.band), ("failed", 0.0, None))
        self.assertEqual(p.metric, 765.0)                  # kept, for the review
        self.assertEqual(p.counters["GFLOPS"], 765 * 50900.0)
        first = p.message.splitlines()[0]
        self.assertEqual(first, "measured 38,938,500 GFLOP/s, above this GPU's FP32 peak of "
                                "65,900 GFLOP/s measured in this grading: not a possible "
                                "result; the benchmark does not count (flagged for review)")
        self.assertIn(f"the limit: {FLOP_LIMIT:,.0f} GFLOP/s, the peak plus 20% for "
                      f"measurement noise", p.message)

    def test_plausible_entry_is_untouched(self):
        before = measured(gflops=0.9 * 50900.0, gbps=70.0)
        p = checked(copy.deepcopy(before))
        self.assertFalse(p.implausible)
        self.assertEqual((p.status, p.band, p.message), ("measured", 3, ""))
        self.assertEqual(p.points, 15.0)
        self.assertEqual(p.counters, before.counters)

    def test_the_margin_is_the_edge(self):
        self.assertFalse(checked(measured(gflops=FLOP_LIMIT)).implausible)
        self.assertTrue(checked(measured(gflops=FLOP_LIMIT * 1.001)).implausible)
        self.assertFalse(checked(measured(gbps=BYTE_LIMIT)).implausible)
        self.assertTrue(checked(measured(gbps=BYTE_LIMIT * 1.001)).implausible)
        # Past the peak itself but within the margin: noise, not a verdict.
        self.assertFalse(checked(measured(gflops=PEAK * 1.1, gbps=READ * 1.2)).implausible)

    def test_bandwidth_above_the_ceiling(self):
        p = checked(measured(gflops=1.0, gbps=9800.0))   # a reduction: GFLOPS n / t is tiny
        self.assertTrue(p.implausible)
        self.assertEqual(p.points, 0.0)
        self.assertTrue(p.message.startswith(
            "measured 9,800 GB/s, above this GPU's memory bandwidth of 3,040 GB/s measured in "
            "this grading: not a possible result; the benchmark does not count (flagged for "
            "review)"), p.message)
        self.assertNotIn("GFLOP/s", p.message)

    def test_bandwidth_is_the_faster_of_read_and_copy(self):
        fast_copy = dict(CEILINGS, copy_gbps=4000.0)
        self.assertFalse(checked(measured(gbps=4000.0 * 1.2), fast_copy).implausible)
        self.assertTrue(checked(measured(gbps=4000.0 * 1.3), fast_copy).implausible)

    def test_both_counters_above(self):
        p = checked(measured(gflops=1e7, gbps=1e6))
        self.assertIn("GFLOP/s", p.message.splitlines()[0])
        self.assertIn("measured 1,000,000 GB/s", p.message)

    def test_conv_flop_factor(self):
        # Winograd F(2x2,3x3) multiplies 2.25x less than the direct FLOP count reports.
        gflops = 1.8 * PEAK
        self.assertTrue(checked(measured(gflops=gflops)).implausible)
        p = checked(measured(gflops=gflops), flop_factor=2.25)
        self.assertFalse(p.implausible)
        self.assertEqual((p.status, p.points), ("measured", 15.0))
        self.assertFalse(checked(measured(gflops=2.25 * FLOP_LIMIT), flop_factor=2.25).implausible)
        p = checked(measured(gflops=3 * FLOP_LIMIT), flop_factor=2.25)
        self.assertTrue(p.implausible)
        self.assertIn("above 2.25 x this GPU's FP32 peak of 65,900 GFLOP/s", p.message)
        self.assertIn("x 2.25 (this lab's allowance", p.message)
        # The factor is for flops only.
        self.assertTrue(checked(measured(gbps=BYTE_LIMIT * 1.5), flop_factor=2.25).implausible)

    def test_missing_ceilings_withhold_the_points(self):
        for ceilings in ({"error": "labkit_gpu_ceilings exited 1: cublasSgemm failed"}, None,
                         {"sgemm_gflops": 50000.0, "copy_gbps": 3000.0}):
            with self.subTest(ceilings=ceilings):
                p = checked(measured(gflops=100.0, gbps=10.0), ceilings)
                self.assertEqual((p.status, p.points, p.band), ("withheld", 0.0, None))
                self.assertFalse(p.implausible)
                self.assertTrue(p.message.startswith(
                    "not scored: this GPU's ceilings (FP32 peak, memory bandwidth) could not be "
                    "measured in this grading ("), p.message)
                self.assertIn("no performance points are awarded on trust; grade again",
                              p.message)
                why = scoring.ceiling_limits(ceilings)[2]
                self.assertIn(f"({why})", p.message)

    def test_entries_not_measured_are_left_alone(self):
        for status in ("gated", "failed", "timeout", "not_run"):
            p = PerfResult(max_points=20.0, status=status, message="as it was",
                           counters={"GFLOPS": 1e9})
            scoring.check_plausibility([p], CEILINGS)
            scoring.check_plausibility([p], {"error": "x"})
            self.assertEqual((p.status, p.message, p.implausible), (status, "as it was", False))

    def test_entries_without_counters_are_not_judged(self):
        p = checked(measured())
        self.assertEqual((p.status, p.points, p.implausible), ("measured", 15.0, False))


class ResultsTest(unittest.TestCase):
    def test_flags_in_the_json_and_back(self):
        bad = checked(measured(gflops=1e8))
        good = checked(measured(gflops=1000.0))
        lab = LabResult("01_naive_matmul", "Naive matmul", 100.0, performance=[bad, good],
                        implausible=True)
        r = GradeResult("sub", None, "1", labs=[lab, LabResult("02_x", "x", 100.0)])
        d = json.loads(r.to_json())
        self.assertIs(d["implausible"], True)
        self.assertIs(d["labs"][0]["implausible"], True)
        self.assertIs(d["labs"][1]["implausible"], False)
        self.assertEqual([p["implausible"] for p in d["labs"][0]["performance"]], [True, False])
        back = GradeResult.from_dict(d)
        self.assertTrue(back.implausible)
        self.assertTrue(back.labs[0].performance[0].implausible)
        self.assertFalse(GradeResult("sub", None, "1", labs=[LabResult("a", "a", 1.0)])
                         .implausible)
        # A results file written before the check read back: nothing flagged.
        del d["implausible"], d["labs"][0]["implausible"]
        for p in d["labs"][0]["performance"]:
            del p["implausible"]
        self.assertFalse(GradeResult.from_dict(d).implausible)


class GradeLabTest(pipeline.TempDirTest):
    """grade.grade_lab on the fake judges, with ceilings."""

    def grade_lab(self, counters, ceilings=CEILINGS, data=None):
        self.build = pipeline.FakeBuildDir(self.tmp / "build", pipeline.tests_all_pass(),
                                           pipeline.benches(ratio=0.03, counters=counters))
        config = pipeline.cfg(data)
        lab = LabResult(lab=config.name, title=config.title, max_points=config.max_points,
                        seed=1234)
        grade.grade_lab(config, lab, self.build.paths(), self.build.hashes(), True,
                        lambda m: None, ceilings=ceilings)
        return lab

    def test_implausible_benchmark_scores_zero_and_flags_the_lab(self):
        lab = self.grade_lab({"GFLOPS": 765 * 50900.0})
        (p,) = lab.performance
        self.assertEqual((p.status, p.points, p.implausible), ("failed", 0.0, True))
        self.assertTrue(lab.implausible)
        self.assertEqual(lab.points, 80.0)      # the correctness points stay
        self.assertIn("not a possible result", p.message)
        r = GradeResult("sub", 1234, "1", labs=[lab])
        self.assertIs(json.loads(r.to_json())["implausible"], True)

    def test_plausible_benchmark_scores_as_before(self):
        lab = self.grade_lab({"GFLOPS": 3000.0, "GBps": 150.0})
        (p,) = lab.performance
        self.assertEqual((p.status, p.band, p.points, p.implausible), ("measured", 2, 10.0, False))
        self.assertFalse(lab.implausible)
        self.assertEqual(lab.points, 90.0)

    def test_lab_flop_factor_from_its_grading_toml(self):
        data = copy.deepcopy(pipeline.CONFIG)
        data["plausibility"] = {"flop_factor": 2.25}
        lab = self.grade_lab({"GFLOPS": 2 * PEAK}, data=data)
        self.assertEqual((lab.performance[0].status, lab.points), ("measured", 90.0))
        lab = self.grade_lab({"GFLOPS": 2 * PEAK})
        self.assertEqual((lab.performance[0].status, lab.points), ("failed", 80.0))

    def test_no_ceilings_withhold_the_points(self):
        lab = self.grade_lab({"GFLOPS": 3000.0}, ceilings={"error": "labkit_gpu_ceilings did "
                                                                    "not finish within 120 s"})
        (p,) = lab.performance
        self.assertEqual((p.status, p.points), ("withheld", 0.0))
        self.assertIn("(labkit_gpu_ceilings did not finish within 120 s)", p.message)
        self.assertFalse(lab.implausible)
        self.assertEqual(lab.points, 80.0)


class GradeFlowTest(pipeline.TempDirTest):
    """grade.grade with CMake replaced (as test_grade_pipeline.GradeFlowTest): the ceilings
    measured by the fake labkit_gpu_ceilings reach the scoring."""

    def run_grade(self, counters, ceilings_tool=None):
        submission = self.tmp / "submission"
        (submission / pipeline.LAB).mkdir(parents=True, exist_ok=True)
        (submission / pipeline.LAB / "matmul.cu").write_text("// student code\n")
        build_dir = self.tmp / "build"
        fake = pipeline.FakeBuildDir(build_dir, pipeline.tests_all_pass(),
                                     pipeline.benches(ratio=0.03, counters=counters))
        if ceilings_tool is not None:
            ceilings_tool(fake.gpu_info.parent / grade.CEILINGS)

        def configure(repo, build_dir, stage_dir, labs, sandbox=True):
            return BuildResult(ok=True, seconds=0.5)

        def build_targets(build_dir, targets, jobs=None):
            return BuildResult(ok=True, seconds=1.0)

        with mock.patch.object(build, "configure", configure), \
                mock.patch.object(build, "build_targets", build_targets), \
                fakes.use_policy(fakes.FakePolicy()):
            return grade.grade(Path("/repo"), submission, [pipeline.cfg()], build_dir,
                               grade.GradeOptions(seed=1234), progress=lambda m: None)

    def test_ceilings_reach_the_results_and_a_plausible_speed_scores(self):
        r = self.run_grade({"GFLOPS": 3000.0})
        self.assertEqual((r.status, r.exit_code, r.points), ("graded", 0, 90.0))
        self.assertEqual(r.gpu["ceilings"], fakes.FAKE_CEILINGS)
        self.assertFalse(r.implausible)
        self.assertNotIn("FLAGGED", console_report.render(r))

    def test_implausible_speed_is_flagged_everywhere(self):
        r = self.run_grade({"GFLOPS": 765 * 50900.0, "ratio": 765.0})
        self.assertEqual((r.status, r.exit_code, r.points), ("graded", 0, 80.0))
        self.assertTrue(r.implausible)
        d = json.loads(r.to_json())
        self.assertIs(d["implausible"], True)
        self.assertIs(d["labs"][0]["implausible"], True)
        self.assertIs(d["labs"][0]["performance"][0]["implausible"], True)
        self.assertEqual(d["labs"][0]["performance"][0]["points"], 0.0)

        text = console_report.render(r)
        self.assertIn("IMPLAUSIBLE: flagged for review", text)
        self.assertIn("[performance] IMPLAUSIBLE: measured 38,938,500 GFLOP/s, above this "
                      "GPU's FP32 peak of 65,900 GFLOP/s", text)
        self.assertIn(f"FLAGGED FOR REVIEW: {pipeline.LAB}: {pipeline.BENCH} measured faster "
                      f"than this GPU can run", text)

        md = reports.markdown(r)
        self.assertIn("> **Flagged for review:** 01_naive_matmul: matmul/v1_naive/4096", md)
        self.assertIn("performance <code>matmul/v1_naive/4096</code>: implausible", md)
        self.assertIn("IMPLAUSIBLE: flagged for review", md)

        gs = reports.gradescope(r)
        (perf,) = [t for t in gs["tests"] if "performance" in t["name"]]
        self.assertEqual((perf["score"], perf["status"]), (0.0, "failed"))
        self.assertIn("implausible", perf["tags"])
        self.assertIn("not a possible result; the benchmark does not count (flagged for "
                      "review)", perf["output"])
        self.assertIn("Flagged for review: 01_naive_matmul: matmul/v1_naive/4096", gs["output"])
        self.assertIs(gs["extra_data"]["implausible"], True)

        root = ET.fromstring(reports.junit_xml(r).split("\n", 1)[1])
        (case,) = [c for c in root.iter("testcase") if c.get("classname").endswith("performance")]
        failure = case.find("failure")
        self.assertEqual(failure.get("type"), "implausible")
        self.assertIn("above this GPU's FP32 peak", failure.get("message"))
        props = {p.get("name"): p.get("value") for p in root.iter("property")}
        self.assertEqual(props.get("implausible"), "true")

    def test_failed_ceilings_withhold_performance_and_ask_for_a_regrade(self):
        tool = lambda path: fakes.fake_gpu_ceilings(
            path, None, exit_code=1, stderr="labkit_gpu_ceilings: the FMA kernel's thread 0 "
                                            "wrote 0, expected 19.9")
        r = self.run_grade({"GFLOPS": 3000.0}, ceilings_tool=tool)
        self.assertEqual((r.status, r.exit_code), ("error", 1))
        self.assertEqual(r.points, 80.0)   # correctness kept, performance withheld
        lab = r.labs[0]
        self.assertEqual(lab.status, "graded")
        (p,) = lab.performance
        self.assertEqual((p.status, p.points, p.implausible), ("withheld", 0.0, False))
        self.assertIn("the FMA kernel's thread 0 wrote 0", p.message)
        self.assertTrue(r.message.startswith(
            f"performance points withheld ({pipeline.LAB}: {pipeline.BENCH}): this GPU's "
            f"ceilings could not be measured (labkit_gpu_ceilings exited 1:"), r.message)
        self.assertTrue(r.message.endswith("grade again"), r.message)

        text = console_report.render(r)
        self.assertIn("not scored: GPU ceilings not measured", text)
        self.assertIn("PERFORMANCE NOT SCORED: performance points withheld", text)
        self.assertIn("[performance] not scored: this GPU's ceilings", text)
        self.assertIn("> **Performance not scored:** performance points withheld",
                      reports.markdown(r))
        self.assertIn("Performance not scored: performance points withheld",
                      reports.gradescope(r)["output"])
        root = ET.fromstring(reports.junit_xml(r).split("\n", 1)[1])
        types = [f.get("type") for f in root.iter("failure")]
        self.assertEqual(types, ["withheld"])

    def test_no_figures_for_the_check_withhold_too(self):
        old_tool = dict(sgemm_gflops=50900.0, copy_gbps=2970.0)   # a tool without the new ones
        r = self.run_grade({"GFLOPS": 3000.0},
                           ceilings_tool=lambda path: fakes.fake_gpu_ceilings(path, old_tool))
        self.assertEqual((r.status, r.exit_code, r.points), ("error", 1, 80.0))
        self.assertIn("labkit_gpu_ceilings reported no fp32_peak_gflops or read_gbps",
                      r.labs[0].performance[0].message)


class HtmlTest(unittest.TestCase):
    """The HTML report's parts that need no matplotlib, and (with it) the page's banner."""

    def result(self, **perf_changes) -> GradeResult:
        p = checked(measured(gflops=1e8))
        for k, v in perf_changes.items():
            setattr(p, k, v)
        lab = LabResult("01_naive_matmul", "Naive matmul", 100.0, performance=[p],
                        implausible=p.implausible)
        return GradeResult("sub", None, "1", labs=[lab],
                           gpu={"available": True, "name": "Fake", "ceilings": CEILINGS})

    def test_score_table_and_failures(self):
        from grader import html_report
        r = self.result()
        table = html_report.score_table(r)
        self.assertIn('<td class="bad">IMPLAUSIBLE: flagged for review</td>', table)
        failures = "\n".join(html_report._failures(r, html_report._Budget(0)))
        self.assertIn('<span class="bad">implausible</span>', failures)
        self.assertIn("not a possible result; the benchmark does not count (flagged for review)",
                      failures)

    @unittest.skipUnless(importlib.util.find_spec("matplotlib"), "matplotlib is not installed")
    def test_page_banner(self):
        from grader import html_report
        page = html_report.submission_page(self.result())
        self.assertIn("<b>Flagged for review:</b> 01_naive_matmul: v1 4096^3 measured faster "
                      "than this GPU can run", page)
        self.assertIn("For the plausibility check: FP32 peak (independent FMAs) 65,900 GFLOP/s, "
                      "read 3,040 GB/s.", page)
        clean = self.result(implausible=False, status="measured", message="", band=4)
        self.assertNotIn("Flagged for review", html_report.submission_page(clean))
        page = html_report.class_page([("alice", self.result())])
        self.assertIn('<span class="bad">flagged for review</span>', page)


class MeasureCeilingsTest(unittest.TestCase):
    def test_the_new_figures_are_kept(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            fakes.fake_gpu_ceilings(d / grade.CEILINGS, dict(CEILINGS, fma_ms=20.1))
            with mock.patch.object(grade.build, "build_targets",
                                   return_value=BuildResult(ok=True)), \
                    mock.patch.object(grade.gpulock, "DEFAULT_LOCK", d / "lock"):
                c = grade.measure_ceilings(d, d / "labkit_gpu_info", None)
        self.assertEqual(c, dict(CEILINGS, fma_ms=20.1))
        self.assertEqual(scoring.ceiling_limits(c), (PEAK, READ, ""))


class PlausibilityConfigTest(unittest.TestCase):
    def parse(self, table):
        data = copy.deepcopy(pipeline.CONFIG)
        if table is not None:
            data["plausibility"] = table
        with fakes.use_policy(fakes.FakePolicy()):
            return parse_lab_config(pipeline.LAB, data)

    def test_default_and_value(self):
        self.assertEqual(self.parse(None).flop_factor, 1.0)
        self.assertEqual(self.parse({}).flop_factor, 1.0)
        self.assertEqual(self.parse({"flop_factor": 2.25}).flop_factor, 2.25)
        self.assertEqual(self.parse({"flop_factor": 4}).flop_factor, 4.0)

    def test_mistakes_are_refused(self):
        for table in ({"flop_factor": 0.5}, {"flop_factor": True}, {"flop_factor": "2"},
                      {"flop_factor": float("nan")}, {"flop_factor": float("inf")},
                      {"flop_facter": 2.0}, "2.25"):
            with self.subTest(table=table), self.assertRaises(GraderError) as cm:
                self.parse(table)
            self.assertIn("[plausibility]", cm.exception.message)

    def test_the_labs(self):
        with fakes.use_policy(fakes.FakePolicy()):
            factors = {name: load_lab_config(REPO / "labs", name).flop_factor
                       for name in ("01_naive_matmul", "04_boundary", "05_reduction",
                                    "06_spmv", "07_im2col_conv")}
        self.assertEqual(factors, {"01_naive_matmul": 1.0, "04_boundary": 1.0,
                                   "05_reduction": 1.0, "06_spmv": 1.0, "07_im2col_conv": 2.25})


if __name__ == "__main__":
    unittest.main()
