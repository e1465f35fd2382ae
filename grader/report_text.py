"""What every report says the same way: the console report (grader/console_report.py), the
report files (grader/reports.py: Gradescope, JUnit, Markdown, CSV) and the HTML pages
(grader/html_report.py) take their wording, numbers and text clean-up from here, and this
module imports none of them.
"""

from __future__ import annotations

import math
import re

from grader.results import GradeResult, GroupResult, LabResult, PerfResult

# A performance entry's status in words, when it has no measured metric to show.
PERF_STATES = {"gated": "not measured: correctness first", "not_run": "not run",
               "timeout": "benchmark timed out", "failed": "benchmark failed",
               "withheld": "not scored: GPU ceilings not measured"}
IMPLAUSIBLE = "IMPLAUSIBLE: flagged for review"
# Entry statuses that are a problem to show (with the entry's message).
PERF_PROBLEMS = ("failed", "timeout", "withheld")
# Lab statuses that leave nothing to show per test: one failing entry carries the message.
FAILED_LAB = {"build_failed": "build", "rejected": "policy check", "bad_files": "submitted files",
              "no_gpu": "GPU", "error": "grading"}
# The same in words, for summaries.
STATUS_TEXT = {"build_failed": "did not build", "rejected": "rejected by the policy check",
               "bad_files": "files refused", "no_gpu": "not run: no GPU",
               "error": "not graded: error"}


# ---------------------------------------------------------------------------------------------
# Numbers

def points_text(x: float) -> str:
    """Points as every report shows them: two decimals ('12.50')."""
    return f"{x:.2f}"


def finite(x) -> bool:
    """A real number, finite: not None, a bool, a string, nan or inf (a results file read back
    may hold any of them where a number belongs)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def num(x: float, ref: float) -> str:
    """x with as many decimals as show three significant digits of `ref`."""
    if not math.isfinite(x):
        return str(x)
    if ref == 0 or not math.isfinite(ref):
        return f"{x:.3g}"
    decimals = max(0, 2 - math.floor(math.log10(abs(ref))))
    return f"{x:.{min(decimals, 9)}f}"


# ---------------------------------------------------------------------------------------------
# Results in words

def is_hidden_group(group: GroupResult) -> bool:
    """A group of hidden tests: named 'hidden' (or 'races', the graded race checks), or whose
    filter selects hidden tests (a 'Hidden' in its positive patterns, before any '-')."""
    name = group.name.lower()
    positive = group.filter.split("-", 1)[0].lower()
    return "hidden" in name or name in ("races", "race") or "hidden" in positive


def perf_name(lab: LabResult, p: PerfResult) -> str:
    return p.name or p.benchmark or "performance"


def perf_summary(p: PerfResult) -> str:
    """'0.0610 [0.0600, 0.0620] band 3/4 speed / cuBLAS' for a measured entry."""
    if p.implausible:
        return IMPLAUSIBLE
    if p.status != "measured" or p.metric is None:
        return PERF_STATES.get(p.status, p.status)
    text = num(p.metric, p.metric)
    if p.metric_lo is not None and p.metric_hi is not None:
        text += f" [{num(p.metric_lo, p.metric)}, {num(p.metric_hi, p.metric)}]"
    if p.band is not None:
        text += f" band {p.band}/{p.bands}"
    return text + (f" {p.label}" if p.label else "")


# The profile stage (grade --profile): one timed call of a benchmark replayed under ncu by the
# bench judge; its counters are prof_* (ProfileStatus in common/include/labkit/judge.hpp).
PROFILE_NONE = {
    0: "not asked",
    2: "this machine opens the GPU's performance counters to administrators only",
    3: "the profiler measured no kernel of the call (no counters on this machine?)",
    4: "the profiler did not finish in time",
    5: "the profiler failed (the bench judge's output says why)",
    6: ("the profiled call's output was wrong, checked like a timed call's: the call the "
        "profiler saw is not the work that was timed"),
}
# A gap worth a sentence: DRAM bytes this many times the model's, or less than its inverse.
PROFILE_TRAFFIC_GAP = 1.5
PROFILE_POOR_SECTOR_USE_PCT = 60.0


def _si_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def model_bytes(p: PerfResult) -> float | None:
    """The bytes the benchmark's model counts for one call (its GBps counter is those bytes
    over the student's median time), or None."""
    gbps, ms = p.counters.get("GBps"), p.counters.get("student_ms")
    if not gbps or not ms or gbps <= 0 or ms <= 0:
        return None
    return gbps * 1e9 * ms * 1e-3


def lecture_measured(p: PerfResult) -> float | None:
    """The profile's value of the quantity the entry's `lecture` names, or None."""
    from grader.config import LECTURE_MEASURES
    if not p.lecture or p.lecture.get("measure") not in LECTURE_MEASURES:
        return None
    names = LECTURE_MEASURES[p.lecture["measure"]]
    if any(not isinstance(p.counters.get(n), (int, float)) for n in names):
        return None
    value = sum(float(p.counters[n]) for n in names)
    return value * 32 if p.lecture["measure"] == "global_load_bytes" else value


def lecture_line(p: PerfResult) -> str:
    """'lecture: <model in words>: <value>; measured <value> (<ratio>x)', or ''."""
    measured = lecture_measured(p)
    if measured is None:
        return ""
    want = float(p.lecture["value"])
    unit = p.lecture["measure"].replace("_", " ")
    show = _si_bytes if p.lecture["measure"].endswith("bytes") else (lambda n: f"{n:.3g}")
    return (f"lecture: {p.lecture['says']}: {show(want)} {'' if unit.endswith('bytes') else unit}"
            .rstrip() + f"; measured {show(measured)} ({measured / want:.2f}x)")


def profile_lines(p: PerfResult) -> list:
    """What the profile stage measured of the entry's benchmark, in a few lines (none when it
    was not profiled): DRAM bytes against the model's, how much of each sector global loads
    and stores use, bank conflicts, occupancy, and a sentence on the largest gap."""
    c = p.counters
    status = c.get("prof_status")
    if status is None:
        return []
    if int(status) != 1:
        return [f"profile: none: {PROFILE_NONE.get(int(status), 'unknown status')}"]
    read, written = c.get("prof_dram_read_bytes", 0.0), c.get("prof_dram_write_bytes", 0.0)
    model = model_bytes(p)
    traffic = f"profile: DRAM {_si_bytes(read)} read, {_si_bytes(written)} written"
    gap = None
    if model:
        gap = (read + written) / model
        traffic += f": {gap:.2f}x the {_si_bytes(model)} the model counts"
    parts = []
    if c.get("prof_ld_sectors", 0) > 0:
        # What global loads moved through L1, the lectures' "global memory accesses" (2N^3
        # floats for the naive matmul, divided by V or the tile width with reuse); most of it
        # is served by the caches, so it is far more than the DRAM bytes.
        parts.append(f"global loads moved {_si_bytes(c['prof_ld_sectors'] * 32)} in "
                     f"{c.get('prof_ld_requests', 0):.3g} warp requests, using "
                     f"{c.get('prof_ld_sector_use_pct', 0):.0f}% of each sector")
    if c.get("prof_st_sectors", 0) > 0:
        parts.append(f"stores {c.get('prof_st_sector_use_pct', 0):.0f}%")
    parts.append(f"{int(c.get('prof_shared_bank_conflicts', 0)):,} shared bank conflicts")
    parts.append(f"occupancy {c.get('prof_occupancy_pct', 0):.0f}%")
    kernels = int(c.get("prof_kernels", 0))
    parts.append(f"{kernels} kernel{'s' if kernels != 1 else ''}, "
                 f"{int(c.get('prof_registers', 0))} registers")
    lines = [traffic, "  " + "; ".join(parts)]
    lecture = lecture_line(p)
    if lecture:
        lines.append("  " + lecture)
    if gap is not None and gap > PROFILE_TRAFFIC_GAP:
        lines.append(f"  {gap:.1f}x the model's bytes: data crosses DRAM more than once (reuse "
                     f"it from registers or shared memory, or keep it on chip between kernels)")
    elif c.get("prof_ld_sectors", 0) > 0 and \
            c.get("prof_ld_sector_use_pct", 100) < PROFILE_POOR_SECTOR_USE_PCT:
        lines.append("  loads use little of each 32-byte sector they fetch: neighbouring "
                     "threads should read neighbouring addresses (coalescing)")
    return lines


def lab_message(lab: LabResult) -> str:
    """What a lab that was not graded reports: its message, and the compiler's log."""
    text = lab.message.strip()
    if lab.build is not None and not lab.build.ok and lab.build.log.strip():
        log = lab.build.log.strip()
        if log not in text:
            text = f"{text}\n\n{log}" if text else log
    if lab.status == "no_gpu" and not text:
        text = "no CUDA GPU: nothing was run and no points were awarded"
    return text or f"{lab.status}: no message recorded"


def implausible_entries(result: GradeResult) -> list:
    """'<lab>: <entry>' for every performance entry measured faster than the GPU can run."""
    return [f"{lab.lab}: {p.name or p.benchmark}" for lab in result.labs
            for p in lab.performance if p.implausible]


def flagged_text(result: GradeResult) -> str:
    """The plausibility flag in words ('' when nothing is flagged)."""
    flagged = implausible_entries(result)
    if not flagged:
        return ""
    return (f"{', '.join(flagged)} measured faster than this GPU can run (above its ceilings "
            f"measured in this grading): not a possible result, no points for "
            f"{'it' if len(flagged) == 1 else 'them'}")


def withheld(result: GradeResult) -> bool:
    """Performance points withheld: the GPU's ceilings were not measured (result.message)."""
    return any(p.status == "withheld" for lab in result.labs for p in lab.performance)


# ---------------------------------------------------------------------------------------------
# Text

_BAD_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


# What a terminal would act on rather than show: C0 controls but newline and tab (escape
# sequences, carriage return, backspace), DEL, the C1 controls (U+0080-U+009F: a single-byte
# CSI among them) and Unicode's invisible and direction controls (text shown in another order
# than stored). Student text (a test's message with the worker's output, a build log, a file's
# name) may hold any of them.
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e"
                                "\u2060-\u2069\ufeff\ud800-\udfff]")


def _escaped(pattern, text) -> str:
    """`text` with every character `pattern` matches written as a visible escape (\\x1b,
    \\u202e)."""
    return pattern.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                       else f"\\u{ord(m.group()):04x}", str(text))


def terminal_text(text) -> str:
    """Text safe to print to a terminal: every control it would act on (_TERMINAL_CONTROLS)
    becomes a visible escape such as \\x1b or \\u202e; newlines and tabs stay."""
    return _escaped(_TERMINAL_CONTROLS, text)


def clean_text(text) -> str:
    """Text safe for XML 1.0 and UTF-8: control characters (other than tab, newline, carriage
    return) and lone surrogates become visible escapes such as \\x1b."""
    return _escaped(_BAD_XML_CHARS, text)


def clip(text: str, max_lines: int, max_chars: int) -> str:
    """At most `max_lines` lines and about `max_chars` characters, saying how much was cut."""
    text = text.rstrip()
    lines = text.splitlines()
    cut = ""
    if len(lines) > max_lines:
        cut = f"[... {len(lines) - max_lines} more lines]"
        lines = lines[:max_lines]
    text = "\n".join(lines)
    if len(text) > max_chars:
        cut = f"[... {len(text) - max_chars} more characters]" + (f" {cut}" if cut else "")
        text = text[:max_chars]
    return f"{text}\n{cut}" if cut else text


# ---------------------------------------------------------------------------------------------
# The kernels as compiled (PolicyReport.kernels: registers, shared and local memory per kernel)

def _bytes(n: int) -> str:
    return f"{n / 1024:g} KiB" if n >= 1024 and n % 256 == 0 else f"{n} B"


def _int(row: dict, key: str) -> int:
    value = row.get(key) if isinstance(row, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


KERNEL_COUNTS = ("registers", "shared_bytes", "local_bytes", "stack_bytes", "local_loads",
                 "local_stores", "local_addressing")


def kernel_counts(row: dict) -> dict:
    """A kernel row's numbers, each a non-negative int (0 for anything else)."""
    return {key: _int(row, key) for key in KERNEL_COUNTS}


def lab_kernels(lab: LabResult) -> list:
    """The lab's kernel rows that are well formed (a results file read back may hold anything)."""
    rows = (lab.policy.kernels if lab.policy is not None else None) or []
    return [k for k in rows if isinstance(k, dict) and isinstance(k.get("kernel"), str)]


def kernel_name(row: dict, limit: int = 60) -> str:
    name = clean_text(row.get("kernel", "?"))
    return name if len(name) <= limit else name[:limit - 3] + "..."


def local_bytes(row: dict) -> int:
    """A kernel's local memory per thread: its spill area and its stack (where arrays it
    indexes at run time live)."""
    return _int(row, "local_bytes") + _int(row, "stack_bytes")


def uses_local_memory(row: dict) -> bool:
    """Any local memory: bytes per thread, local loads or stores, or local memory reached
    through a pointer (local_addressing: the local window's base, a frame made at run time)."""
    return bool(local_bytes(row) or _int(row, "local_loads") or _int(row, "local_stores")
                or _int(row, "local_addressing"))


def kernel_resources(row: dict) -> str:
    """'48 registers, 4 KiB shared, no local memory (sm_90)': one kernel's resources."""
    text = f"{_int(row, 'registers')} registers, {_bytes(_int(row, 'shared_bytes'))} shared, "
    if uses_local_memory(row):
        text += (f"{_bytes(local_bytes(row))} local ({_int(row, 'local_loads')} loads, "
                 f"{_int(row, 'local_stores')} stores in its code")
        addressing = _int(row, "local_addressing")
        text += f", {addressing} local addressing)" if addressing else ")"
    else:
        text += "no local memory"
    return text + f" ({clean_text(str(row.get('arch', '?')))})"


def tensor_ops(row: dict) -> int:
    """A kernel's tensor-core instructions in its machine code (HMMA, IMMA, HGMMA...)."""
    return _int(row, "tensor_ops")


def lesson_note(counter: str, row: dict) -> str | None:
    """Why a kernel misses a static lesson counter (grader.config.LESSON_COUNTERS)."""
    if counter == "tensor_cores":
        return (f"kernel {kernel_name(row)} has no tensor-core instruction (HMMA...) in its "
                f"machine code: it multiplies on the CUDA cores (wmma::mma_sync or mma.sync "
                f"put the products on the tensor cores)")
    return kernel_note(row)


def kernel_note(row: dict) -> str | None:
    """What local memory in a kernel means, or None when it has none."""
    if not uses_local_memory(row):
        return None
    loads, stores = _int(row, "local_loads"), _int(row, "local_stores")
    addressing = _int(row, "local_addressing")
    through = (f", and {addressing} instructions that address it through a pointer (the "
               f"address of a local array taken, alloca, a printf's arguments)"
               if addressing else "")
    return (f"kernel {kernel_name(row)} keeps {_bytes(local_bytes(row))} per thread in "
            f"local memory ({loads} local loads and {stores} local stores in its machine "
            f"code{through}): ptxas spilled registers (more values live at once than the "
            f"registers a thread gets: a smaller register tile, or fewer threads per block with "
            f"__launch_bounds__), or the kernel indexes an array at run time (fully unrolled "
            f"loops with constant indices keep it in registers), or it calls printf (its "
            f"arguments go through local memory); every such access goes through the caches "
            f"instead of a register")
