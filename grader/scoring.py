"""Scoring: pure functions of test outcomes and measured metrics. No I/O here."""

from __future__ import annotations

import math

from grader.results import GroupResult, PerfResult


def round_points(x: float) -> float:
    return round(x + 0.0, 2)


def score_group(group: GroupResult) -> float:
    """Equal shares of the group's points for each passing test; skipped tests earn nothing."""
    if not group.tests:
        return 0.0
    share = group.max_points / len(group.tests)
    return round_points(share * group.passed_count)


def all_correct(groups: list) -> bool:
    """Correctness gates performance: every test of every group that has tests passed."""
    present = [g for g in groups if g.tests]
    return bool(present) and all(g.passed_count == len(g.tests) for g in present)


# Metrics land on a band edge only by coincidence; one computed a hair below an edge it sits on
# exactly (0.0425 in floating point) counts as on it.
_EDGE_EPS = 1e-9


def perf_band(metric: float, target: float, floor: float, bands: int) -> int:
    """Which of `bands` equal steps between floor and target the metric reached: `bands` at or
    above the target, 0 at or below the floor (and for NaN)."""
    if metric != metric:  # NaN
        return 0
    if metric >= target:
        return bands
    if metric <= floor:
        return 0
    return min(bands, int(math.floor(bands * (metric - floor) / (target - floor) + _EDGE_EPS)))


def perf_fraction(metric: float, target: float, floor: float, bands: int = 4) -> float:
    """1 at or above the target, 0 at or below the floor, in `bands` equal steps between.

    Steps, not a line: a re-grading whose metric moves by a few percent of noise gets the same
    points unless the metric sits right at a band edge."""
    return perf_band(metric, target, floor, bands) / bands


def score_performance(perf: PerfResult) -> float:
    if perf.status != "measured" or perf.metric is None:
        return 0.0
    return round_points(perf.max_points * perf_fraction(perf.metric, perf.target, perf.floor,
                                                        perf.bands))


def lab_points(groups: list, performance: list) -> float:
    """A lab's score: every group's and every performance entry's points, bonus ones included."""
    return round_points(sum(g.points for g in groups) + sum(p.points for p in performance))


def lab_max_points(groups: list, performance: list) -> float:
    """A lab's maximum: bonus performance entries are left out, so they can lift the score
    above it but never raise what full marks need."""
    return round_points(sum(g.max_points for g in groups)
                        + sum(p.max_points for p in performance if not p.bonus))
