"""HTML reports people open in a browser: one page per submission, and a class page for a batch.

Both pages are single self-contained files: inline CSS, every chart an SVG drawn by matplotlib
and embedded as a data: URI, no JavaScript, and a Content-Security-Policy that forbids scripts
and every network load. Everything taken from a results file (test names, messages, build logs,
the submission's path) is HTML-escaped; text reaches the charts only as matplotlib text with
math parsing off.

matplotlib is needed here and nowhere else in the grader: the grading itself, the console
report and the Gradescope/JUnit/Markdown/CSV reports never import this module. Without it,
`require_matplotlib()` raises a GraderError (exit 2) naming the command that installs it.
What the pages hold: docs/reports.md.
"""

from __future__ import annotations

import base64
import datetime
import html
import io
import statistics
import sys

from grader import wheremap
from grader.errors import EXIT_USAGE, GraderError
from grader.report_text import (FAILED_LAB, PERF_PROBLEMS, STATUS_TEXT, clean_text, clip, finite,
                                flagged_text, is_hidden_group, kernel_counts, kernel_name,
                                kernel_note, lab_kernels, lab_message, num, perf_name,
                                model_bytes, perf_summary, points_text, profile_lines,
                                uses_local_memory, withheld)
from grader.results import GradeResult, LabResult, TestResult

MAX_MAPS = 40             # where-map pictures per page; later failures show their message only
MAX_FAILURES = 200        # failing tests listed per page
MAX_MESSAGE_LINES = 200
MAX_MESSAGE_CHARS = 20000
TOP_FAILING = 20          # hidden tests in the class page's table

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

# The map's characters, in wheremap.MAP_CHARS order: right, some wrong, all wrong, unwritten.
MAP_COLOURS = ("#e6ece6", "#f0a04b", "#c0392b", "#6a51a3")
OK, WARN, BAD = "#2e7d32", "#ef6c00", "#c62828"


def install_hint() -> str:
    """How to install matplotlib for this interpreter: where the system manages its packages
    (PEP 668: pip refuses there, and scripts/install-deps needs root), the distribution's package."""
    import os
    import sysconfig
    managed = (sys.prefix == sys.base_prefix and os.path.exists(
        os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))
    how = ("`apt-get install python3-matplotlib` as root (what `scripts/install-deps` runs)"
           if managed else f"`scripts/install-deps` or `{sys.executable} -m pip install matplotlib`")
    return (f"the HTML reports need matplotlib, which {sys.executable} cannot import: install it "
            f"with {how}")


def require_matplotlib():
    """pyplot set up for SVG output, or GraderError (exit 2) naming the install command."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:   # ImportError, or a broken install
        raise GraderError(install_hint(), EXIT_USAGE) from None
    rc = {"svg.fonttype": "path", "svg.hashsalt": "grader", "font.size": 9,
          "axes.spines.top": False, "axes.spines.right": False}
    if "text.parse_math" in matplotlib.rcParams:   # '$' in a test name stays a '$'
        rc["text.parse_math"] = False
    matplotlib.rcParams.update(rc)
    return plt


def _plain(text) -> str:
    """Text for a chart: no control characters; '$' cannot start math on old matplotlibs."""
    text = clean_text(text)
    return text.replace("$", r"\$") if _parse_math_on() else text


def _parse_math_on() -> bool:
    import matplotlib
    return bool(matplotlib.rcParams.get("text.parse_math", True))


def esc(text) -> str:
    return html.escape(clean_text(text), quote=True)


def _svg(fig, alt: str, cls: str = "chart") -> str:
    """The figure as an <img> holding its SVG: closed afterwards."""
    plt = require_matplotlib()
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img class="{cls}" alt="{esc(alt)}" src="data:image/svg+xml;base64,{data}">'


def _log_axis(axis) -> None:
    """Plain tick labels (1, 10, 100, 1k, 10k ...) on a log axis: the default ones are math
    text, which is off on these pages."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    def label(x, _pos):
        if x <= 0:
            return ""
        for unit, size in (("M", 1e6), ("k", 1e3)):
            if x >= size:
                return f"{x / size:g}{unit}"
        return f"{x:g}"

    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_formatter(NullFormatter())


# ---------------------------------------------------------------------------------------------
# Page frame

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;
max-width:1100px;margin:0 auto;padding:16px 24px 48px;background:#fff}
h1{font-size:26px;margin:8px 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ddd;
padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
.meta{color:#555;font-size:13px}.meta code{font-size:12px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #d5d5d5;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{font-weight:600;background:#fafafa}
.ok{color:#2e7d32;font-weight:600}.bad{color:#c62828;font-weight:600}.warn{color:#ef6c00;font-weight:600}
.muted{color:#777}.tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:8px;
background:#eee;color:#444;margin-left:6px}
.banner{border-left:4px solid #c62828;background:#fdecea;padding:8px 12px;margin:10px 0}
pre{background:#f7f7f7;border:1px solid #e2e2e2;padding:8px 10px;overflow-x:auto;font-size:12px;
line-height:1.35;white-space:pre-wrap;word-break:break-word;margin:6px 0}
details{margin:8px 0;border:1px solid #e4e4e4;border-radius:4px;padding:4px 10px}
summary{cursor:pointer;font-weight:600}summary code{font-weight:400}
figure{margin:8px 0 12px}figcaption{font-size:12px;color:#555}
img.chart{max-width:100%;height:auto;display:block}img.map{max-width:560px;width:100%;height:auto;display:block}
.note{color:#555;font-size:13px}
"""


def _page(title: str, body: list) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def _pre(text: str) -> str:
    return f"<pre>{esc(clip(text, MAX_MESSAGE_LINES, MAX_MESSAGE_CHARS))}</pre>"


def _gpu_text(result: GradeResult) -> str:
    gpu = result.gpu
    if gpu is None:
        return "GPU not probed"
    if not gpu.get("available"):
        return f"no GPU ({gpu.get('reason', 'unknown')})"
    return str(gpu.get("name") or "GPU")


# ---------------------------------------------------------------------------------------------
# Where maps

def map_figure(where: wheremap.WhereMap, alt: str) -> str:
    """The map as a picture: one coloured square per cell, axes in elements (pixels)."""
    plt = require_matplotlib()
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    codes = wheremap.cell_codes(where)
    n_rows, n_cols = len(codes), len(codes[0])
    ext_rows, ext_cols = wheremap.extent(where)
    if where.kind == "vector":
        width, height = 6.5, 0.5
    else:
        aspect = (n_rows / n_cols) if n_cols else 1
        width = 4.4
        height = min(max(width * aspect, 1.2), 5.5)
    fig, ax = plt.subplots(figsize=(width, height + 0.6))
    ax.imshow(codes, cmap=ListedColormap(MAP_COLOURS), vmin=0, vmax=3, interpolation="nearest",
              aspect="auto", extent=(0, ext_cols, ext_rows, 0))
    for side in ("top", "right"):
        ax.spines[side].set_visible(True)
    if where.kind == "vector":
        ax.set_yticks([])
        ax.set_xlabel(f"element of {_plain(where.title)}; one square = {where.cell_cols} "
                      f"elements")
    else:
        down, across = ("row", "column") if where.kind == "matrix" else ("h", "w")
        ax.set_xlabel(f"{across}; one square = {where.cell_rows} x {where.cell_cols}")
        ax.set_ylabel(down)
    # Thin grid lines between cells while they stay readable.
    if n_cols <= 64 and n_rows <= 64:
        ax.set_xticks([c * where.cell_cols for c in range(n_cols + 1)], minor=True)
        if where.kind != "vector":
            ax.set_yticks([r * where.cell_rows for r in range(n_rows + 1)], minor=True)
        ax.grid(which="minor", color="white", linewidth=0.5)
        ax.tick_params(which="minor", length=0)
    # After the ticks, which would widen the view: a last, partial cell is cut at the extent.
    ax.set_xlim(0, where.cols)
    ax.set_ylim(where.rows, 0)
    counts = where.counts()
    handles = [Patch(color=MAP_COLOURS[i], label=f"{wheremap.MEANING[c]} ({counts[c]})")
               for i, c in enumerate(wheremap.MAP_CHARS)]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
              fontsize=8)
    return _svg(fig, alt, cls="map")


def _groups_table(where: wheremap.WhereMap) -> str:
    if not where.groups:
        return ""
    rows = "".join(f"<tr><td>{esc(g)}</td><td class=\"num\">{w}</td><td class=\"num\">{t}</td>"
                   f"<td class=\"num\">{(100.0 * w / t if t else 0):.0f}%</td></tr>"
                   for g, w, t in where.groups)
    return ("<table><tr><th>group</th><th class=\"num\">wrong</th><th class=\"num\">of</th>"
            f"<th class=\"num\">share</th></tr>{rows}</table>")


class _Budget:
    def __init__(self, maps: int):
        self.maps = maps


def test_html(test: TestResult, budget: _Budget, what: str) -> str:
    """A failing test: its message as text, then the where map of its failed comparison drawn
    as a picture, from the data the judge recorded (test.where), never from the message."""
    text = clean_text(test.message or test.status)
    out = [_pre(text)] if text.strip() else []
    where = wheremap.from_dict(test.where)
    if where is not None and budget.maps > 0:
        budget.maps -= 1
        alt = f"where map of {where.title} for {what}"
        out.append(f"<figure>{map_figure(where, alt)}<figcaption>Where: {esc(where.title)}"
                   f"</figcaption>{_groups_table(where)}</figure>")
    elif where is not None:
        out.append("<p class=\"note\">(more maps than the page draws: this one is not drawn; "
                   "the message shows it as text)</p>")
    return "\n".join(out) or "<p class=\"muted\">(no message)</p>"


# ---------------------------------------------------------------------------------------------
# The submission page

def _status_cell(text: str, good: bool | None) -> str:
    cls = {True: "ok", False: "bad", None: "warn"}[good]
    return f"<td class=\"{cls}\">{esc(text)}</td>"


def score_table(result: GradeResult) -> str:
    rows = ["<table><tr><th>lab</th><th>part</th><th class=\"num\">passed</th>"
            "<th class=\"num\">points</th><th>status</th></tr>"]
    for lab in result.labs:
        lab_name = f"{esc(lab.lab)}<br><span class=\"muted\">{esc(lab.title)}</span>"
        parts = []
        if lab.status in FAILED_LAB:
            parts.append(("-", "", "", _status_cell(STATUS_TEXT.get(lab.status, lab.status),
                                                    False)))
        for g in lab.groups:
            tag = "<span class=\"tag\">hidden</span>" if is_hidden_group(g) else ""
            if g.tests:
                passed = f"{g.passed_count}/{len(g.tests)}"
                good = True if g.passed_count == len(g.tests) else False
                state = "all passed" if good else f"{len(g.tests) - g.passed_count} failing"
            else:
                passed, good, state = "", None, g.note or "not run"
            parts.append((f"{esc(g.name)}{tag}", passed,
                          f"{points_text(g.points)} / {g.max_points:g}", _status_cell(state, good)))
        for p in lab.performance:
            full = p.status == "measured" and p.points >= p.max_points - 1e-9
            good = True if full else (None if p.status in ("measured", "gated", "not_run")
                                      else False)
            parts.append((f"performance: {esc(perf_name(lab, p))}", "",
                          f"{points_text(p.points)} / {p.max_points:g}",
                          _status_cell(perf_summary(p), good)))
        for i, (part, passed, points, status) in enumerate(parts):
            first = f"<td rowspan=\"{len(parts) + 1}\">{lab_name}</td>" if i == 0 else ""
            rows.append(f"<tr>{first}<td>{part}</td><td class=\"num\">{passed}</td>"
                        f"<td class=\"num\">{points}</td>{status}</tr>")
        first = "" if parts else f"<td>{lab_name}</td>"
        rows.append(f"<tr class=\"total\">{first}<td>lab total</td><td></td><td class=\"num\">"
                    f"{points_text(lab.points)} / {lab.max_points:g}</td><td></td></tr>")
    rows.append(f"<tr class=\"total\"><td colspan=\"3\">total</td><td class=\"num\">"
                f"{points_text(result.points)} / {result.max_points:g}</td><td></td></tr></table>")
    return "\n".join(rows)


MAX_KERNELS = 16    # per lab


def kernels_table(result: GradeResult) -> str:
    """Every lab's kernels as compiled: registers, shared and local memory (the policy check
    reads them from the object); '' when none were read."""
    rows = []
    for lab in result.labs:
        for k in lab_kernels(lab)[:MAX_KERNELS]:
            n = kernel_counts(k)
            spills = uses_local_memory(k)
            local = (f"{n['local_bytes'] + n['stack_bytes']} B ({n['local_loads']} loads, {n['local_stores']} "
                     f"stores)" if spills else "none")
            rows.append(f"<tr><td>{esc(lab.lab)}</td><td><code>{esc(kernel_name(k, 120))}"
                        f"</code> <span class=\"muted\">{esc(str(k.get('arch', '?')))}</span>"
                        f"</td><td class=\"num\">{n['registers']}</td><td class=\"num\">"
                        f"{n['shared_bytes']} B</td>{_status_cell(local, None if spills else True)}"
                        f"</tr>")
    if not rows:
        return ""
    notes = [kernel_note(k) for lab in result.labs for k in lab_kernels(lab)[:MAX_KERNELS]]
    return ("<table><tr><th>lab</th><th>kernel</th><th class=\"num\">registers per thread"
            "</th><th class=\"num\">static shared memory</th><th>local memory per thread</th>"
            "</tr>" + "\n".join(rows) + "</table>"
            + "".join(f"<p class=\"note\">{esc(n)}</p>" for n in notes if n))


def _failures(result: GradeResult, budget: _Budget) -> list:
    out = []
    shown = 0
    for lab in result.labs:
        if lab.status in FAILED_LAB:
            out.append(f"<details open><summary>{esc(lab.lab)}: "
                       f"{esc(STATUS_TEXT.get(lab.status, lab.status))}</summary>"
                       f"{_pre(lab_message(lab))}</details>")
        for g in lab.groups:
            for t in g.tests:
                if t.passed:
                    continue
                shown += 1
                if shown > MAX_FAILURES:
                    continue
                tag = "<span class=\"tag\">hidden</span>" if is_hidden_group(g) else ""
                what = f"{lab.lab} {g.name} {t.name}"
                out.append(f"<details open><summary>{esc(lab.lab)} · {esc(g.name)}{tag} · "
                           f"<code>{esc(t.name)}</code>: <span class=\"bad\">"
                           f"{esc(t.status.replace('_', ' '))}</span></summary>"
                           f"{test_html(t, budget, what)}</details>")
        for p in lab.performance:
            if p.status in PERF_PROBLEMS:
                kind = "implausible" if p.implausible else p.status
                out.append(f"<details open><summary>{esc(lab.lab)} · performance "
                           f"<code>{esc(perf_name(lab, p))}</code>: <span class=\"bad\">"
                           f"{esc(kind)}</span></summary>{_pre(p.message or p.status)}"
                           f"</details>")
    if shown > MAX_FAILURES:
        out.append(f"<p class=\"note\">... and {shown - MAX_FAILURES} more failing tests (all "
                   f"listed in the results file).</p>")
    return out


def perf_chart(lab: LabResult) -> str:
    """Each measured entry's metric as a bar, with its floor (no points) and target (full
    points) marked on its own row."""
    plt = require_matplotlib()
    measured = [p for p in lab.performance if p.status == "measured" and finite(p.metric)]
    if not measured:
        return ""
    fig, ax = plt.subplots(figsize=(7.0, 0.55 * len(measured) + 1.0))
    for i, p in enumerate(measured):
        colour = OK if p.metric >= p.target else (BAD if p.metric <= p.floor else WARN)
        ax.barh(i, p.metric, color=colour, height=0.5)
        if finite(p.metric_lo) and finite(p.metric_hi):
            ax.errorbar(p.metric, i, xerr=[[p.metric - p.metric_lo], [p.metric_hi - p.metric]],
                        color="black", capsize=3, linewidth=1)
        ax.plot([p.floor] * 2, [i - 0.4, i + 0.4], color=BAD, linewidth=2)
        ax.plot([p.target] * 2, [i - 0.4, i + 0.4], color=OK, linewidth=2)
        if finite(p.reference):
            ax.plot(p.reference, i, marker="D", color="#1f4e9c", markersize=6)
    ax.set_yticks(range(len(measured)))
    ax.set_yticklabels([_plain(perf_name(lab, p)) for p in measured])
    ax.invert_yaxis()
    labels = {p.label or p.metric_name for p in measured}
    ax.set_xlabel(_plain(" / ".join(sorted(labels))) if len(labels) <= 2 else "metric")
    top = max(max(p.metric, p.target, p.metric_hi if finite(p.metric_hi) else 0,
                  p.reference if finite(p.reference) else 0) for p in measured)
    ax.set_xlim(0, top * 1.12)
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], color=BAD, linewidth=2, label="floor: no points"),
               Line2D([], [], color=OK, linewidth=2, label="target: full points")]
    if any(finite(p.reference) for p in measured):
        handles.append(Line2D([], [], color="#1f4e9c", marker="D", linestyle="",
                              label="reference solution"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return _svg(fig, f"{lab.lab}: performance against target and floor")


def perf_table(lab: LabResult) -> str:
    rows = ["<table><tr><th>entry</th><th>metric</th><th class=\"num\">value</th>"
            "<th class=\"num\">95% interval</th><th class=\"num\">floor</th>"
            "<th class=\"num\">target</th><th class=\"num\">band</th>"
            "<th class=\"num\">points</th></tr>"]
    for p in lab.performance:
        if p.status == "measured" and finite(p.metric):
            value = esc(num(p.metric, p.metric))
            interval = (f"[{num(p.metric_lo, p.metric)}, {num(p.metric_hi, p.metric)}]"
                        if finite(p.metric_lo) and finite(p.metric_hi) else "")
            band = f"{p.band}/{p.bands}" if p.band is not None else ""
        else:
            value, interval, band = esc(perf_summary(p)), "", ""
        rows.append(f"<tr><td>{esc(perf_name(lab, p))}</td><td>{esc(p.label or p.metric_name)}"
                    f"</td><td class=\"num\">{value}</td><td class=\"num\">{esc(interval)}</td>"
                    f"<td class=\"num\">{p.floor:g}</td><td class=\"num\">{p.target:g}</td>"
                    f"<td class=\"num\">{band}</td><td class=\"num\">{points_text(p.points)} / "
                    f"{p.max_points:g}</td></tr>")
    rows.append("</table>")
    notes = [f"<p class=\"note\">{esc(perf_name(lab, p))}: {esc(p.message)}</p>"
             for p in lab.performance if p.status != "measured" and p.message.strip()]
    # What each ratio is to, with the library's version (the benchmark's label).
    notes += [f"<p class=\"note\">{esc(perf_name(lab, p))}: against {esc(p.baseline)}</p>"
              for p in lab.performance if p.status == "measured" and p.baseline]
    # The profile stage's lines (grade --profile): never scored.
    for p in lab.performance:
        lines = profile_lines(p) if p.status == "measured" else []
        if lines:
            items = "".join(f"<li>{esc(line.strip())}</li>" for line in lines[1:])
            notes.append(f"<p class=\"note\">{esc(perf_name(lab, p))}, {esc(lines[0])}</p>"
                         + (f"<ul class=\"note\">{items}</ul>" if items else ""))
    return "\n".join(rows + notes)


# ---------------------------------------------------------------------------------------------
# Roofline

def ceilings(result: GradeResult) -> tuple:
    """(peak GFLOP/s, bandwidth GB/s, why not) from the results' GPU info: both numbers, or
    (None, None, the reason no ceilings were measured)."""
    gpu = result.gpu or {}
    c = gpu.get("ceilings")
    if not isinstance(c, dict):
        return None, None, "no ceilings were measured in this run"
    flops, bw = c.get("sgemm_gflops"), c.get("copy_gbps")
    if finite(flops) and finite(bw) and flops > 0 and bw > 0:
        return float(flops), float(bw), ""
    why = c.get("error")
    return None, None, ("no ceilings were measured in this run" + (f": {why}" if why else ""))


def measured_intensity(p) -> float | None:
    """The entry's flops per byte that crossed DRAM in its profiled call (the profile stage's
    prof_dram_* counters; the flops are the benchmark's own count), or None where it was not
    profiled."""
    c = p.counters or {}
    gf, ms = c.get("GFLOPS"), c.get("student_ms")
    moved = [c.get("prof_dram_read_bytes"), c.get("prof_dram_write_bytes")]
    if c.get("prof_status") != 1 or not all(finite(v) for v in [gf, ms, *moved]):
        return None
    total = sum(moved)
    return gf * 1e9 * ms * 1e-3 / total if total > 0 and gf > 0 and ms > 0 else None


def roofline_points(result: GradeResult) -> list:
    """(label, intensity flop/byte, GFLOP/s, baseline GFLOP/s or None, reference GFLOP/s or
    None, measured intensity or None) per measured entry whose benchmark counts both flops and
    bytes: the intensity from the bytes the benchmark declares, and from the DRAM bytes the
    profile stage measured where it ran."""
    out = []
    for lab in result.labs:
        for p in lab.performance:
            c = p.counters or {}
            gf, gb = c.get("GFLOPS"), c.get("GBps")
            if p.status != "measured" or not (finite(gf) and finite(gb) and gf > 0 and gb > 0):
                continue
            ai = gf / gb   # flop / declared bytes: both rates share the student's time
            base = c.get("baseline_GFLOPS")
            base = float(base) if finite(base) and base > 0 else None
            ref = None
            if finite(p.reference):
                if p.metric_name == "ratio" and base is not None:
                    ref = base * p.reference   # the solution's speed against this run's baseline
                elif p.metric_name == "GFLOPS":
                    ref = p.reference
                elif p.metric_name == "GBps":
                    ref = p.reference * ai
            out.append((f"{lab.lab}: {perf_name(lab, p)}", ai, float(gf), base, ref,
                        measured_intensity(p)))
    return out


def roofline_chart(result: GradeResult) -> str:
    plt = require_matplotlib()
    points = roofline_points(result)
    peak, bw, why = ceilings(result)
    if not points:
        return ("<p class=\"note\">No roofline: no graded kernel was measured with both a flop "
                "count and a byte count in this run.</p>")
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    ais = [p[1] for p in points] + [p[5] for p in points if p[5]]
    ys = [y for p in points for y in (p[2], p[3], p[4]) if y]
    lo_x, hi_x = min(ais) / 4, max(ais) * 4
    if peak:
        ridge = peak / bw
        lo_x, hi_x = min(lo_x, ridge / 8), max(hi_x, ridge * 8)
        xs = [lo_x * (hi_x / lo_x) ** (i / 200) for i in range(201)]
        ax.plot(xs, [min(peak, bw * x) for x in xs], color="#333", linewidth=2)
        ax.text(hi_x, peak * 1.08, f"SGEMM (cuBLAS): {peak:,.0f} GFLOP/s", ha="right",
                va="bottom", fontsize=8)
        ax.text(lo_x * 1.3, bw * lo_x * 1.3 * 2.2, f"copy: {bw:,.0f} GB/s", ha="left",
                va="bottom", fontsize=8)
        ys.append(peak)
    else:
        ax.text(0.5, 0.96, _plain(f"No ceilings drawn: {why}."), transform=ax.transAxes,
                ha="center", va="top", fontsize=9, color=BAD, wrap=True)
    colours = ["#1565c0", "#00897b", "#8e24aa", "#f4511e", "#6d4c41", "#3949ab", "#c0ca33"]
    for i, (label, ai, gf, base, ref, measured) in enumerate(points):
        col = colours[i % len(colours)]
        if measured:
            # Placed by the bytes that crossed DRAM; a hollow mark where the declared bytes
            # would put it, joined: the further left, the more traffic than the model's.
            ax.plot([ai, measured], [gf, gf], ":", color=col, linewidth=1)
            ax.plot(ai, gf, "o", markerfacecolor="none", markeredgecolor=col, markersize=8)
            ax.plot(measured, gf, "o", color=col, markersize=8, label=_plain(label))
        else:
            ax.plot(ai, gf, "o", color=col, markersize=8, label=_plain(label))
        if base:
            ax.plot(ai, base, "s", markerfacecolor="none", markeredgecolor=col, markersize=8)
        if ref:
            ax.plot(ai, ref, "D", color=col, markerfacecolor="white", markersize=7)
    from matplotlib.lines import Line2D
    handles, _ = ax.get_legend_handles_labels()
    handles += [Line2D([], [], marker="o", color="#555", linestyle="", label="your kernel"),
                Line2D([], [], marker="s", markerfacecolor="none", markeredgecolor="#555",
                       linestyle="", label="vendor baseline (same run)")]
    if any(p[5] for p in points):
        handles.append(Line2D([], [], marker="o", markerfacecolor="none", markeredgecolor="#555",
                              linestyle=":", label="your kernel at the declared bytes "
                              "(filled: at the DRAM bytes profiled)"))
    if any(p[4] for p in points):
        handles.append(Line2D([], [], marker="D", color="#555", markerfacecolor="white",
                              linestyle="", label="reference solution (baseline x its ratio)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
              fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _log_axis(ax.xaxis)
    _log_axis(ax.yaxis)
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(min(ys) / 4, max(ys) * 3 if not peak else peak * 2.5)
    ax.set_xlabel("arithmetic intensity (flop / byte: profiled DRAM bytes where measured, "
                  "else declared)")
    ax.set_ylabel("GFLOP/s")
    ax.grid(True, which="major", color="#e5e5e5", linewidth=0.6)
    return _svg(fig, "roofline: achieved GFLOP/s against arithmetic intensity")


def submission_page(result: GradeResult, name: str = "") -> str:
    """The HTML report of one graded submission."""
    require_matplotlib()
    name = name or result.submission
    seed = f"seed {result.seed}" if result.seed is not None else "seeds per lab"
    body = [f"<h1>Grade: {points_text(result.points)} / {result.max_points:g}</h1>",
            f"<p class=\"meta\"><code>{esc(name)}</code> · {esc(_gpu_text(result))} · {seed} · "
            f"grader {esc(result.grader_version)} · status <b>{esc(result.status)}</b> "
            f"(exit {result.exit_code})" + (f" · {esc(result.started)}" if result.started else "")
            + "</p>"]
    if result.status == "no_gpu":
        body.append(f"<div class=\"banner\"><b>Not graded on a GPU:</b> {esc(result.message)}. "
                    f"No GPU points were awarded.</div>")
    elif withheld(result) and result.message:
        body.append(f"<div class=\"banner\"><b>Performance not scored:</b> "
                    f"{esc(clip(result.message, 5, 1000))}</div>")
    elif result.status == "error" and result.message:
        body.append(f"<div class=\"banner\"><b>The grading stopped:</b> "
                    f"{esc(clip(result.message, 5, 1000))}</div>")
    if flagged_text(result):
        body.append(f"<div class=\"banner\"><b>Flagged for review:</b> "
                    f"{esc(flagged_text(result))}.</div>")
    body += ["<h2>Scores</h2>", score_table(result)]
    budget = _Budget(MAX_MAPS)
    problems = _failures(result, budget)
    kernels = kernels_table(result)
    if kernels:
        body += ["<h2>Kernels as compiled</h2>", kernels]
    body.append("<h2>What went wrong</h2>")
    body += problems or ["<p class=\"ok\">Nothing: every test that ran passed.</p>"]
    perf_labs = [lab for lab in result.labs if lab.performance]
    if perf_labs:
        body.append("<h2>Performance</h2>")
        for lab in perf_labs:
            body += [f"<h3>{esc(lab.lab)}</h3>", perf_table(lab), perf_chart(lab)]
        body.append("<h3>Roofline</h3>")
        peak, bw, why = ceilings(result)
        body.append(roofline_chart(result))
        measured = (result.gpu or {}).get("ceilings") or {}
        fma, read = measured.get("fp32_peak_gflops"), measured.get("read_gbps")
        limits = (f"For the plausibility check: FP32 peak (independent FMAs) {fma:,.0f} "
                  f"GFLOP/s, read {read:,.0f} GB/s. " if finite(fma) and finite(read) else "")
        body.append("<p class=\"note\">" + (
            f"Ceilings measured on this GPU in this run: cuBLAS SGEMM {peak:,.0f} GFLOP/s, "
            f"device-to-device copy {bw:,.0f} GB/s. {limits}" if peak
            else f"No ceilings drawn: {esc(why)}. ")
            + "Arithmetic intensity is the benchmark's flop count over the bytes it declares "
              "(its inputs read once and its output written once), or, where the profile stage "
              "measured the call, over the bytes that crossed DRAM (filled marks; the hollow "
              "mark joined to one is where the declared bytes put it): a kernel that moves more "
              "than the model sits further left.</p>")
    return _page(f"Grade {points_text(result.points)} / {result.max_points:g}: {name}", body)


# ---------------------------------------------------------------------------------------------
# The class page

def _histogram(values: list, lo: float, hi: float, bins: int, xlabel: str, alt: str,
               lines: list = (), log: bool = False) -> str:
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(6.5, 2.8))
    if log:
        import numpy as np
        edges = np.geomspace(lo, hi, bins + 1)
        ax.set_xscale("log")
        _log_axis(ax.xaxis)
    else:
        edges = [lo + (hi - lo) * i / bins for i in range(bins + 1)]
    ax.hist(values, bins=edges, color="#5c85c7", edgecolor="white")
    for x, colour, label in lines:
        ax.axvline(x, color=colour, linewidth=2, label=_plain(label))
    if lines:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    ax.set_xlabel(_plain(xlabel))
    ax.set_ylabel("submissions")
    from matplotlib.ticker import MaxNLocator
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return _svg(fig, alt)


# A lab's statuses that carry no score (it was built and checked at most): left out of the
# class page's score histograms.
NOT_GRADED_LAB = ("no_gpu", "error")


def _stats(values: list) -> str:
    if not values:
        return "no values"
    return (f"n = {len(values)}, mean {statistics.fmean(values):.2f}, median "
            f"{statistics.median(values):.2f}, min {min(values):.2f}, max {max(values):.2f}")


def failing_hidden_tests(results: list) -> list:
    """(lab, group, test, failing, ran) over the submissions, most failing first; ran counts
    the submissions in which the test has a verdict."""
    counts = {}
    for r in results:
        for lab in r.labs:
            for g in lab.groups:
                if not is_hidden_group(g):
                    continue
                for t in g.tests:
                    key = (lab.lab, g.name, t.name)
                    c = counts.setdefault(key, [0, 0])
                    c[1] += 1
                    c[0] += not t.passed
    rows = [(*k, f, n) for k, (f, n) in counts.items() if f > 0]
    rows.sort(key=lambda r: (-r[3], -r[3] / r[4], r[0], r[1], r[2]))
    return rows


def _dram_over_model(p) -> float | None:
    c = p.counters or {}
    model = model_bytes(p)
    read, written = c.get("prof_dram_read_bytes"), c.get("prof_dram_write_bytes")
    if not model or not finite(read) or not finite(written):
        return None
    return (read + written) / model


# The profile stage's counters the class page spreads out per performance entry: (label, how
# one entry's value is read, its format).
CLASS_COUNTERS = (
    ("DRAM bytes / the model's", _dram_over_model, "{:.2f}x"),
    ("global-load sector use", lambda p: (p.counters or {}).get("prof_ld_sector_use_pct"),
     "{:.0f}%"),
    ("shared bank conflicts", lambda p: (p.counters or {}).get("prof_shared_bank_conflicts"),
     "{:,.0f}"),
    ("achieved occupancy", lambda p: (p.counters or {}).get("prof_occupancy_pct"), "{:.0f}%"),
    ("registers (most of any kernel)", lambda p: (p.counters or {}).get("prof_registers"),
     "{:.0f}"),
)


def counters_table(results: list) -> list:
    """The class page's profile section: per performance entry that was profiled in some
    submission, each counter's median, range and count; per lesson group, how many passed,
    failed, were not measured or not checked."""
    entries = {}
    for r in results:
        for lab in r.labs:
            for p in lab.performance:
                if (p.counters or {}).get("prof_status") == 1:
                    entries.setdefault((lab.lab, perf_name(lab, p)), []).append(p)
    lessons = {}
    for r in results:
        for lab in r.labs:
            for g in lab.groups:
                if not g.name.startswith("lesson: "):
                    continue
                row = lessons.setdefault((lab.lab, g.name), [0, 0, 0, 0])
                if g.tests:
                    row[0 if g.passed_count == len(g.tests) else 1] += 1
                else:
                    row[2 if g.unmeasured else 3] += 1
    if not entries and not lessons:
        return ["<p class=\"note\">No benchmark was profiled and no lab grades a lesson in "
                "these results (grade --profile profiles every benchmark).</p>"]
    out = []
    if entries:
        table = ["<table><tr><th>lab</th><th>entry</th><th>counter</th>"
                 "<th class=\"num\">median</th><th class=\"num\">min</th>"
                 "<th class=\"num\">max</th><th class=\"num\">profiled</th></tr>"]
        for (lab_name, entry), perfs in sorted(entries.items()):
            for label, read, fmt in CLASS_COUNTERS:
                values = [float(v) for v in (read(p) for p in perfs) if finite(v)]
                if not values:
                    continue
                cells = "".join(f"<td class=\"num\">{esc(fmt.format(v))}</td>" for v in
                                (statistics.median(values), min(values), max(values)))
                table.append(f"<tr><td>{esc(lab_name)}</td><td>{esc(entry)}</td>"
                             f"<td>{esc(label)}</td>{cells}<td class=\"num\">{len(values)}"
                             f"</td></tr>")
        out += table + ["</table>"]
    if lessons:
        table = ["<table><tr><th>lab</th><th>lesson</th><th class=\"num\">passed</th>"
                 "<th class=\"num\">failed</th><th class=\"num\">not measured</th>"
                 "<th class=\"num\">not checked</th></tr>"]
        for (lab_name, group), counts in sorted(lessons.items()):
            table.append(f"<tr><td>{esc(lab_name)}</td><td>{esc(group)}</td>"
                         + "".join(f"<td class=\"num\">{n}</td>" for n in counts) + "</tr>")
        out += table + ["</table>", "<p class=\"note\">Not measured: the machine gave no "
                        "counters, or the benchmarks did not run (the points are withheld); "
                        "not checked: a correctness test failed first.</p>"]
    return out


def class_page(named: list, title: str = "Class report") -> str:
    """A batch's page: `named` is [(name, GradeResult)]."""
    require_matplotlib()
    results = [r for _, r in named]
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    body = [f"<h1>{esc(title)}</h1>",
            f"<p class=\"meta\">{len(named)} submission(s) · written {now}</p>"]
    statuses = {}
    for r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    body.append("<p class=\"meta\">" + " · ".join(f"{esc(s)}: {n}"
                                                    for s, n in sorted(statuses.items()))
                + "</p>")
    labs = sorted({lab.lab for r in results for lab in r.labs})
    body.append("<h2>Scores per lab</h2>")
    if not labs:
        body.append("<p class=\"note\">No lab was graded in these results.</p>")
    for name in labs:
        found = [lab for r in results for lab in r.labs if lab.lab == name]
        # A lab that was not graded (no GPU, a grader error) has no score: its 0 is left out of
        # the histogram and the statistics, and counted. One that did not build, was refused
        # by the policy or lacked its files scored 0: it is drawn.
        scored = [lab for lab in found if lab.status not in NOT_GRADED_LAB]
        points = [lab.points for lab in scored]
        top = max(lab.max_points for lab in found) or 1.0
        not_graded = len(found) - len(scored)
        zero = sum(lab.status != "graded" for lab in scored)
        body.append(f"<h3>{esc(name)} - {esc(found[0].title)}</h3>")
        if points:
            body.append(_histogram(points, 0.0, top, min(20, max(5, int(top // 5) or 5)),
                                   f"points (of {top:g})", f"{name}: score distribution",
                                   lines=[(statistics.median(points), "#333", "median")]))
        body.append(f"<p class=\"note\">{_stats(points)}"
                    + (f"; of them {zero} scored 0 (did not build, rejected by the policy "
                       f"check or files missing)" if zero else "")
                    + (f"; {not_graded} not graded (no GPU or a grader error), not counted "
                       f"here" if not_graded else "") + "</p>")
    rows = failing_hidden_tests(results)
    body.append("<h2>Hidden tests that fail most often</h2>")
    if rows:
        table = ["<table><tr><th>lab</th><th>group</th><th>test</th>"
                 "<th class=\"num\">failing</th><th class=\"num\">of</th>"
                 "<th class=\"num\">share</th></tr>"]
        for lab, group, test, f, n in rows[:TOP_FAILING]:
            table.append(f"<tr><td>{esc(lab)}</td><td>{esc(group)}</td><td><code>{esc(test)}"
                         f"</code></td><td class=\"num\">{f}</td><td class=\"num\">{n}</td>"
                         f"<td class=\"num\">{100.0 * f / n:.0f}%</td></tr>")
        table.append("</table>")
        body += table
        if len(rows) > TOP_FAILING:
            body.append(f"<p class=\"note\">{len(rows) - TOP_FAILING} more hidden tests fail "
                        f"at least once.</p>")
    else:
        body.append("<p class=\"note\">No hidden test failed (or none ran).</p>")
    body.append("<h2>Speed per performance entry</h2>")
    entries = {}
    for r in results:
        for lab in r.labs:
            for p in lab.performance:
                entries.setdefault((lab.lab, perf_name(lab, p)), []).append(p)
    if not entries:
        body.append("<p class=\"note\">No performance entries in these results.</p>")
    for (lab_name, entry), perfs in sorted(entries.items()):
        measured = [p for p in perfs if p.status == "measured" and finite(p.metric)]
        target, floor = perfs[0].target, perfs[0].floor
        body.append(f"<h3>{esc(lab_name)}: {esc(entry)}</h3>")
        if measured:
            values = [p.metric for p in measured]
            hi = max(values + [target]) * 1.1
            lo = min(values + [floor if floor > 0 else hi])
            log = lo > 0 and hi / lo > 50
            lines = [(floor, BAD, f"floor {floor:g}: no points"),
                     (target, OK, f"target {target:g}: full points")]
            if log and floor <= 0:
                lines = lines[1:]
            body.append(_histogram(values, lo / 1.5 if log else 0.0, hi, 20,
                                   perfs[0].label or perfs[0].metric_name or "metric",
                                   f"{lab_name} {entry}: speed histogram", lines, log=log))
        skipped = len(perfs) - len(measured)
        body.append(f"<p class=\"note\">{_stats([p.metric for p in measured])}"
                    f"; at or above the target: {sum(p.metric >= target for p in measured)}"
                    + (f"; {skipped} not measured (correctness first, failed or not run)"
                       if skipped else "") + "</p>")
    body.append("<h2>Counters and lessons (the profile stage)</h2>")
    body += counters_table(results)
    body.append("<h2>Submissions</h2>")
    table = ["<table><tr><th>submission</th><th>status</th><th class=\"num\">points</th></tr>"]
    for name, r in named:
        flag = " <span class=\"bad\">flagged for review</span>" if r.implausible else ""
        table.append(f"<tr><td>{esc(name)}</td><td>{esc(r.status)}{flag}</td><td class=\"num\">"
                     f"{points_text(r.points)} / {r.max_points:g}</td></tr>")
    body += table + ["</table>"]
    return _page(title, body)
