"""Scoring: equal shares per group, correctness gating, the performance curve and rounding."""

import math
import unittest

from grader import scoring
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

    def test_linear_between(self):
        self.assertAlmostEqual(scoring.perf_fraction(0.03, 0.05, 0.01), 0.5, places=12)
        self.assertAlmostEqual(scoring.perf_fraction(0.02, 0.05, 0.01), 0.25, places=12)
        self.assertAlmostEqual(scoring.perf_fraction(0.75, 1.0, 0.0), 0.75, places=12)
        # strictly increasing between floor and target
        xs = [0.011 + i * 0.001 for i in range(38)]
        fs = [scoring.perf_fraction(x, 0.05, 0.01) for x in xs]
        self.assertEqual(fs, sorted(fs))
        self.assertTrue(all(0.0 < f < 1.0 for f in fs))

    def test_nan_is_zero(self):
        self.assertEqual(scoring.perf_fraction(math.nan, 0.05, 0.01), 0.0)
        self.assertEqual(scoring.perf_fraction(float("nan"), 1.0, 0.0), 0.0)


class ScorePerformanceTest(unittest.TestCase):
    def perf(self, metric, status="measured", max_points=20.0, target=0.05, floor=0.01):
        return PerfResult(max_points=max_points, status=status, metric=metric, target=target,
                          floor=floor)

    def test_measured(self):
        self.assertEqual(scoring.score_performance(self.perf(0.05)), 20.0)
        self.assertEqual(scoring.score_performance(self.perf(0.2)), 20.0)
        self.assertEqual(scoring.score_performance(self.perf(0.03)), 10.0)
        self.assertEqual(scoring.score_performance(self.perf(0.01)), 0.0)
        self.assertEqual(scoring.score_performance(self.perf(math.nan)), 0.0)

    def test_only_measured_scores(self):
        for status in ("gated", "failed", "timeout", "not_run"):
            with self.subTest(status=status):
                self.assertEqual(scoring.score_performance(self.perf(0.2, status=status)), 0.0)

    def test_measured_without_metric_scores_zero(self):
        self.assertEqual(scoring.score_performance(self.perf(None)), 0.0)

    def test_rounded_to_a_tenth(self):
        # fraction 0.471 -> 9.42 -> 9.4 ; fraction 0.474 -> 9.48 -> 9.5
        self.assertEqual(scoring.score_performance(self.perf(0.02884)), 9.4)
        self.assertEqual(scoring.score_performance(self.perf(0.02896)), 9.5)
        # a few percent of noise around one metric gives scores a tenth apart at most
        scores = {scoring.score_performance(self.perf(0.0300 + d)) for d in (-1e-5, 0, 1e-5)}
        self.assertEqual(scores, {10.0})
        for m in (0.0123, 0.0271, 0.0333, 0.0444, 0.0499):
            s = scoring.score_performance(self.perf(m))
            self.assertEqual(s, round(s, 1))
            self.assertAlmostEqual(s, 20 * (m - 0.01) / 0.04, delta=0.05 + 1e-9)


class RoundPointsTest(unittest.TestCase):
    def test_two_decimals_and_no_negative_zero(self):
        self.assertEqual(scoring.round_points(12.3456), 12.35)
        self.assertEqual(str(scoring.round_points(-0.0)), "0.0")


if __name__ == "__main__":
    unittest.main()
