"""The human-readable report: a score table, then what went wrong and where."""

from __future__ import annotations

from grader.results import GradeResult, LabResult

MAX_FAILURES_SHOWN = 5
MAX_MESSAGE_LINES = 30


def _pts(points: float, max_points: float) -> str:
    return f"{points:7.2f} / {max_points:g}"


def _clip(text: str, max_lines: int = MAX_MESSAGE_LINES, indent: str = "      ") -> str:
    lines = text.rstrip().splitlines() or ["(no message)"]
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"[... {len(lines) - max_lines} more lines ...]"]
    return "\n".join(indent + line for line in lines)


def lab_table(lab: LabResult) -> list:
    out = [f"{lab.lab} - {lab.title}"]
    if lab.status == "missing_files":
        out.append(f"  {lab.message}")
        out.append(f"  {'lab total':<58}{_pts(lab.points, lab.max_points)}")
        return out
    if lab.build is not None:
        state = "ok" if lab.build.ok else "FAILED"
        out.append(f"  {'build':<14}{state:<44}{lab.build.seconds:6.1f} s")
    for g in lab.groups:
        if g.tests:
            desc = f"{g.passed_count}/{len(g.tests)} tests passed"
        else:
            desc = g.note or "not run"
        out.append(f"  {g.name:<14}{desc:<44}{_pts(g.points, g.max_points)}")
    p = lab.performance
    if p is not None:
        if p.status == "measured":
            desc = f"{p.metric:.3g} {p.label} (target {p.target:g}, floor {p.floor:g})"
        else:
            desc = {"gated": "not measured: correctness first", "not_run": "not run",
                    "timeout": "benchmark timed out", "failed": "benchmark failed"}.get(p.status,
                                                                                        p.status)
        out.append(f"  {'performance':<14}{desc:<44}{_pts(p.points, p.max_points)}")
    out.append(f"  {'lab total':<58}{_pts(lab.points, lab.max_points)}")
    return out


def lab_problems(lab: LabResult) -> list:
    out = []
    if lab.status in ("build_failed", "no_gpu", "error") and lab.message:
        out.append(f"  {lab.lab}: {lab.message}")
        if lab.build is not None and not lab.build.ok and lab.build.log:
            out.append(_clip(lab.build.log, 40, "      "))
    failures = [(g.name, t) for g in lab.groups for t in g.tests if not t.passed]
    for group_name, t in failures[:MAX_FAILURES_SHOWN]:
        out.append(f"  [{group_name}] {t.name}: {t.status.upper()}")
        out.append(_clip(t.message))
    if len(failures) > MAX_FAILURES_SHOWN:
        out.append(f"  ... and {len(failures) - MAX_FAILURES_SHOWN} more failing tests "
                   f"(all listed in the results file)")
    p = lab.performance
    if p is not None and p.status in ("failed", "timeout"):
        out.append(f"  [performance] {p.message.strip()[:2000]}")
    return out


def render(result: GradeResult, output_path: str | None = None) -> str:
    gpu = result.gpu or {}
    where = gpu.get("name") if gpu.get("available") else "no GPU"
    lines = [f"Grading {result.submission}  (seed {result.seed}, {where})", ""]
    for lab in result.labs:
        lines += lab_table(lab) + [""]
    problems = [line for lab in result.labs for line in lab_problems(lab)]
    if problems:
        lines += ["What went wrong:"] + problems + [""]
    lines.append(f"TOTAL {result.points:.2f} / {result.max_points:g}"
                 + (f"    (results: {output_path})" if output_path else ""))
    if result.status == "no_gpu":
        lines.append(f"NOT GRADED ON A GPU: {result.message}. No GPU points were awarded.")
    return "\n".join(lines)
