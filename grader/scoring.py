"""Scoring: pure functions of test outcomes and measured metrics. No I/O here."""

from __future__ import annotations

import math

from grader.results import GroupResult, PerfResult, TestResult


def round_points(x: float) -> float:
    return round(x + 0.0, 2)


def score_group(group: GroupResult) -> float:
    """Equal shares of the group's points for each passing test; skipped tests earn nothing."""
    if not group.tests:
        return 0.0
    share = group.max_points / len(group.tests)
    return round_points(share * group.passed_count)


def lesson_value(counter: str, row: dict) -> int:
    """One kernel row's value of a lesson counter (grader.config.LESSON_COUNTERS).
    local_memory: bytes of local memory per thread (spill area and stack); a kernel whose
    machine code loads, stores or addresses local memory counts at least 1 even where the table
    says 0 bytes (an alloca'd or cvta.local frame has STACK:0)."""
    from grader import report_text
    if counter == "local_memory":
        return max(report_text.local_bytes(row),
                   1 if report_text.uses_local_memory(row) else 0)
    if counter == "tensor_cores":
        return report_text.tensor_ops(row)
    raise ValueError(f"unknown lesson counter {counter!r}")


def _misses(lesson, value) -> bool:
    """Whether a kernel's value of a static lesson counter breaks the entry's bound."""
    return ((lesson.max is not None and value > lesson.max)
            or (lesson.min is not None and value < lesson.min))


# fp32_peak_gate's answer when the benchmark did not run (--no-performance): the lesson is not
# measured, as a profile counter's is not.
UNMEASURED_GATE = "not measured: the benchmarks did not run"


def fp32_peak_gate(lesson, perf, ceilings) -> str:
    """Why a tensor_cores lesson with `faster_than_fp32_peak` is not met on speed ('' when it
    is): its benchmark (`perf`, that entry's PerfResult, or None) must have measured more FLOP/s
    than this GPU's FP32 peak measured in the same grading (`ceilings`), which no product on
    CUDA cores reaches. HMMA in every kernel alone is one instruction: a red team's lab 10 file,
    round 36, did its products with FP32 FMAs and held one mma.sync that computes nothing."""
    if not lesson.faster_than_fp32_peak:
        return ""
    bench = lesson.faster_than_fp32_peak
    if perf is None or perf.status == "not_run":
        return UNMEASURED_GATE
    if perf.status not in ("measured", "withheld") or perf.implausible:
        return f"the benchmark {bench} was not measured, so its speed cannot show tensor cores"
    peak, _, why = ceiling_limits(ceilings)
    if peak is None:
        return f"this GPU's FP32 peak could not be measured in this grading ({why})"
    gflops = _positive(perf.counters.get(FLOP_COUNTER))
    if gflops is None:
        return f"the benchmark {bench} reported no FLOP/s"
    if gflops <= peak:
        return (f"{bench} ran {gflops:,.0f} GFLOP/s, within this GPU's FP32 peak of "
                f"{peak:,.0f} GFLOP/s measured in this grading: CUDA cores could have done its "
                f"products, and the lesson is products on tensor cores")
    return ""


def lesson_group(lesson, kernels: list, correct: bool, cut_short: bool = False,
                 gate: str = "") -> GroupResult:
    """A [[lesson]] entry (grader.config.Lesson) scored as a group of one test per kernel of
    the submission: a kernel passes when its counter is at most `lesson.max` (local_memory) or
    at least `lesson.min` (tensor_cores). `kernels`: the
    policy's kernel rows (one per kernel and architecture, grader/policy/device.py); a kernel
    fails if any of its rows does. Nothing is awarded unless `correct` (every correctness test
    passed: a starter's empty kernel has no local memory either), nor when the table was
    `cut_short` (a file of more kernels than the policy lists). `gate`: why the lesson is not
    met whatever the kernels hold (fp32_peak_gate): every kernel's test fails with it.
    All or nothing: the points need every kernel's test to pass (the lessons say "every
    kernel"; shares per kernel let 63 empty kernels never launched carry one that spills, 63/64
    of the points: a red team's lab 02 file, round 36)."""
    from grader import config, report_text  # imported here: both import what this module does
    group = GroupResult(config.lesson_group_name(lesson), lesson.counter, lesson.points)
    rows = {}
    for row in kernels:
        if isinstance(row, dict) and isinstance(row.get("kernel"), str):
            rows.setdefault(row["kernel"], []).append(row)
    if not correct:
        group.note = "not checked: every correctness test must pass first"
        return group
    if cut_short:
        group.note = ("not checked: the file has more kernels than the policy lists, so not "
                      "every kernel's counter could be read")
        return group
    if not rows:
        group.note = "not checked: no kernel of the submission was found in its machine code"
        return group
    if gate == UNMEASURED_GATE:
        group.note = gate
        group.unmeasured = True
        return group
    for kernel, kernel_rows in rows.items():
        over = [r for r in kernel_rows if _misses(lesson, lesson_value(lesson.counter, r))]
        name = f"Lesson.{lesson.counter}/{report_text.kernel_name(kernel_rows[0])}"
        if gate:
            label = f" ({lesson.label})" if lesson.label else ""
            group.tests.append(TestResult(name, "failed", f"the lesson{label} is not met: {gate}"))
        elif over:
            why = report_text.lesson_note(lesson.counter, over[0]) or ""
            if lesson.label:
                why = f"the lesson ({lesson.label}) is not met: {why}"
            group.tests.append(TestResult(name, "failed", why))
        else:
            group.tests.append(TestResult(name, "passed"))
    group.points = group.max_points if all(t.passed for t in group.tests) else 0.0
    return group


# The profile stage's statuses (ProfileStatus, common/include/labkit/judge.hpp) that say the
# machine gave no counters at all, whatever the submission did: no permission, or nothing
# measured, not even the executor's own kernels that fill the call's inputs before any of the
# student's run (prof_own_kernels 0).
PROFILE_OK, PROFILE_NO_PERMISSION, PROFILE_TIMED_OUT, PROFILE_WRONG_OUTPUT = 1, 2, 4, 6
# The profiled call's kernels must take at least this share of the timed calls' median (the
# eight solutions: 0.88x to 1.32x on an H200, ncu flushing caches before the kernels): a call
# that does less work when profiled than when timed does not.
PROFILED_TIME_FLOOR = 0.5
# ... and at most this multiple of it: a call that does more of the lesson when profiled, and
# pads itself to look like the timed calls' work, does not either (a red team's lab 01 file,
# round 36: the coalesced kernel shown to the profiler only, held back with __nanosleep, 3.0x).
PROFILED_TIME_CEILING = 2.5


def profile_lesson_value(lesson, counters: dict) -> float | None:
    """The call's value of a profile counter (grader.config.PROFILE_LESSON_COUNTERS), or None."""
    from grader import config
    names = config.PROFILE_LESSON_COUNTERS[lesson.counter]
    values = [counters.get(n) for n in names]
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in values):
        return None
    return float(sum(values))


def _profile_value_text(counter: str, value: float) -> str:
    from grader import report_text
    if counter.endswith("bytes"):
        return report_text._si_bytes(value)
    if counter.endswith("sectors"):
        return f"{value:.3g} sectors"
    return f"{value:.0f}%"


def machine_unmeasured(counters: dict) -> str:
    """Why this machine gave the profile stage no counters, whatever the submission did ('' when
    it did measure, or when what failed may be the submission's own doing)."""
    from grader import report_text
    status = counters.get("prof_status")
    if status is None:
        return "the benchmark was not profiled (no profiler on this machine)"
    status = int(status)
    if status == PROFILE_NO_PERMISSION:
        return (f"{report_text.PROFILE_NONE[status]} (run the grader as root, or set the "
                f"driver's RmProfilingAdminOnly=0: docs/grading.md)")
    # A profile that did not finish is never the machine's: a submission can make one slow. Nor
    # is a wrong output: the bench judge checks it only after the profiler measured the call.
    # (Since the stage profiles only the call, prof_own_kernels is 0 on every machine: a red
    # team's reading, round 36.)
    if (status not in (PROFILE_OK, PROFILE_TIMED_OUT, PROFILE_WRONG_OUTPUT)
            and not counters.get("prof_own_kernels")):
        return "the profiler measured no kernel on this machine, not even the grader's own"
    return ""


def profile_lesson_group(lesson, perf, correct: bool) -> GroupResult:
    """A [[lesson]] entry of a profile counter scored from the profile stage's counters of its
    benchmark's call (`perf`: that entry's PerfResult, or None): one test,
    Lesson.<counter>/<benchmark>, passing when the value lies within min and max. Nothing is
    awarded unless `correct`. Where the machine gives no counters at all (machine_unmeasured),
    the group has no test and is marked `unmeasured`: its points are withheld, and every report
    says why (docs/grading.md, "Points where a lab teaches the counter"). Anything else that
    leaves the call unmeasured (the benchmark failed, was implausible, its kernels could not be
    profiled) fails the test."""
    from grader import config, report_text
    group = GroupResult(config.lesson_group_name(lesson), lesson.counter, lesson.points)
    if not correct:
        group.note = "not checked: every correctness test must pass first"
        return group
    if perf is None or perf.status == "not_run":
        group.note = "not measured: the benchmarks did not run"
        group.unmeasured = True
        return group
    name = f"Lesson.{lesson.counter}/{lesson.benchmark}"
    label = f" ({lesson.label})" if lesson.label else ""
    if perf.status not in ("measured", "withheld") or perf.implausible:
        why = perf.message or perf.status
        group.tests.append(TestResult(name, "failed", f"the lesson{label} could not be measured: "
                                                      f"the benchmark {why}"))
        group.points = score_group(group)
        return group
    away = machine_unmeasured(perf.counters)
    if away:
        group.note = f"not measured: {away}; its points are withheld"
        group.unmeasured = True
        return group
    value = profile_lesson_value(lesson, perf.counters)
    if int(perf.counters["prof_status"]) != PROFILE_OK or value is None:
        status = int(perf.counters["prof_status"])
        group.tests.append(TestResult(name, "failed", f"the lesson{label} could not be measured: "
                                      f"{report_text.PROFILE_NONE.get(status, 'no counters')}"))
        group.points = score_group(group)
        return group
    profiled_ms, timed_ms = perf.counters.get("prof_gpu_ms"), perf.counters.get("student_ms")
    if (isinstance(profiled_ms, (int, float)) and isinstance(timed_ms, (int, float))
            and not PROFILED_TIME_FLOOR * timed_ms <= profiled_ms
            <= PROFILED_TIME_CEILING * timed_ms):
        group.tests.append(TestResult(name, "failed", (
            f"the lesson{label} could not be measured: the profiled call's kernels ran "
            f"{profiled_ms:.3g} ms, the timed calls {timed_ms:.3g} ms; the call the profiler saw "
            f"is not the work that was timed")))
        group.points = score_group(group)
        return group
    shown = _profile_value_text(lesson.counter, value)
    counter = lesson.counter.replace("_", " ")
    if lesson.max is not None and value > lesson.max:
        group.tests.append(TestResult(name, "failed", f"the lesson{label} is not met: {counter} "
                                      f"{shown}, at most {_profile_value_text(lesson.counter, lesson.max)}"))
    elif lesson.min is not None and value < lesson.min:
        group.tests.append(TestResult(name, "failed", f"the lesson{label} is not met: {counter} "
                                      f"{shown}, at least {_profile_value_text(lesson.counter, lesson.min)}"))
    else:
        group.tests.append(TestResult(name, "passed"))
    group.points = score_group(group)
    return group


def host_compute_tests(groups: list) -> list:
    """The tests whose call the worker computed on the CPU (status host_compute)."""
    return [t for g in groups for t in g.tests if t.status == "host_compute"]


def void_correctness(groups: list, reason: str) -> None:
    """No correctness points at all: a lab with a call computed on the CPU earns none."""
    for g in groups:
        if g.tests:
            g.points = 0.0
            g.note = reason


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
    """The entry's points: only a measured entry earns any (an implausible or withheld one is
    not 'measured': check_plausibility below)."""
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


# ---------------------------------------------------------------------------------------------
# Plausibility: a speed this GPU cannot reach is not a score.
#
# labkit_gpu_ceilings (common/src/gpu_ceilings_main.cu) measures, in the same grading and before
# any student code runs, the GPU's FP32 peak (independent FMAs on every SM) and its memory
# bandwidth (a 1 GiB read with 16-byte loads; a 1 GiB copy). A benchmark's counters are
# lower bounds of the work its kernel did: GFLOPS counts the operation's FLOPs (2 m n k for a
# matmul), GBps its minimum bytes (inputs read once, outputs written once). Above the ceiling,
# the time measured cannot have held the work: the entry earns nothing and is flagged.
#
# Every entry's GFLOPS and GBps are checked when it reports them (every op family reports both
# today; for matmul and conv the flops bind, for reduce and SpMV the bytes: the other counter
# sits far below its ceiling). The margins:
#   FLOP_MARGIN 0.20: the FMA kernel's median sits within 1-2% of the FP32 peak at the top boost
#     clock (65.9 of 66.9 TFLOP/s on an H100 SXM, three runs within 0.4%), and the clock itself
#     can differ between the ceiling's run and a benchmark's (power and thermal state: the top
#     boost and the clock under a sustained FP32 load differ by up to ~10% on an H100); a
#     matmul that legitimately does fewer multiplications than 2 m n k (one or two levels of
#     Strassen: 7/8, 49/64 of them) is still slowed by its extra additions to under the peak.
#     20% covers all of these; the results this check is for are many times the peak.
#   BYTE_MARGIN 0.25: the read kernel and the copy reach 90-92% of the HBM's nominal rate
#     (3.02-3.04 and 2.97 TB/s of 3.35 on an H100), and a tuned streaming kernel gets as far
#     (lab 05's reference reduction: 3.03 TB/s in the same session, CUB 2.91), so a student's may
#     beat them by a few percent; and GBps counts minimum bytes, some of which need not reach
#     DRAM inside the timed window: outputs written may sit in the write-back L2 (50 MB on an
#     H100) when the timer stops, and SpMV's x, counted once, may come partly from the L2 (on
#     the 2048^2 Laplacian, y and x are each 8% of the counted bytes). 25% covers both with
#     room for noise.
# A lab whose FLOP count over-counts what a legitimate algorithm multiplies (lab 07: FP32
# Winograd does 2.25x fewer multiplications than direct convolution's FLOP count) sets
# `[plausibility] flop_factor` in its grading.toml: its FLOP ceiling is the peak times that.
FLOP_MARGIN = 0.20
BYTE_MARGIN = 0.25

FLOP_COUNTER, BYTE_COUNTER = "GFLOPS", "GBps"
WITHHELD = "withheld"   # PerfResult.status of an entry measured without ceilings to check it


def _positive(x) -> float | None:
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0
    return float(x) if ok else None


def ceiling_limits(ceilings) -> tuple:
    """(FP32 peak GFLOP/s, memory bandwidth GB/s, why not) from the figures labkit_gpu_ceilings
    printed (the results' gpu['ceilings']): both numbers and '', or (None, None, why they cannot
    be used).

    The peak is fp32_peak_gflops, or cuBLAS SGEMM's speed when that is higher (an FP32 SGEMM
    cannot beat the FP32 peak: a lower FMA figure was disturbed); the bandwidth is the higher of
    read_gbps and copy_gbps."""
    if not isinstance(ceilings, dict):
        return None, None, "they were not measured"
    if "error" in ceilings:
        return None, None, " ".join(str(ceilings["error"]).split()) or "unknown error"
    peak, read = _positive(ceilings.get("fp32_peak_gflops")), _positive(ceilings.get("read_gbps"))
    missing = [name for name, v in (("fp32_peak_gflops", peak), ("read_gbps", read)) if v is None]
    if missing:
        return None, None, f"labkit_gpu_ceilings reported no {' or '.join(missing)}"
    peak = max(peak, _positive(ceilings.get("sgemm_gflops")) or 0.0)
    bandwidth = max(read, _positive(ceilings.get("copy_gbps")) or 0.0)
    return peak, bandwidth, ""


def implausibility(counters: dict, peak_gflops: float, bandwidth_gbps: float,
                   flop_factor: float = 1.0) -> str:
    """'' when the counters are within what the GPU can do; otherwise why not, one line per
    counter above its ceiling (the first line is the verdict's summary)."""
    lines = []
    gflops, gbps = _positive(counters.get(FLOP_COUNTER)), _positive(counters.get(BYTE_COUNTER))
    flop_limit = peak_gflops * flop_factor * (1 + FLOP_MARGIN)
    if gflops is not None and gflops > flop_limit:
        times = f"{flop_factor:g} x " if flop_factor != 1 else ""
        allowance = (f" x {flop_factor:g} (this lab's allowance for algorithms that multiply less "
                     f"than the FLOPs counted)" if flop_factor != 1 else "")
        lines.append(f"measured {gflops:,.0f} GFLOP/s, above {times}this GPU's FP32 peak of "
                     f"{peak_gflops:,.0f} GFLOP/s measured in this grading: not a possible "
                     f"result; the benchmark does not count (flagged for review)")
        lines.append(f"  (the limit: {flop_limit:,.0f} GFLOP/s, the peak{allowance} plus "
                     f"{FLOP_MARGIN:.0%} for measurement noise)")
    byte_limit = bandwidth_gbps * (1 + BYTE_MARGIN)
    if gbps is not None and gbps > byte_limit:
        lines.append(f"measured {gbps:,.0f} GB/s, above this GPU's memory bandwidth of "
                     f"{bandwidth_gbps:,.0f} GB/s measured in this grading: not a possible "
                     f"result; the benchmark does not count (flagged for review)")
        lines.append(f"  (the limit: {byte_limit:,.0f} GB/s, the bandwidth plus "
                     f"{BYTE_MARGIN:.0%} for measurement noise and bytes the L2 holds)")
    if lines:
        lines.append("The time measured cannot have held the work counted: the work was done "
                     "outside the timed window, or not done, or the time is wrong.")
    return "\n".join(lines)


def check_plausibility(performance: list, ceilings, flop_factor: float = 1.0) -> None:
    """Checks every measured entry of `performance` against the GPU's ceilings (the results'
    gpu['ceilings']), in place. An entry above a ceiling becomes status 'failed' with
    implausible = True, no band and why in its message; without usable ceilings every measured
    entry becomes status 'withheld' (its points are not awarded on trust). Either way it then
    scores 0 (score_performance). Entries that were not measured are left alone."""
    peak, bandwidth, why = ceiling_limits(ceilings)
    for perf in performance:
        if perf.status != "measured":
            continue
        if peak is None:
            perf.status, perf.band = WITHHELD, None
            perf.message = (f"not scored: this GPU's ceilings (FP32 peak, memory bandwidth) could "
                            f"not be measured in this grading ({why}), so this speed cannot be "
                            f"checked against what the GPU can do, and no performance points are "
                            f"awarded on trust; grade again")
            continue
        message = implausibility(perf.counters, peak, bandwidth, flop_factor)
        if message:
            perf.status, perf.band, perf.implausible, perf.message = "failed", None, True, message
