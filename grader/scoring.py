"""Scoring: pure functions of test outcomes and measured metrics. No I/O here."""

from __future__ import annotations

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


def perf_fraction(metric: float, target: float, floor: float) -> float:
    """1 at or above the target, 0 at or below the floor, linear between."""
    if metric != metric:  # NaN
        return 0.0
    if metric >= target:
        return 1.0
    if metric <= floor:
        return 0.0
    return (metric - floor) / (target - floor)


def score_performance(perf: PerfResult) -> float:
    if perf.status != "measured" or perf.metric is None:
        return 0.0
    # Rounded to a tenth of a point: noise of a few percent in the metric moves the score
    # by at most a tenth of the points, and repeated gradings of one submission agree.
    return round(perf.max_points * perf_fraction(perf.metric, perf.target, perf.floor), 1)
