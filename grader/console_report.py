"""The console report: a score table, then what went wrong and where (what `python3 -m grader
grade` prints; the report files are grader/reports.py, the HTML pages grader/html_report.py)."""

from __future__ import annotations

from grader.report_text import (PERF_PROBLEMS, implausible_entries, kernel_name, kernel_note,
                                kernel_resources, lab_kernels, perf_summary, points_text,
                                profile_lines, terminal_text)
from grader.results import GradeResult, LabResult, stage_totals

MAX_FAILURES_SHOWN = 5
MAX_MESSAGE_LINES = 30
MAX_WARNINGS_SHOWN = 5
MAX_KERNELS_SHOWN = 8


def _score(got: float, most: float) -> str:
    """The table's points column: '  12.50 / 20'."""
    return f"{points_text(got):>7} / {most:g}"


def _indented(text: str, max_lines: int = MAX_MESSAGE_LINES, indent: str = "      ") -> str:
    lines = text.rstrip().splitlines() or ["(no message)"]
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"[... {len(lines) - max_lines} more lines ...]"]
    return "\n".join(indent + line for line in lines)


def stage_line(stages: list) -> str:
    """'build 13.8 s, policy 1.5 s, tests 3.2 s, bench 25.1 s; 43.6 s in all': a stages list
    summed by kind (the results JSON has each stage)."""
    totals = stage_totals(stages)
    text = ", ".join(f"{kind} {seconds:.1f} s" for kind, seconds in totals.items())
    if len(totals) > 1:
        text += f"; {sum(totals.values()):.1f} s in all"
    return text


def lab_table(lab: LabResult, times: bool = False) -> list:
    """The lab's rows; `times`: a last row with its stage times (stage_line)."""
    seed = f"  (seed {lab.seed})" if lab.seed is not None else ""
    out = [f"{lab.lab} - {lab.title}{seed}"]
    if lab.status == "bad_files":
        out.append(f"  {'files':<14}{'REFUSED: see below':<44}")
        out.append(f"  {'lab total':<58}{_score(lab.points, lab.max_points)}")
        return out
    times_row = [f"  {'time':<14}{stage_line(lab.stages)}"] if times and lab.stages else []
    if lab.build is not None:
        state = "ok" if lab.build.ok else "FAILED"
        out.append(f"  {'build':<14}{state:<44}{lab.build.seconds:6.1f} s")
    if lab.policy is not None:
        state = ("ok" if lab.policy.ok else
                 f"REJECTED: {len(lab.policy.violations)} violation(s), see below")
        out.append(f"  {'policy':<14}{state:<44}{lab.policy.seconds:6.1f} s")
    if lab.sandbox:
        out.append(f"  {'worker':<14}{sandbox_line(lab.sandbox)}")
    kernels = lab_kernels(lab)
    for i, k in enumerate(kernels[:MAX_KERNELS_SHOWN]):
        out.append(f"  {'kernels' if i == 0 else '':<14}{kernel_name(k, 44)}: {kernel_resources(k)}")
    if len(kernels) > MAX_KERNELS_SHOWN:
        out.append(f"  {'':<14}... and {len(kernels) - MAX_KERNELS_SHOWN} more (in the results file)")
    for g in lab.groups:
        if g.tests:
            desc = f"{g.passed_count}/{len(g.tests)} tests passed"
        else:
            desc = g.note or "not run"
        name = g.name
        if len(name) > 13:   # "lesson: registers": on a line of its own, as a long perf name
            out.append(f"  {name}")
            name = ""
        out.append(f"  {name:<14}{desc:<44}{_score(g.points, g.max_points)}")
    for p in lab.performance:
        name = "performance" if len(lab.performance) == 1 else f"perf {p.name}"
        desc = perf_summary(p)
        if len(name) > 13:
            out.append(f"  {name}")
            name = ""
        out.append(f"  {name:<14}{desc:<44}{_score(p.points, p.max_points)}")
        if p.status == "measured":
            against = f"; against {p.baseline}" if p.baseline else ""
            out.append(f"  {'':<14}(target {p.target:g}, floor {p.floor:g}{against})")
            out += [f"  {'':<14}{line}" for line in profile_lines(p)]
    out.append(f"  {'lab total':<58}{_score(lab.points, lab.max_points)}")
    return out + times_row


def sandbox_line(sandbox: dict) -> str:
    """One line from the judge's 'worker' event: how the worker was confined, on what."""
    text = str(sandbox.get("sandbox", "")) or "sandbox not reported"
    if sandbox.get("device"):
        text += f", on {sandbox['device']}"
    return text[:200]


def lab_problems(lab: LabResult) -> list:
    out = []
    if lab.status == "rejected":
        out.append(f"  {lab.lab}: REJECTED by the policy check; nothing of it was run:")
        out.append(_indented(lab.message, 40))
    elif lab.status in ("build_failed", "error", "bad_files") and lab.message:
        out.append(f"  {lab.lab}: {lab.message}")
        if lab.build is not None and not lab.build.ok and lab.build.log:
            out.append(_indented(lab.build.log, 40, "      "))
    failures = [(g.name, t) for g in lab.groups for t in g.tests if not t.passed]
    for group_name, t in failures[:MAX_FAILURES_SHOWN]:
        out.append(f"  [{group_name}] {t.name}: {t.status.upper()}")
        out.append(_indented(t.message))
    if len(failures) > MAX_FAILURES_SHOWN:
        out.append(f"  ... and {len(failures) - MAX_FAILURES_SHOWN} more failing tests "
                   f"(all listed in the results file)")
    for p in lab.performance:
        if p.status in PERF_PROBLEMS:
            label = "performance" if len(lab.performance) == 1 else f"performance {p.name}"
            flag = "IMPLAUSIBLE: " if p.implausible else ""
            out.append(f"  [{label}] {flag}{p.message.strip()[:2000]}")
    for k in lab_kernels(lab)[:MAX_KERNELS_SHOWN]:
        note = kernel_note(k)
        if note:
            out.append(f"  {lab.lab}: note: {note}")
    for w in lab.warnings[:MAX_WARNINGS_SHOWN]:
        out.append(f"  {lab.lab}: note: {w}")
    if len(lab.warnings) > MAX_WARNINGS_SHOWN:
        out.append(f"  ... and {len(lab.warnings) - MAX_WARNINGS_SHOWN} more notes (in the "
                   f"results file)")
    return out


def render(result: GradeResult, output_path: str | None = None, times: bool = False) -> str:
    """The console report. `times`: each lab's stage times below its table, and the grading's
    own (configure, the harness, the GPU probe) after the labs."""
    gpu = result.gpu
    if gpu is None:
        where = "GPU not probed"        # nothing was built to run on it
    else:
        where = gpu.get("name") if gpu.get("available") else "no GPU"
    seed = f"seed {result.seed}" if result.seed is not None else "seeds per lab"
    lines = [f"Grading {result.submission}  ({seed}, {where})", ""]
    for lab in result.labs:
        lines += lab_table(lab, times) + [""]
    if times and result.stages:
        shared = ", ".join(f"{s.get('stage')} {s.get('seconds') or 0:.1f} s"
                           for s in result.stages if isinstance(s, dict))
        lines += [f"Time: {shared}; the whole grading {result.seconds:.1f} s", ""]
    problems = [line for lab in result.labs for line in lab_problems(lab)]
    if problems:
        lines += ["What went wrong:"] + problems + [""]
    lines.append(f"TOTAL {points_text(result.points)} / {result.max_points:g}"
                 + (f"    (results: {output_path})" if output_path else ""))
    if result.status == "no_gpu":
        lines.append(f"NOT GRADED ON A GPU: {result.message}. No GPU points were awarded.")
    flagged = implausible_entries(result)
    if flagged:
        lines.append(f"FLAGGED FOR REVIEW: {', '.join(flagged)} measured faster than this GPU "
                     f"can run (above its ceilings measured in this grading): not a possible "
                     f"result, no points for {'it' if len(flagged) == 1 else 'them'}.")
    if any(p.status == "withheld" for lab in result.labs for p in lab.performance):
        why = result.message or "the GPU's ceilings were not measured"
        lines.append(f"PERFORMANCE NOT SCORED: {why}")
    # Only where inputs were drawn: a lab whose tests ran (not a failed build, not no GPU).
    ran = [lab for lab in result.labs
           if lab.seed is not None and any(g.tests for g in lab.groups)]
    if ran and result.seed is None:
        lines.append("Replay a lab's inputs: python3 -m grader grade <lab> --seed <its seed>")
    # Test messages carry the worker's output and build logs the compiler's: nothing in them may
    # act on the terminal (clear it, move the cursor, hide the real total after a forged one).
    return terminal_text("\n".join(lines))
