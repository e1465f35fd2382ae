"""The report files, for other readers than the console: Gradescope's results.json, JUnit XML
for CI, a Markdown summary (a GitHub Actions step summary) and a CSV gradebook of several
submissions; render() also gives the HTML pages (grader/html_report.py). The console report is
grader/console_report.py; the wording all of them share, grader/report_text.py.

Every function here is a pure function of GradeResult objects (grader/results.py) and returns
text; the command line (grader/cli.py) writes it. What each format holds: docs/reports.md.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from grader.errors import GraderError
from grader.report_text import (FAILED_LAB, PERF_PROBLEMS, STATUS_TEXT, clean_text, clip, finite,
                                flagged_text, is_hidden_group, kernel_counts, kernel_name,
                                kernel_note, lab_kernels, lab_message, num, perf_name,
                                perf_summary, points_text, profile_lines, withheld)
from grader.results import GradeResult, GroupResult, LabResult, PerfResult, safe_text

HIDDEN_VISIBILITY = "after_due_date"


# ---------------------------------------------------------------------------------------------
# Reading a results file

def load_results(path) -> GradeResult:
    """A results file (`GradeResult.to_json()`) read back; GraderError (exit 2) naming what is
    wrong when it cannot be read, is not JSON or is not a grader's results file."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(64 << 20)
    except OSError as e:
        raise GraderError(f"cannot read the results file {path}: {e.strerror}") from None
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise GraderError(f"{path} is not a results file (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        raise GraderError(f"{path} is not a results file (not JSON: {e.msg} at line {e.lineno}, "
                          f"column {e.colno})") from None
    except ValueError as e:
        raise GraderError(f"{path} is not a results file ({e})") from None
    if not isinstance(data, dict) or "labs" not in data or "grader_version" not in data:
        raise GraderError(f"{path} is not a grader results file (written by `python3 -m grader "
                          f"grade`): it has no 'labs' and 'grader_version'")
    try:
        return GradeResult.from_dict(data)
    except ValueError as e:
        raise GraderError(f"{path} is not a valid grader results file: {e}") from None


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number in strict JSON")


# ---------------------------------------------------------------------------------------------
# Text helpers

def _perf_problem_kind(p: PerfResult) -> str:
    return "implausible" if p.implausible else p.status


def _first_line(text: str, limit: int = 200) -> str:
    line = (text.strip().splitlines() or [""])[0]
    return line if len(line) <= limit else line[:limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# Gradescope results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/)

GS_MAX_OUTPUT_CHARS = 20000
GS_MAX_OUTPUT_LINES = 400


def _cents(x: float) -> int:
    return int(round((x if finite(x) else 0.0) * 100))


def split_group_points(group: GroupResult) -> list:
    """(score, max_score) per test of a group, in cents, summing exactly to the group's points
    and maximum: each test gets an equal share of the maximum (the extra cents of an uneven split
    going to passing tests first), a passing test scores its share, a failing one nothing, and
    the cents that rounding puts between those and the group's recorded points are taken from
    (or, in a file that disagrees with itself, given to) passing tests."""
    n = len(group.tests)
    base, extra = divmod(max(_cents(group.max_points), 0), n)
    order = ([i for i, t in enumerate(group.tests) if t.passed]
             + [i for i, t in enumerate(group.tests) if not t.passed])
    maxes = [base] * n
    for i in order[:extra]:
        maxes[i] += 1
    scores = [maxes[i] if t.passed else 0 for i, t in enumerate(group.tests)]
    diff = max(_cents(group.points), 0) - sum(scores)
    passed = [i for i, t in enumerate(group.tests) if t.passed] or [0]
    while diff < 0 and any(scores[i] > 0 for i in passed):
        for i in reversed(passed):
            if diff < 0 and scores[i] > 0:
                scores[i] -= 1
                diff += 1
    scores[passed[0]] += max(diff, 0)
    return list(zip(scores, maxes))


def _gs_test(name: str, score_cents: int, max_cents: int, passed: bool, output: str,
             visibility: str, tags: list) -> dict:
    return {"name": name, "score": score_cents / 100, "max_score": max_cents / 100,
            "status": "passed" if passed else "failed",
            "output": clip(output, GS_MAX_OUTPUT_LINES, GS_MAX_OUTPUT_CHARS),
            "visibility": visibility, "tags": tags}


def _gs_perf_output(p: PerfResult) -> str:
    lines = [f"{p.label or p.metric_name or 'metric'}: {perf_summary(p)}"]
    if p.status == "measured":
        lines.append(f"target {p.target:g} (full points), floor {p.floor:g} (none)")
        if p.baseline:
            lines.append(f"against {p.baseline}")
        lines += [line.strip() for line in profile_lines(p)]
    if p.message.strip() and p.status != "measured":
        lines.append(p.message.strip())
    lines.append(f"{points_text(p.points)} / {p.max_points:g} points")
    return "\n".join(lines)


def gradescope_tests(result: GradeResult) -> list:
    tests = []
    for lab in result.labs:
        if lab.status in FAILED_LAB:
            tests.append(_gs_test(f"{lab.lab}: {FAILED_LAB[lab.status]}", _cents(lab.points),
                                  _cents(lab.max_points), False, lab_message(lab), "visible",
                                  [lab.lab, lab.status]))
            continue
        for g in lab.groups:
            visibility = HIDDEN_VISIBILITY if is_hidden_group(g) else "visible"
            tags = [lab.lab, g.name]
            if not g.tests:
                if g.max_points > 0:   # nothing ran, yet the group counts
                    tests.append(_gs_test(f"{lab.lab} {g.name}", _cents(g.points),
                                          _cents(g.max_points), False, g.note or "not run",
                                          visibility, tags))
                continue
            for t, (score, most) in zip(g.tests, split_group_points(g)):
                output = t.message if t.message.strip() or t.passed else t.status.replace("_", " ")
                tests.append(_gs_test(f"{lab.lab} {g.name}: {t.name}", score, most, t.passed,
                                      output, visibility, tags))
        for p in lab.performance:
            full = p.status == "measured" and _cents(p.points) >= _cents(p.max_points)
            tags = [lab.lab, "performance"] + (["implausible"] if p.implausible else [])
            tests.append(_gs_test(f"{lab.lab} performance: {perf_name(lab, p)}",
                                  _cents(p.points), _cents(p.max_points), full,
                                  _gs_perf_output(p), "visible", tags))
    if not tests:   # nothing recorded per lab: the grading stopped before any lab
        tests.append(_gs_test("grading", 0, 0, False,
                              result.message or f"status {result.status}: nothing was graded",
                              "visible", ["error"]))
    return tests


def _gs_summary(result: GradeResult, tests: list, score: float) -> str:
    max_score = sum(t["max_score"] for t in tests)
    lines = [f"Total: {score:.2f} / {max_score:g} points"]
    for lab in result.labs:
        seed = f" (seed {lab.seed})" if lab.seed is not None else ""
        state = "" if lab.status == "graded" else f" - {STATUS_TEXT.get(lab.status, lab.status)}"
        lines.append(f"{lab.lab} - {lab.title}: {points_text(lab.points)} / {lab.max_points:g}"
                     f"{state}{seed}")
    if result.status == "no_gpu":
        lines.append(f"Not graded on a GPU: {result.message}. No GPU points were awarded.")
    elif withheld(result) and result.message:
        lines.append(f"Performance not scored: {_first_line(result.message, 500)}")
    elif result.status == "error" and result.message:
        lines.append(f"The grading stopped: {_first_line(result.message, 500)}")
    if flagged_text(result):
        lines.append(f"Flagged for review: {flagged_text(result)}.")
    if any(t["visibility"] != "visible" for t in tests):
        lines.append("Hidden tests are shown after the due date; their points are in the total.")
    return "\n".join(lines)


def gradescope(result: GradeResult) -> dict:
    """Gradescope's results.json as a dict: one test per correctness test, per performance entry,
    and per lab that was not graded (build failed, rejected, bad files, no GPU, error)."""
    tests = gradescope_tests(result)
    score = round(sum(t["score"] for t in tests), 2)
    return _clean_json({
        "score": score,
        "execution_time": int(max(result.seconds, 0)) if finite(result.seconds) else 0,
        "output": _gs_summary(result, tests, score),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {"grader_version": result.grader_version, "status": result.status,
                       "exit_code": result.exit_code, "implausible": result.implausible},
        "tests": tests,
    })


def gradescope_failure(message: str) -> dict:
    """A valid results.json for when there is no result to show (the grading crashed, the
    results file is missing): score 0 and the message, visible to the student."""
    message = str(message).strip() or "the autograder failed without a message"
    text = ("The autograder could not grade this submission; no points were awarded. Please "
            "tell the course staff.\n\n" + message)
    return _clean_json({
        "score": 0.0, "output": clip(text, GS_MAX_OUTPUT_LINES, GS_MAX_OUTPUT_CHARS),
        "output_format": "text", "visibility": "visible", "stdout_visibility": "hidden",
        "tests": [{"name": "autograder", "score": 0.0, "max_score": 0.0, "status": "failed",
                   "output": clip(message, GS_MAX_OUTPUT_LINES, GS_MAX_OUTPUT_CHARS),
                   "visibility": "visible"}],
    })


def gradescope_json(result: GradeResult | None, error: str | None = None) -> str:
    """results.json text; never raises: without a result, or should rendering it fail, the
    failure document with `error` (or the rendering error) as its message."""
    if result is not None:
        try:
            return json.dumps(gradescope(result), indent=2, allow_nan=False,
                              ensure_ascii=False) + "\n"
        except Exception as e:   # a bug here must still leave Gradescope a valid file
            error = ((error + "\n") if error else "") + (
                f"the Gradescope report could not be rendered: {type(e).__name__}: {e}")
    return json.dumps(gradescope_failure(error or "no results were recorded"), indent=2,
                      ensure_ascii=False) + "\n"


def _clean_json(value):
    if isinstance(value, str):
        return clean_text(value)   # no NUL or lone surrogate for a database to choke on
    if isinstance(value, dict):
        return {_clean_json(k): _clean_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return 0.0
    return value


# ---------------------------------------------------------------------------------------------
# JUnit XML

JUNIT_MAX_BODY = 65536
_FAILING = ("failed", "crashed", "timeout")


def _case(parent: ET.Element, classname: str, name: str, seconds: float = 0.0) -> ET.Element:
    return ET.SubElement(parent, "testcase", name=clean_text(name), classname=clean_text(classname),
                         time=f"{max(seconds, 0.0) if finite(seconds) else 0.0:.3f}")


def _fail(case: ET.Element, message: str, kind: str) -> None:
    el = ET.SubElement(case, "failure", message=clean_text(_first_line(message) or kind),
                       type=kind)
    el.text = clean_text(clip(message, 100000, JUNIT_MAX_BODY)) if message.strip() else None


def _skip(case: ET.Element, message: str) -> None:
    ET.SubElement(case, "skipped", message=clean_text(_first_line(message)))


def _suite(root: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(root, "testsuite", name=clean_text(name))


def _lab_suites(root: ET.Element, lab: LabResult) -> None:
    steps = _suite(root, lab.lab)
    if lab.seed is not None or lab.implausible:
        props = ET.SubElement(steps, "properties")
        if lab.seed is not None:
            ET.SubElement(props, "property", name="seed", value=str(lab.seed))
        if lab.implausible:   # a benchmark faster than the GPU can run: flagged for review
            ET.SubElement(props, "property", name="implausible", value="true")
    if lab.build is not None or lab.status == "build_failed":
        case = _case(steps, lab.lab, "build", lab.build.seconds if lab.build else 0.0)
        if lab.build is None or not lab.build.ok or lab.status == "build_failed":
            _fail(case, lab_message(lab), "build_failed")
    if lab.policy is not None or lab.status == "rejected":
        case = _case(steps, lab.lab, "policy", lab.policy.seconds if lab.policy else 0.0)
        if lab.policy is None or not lab.policy.ok or lab.status == "rejected":
            _fail(case, lab_message(lab), "rejected")
    if lab.status == "bad_files":
        _fail(_case(steps, lab.lab, "files"), lab_message(lab), "bad_files")
    elif lab.status == "no_gpu":
        _skip(_case(steps, lab.lab, "gpu"), lab_message(lab))
    elif lab.status == "error":
        _fail(_case(steps, lab.lab, "grading"), lab_message(lab), "error")

    for g in lab.groups:
        suite = _suite(root, f"{lab.lab}.{g.name}")
        classname = f"{lab.lab}.{g.name}"
        for t in g.tests:
            case = _case(suite, classname, t.name, t.seconds)
            if t.status in _FAILING:
                _fail(case, t.message or t.status, t.status)
            elif not t.passed:
                _skip(case, t.message or t.status.replace("_", " "))
        if not g.tests and g.max_points > 0 and lab.status == "graded":
            _skip(_case(suite, classname, "(no tests)"), g.note or "not run")
    if lab.performance:
        suite = _suite(root, f"{lab.lab}.performance")
        for p in lab.performance:
            case = _case(suite, f"{lab.lab}.performance", perf_name(lab, p))
            out = _gs_perf_output(p)
            if p.status == "measured":
                if _cents(p.points) < _cents(p.max_points):
                    _fail(case, f"{_first_line(out)}: {points_text(p.points)} of {p.max_points:g} "
                                f"points\n{out}", "below_target")
                else:
                    ET.SubElement(case, "system-out").text = clean_text(out)
            elif p.status in PERF_PROBLEMS:
                _fail(case, p.message or p.status, _perf_problem_kind(p))
            else:
                _skip(case, p.message or perf_summary(p))


def _count(el: ET.Element) -> None:
    """tests, failures, errors, skipped and time of every testsuite, and of the root."""
    totals = [0, 0, 0, 0.0]
    for suite in el.iter("testsuite"):
        cases = suite.findall("testcase")
        n = [len(cases), sum(c.find("failure") is not None for c in cases),
             sum(c.find("skipped") is not None for c in cases),
             sum(float(c.get("time", "0")) for c in cases)]
        suite.set("tests", str(n[0]))
        suite.set("failures", str(n[1]))
        suite.set("errors", "0")
        suite.set("skipped", str(n[2]))
        suite.set("time", f"{n[3]:.3f}")
        totals = [a + b for a, b in zip(totals, n)]
    el.set("tests", str(totals[0]))
    el.set("failures", str(totals[1]))
    el.set("errors", "0")
    el.set("skipped", str(totals[2]))


def junit(result: GradeResult) -> ET.Element:
    """<testsuites> > <testsuite> per lab (its build, policy and status) and per lab group and
    its performance entries > <testcase classname='<lab>.<group>'>."""
    root = ET.Element("testsuites", name=clean_text(f"grader: {result.submission}"))
    for lab in result.labs:
        _lab_suites(root, lab)
    if not result.labs and result.status != "graded":
        _fail(_case(_suite(root, "grader"), "grader", "grading"),
              result.message or result.status, result.status)
    for suite in list(root):
        if suite.find("testcase") is None:   # e.g. the groups of a lab that did not run
            root.remove(suite)
    _count(root)
    root.set("time", f"{max(result.seconds, 0.0) if finite(result.seconds) else 0.0:.3f}")
    return root


def junit_xml(result: GradeResult) -> str:
    root = junit(result)
    ET.indent(root)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            + ET.tostring(root, encoding="unicode") + "\n")


# ---------------------------------------------------------------------------------------------
# Markdown (GitHub Actions step summary)

MD_MAX_FAILURES = 10
MD_MAX_KERNELS = 16
MD_MAX_LINES = 40
MD_MAX_CHARS = 4000


def _cell(text) -> str:
    """A table cell: HTML escaped, '|' escaped, on one line."""
    text = html.escape(clean_text(text), quote=False).replace("|", "\\|")
    return " ".join(text.split())


def _fenced(text: str) -> str:
    body = clip(clean_text(text), MD_MAX_LINES, MD_MAX_CHARS) or "(no message)"
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}"


def _details(title: str, text: str) -> str:
    return f"<details><summary>{title}</summary>\n\n{_fenced(text)}\n\n</details>"


def _md_problems(lab: LabResult) -> list:
    """(summary HTML, message) for what went wrong in a lab, in the console report's order."""
    out = []
    code = lambda s: f"<code>{html.escape(clean_text(s))}</code>"
    lab_name = f"<b>{html.escape(clean_text(lab.lab))}</b>"
    if lab.status in FAILED_LAB:
        out.append((f"{lab_name}: {html.escape(STATUS_TEXT.get(lab.status, lab.status))}",
                    lab_message(lab)))
    for g in lab.groups:
        for t in g.tests:
            if not t.passed:
                out.append((f"{lab_name} · {html.escape(clean_text(g.name))} · {code(t.name)}: "
                            f"{html.escape(t.status.replace('_', ' '))}",
                            t.message or t.status))
    for p in lab.performance:
        if p.status in PERF_PROBLEMS:
            out.append((f"{lab_name} · performance {code(perf_name(lab, p))}: "
                        f"{_perf_problem_kind(p)}", p.message or p.status))
    return out


def _md_lab(lab: LabResult, level: int) -> list:
    h = "#" * (level + 1)
    seed = f" (seed {lab.seed})" if lab.seed is not None else ""
    out = [f"{h} {_cell(lab.lab)} - {_cell(lab.title)}: {points_text(lab.points)} / "
           f"{lab.max_points:g}{seed}", ""]
    if lab.status != "graded":
        state = STATUS_TEXT.get(lab.status, lab.status)
        out += [f"**{_cell(state[:1].upper() + state[1:])}** (below: what went wrong)", ""]
    out += ["| group | passed | points |", "| --- | ---: | ---: |"]
    for g in lab.groups:
        passed = f"{g.passed_count}/{len(g.tests)}" if g.tests else _cell(g.note or "not run")
        out.append(f"| {_cell(g.name)} | {passed} | {points_text(g.points)} / {g.max_points:g} |")
    for p in lab.performance:
        out.append(f"| performance: {_cell(perf_name(lab, p))} | "
                   f"{'measured' if p.status == 'measured' else _cell(perf_summary(p))} | "
                   f"{points_text(p.points)} / {p.max_points:g} |")
    out.append(f"| **total** | | **{points_text(lab.points)} / {lab.max_points:g}** |")
    kernels = lab_kernels(lab)
    if kernels:
        out += ["", "| kernel | registers | shared | local memory | local loads / stores |",
                "| --- | ---: | ---: | ---: | ---: |"]
        for k in kernels[:MD_MAX_KERNELS]:
            n = kernel_counts(k)
            out.append(f"| {_cell(kernel_name(k, 120))} ({_cell(str(k.get('arch', '?')))}) | "
                       f"{n['registers']} | {n['shared_bytes']} B | {n['local_bytes'] + n['stack_bytes']} B | "
                       f"{n['local_loads']} / {n['local_stores']} |")
        notes = [kernel_note(k) for k in kernels[:MD_MAX_KERNELS]]
        out += [""] + [_cell(n) for n in notes if n] if any(notes) else []
    if lab.performance:
        out += ["", "| performance | metric | value | 95% interval | band | points |",
                "| --- | --- | ---: | --- | ---: | ---: |"]
        for p in lab.performance:
            if p.status == "measured" and p.metric is not None:
                value = num(p.metric, p.metric)   # as the console report shows them
                interval = (f"[{num(p.metric_lo, p.metric)}, {num(p.metric_hi, p.metric)}]"
                            if p.metric_lo is not None and p.metric_hi is not None else "")
                band = f"{p.band}/{p.bands}" if p.band is not None else ""
            else:
                value, interval, band = _cell(perf_summary(p)), "", ""
            out.append(f"| {_cell(perf_name(lab, p))} | "
                       f"{_cell(p.label or p.metric_name)} | {value} | {interval} | {band} | "
                       f"{points_text(p.points)} / {p.max_points:g} |")
        measured = [p for p in lab.performance if p.status == "measured"]
        if measured:
            out += ["", "; ".join(f"{_cell(perf_name(lab, p))}: full points at "
                                  f"{p.target:g}, none at or below {p.floor:g}" for p in measured)]
            for p in measured:      # the profile stage's lines (grade --profile), unscored
                lines = profile_lines(p)
                if lines:
                    out += ["", f"{_cell(perf_name(lab, p))}, " + _cell(lines[0])]
                    out += [f"- {_cell(line.strip())}" for line in lines[1:]]
    return out + [""]


def markdown(result: GradeResult, level: int = 2) -> str:
    """A score table per lab, performance, and the first failures in <details> blocks."""
    h = "#" * level
    if result.gpu is None:
        where = "GPU not probed"
    else:
        where = result.gpu.get("name") if result.gpu.get("available") else "no GPU"
    seed = f"seed {result.seed}" if result.seed is not None else "seeds per lab"
    out = [f"{h} Grade: {points_text(result.points)} / {result.max_points:g}", "",
           f"`{clean_text(result.submission).replace('`', chr(39))}` · {_cell(where or 'GPU')} · "
           f"{seed} · grader {_cell(result.grader_version)} · status **{_cell(result.status)}** "
           f"(exit {result.exit_code})", ""]
    if result.status == "no_gpu":
        out += [f"> **Not graded on a GPU:** {_cell(result.message)}. No GPU points were "
                f"awarded.", ""]
    elif withheld(result) and result.message:
        out += [f"> **Performance not scored:** {_cell(_first_line(result.message, 500))}", ""]
    elif result.status == "error" and result.message:
        out += [f"> **The grading stopped:** {_cell(_first_line(result.message, 500))}", ""]
    if flagged_text(result):
        out += [f"> **Flagged for review:** {_cell(flagged_text(result))}.", ""]
    for lab in result.labs:
        out += _md_lab(lab, level)
    problems = [p for lab in result.labs for p in _md_problems(lab)]
    if problems:
        out += [f"{h}# What went wrong", ""]
        for title, message in problems[:MD_MAX_FAILURES]:
            out += [_details(title, message), ""]
        if len(problems) > MD_MAX_FAILURES:
            out += [f"... and {len(problems) - MD_MAX_FAILURES} more (all listed in the results "
                    f"file).", ""]
    return "\n".join(out).rstrip() + "\n"


def markdown_many(named: list) -> str:
    """Several submissions' summaries, one section each: `named` is [(name, GradeResult)]."""
    if len(named) == 1:
        return markdown(named[0][1])
    out = ["## Grades", "", "| submission | status | points |", "| --- | --- | ---: |"]
    for name, r in named:
        out.append(f"| {_cell(name)} | {_cell(r.status)} | {points_text(r.points)} / "
                   f"{r.max_points:g} |")
    for name, r in named:
        out += ["", "---", "", f"### {_cell(name)}", "", markdown(r, level=4).rstrip()]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# CSV gradebook

NAME_FROM = ("submission", "folder", "file")


def submission_name(path, result: GradeResult, how: str = "submission") -> str:
    """A row's name: the submission recorded in the results ('submission'), the name of the
    folder holding the results file ('folder'), or the results file's name less '.json'
    ('file')."""
    path = Path(os.path.abspath(path))
    if how == "folder":
        return safe_text(path.parent.name)
    if how == "file":
        return safe_text(path.name[:-5] if path.name.endswith(".json") else path.name)
    return safe_text(result.submission)


def _columns(results: list) -> list:
    """(heading, getter) of every score column: labs in name order; in each, the lab total, its
    groups and its performance entries in the order first seen."""
    labs = {}
    for r in results:
        for lab in r.labs:
            parts = labs.setdefault(lab.lab, ([], []))
            for g in lab.groups:
                if g.name not in parts[0]:
                    parts[0].append(g.name)
            for p in lab.performance:
                if perf_name(lab, p) not in parts[1]:
                    parts[1].append(perf_name(lab, p))
    cols = []
    for name in sorted(labs):
        groups, perfs = labs[name]
        cols.append((name, name, None, None))
        cols += [(f"{name}:{g}", name, "group", g) for g in groups]
        cols += [(f"{name}:perf:{p}", name, "perf", p) for p in perfs]
    return cols


def _cell_value(result: GradeResult, lab_name: str, kind, part) -> str:
    lab = next((lab for lab in result.labs if lab.lab == lab_name), None)
    if lab is None:
        return ""
    if kind is None:
        return points_text(lab.points)
    if kind == "group":
        found = [g.points for g in lab.groups if g.name == part]
    else:
        found = [p.points for p in lab.performance if perf_name(lab, p) == part]
    return points_text(found[0]) if found else ""


def _safe_csv_text(text: str) -> str:
    """No formula injection: text that a spreadsheet would evaluate starts with a quote."""
    text = clean_text(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


# The race audit's verdict on a submission (grade --race-audit, batch --race-audit-fraction):
# the bench judge's race_audit counter (1 clean, -1 no verdict), or a benchmark it failed.
RACE_AUDIT_FAILED = "the race audit"


def race_audit_verdict(result: GradeResult) -> str:
    """'hazards', 'no verdict', 'clean', or '' where no benchmark of `result` was audited."""
    from grader.bench import RACE_AUDIT_CLEAN, RACE_AUDIT_NO_VERDICT
    found = set()
    for lab in result.labs:
        for p in lab.performance:
            if p.status == "failed" and RACE_AUDIT_FAILED in (p.message or ""):
                found.add("hazards")
            elif p.counters.get("race_audit") == RACE_AUDIT_NO_VERDICT:
                found.add("no verdict")
            elif p.counters.get("race_audit") == RACE_AUDIT_CLEAN:
                found.add("clean")
    return next((v for v in ("hazards", "no verdict", "clean") if v in found), "")


def gradebook(named: list) -> str:
    """CSV, one row per submission: name, total, maximum, status, then per lab (in name order)
    its points, its groups' and its performance entries'; last, where any submission's
    benchmarks were audited for races, `race_audit` (race_audit_verdict). A lab or part a
    submission lacks is an empty cell. `named` is [(name, GradeResult)], in the order of the
    rows. A submission with no lab graded (crashed, timed out, refused, not graded) is out of
    the same maximum as the others: 0 of it, not 0 of 0."""
    results = [r for _, r in named]
    cols = _columns(results)
    full = max((r.max_points for r in results), default=0.0)
    audits = [race_audit_verdict(r) for r in results]
    audited = any(audits)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["submission", "total", "max_points", "status"] + [c[0] for c in cols]
               + (["race_audit"] if audited else []))
    for (name, r), audit in zip(named, audits):
        w.writerow([_safe_csv_text(name), points_text(r.points),
                    f"{r.max_points if r.labs else full:g}",
                    _safe_csv_text(r.status)]
                   + [_cell_value(r, lab, kind, part) for _, lab, kind, part in cols]
                   + ([audit] if audited else []))
    return out.getvalue()


# ---------------------------------------------------------------------------------------------
# Every format, for the command line

FORMATS = ("gradescope", "junit", "markdown", "csv", "html", "class_page")
SINGLE = ("gradescope", "junit", "html")   # the formats of one submission only
HTML = ("html", "class_page")   # rendered by grader/html_report.py, which needs matplotlib


def render(fmt: str, named: list) -> str:
    """The text of format `fmt` for `named`, [(name, GradeResult)]: one submission for the
    formats in SINGLE, any number for 'markdown', 'csv' and 'class_page'."""
    if fmt in SINGLE and len(named) != 1:
        raise ValueError(f"the {fmt} report is of one submission, got {len(named)}")
    if fmt == "gradescope":
        return gradescope_json(named[0][1])
    if fmt == "junit":
        return junit_xml(named[0][1])
    if fmt == "markdown":
        return markdown_many(named)
    if fmt == "csv":
        return gradebook(named)
    if fmt in HTML:   # imported here: nothing else in the grader needs matplotlib
        from grader import html_report
        if fmt == "html":
            return html_report.submission_page(named[0][1], named[0][0])
        return html_report.class_page(named)
    raise ValueError(f"unknown report format {fmt!r}")
