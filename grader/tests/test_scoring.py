"""Scoring: equal shares per group, correctness gating, the performance curve and rounding."""

import math
import unittest

from grader import config, scoring
from grader.results import GroupResult, PerfResult, TestResult


def group(max_points, *statuses, name="g"):
    g = GroupResult(name, "*", max_points)
    g.tests = [TestResult(f"T.t{i}", s) for i, s in enumerate(statuses)]
    return g


class ScoreGroupTest(unittest.TestCase):
    def test_all_passed_earns_all_points(self):
        self.assertEqual(scoring.score_group(group(30, "passed", "passed", "passed")), 30.0)

    def test_equal_shares(self):
        self.assertEqual(scoring.score_group(group(30, "passed", "failed", "passed")), 20.0)
        self.assertEqual(scoring.score_group(group(50, "passed", "crashed", "timeout", "failed")),
                         12.5)

    def test_shares_rounded_to_hundredths(self):
        # 30 points over 7 tests, 3 passed: 12.857142... -> 12.86
        self.assertEqual(scoring.score_group(group(30, *(["passed"] * 3 + ["failed"] * 4))), 12.86)
        # all 7 passed adds back up to exactly the group's points
        self.assertEqual(scoring.score_group(group(30, *(["passed"] * 7))), 30.0)

    def test_skipped_earns_nothing_but_counts_in_the_share(self):
        self.assertEqual(scoring.score_group(group(30, "passed", "skipped", "skipped")), 10.0)
        self.assertEqual(scoring.score_group(group(30, "skipped", "skipped")), 0.0)

    def test_nothing_passed(self):
        self.assertEqual(scoring.score_group(group(30, "failed", "crashed", "not_run")), 0.0)

    def test_empty_group_scores_zero(self):
        self.assertEqual(scoring.score_group(group(50)), 0.0)


class AllCorrectTest(unittest.TestCase):
    def test_all_passed(self):
        self.assertTrue(scoring.all_correct([group(30, "passed", "passed"), group(50, "passed")]))

    def test_one_failure_anywhere_gates(self):
        for bad in ("failed", "crashed", "timeout", "skipped", "not_run"):
            with self.subTest(bad=bad):
                self.assertFalse(scoring.all_correct(
                    [group(30, "passed", "passed"), group(50, "passed", bad)]))
                self.assertFalse(scoring.all_correct(
                    [group(30, bad, "passed"), group(50, "passed")]))

    def test_group_without_tests_is_ignored(self):
        self.assertTrue(scoring.all_correct([group(30, "passed"), group(50)]))
        self.assertTrue(scoring.all_correct([group(50), group(30, "passed")]))
        self.assertFalse(scoring.all_correct([group(30, "failed"), group(50)]))

    def test_all_groups_empty_is_not_correct(self):
        self.assertFalse(scoring.all_correct([group(30), group(50)]))
        self.assertFalse(scoring.all_correct([]))


class PerfFractionTest(unittest.TestCase):
    def test_at_and_above_target(self):
        self.assertEqual(scoring.perf_fraction(0.05, 0.05, 0.01), 1.0)
        self.assertEqual(scoring.perf_fraction(0.9, 0.05, 0.01), 1.0)
        self.assertEqual(scoring.perf_fraction(math.inf, 0.05, 0.01), 1.0)

    def test_at_and_below_floor(self):
        self.assertEqual(scoring.perf_fraction(0.01, 0.05, 0.01), 0.0)
        self.assertEqual(scoring.perf_fraction(0.001, 0.05, 0.01), 0.0)
        self.assertEqual(scoring.perf_fraction(0.0, 0.05, 0.01), 0.0)
        self.assertEqual(scoring.perf_fraction(-1.0, 0.05, 0.01), 0.0)

    def test_steps_between(self):
        # 4 bands between floor 0.01 and target 0.05: edges at 0.02, 0.03, 0.04
        f = lambda m: scoring.perf_fraction(m, 0.05, 0.01, 4)
        self.assertEqual(f(0.0101), 0.0)
        self.assertEqual(f(0.0199), 0.0)
        self.assertEqual(f(0.02), 0.25)
        self.assertEqual(f(0.0299), 0.25)
        self.assertEqual(f(0.03), 0.5)
        self.assertEqual(f(0.0399), 0.5)
        self.assertEqual(f(0.04), 0.75)
        self.assertEqual(f(0.0499999), 0.75)
        self.assertEqual(f(0.05), 1.0)
        # monotone, and only ever a multiple of 1/bands
        xs = [0.0101 + i * 0.0005 for i in range(80)]
        fs = [f(x) for x in xs]
        self.assertEqual(fs, sorted(fs))
        self.assertTrue(set(fs) <= {0.0, 0.25, 0.5, 0.75})

    def test_edges_computed_in_floating_point(self):
        # lab 01's lines: floor 0.015, target 0.07; the edges 0.02875, 0.0425, 0.05625 are not
        # exact in binary, and (m - floor) / (target - floor) * 4 lands a hair below 1, 2, 3.
        for band, edge in ((1, 0.02875), (2, 0.0425), (3, 0.05625)):
            with self.subTest(edge=edge):
                self.assertEqual(scoring.perf_band(edge, 0.07, 0.015, 4), band)
                self.assertEqual(scoring.perf_band(edge - 1e-6, 0.07, 0.015, 4), band - 1)

    def test_one_band_is_all_or_nothing(self):
        self.assertEqual(scoring.perf_fraction(0.0499, 0.05, 0.01, 1), 0.0)
        self.assertEqual(scoring.perf_fraction(0.05, 0.05, 0.01, 1), 1.0)

    def test_many_bands_approach_the_line(self):
        self.assertAlmostEqual(scoring.perf_fraction(0.03, 0.05, 0.01, 1000), 0.5, places=12)
        self.assertAlmostEqual(scoring.perf_fraction(0.75, 1.0, 0.0, 100), 0.75, places=12)

    def test_nan_is_zero(self):
        self.assertEqual(scoring.perf_fraction(math.nan, 0.05, 0.01), 0.0)
        self.assertEqual(scoring.perf_band(float("nan"), 1.0, 0.0, 4), 0)

    def test_band_index(self):
        self.assertEqual([scoring.perf_band(m, 0.05, 0.01, 4)
                          for m in (0.0, 0.01, 0.015, 0.025, 0.035, 0.045, 0.05, 9.0)],
                         [0, 0, 0, 1, 2, 3, 4, 4])


class ScorePerformanceTest(unittest.TestCase):
    def perf(self, metric, status="measured", max_points=20.0, target=0.05, floor=0.01, bands=4):
        return PerfResult(max_points=max_points, status=status, metric=metric, target=target,
                          floor=floor, bands=bands)

    def test_measured(self):
        self.assertEqual(scoring.score_performance(self.perf(0.05)), 20.0)
        self.assertEqual(scoring.score_performance(self.perf(0.2)), 20.0)
        self.assertEqual(scoring.score_performance(self.perf(0.03)), 10.0)
        self.assertEqual(scoring.score_performance(self.perf(0.0299)), 5.0)
        self.assertEqual(scoring.score_performance(self.perf(0.01)), 0.0)
        self.assertEqual(scoring.score_performance(self.perf(math.nan)), 0.0)

    def test_only_measured_scores(self):
        for status in ("gated", "failed", "timeout", "not_run"):
            with self.subTest(status=status):
                self.assertEqual(scoring.score_performance(self.perf(0.2, status=status)), 0.0)

    def test_measured_without_metric_scores_zero(self):
        self.assertEqual(scoring.score_performance(self.perf(None)), 0.0)

    def test_noise_inside_a_band_changes_nothing(self):
        # a metric in the middle of band 2 of 4, measured with +-3 % noise
        scores = {scoring.score_performance(self.perf(0.035 * (1 + d)))
                  for d in (-0.03, -0.01, 0, 0.01, 0.03)}
        self.assertEqual(scores, {10.0})

    def test_rounded_to_hundredths(self):
        # 3 bands of 10 points: 3.33 and 6.67
        self.assertEqual(scoring.score_performance(self.perf(0.025, max_points=10, bands=3)), 3.33)
        self.assertEqual(scoring.score_performance(self.perf(0.04, max_points=10, bands=3)), 6.67)


class LabTotalsTest(unittest.TestCase):
    def perfs(self):
        regular = PerfResult(max_points=20.0, points=15.0, status="measured", metric=0.04)
        bonus = PerfResult(max_points=5.0, points=5.0, status="measured", metric=0.9, bonus=True)
        return [regular, bonus]

    def test_bonus_points_count_in_the_score(self):
        groups = [group(80, "passed")]
        groups[0].points = 80.0
        self.assertEqual(scoring.lab_points(groups, self.perfs()), 100.0)

    def test_bonus_points_stay_out_of_the_maximum(self):
        self.assertEqual(scoring.lab_max_points([group(80, "passed")], self.perfs()), 100.0)

    def test_full_marks_without_the_bonus(self):
        groups = [group(80, "passed")]
        groups[0].points = 80.0
        perfs = self.perfs()
        perfs[0].points, perfs[1].points = 20.0, 0.0
        self.assertEqual(scoring.lab_points(groups, perfs),
                         scoring.lab_max_points(groups, perfs))

    def test_bonus_is_scored_like_any_entry(self):
        p = PerfResult(max_points=5.0, status="measured", metric=0.03, target=0.05, floor=0.01,
                       bands=4, bonus=True)
        self.assertEqual(scoring.score_performance(p), 2.5)


class RoundPointsTest(unittest.TestCase):
    def test_two_decimals_and_no_negative_zero(self):
        self.assertEqual(scoring.round_points(12.3456), 12.35)
        self.assertEqual(str(scoring.round_points(-0.0)), "0.0")


if __name__ == "__main__":
    unittest.main()


class HostComputeTest(unittest.TestCase):
    """A lab with a call the worker computed on the CPU earns no correctness points."""

    def test_one_host_compute_call_voids_every_group(self):
        from grader.results import GroupResult, TestResult
        ok = [TestResult(name=f"t{i}", status="passed", message="", seconds=0.0) for i in range(3)]
        cpu = TestResult(name="big", status="host_compute", message="computing on the CPU", seconds=0.0)
        a = GroupResult("public", "*", 30.0)
        a.tests = list(ok)
        b = GroupResult("hidden", "*", 50.0)
        b.tests = ok[:2] + [cpu]
        for g in (a, b):
            g.points = scoring.score_group(g)
        self.assertGreater(a.points, 0)
        self.assertEqual([t.name for t in scoring.host_compute_tests([a, b])], ["big"])
        scoring.void_correctness([a, b], "no correctness points")
        self.assertEqual((a.points, b.points), (0.0, 0.0))
        self.assertFalse(scoring.all_correct([a, b]))
        self.assertEqual(scoring.host_compute_tests([a]), [])


class LessonGroupTest(unittest.TestCase):
    """[[lesson]] entries: a group of one test per kernel, from the policy's kernel table."""

    LESSON = config.Lesson("registers", "local_memory", 5.0)

    @staticmethod
    def row(kernel, arch="sm_90", local=0, stack=0, loads=0, stores=0):
        return {"kernel": kernel, "arch": arch, "registers": 40, "shared_bytes": 0,
                "local_bytes": local, "stack_bytes": stack, "local_loads": loads,
                "local_stores": stores}

    def test_kernels_without_local_memory_earn_the_points(self):
        g = scoring.lesson_group(self.LESSON, [self.row("k1"), self.row("k2")], correct=True)
        self.assertEqual((g.name, g.max_points, g.points), ("lesson: registers", 5.0, 5.0))
        self.assertEqual([t.name for t in g.tests],
                         ["Lesson.local_memory/k1", "Lesson.local_memory/k2"])

    def test_a_kernel_with_local_memory_fails_and_says_why(self):
        g = scoring.lesson_group(self.LESSON, [self.row("k1"), self.row("k2", stack=64, loads=3,
                                                                        stores=3)], correct=True)
        self.assertEqual(g.points, 0.0)   # all or nothing
        failed = [t for t in g.tests if not t.passed]
        self.assertEqual([t.name for t in failed], ["Lesson.local_memory/k2"])
        self.assertIn("64 B per thread", failed[0].message)
        self.assertIn("3 local loads", failed[0].message)

    def test_local_accesses_count_even_where_the_table_says_no_bytes(self):
        self.assertEqual(scoring.lesson_value("local_memory", self.row("k", stores=1)), 1)
        self.assertEqual(scoring.lesson_value("local_memory", self.row("k", local=8, stack=16)),
                         24)
        self.assertEqual(scoring.lesson_value("local_memory", self.row("k")), 0)

    def test_any_architecture_of_a_kernel_fails_it(self):
        g = scoring.lesson_group(self.LESSON, [self.row("k", arch="sm_90"),
                                               self.row("k", arch="sm_80", local=16)], True)
        self.assertEqual((len(g.tests), g.points), (1, 0.0))

    def test_a_looser_maximum(self):
        lesson = config.Lesson("registers", "local_memory", 5.0, max=32)
        g = scoring.lesson_group(lesson, [self.row("k", stack=32)], correct=True)
        self.assertEqual(g.points, 5.0)
        g = scoring.lesson_group(lesson, [self.row("k", stack=48)], correct=True)
        self.assertEqual(g.points, 0.0)

    def test_nothing_unless_every_correctness_test_passed(self):
        # A starter's kernel computes nothing and has no local memory: it must not earn these.
        g = scoring.lesson_group(self.LESSON, [self.row("k")], correct=False)
        self.assertEqual((g.points, g.max_points, g.tests), (0.0, 5.0, []))
        self.assertIn("every correctness test must pass first", g.note)

    def test_a_table_cut_short_or_empty_earns_nothing(self):
        g = scoring.lesson_group(self.LESSON, [self.row("k")], True, cut_short=True)
        self.assertEqual(g.points, 0.0)
        self.assertIn("more kernels than the policy lists", g.note)
        g = scoring.lesson_group(self.LESSON, [{"kernel": 3}, "junk"], True)
        self.assertEqual((g.points, g.tests), (0.0, []))
        self.assertIn("no kernel", g.note)


class TensorCoreLessonTest(unittest.TestCase):
    """Lab 10's [[lesson]]: every kernel has at least `min` tensor-core instructions."""

    LESSON = config.Lesson("tensor cores", "tensor_cores", 5.0, max=None, min=1)

    @staticmethod
    def row(kernel, ops, arch="sm_90"):
        return {"kernel": kernel, "arch": arch, "registers": 40, "shared_bytes": 0,
                "local_bytes": 0, "stack_bytes": 0, "local_loads": 0, "local_stores": 0,
                "tensor_ops": ops}

    def test_kernels_on_tensor_cores_earn_the_points(self):
        g = scoring.lesson_group(self.LESSON, [self.row("v1", 16), self.row("v2", 64)], True)
        self.assertEqual((g.points, [t.name for t in g.tests]),
                         (5.0, ["Lesson.tensor_cores/v1", "Lesson.tensor_cores/v2"]))

    def test_a_kernel_on_the_cuda_cores_fails_and_says_why(self):
        g = scoring.lesson_group(self.LESSON, [self.row("v1", 16), self.row("simt", 0)], True)
        self.assertEqual(g.points, 0.0)   # all or nothing: "every kernel"
        (failed,) = [t for t in g.tests if not t.passed]
        self.assertEqual(failed.name, "Lesson.tensor_cores/simt")
        self.assertIn("no tensor-core instruction", failed.message)
        # A row without the count (an older table) counts none.
        self.assertEqual(scoring.lesson_value("tensor_cores", {"kernel": "k"}), 0)

    def test_kernels_that_pass_do_not_dilute_one_that_fails(self):
        # red team round 36 (lab 02): 63 empty kernels never launched beside one that spills
        lesson = config.Lesson("registers", "local_memory", 5.0, max=0)
        rows = [dict(self.row(f"empty{i}", 0), local_bytes=0) for i in range(63)]
        rows.append(dict(self.row("tile", 0), local_bytes=64, local_loads=8, local_stores=8))
        g = scoring.lesson_group(lesson, rows, True)
        self.assertEqual((len(g.tests), g.passed_count, g.points), (64, 63, 0.0))

    def test_a_higher_minimum_and_every_architecture(self):
        lesson = config.Lesson("tensor cores", "tensor_cores", 5.0, max=None, min=8)
        g = scoring.lesson_group(lesson, [self.row("k", 8), self.row("k", 4, arch="sm_80")], True)
        self.assertEqual((len(g.tests), g.points), (1, 0.0))


class TensorCoreSpeedGateTest(unittest.TestCase):
    """faster_than_fp32_peak: HMMA in every kernel, and the named benchmark faster than the GPU's
    FP32 peak measured in the grading (red team round 36: one mma.sync that computes nothing in
    an FP32 FMA kernel)."""

    LESSON = config.Lesson("tensor cores", "tensor_cores", 5.0, max=None, min=1,
                           faster_than_fp32_peak="matmul/v2_mma/f16/4096")
    CEILINGS = {"fp32_peak_gflops": 60000.0, "read_gbps": 4000.0}

    @staticmethod
    def perf(gflops, status="measured"):
        return PerfResult(max_points=10, status=status, counters={"GFLOPS": gflops})

    def group(self, perf, ceilings=CEILINGS):
        rows = [TensorCoreLessonTest.row("v1", 16), TensorCoreLessonTest.row("v2", 1)]
        return scoring.lesson_group(self.LESSON, rows, True,
                                    gate=scoring.fp32_peak_gate(self.LESSON, perf, ceilings))

    def test_beyond_the_peak_earns_the_points(self):
        self.assertEqual(self.group(self.perf(400000.0)).points, 5.0)

    def test_within_the_peak_fails_every_kernel_and_says_why(self):
        g = self.group(self.perf(4000.0))
        self.assertEqual((g.points, [t.passed for t in g.tests]), (0.0, [False, False]))
        self.assertIn("within this GPU's FP32 peak of 60,000 GFLOP/s", g.tests[0].message)

    def test_not_measured_is_said_not_failed(self):
        g = self.group(self.perf(0.0, status="not_run"))
        self.assertEqual((g.points, g.tests, g.unmeasured), (0.0, [], True))
        g = self.group(self.perf(400000.0), ceilings={"error": "no GPU"})
        self.assertEqual(g.points, 0.0)
        self.assertIn("FP32 peak could not be measured", g.tests[0].message)
        g = self.group(self.perf(0.0, status="failed"))
        self.assertIn("was not measured", g.tests[0].message)

    def test_no_gate_no_change(self):
        lesson = config.Lesson("tensor cores", "tensor_cores", 5.0, max=None, min=1)
        self.assertEqual(scoring.fp32_peak_gate(lesson, None, None), "")


class ProfileLessonGroupTest(unittest.TestCase):
    """[[lesson]] entries of a profile counter: one test, from the counters the profile stage
    measured on the benchmark's call; points withheld, and said, where the machine gives none."""

    ONE_PASS = config.Lesson("one pass", "dram_bytes", 5.0, max=1.25e9,
                             benchmark="reduce/v4/268435456")
    COALESCED = config.Lesson("coalescing", "global_load_sector_use", 5.0, max=None,
                              benchmark="matmul/v1/4096", min=50.0)

    SECTORS = config.Lesson("coalescing", "global_load_sectors", 5.0, max=1.61e10,
                            benchmark="matmul/v1/4096")

    def test_sectors_count_loads_and_atomics_so_padding_only_adds(self):
        # The reference's coalesced reads pass; an uncoalesced kernel fails, and coalesced loads
        # added inside it (which lift its share of each sector used) only add sectors.
        ok = scoring.profile_lesson_group(
            self.SECTORS, self.measured(prof_ld_sectors=1.075e10, prof_atom_sectors=0.0),
            correct=True)
        self.assertEqual(ok.points, 5.0)
        for loads, atoms in ((7.1e10, 0.0), (7.1e10 + 8.6e10, 0.0), (1.0e10, 6.9e10)):
            g = scoring.profile_lesson_group(
                self.SECTORS, self.measured(prof_ld_sectors=loads, prof_atom_sectors=atoms),
                correct=True)
            self.assertEqual(g.points, 0.0, (loads, atoms))
            self.assertIn("at most 1.61e+10 sectors", g.tests[0].message)
        # A counter missing from the profile is not a pass.
        g = scoring.profile_lesson_group(self.SECTORS, self.measured(prof_ld_sectors=1e10),
                                         correct=True)
        self.assertEqual((g.points, g.tests[0].status), (0.0, "failed"))

    @staticmethod
    def perf(status="measured", **counters):
        p = PerfResult(max_points=20.0, status=status, benchmark="reduce/v4/268435456")
        p.counters = counters
        return p

    def measured(self, **counters):
        return self.perf(prof_status=1, prof_own_kernels=2, **counters)

    def test_within_the_bound_earns_the_points(self):
        g = scoring.profile_lesson_group(
            self.ONE_PASS, self.measured(prof_dram_read_bytes=1.07e9, prof_dram_write_bytes=2e6),
            correct=True)
        self.assertEqual((g.name, g.points, g.max_points), ("lesson: one pass", 5.0, 5.0))
        self.assertEqual([(t.name, t.status) for t in g.tests],
                         [("Lesson.dram_bytes/reduce/v4/268435456", "passed")])
        self.assertFalse(g.unmeasured)

    def test_past_the_bound_fails_and_says_by_how_much(self):
        # Read and written bytes add up: 1.2 + 0.1 GB is past 1.25.
        g = scoring.profile_lesson_group(
            self.ONE_PASS, self.measured(prof_dram_read_bytes=1.2e9, prof_dram_write_bytes=1e8),
            correct=True)
        self.assertEqual(g.points, 0.0)
        self.assertIn("1.3 GB, at most 1.25 GB", g.tests[0].message)
        g = scoring.profile_lesson_group(self.COALESCED, self.measured(prof_ld_sector_use_worst_pct=12.5),
                                         correct=True)
        self.assertEqual(g.points, 0.0)
        self.assertIn("12%, at least 50%", g.tests[0].message)
        g = scoring.profile_lesson_group(self.COALESCED, self.measured(prof_ld_sector_use_worst_pct=82.0),
                                         correct=True)
        self.assertEqual(g.points, 5.0)

    def test_a_profiled_call_much_faster_than_the_timed_ones_is_not_the_work(self):
        counters = dict(prof_dram_read_bytes=1.07e9, prof_dram_write_bytes=0.0, student_ms=0.3)
        g = scoring.profile_lesson_group(self.ONE_PASS, self.measured(prof_gpu_ms=0.1, **counters),
                                         correct=True)
        self.assertEqual(g.points, 0.0)
        self.assertIn("is not the work that was timed", g.tests[0].message)
        g = scoring.profile_lesson_group(self.ONE_PASS, self.measured(prof_gpu_ms=0.4, **counters),
                                         correct=True)
        self.assertEqual(g.points, 5.0)

    def test_a_profiled_call_much_slower_than_the_timed_ones_is_not_the_work(self):
        # red team round 36: the lesson's kernel shown to the profiler only, held back with
        # __nanosleep to stay above the floor (3.0x the timed median)
        counters = dict(prof_dram_read_bytes=1.07e9, prof_dram_write_bytes=0.0, student_ms=0.3)
        g = scoring.profile_lesson_group(self.ONE_PASS, self.measured(prof_gpu_ms=0.9, **counters),
                                         correct=True)
        self.assertEqual(g.points, 0.0)
        self.assertIn("is not the work that was timed", g.tests[0].message)
        g = scoring.profile_lesson_group(self.ONE_PASS, self.measured(prof_gpu_ms=0.7, **counters),
                                         correct=True)
        self.assertEqual(g.points, 5.0)

    def test_nothing_unless_every_correctness_test_passed(self):
        g = scoring.profile_lesson_group(self.ONE_PASS, self.measured(prof_dram_read_bytes=1.0,
                                                                      prof_dram_write_bytes=0.0),
                                         correct=False)
        self.assertEqual((g.points, g.tests, g.unmeasured), (0.0, [], False))
        self.assertIn("every correctness test must pass first", g.note)

    def test_a_machine_without_counters_withholds_the_points_and_says_why(self):
        for counters, why in (({}, "no profiler"),
                              ({"prof_status": 2}, "administrators only"),
                              ({"prof_status": 5, "prof_own_kernels": 0}, "not even the grader's"),
                              ({"prof_status": 3}, "not even the grader's")):
            g = scoring.profile_lesson_group(self.ONE_PASS, self.perf(**counters), correct=True)
            self.assertTrue(g.unmeasured, counters)
            self.assertEqual((g.points, g.max_points, g.tests), (0.0, 5.0, []))
            self.assertIn(why, g.note)
            self.assertIn("withheld", g.note)

    def test_kernels_the_profiler_could_not_measure_fail_the_lesson(self):
        # The executor's own kernels were measured, so the machine can: the submission's were not.
        for status, why in ((4, "did not finish"), (5, "failed"), (3, "no kernel"),
                            (6, "output was wrong")):
            g = scoring.profile_lesson_group(self.ONE_PASS,
                                             self.perf(prof_status=status, prof_own_kernels=1),
                                             correct=True)
            self.assertFalse(g.unmeasured)
            self.assertEqual([t.status for t in g.tests], ["failed"])
            self.assertIn(why, g.tests[0].message)

    def test_a_wrong_profiled_output_fails_even_with_no_own_kernel_measured(self):
        # Since the stage profiles only the call, the executor's own kernels are never measured
        # (prof_own_kernels 0 everywhere); a replay whose output was wrong was measured, and a
        # submission can make it wrong (red team round 36): failed, never withheld.
        g = scoring.profile_lesson_group(self.ONE_PASS, self.perf(prof_status=6), correct=True)
        self.assertFalse(g.unmeasured)
        self.assertEqual([t.status for t in g.tests], ["failed"])
        self.assertIn("output was wrong", g.tests[0].message)

    def test_a_profile_that_did_not_finish_fails_even_with_nothing_measured(self):
        # A submission can make the replay slow (thousands of kernels, a wait only there):
        # ncu then measured nothing at all, not even the executor's fills, but it is failed,
        # never withheld (red team round 27).
        g = scoring.profile_lesson_group(self.ONE_PASS, self.perf(prof_status=4), correct=True)
        self.assertFalse(g.unmeasured)
        self.assertEqual([t.status for t in g.tests], ["failed"])
        self.assertIn("did not finish", g.tests[0].message)

    def test_a_benchmark_that_failed_or_was_implausible_fails_the_lesson(self):
        failed = self.perf(status="failed", prof_status=1, prof_own_kernels=1)
        failed.message = "a wrong output at the benchmark's size"
        g = scoring.profile_lesson_group(self.ONE_PASS, failed, correct=True)
        self.assertEqual(g.points, 0.0)
        self.assertIn("a wrong output", g.tests[0].message)
        odd = self.measured(prof_dram_read_bytes=1.0, prof_dram_write_bytes=0.0)
        odd.implausible = True
        self.assertEqual(scoring.profile_lesson_group(self.ONE_PASS, odd, True).points, 0.0)

    def test_not_run_benchmarks_measure_nothing(self):
        g = scoring.profile_lesson_group(self.ONE_PASS, self.perf(status="not_run"), True)
        self.assertEqual((g.points, g.tests, g.unmeasured), (0.0, [], True))
        self.assertIn("did not run", g.note)
        self.assertIn("did not run", scoring.profile_lesson_group(self.ONE_PASS, None, True).note)
