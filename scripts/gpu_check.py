#!/usr/bin/env python3
"""On a GPU machine: prove the suite works end to end, and print a short table.

  1. grade the reference solutions: every lab must score full marks;
  2. grade the starters (labs/), alongside the corpus: every lab must score zero correctness;
  3. grade every case of the corpus, tests/submissions/<lab>/<case>/ (wrong, cheating and
     unusual submissions), in parallel, and compare each verdict with
     tests/submissions/<lab>/cases.toml;
     A case with `max_ratio = X` is always benchmarked, and every performance entry that
     measured a ratio (an entry that failed, was gated or was not run has none) must be <= X:
     for cheats whose right verdict is "no gain" rather than a given band;
  4. with --repeat-check: grade each case marked `repeat = true`, and the solutions of those
     cases' labs, 5 times
     more without --seed (each grading draws fresh seeds: a correct submission passes every
     draw) and require identical scores; report how long one warm grading of the solutions
     took.
The CTest suite itself runs separately (scripts/test: cmake --workflow --preset test).

  python3 scripts/gpu_check.py [--labs LAB ...] [--cases NAME ...] [--shard I/N] [--workers N]
                               [--out DIR] [--case-timeout S] [--repeat-check] [--no-sanitize]
                               [--skip-solutions] [--bench-any]
--shard I/N grades part I of N of the chosen corpus, counted from 0 as `batch --shard` and
Slurm's array ids count (every N-th case, by lab and name, from the I-th), and the solutions
and starters in part 0 only: a corpus too large for one device call (labs 02-05 together, lab
05 and 08 together) goes in N calls, the same N parts whatever the machine.
Exit status 0 when every check holds, 1 otherwise, 2 on bad arguments."""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import hashlib
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The grader's own reader of the labs (grader/config.py), and the grade command's arguments,
# typed (grader/grade_args.py): each grading runs in a `python3 -m grader grade` process of its
# own (its time limit, its process group), whose command line argv() builds.
sys.path.insert(0, str(REPO))
from grader import config as lab_config  # noqa: E402
from grader.errors import GraderError  # noqa: E402
from grader.grade_args import GradeArgs, argv as grade_argv  # noqa: E402
from grader.results import stage_totals  # noqa: E402

CORPUS = REPO / "tests" / "submissions"
SEED = 20261121          # fixed, so a corpus run can be replayed
REPEATS = 5              # gradings per submission in the repeat check
WARM_TARGET_S = 8.0      # one warm grading of a lab's solution should take at most this
GRADING_LIMIT_S = 1200   # wall limit for one `grader grade` call (the first one builds the harness)
ALONE_TIMEOUT_S = 10.0   # per-call limit for cases graded alone (they hang on purpose)
EPS = 1e-6

BUILD_VERDICTS = ("ok", "fail", "rejected")
LEVELS = ("full", "partial", "zero")
CASE_KEYS = {"build", "correctness", "performance", "fails", "feedback", "why", "alone", "repeat",
             "sanitize", "max_ratio"}
# A performance entry's ratio counts as measured in these states (grader/results.py PerfResult):
# 'withheld' was measured but not scored (the GPU's ceilings were not measured). 'failed'
# (an error, a wrong output, or a speed past the ceilings), 'gated', 'timeout', 'not_run': none.
MEASURED = ("measured", "withheld")


# ---------------------------------------------------------------------------- labs and corpus
def resolve_labs(words: list | None) -> list:
    """'01', '01_naive_matmul' or 'naive_matmul' -> lab folder names (the grader's own
    resolution); every lab without words."""
    try:
        return lab_config.resolve_labs(REPO / "labs", list(words or []))
    except GraderError as e:
        raise SystemExit(e.message) from None


class Case:
    def __init__(self, lab: str, name: str, spec: dict):
        self.lab, self.name, self.spec = lab, name, spec
        self.dir = CORPUS / lab / name

    @property
    def id(self) -> str:
        return f"{self.lab}/{self.name}"

    def want(self, key: str) -> str:
        return self.spec.get(key, "any")


def parse_shard(text: str) -> tuple:
    """'I/N' -> (I, N), 0 <= I < N (as `batch --shard`); ValueError otherwise."""
    k, sep, n = text.partition("/")
    if not sep or not k.isdigit() or not n.isdigit() or not 0 <= int(k) < int(n):
        raise ValueError(f"--shard takes I/N with 0 <= I < N, counted from 0 as batch's "
                         f"(e.g. 0/3, 1/3, 2/3), not {text!r}")
    return int(k), int(n)


def shard_cases(cases: list, k: int, n: int) -> list:
    """Part K (from 0) of N of `cases`: every N-th in the order of (lab, name), from the K-th.
    The parts are disjoint, cover every case, differ in size by at most one, and spread each
    lab's cases (its slow ones too) over all of them."""
    ordered = sorted(cases, key=lambda c: (c.lab, c.name))
    return ordered[k::n]


def load_corpus(labs: list, names: list | None = None) -> list:
    """Every case of the given labs, checked for shape; `names` selects 'case' or 'lab/case'."""
    cases, errors = [], []
    for lab in labs:
        file = CORPUS / lab / "cases.toml"
        if not file.is_file():
            continue
        try:
            table = tomllib.loads(file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise SystemExit(f"{file}: {e}")
        folders = {p.name for p in (CORPUS / lab).iterdir() if p.is_dir()}
        for name in sorted(set(table) | folders):
            where = f"{lab}/{name}"
            spec = table.get(name)
            if spec is None:
                errors.append(f"{where}: a folder without an entry in cases.toml")
                continue
            if name not in folders:
                errors.append(f"{where}: an entry in cases.toml without a folder")
                continue
            unknown = set(spec) - CASE_KEYS
            if unknown:
                errors.append(f"{where}: unknown keys {sorted(unknown)}")
            if spec.get("build") not in BUILD_VERDICTS:
                errors.append(f"{where}: build must be one of {BUILD_VERDICTS}")
            if spec.get("correctness", "any") not in LEVELS + ("any",):
                errors.append(f"{where}: bad correctness {spec.get('correctness')!r}")
            if spec.get("performance", "any") not in LEVELS + ("any",):
                errors.append(f"{where}: bad performance {spec.get('performance')!r}")
            if "max_ratio" in spec:
                limit = spec["max_ratio"]
                if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit <= 0:
                    errors.append(f"{where}: max_ratio must be a positive number, got {limit!r}")
                elif spec.get("build") != "ok":
                    errors.append(f"{where}: max_ratio needs build = \"ok\" (nothing is "
                                  f"benchmarked otherwise)")
            cases.append(Case(lab, name, spec))
        # --repeat-check re-grades these: at least one partial score per lab must hold still.
        if table and not any(spec.get("repeat") and "partial" in (spec.get("correctness"),
                                                                 spec.get("performance"))
                             for spec in table.values() if isinstance(spec, dict)):
            errors.append(f"{lab}: no case with a partial verdict has repeat = true "
                          f"(--repeat-check must re-grade one per lab)")
    if errors:
        raise SystemExit("tests/submissions is inconsistent:\n  " + "\n  ".join(errors))
    if names:
        chosen = [c for c in cases if c.name in names or c.id in names]
        missing = [n for n in names if not any(n in (c.name, c.id) for c in cases)]
        if missing:
            raise SystemExit(f"no such case(s) in the selected labs: {', '.join(missing)}")
        cases = chosen
    return cases


def stage_case(case: Case, root: Path) -> Path:
    """Copies the case's files into <root>/<lab>/ (a folder shaped like labs/; copies, never
    symlinks: the grader refuses them) and returns <root>."""
    if root.exists():
        shutil.rmtree(root)
    dest = root / case.lab
    dest.mkdir(parents=True)
    for f in sorted(case.dir.iterdir()):
        if f.is_file() and not f.is_symlink():
            shutil.copyfile(f, dest / f.name)
    return root


# ---------------------------------------------------------------------------- grader calls
# Every results file read, with the hash of what was read: a process of a submission that
# outlived its grading (a daemon rewriting the grader's -o file once the grader has ended) shows
# as a file that changed afterwards (check_results_unchanged).
_READ_RESULTS: list = []
_READ_LOCK = threading.Lock()
SETTLE_S = 5.0   # how long after the last grading the results files are hashed again


def grader_command(args: GradeArgs) -> list:
    """The command of one grader process: `python3 -m grader grade` with `args`."""
    return [sys.executable, "-m", "grader", "grade", *grade_argv(args)]


def run_grader(args: GradeArgs, limit_s: float = GRADING_LIMIT_S, env: dict | None = None) -> dict:
    """One grading (quiet) in a grader process of its own, writing `args.output`; returns
    {rc, result, output, wall}. The whole process group is killed if it overruns `limit_s`."""
    out = args.output
    cmd = grader_command(dataclasses.replace(args, quiet=True))
    if out.exists():
        out.unlink()
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True,
                            env=None if env is None else {**os.environ, **env})
    timed_out = False
    try:
        output, _ = proc.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
    wall = time.monotonic() - t0
    result = None
    if out.is_file():
        data = out.read_bytes()
        with _READ_LOCK:
            _READ_RESULTS.append((out, hashlib.sha256(data).hexdigest(), time.monotonic()))
        try:
            result = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            output += f"\n(results file unreadable: {e})"
    if timed_out:
        output += f"\n(the grader was killed after {limit_s:g} s)"
    return {"rc": proc.returncode, "result": result, "output": output, "wall": wall,
            "timed_out": timed_out}


def check_results_unchanged() -> list:
    """Problems: results files that changed (or vanished) after they were read. Waits until
    SETTLE_S seconds have passed since the last one was read."""
    with _READ_LOCK:
        read = list(_READ_RESULTS)
    if not read:
        return []
    wait = SETTLE_S - (time.monotonic() - max(t for _, _, t in read))
    if wait > 0:
        time.sleep(wait)
    problems = []
    for path, digest, _ in read:
        try:
            now = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            now = None
        if now != digest:
            problems.append(f"{path} {'vanished' if now is None else 'changed'} after the grader "
                            f"ended: a process of a graded submission outlived its grading")
    return problems


def preflight(paths: list) -> list:
    """Problems with the folders this run writes: each must be writable by the user running it
    (a run as root before leaves root-owned build/check-* or results behind, which a run as an
    ordinary user cannot replace). Nothing here needs root."""
    problems = []
    for path in paths:
        probe = path
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        if not os.access(probe, os.W_OK | os.X_OK):
            problems.append(f"{probe} is not writable by uid {os.getuid()}")
            continue
        if path.is_dir():
            for sub in path.iterdir():
                if sub.is_dir() and not os.access(sub, os.W_OK | os.X_OK):
                    problems.append(f"{sub} is not writable by uid {os.getuid()}")
    return problems


def lab_result(result: dict | None, lab: str) -> dict | None:
    for entry in (result or {}).get("labs", []):
        if entry.get("lab") == lab:
            return entry
    return None


# ---------------------------------------------------------------------------- verdicts
def level(got: float, top: float) -> str:
    if top > 0 and got >= top - EPS:
        return "full"
    return "zero" if got <= EPS else "partial"


def correctness_points(lab: dict) -> tuple:
    """Points and maximum of the lab's groups, without a profile-counter lesson this machine
    could not measure (its points are withheld in the grade; here it is neither right nor
    wrong: unmeasured_lessons)."""
    groups = [g for g in lab.get("groups") or [] if not g.get("unmeasured")]
    return (sum(g.get("points", 0.0) for g in groups), sum(g.get("max_points", 0.0) for g in groups))


def unmeasured_lessons(lab: dict) -> list:
    """The profile-counter lessons (as 'Lesson.<counter>' test names) this machine gave no
    counters for: a case's expected failures of them cannot be checked here."""
    return [f"Lesson.{g.get('filter')}" for g in lab.get("groups") or [] if g.get("unmeasured")]


def perf_entries(lab: dict) -> list:
    perf = lab.get("performance")
    if perf is None:
        return []
    return perf if isinstance(perf, list) else [perf]   # the old form: one table


def perf_level(lab: dict) -> str:
    """full: every entry at full points; zero: no entry got any; partial otherwise."""
    entries = perf_entries(lab)
    if not entries:
        return "zero"
    full = all(e.get("max_points", 0) > 0 and e.get("points", 0) >= e["max_points"] - EPS
               for e in entries)
    if full:
        return "full"
    return "zero" if all(e.get("points", 0) <= EPS for e in entries) else "partial"


def measured_ratios(lab: dict) -> list:
    """(entry name, ratio) of every performance entry that measured a ratio: the graded metric
    when it is the ratio, else the benchmark's `ratio` counter. An entry that failed (an error,
    a wrong output, implausibly fast), was gated or was not run has none."""
    out = []
    for e in perf_entries(lab):
        status = e.get("status")
        if status is not None and status not in MEASURED:
            continue
        value = None
        if e.get("metric_name", "ratio") == "ratio":
            value = e.get("metric")
        if not isinstance(value, (int, float)):
            value = (e.get("counters") or {}).get("ratio")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append((e.get("name") or e.get("benchmark") or "performance", float(value)))
    return out


def build_verdict(lab: dict) -> str:
    status = lab.get("status")
    if status == "rejected":
        return "rejected"
    if status == "build_failed":
        return "fail"
    return "ok"


def failing_tests(lab: dict) -> list:
    return [t for g in lab.get("groups") or [] for t in g.get("tests", [])
            if t.get("status") != "passed"]


def student_text(lab: dict) -> str:
    """Everything the student reads about this lab: where `feedback` strings must appear."""
    parts = [t.get("message", "") for t in failing_tests(lab)]
    parts.append(lab.get("message", "") or "")
    build = lab.get("build") or {}
    parts += [build.get("log", "") or "", build.get("hint", "") or ""]
    policy = lab.get("policy") or {}
    for v in policy.get("violations", []) or []:
        parts.append(" ".join(str(v.get(k, "")) for k in ("rule", "symbol", "message")))
    parts += [e.get("message", "") or "" for e in perf_entries(lab)]
    parts += [str(w) for w in lab.get("warnings", []) or []]
    return "\n".join(parts)


def judge_case(case: Case, graded: dict) -> dict:
    """Compares one grading of `case` with its expectations; a row for the table."""
    row = {"case": case.id, "problems": [], "seconds": graded["wall"]}
    lab = lab_result(graded["result"], case.lab)
    if lab is None:
        row["problems"].append(f"no result for the lab (exit {graded['rc']}): "
                               f"{graded['output'][-300:].strip()}")
        return row
    status = lab.get("status")
    row["status"] = status
    row["build"] = build_verdict(lab)
    got, top = correctness_points(lab)
    row["correctness"] = level(got, top) if row["build"] == "ok" else "zero"
    row["performance"] = perf_level(lab)
    row["points"] = lab.get("points", 0.0)
    row["metric"] = [e.get("metric") for e in perf_entries(lab)]
    row["grader_seconds"] = (graded["result"] or {}).get("seconds")
    row["stages"] = lab.get("stages")
    if status in ("error", "bad_files", "missing_files", "no_gpu"):
        row["problems"].append(f"lab status '{status}': {(lab.get('message') or '')[:200]}")
    skipped = unmeasured_lessons(lab)
    expected_fails = [part for part in case.spec.get("fails", [])
                      if not any(part.startswith(name) for name in skipped)]
    if skipped:
        row["unmeasured"] = skipped
    for key in ("build", "correctness", "performance"):
        want = case.want(key)
        if (key == "correctness" and want == "partial" and row[key] == "full" and skipped
                and case.spec.get("fails") and not expected_fails):
            continue   # partial only by a lesson this machine could not measure
        if want != "any" and want != row[key]:
            row["problems"].append(f"{key}: expected {want}, got {row[key]}")
    limit = case.spec.get("max_ratio")
    if limit is not None:
        for name, ratio in measured_ratios(lab):
            if ratio > limit + EPS:
                row["problems"].append(f"max_ratio: {name} measured a ratio of {ratio:.3g}, "
                                       f"above {limit:g}")
    failing = failing_tests(lab)
    for part in expected_fails:
        if not any(part in t.get("name", "") for t in failing):
            row["problems"].append(f"no failing test named like '{part}'")
    text = student_text(lab).lower()
    for part in case.spec.get("feedback", []):
        if part.lower() not in text:
            row["problems"].append(f"feedback lacks '{part}'")
    if row["build"] == "rejected":
        rules = sorted({str(v.get("rule")) for v in (lab.get("policy") or {}).get("violations", [])
                        or []})
        row["rules"] = rules
    return row


# ---------------------------------------------------------------------------- stage times
STAGE_KINDS = ("build", "policy", "tests", "bench", "wait")   # the table's columns


def _stage_row(label: str, totals: dict, width: int = 24) -> str:
    cells = "".join(f" {totals.get(k, 0.0):7.1f}" for k in STAGE_KINDS)
    return f"  {label:<{width}}{cells} {sum(totals.values()):7.1f}"


def stage_table(title: str, result: dict | None) -> list:
    """One grading's stage times: a line of its own stages (configure, the harness, the GPU
    probe and ceilings), then a row per lab summed by kind."""
    if not result:
        return []
    own = ", ".join(f"{s.get('stage')} {s.get('seconds', 0):.1f}"
                    for s in result.get("stages") or [] if isinstance(s, dict))
    lines = [f"{title}: {own or 'no stages recorded'}; the whole grading "
             f"{result.get('seconds', 0) or 0:.1f}",
             f"  {'lab':<24}" + "".join(f" {k:>7}" for k in STAGE_KINDS) + f" {'total':>7}"]
    for lab in result.get("labs") or []:
        lines.append(_stage_row(str(lab.get("lab")), stage_totals(lab.get("stages"))))
    return lines


def corpus_stage_table(rows: list) -> list:
    """Per lab over its corpus cases: the median of each kind, and the slowest case."""
    by_lab = {}
    for r in rows:
        if r.get("stages") is not None:
            by_lab.setdefault(r["case"].split("/", 1)[0], []).append(r)
    if not by_lab:
        return []
    lines = ["corpus, median per case (and the slowest case's lab total):",
             f"  {'lab':<18}{'cases':>6}" + "".join(f" {k:>7}" for k in STAGE_KINDS)
             + f" {'total':>7}  slowest"]
    for lab, cases in sorted(by_lab.items()):
        totals = [stage_totals(r["stages"]) for r in cases]
        cells = "".join(f" {statistics.median(t.get(k, 0.0) for t in totals):7.1f}"
                        for k in STAGE_KINDS)
        whole = [sum(t.values()) for t in totals]
        slowest = max(range(len(cases)), key=lambda i: whole[i])
        lines.append(f"  {lab:<18}{len(cases):>6}{cells} {statistics.median(whole):7.1f}  "
                     f"{whole[slowest]:.1f} ({cases[slowest]['case']})")
    return lines


def fmt_metric(values) -> str:
    shown = [f"{v:.3f}" for v in values or [] if isinstance(v, (int, float))]
    return ",".join(shown) if shown else "-"


# ---------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labs", nargs="+", metavar="LAB",
                    help="only these labs: solutions, starters and corpus (default: all)")
    ap.add_argument("--cases", nargs="+", metavar="NAME",
                    help="only these corpus cases ('case' or 'lab/case')")
    ap.add_argument("--shard", metavar="I/N",
                    help="grade part I of N of the corpus, from 0 (0 <= I < N, as batch's "
                         "--shard); the solutions and starters only in part 0")
    ap.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1),
                    help="cases graded at once, one build directory each (default: min(8, CPUs))")
    ap.add_argument("--out", type=Path, default=REPO / "build" / "gpu-check",
                    help="where results and logs go (default: build/gpu-check)")
    ap.add_argument("--case-timeout", type=float, default=30.0, metavar="S",
                    help="seconds one test (one worker call) may take in a corpus case")
    ap.add_argument("--repeat-check", action="store_true",
                    help=f"grade the solutions and `repeat = true` cases {REPEATS} more times "
                         f"without --seed (fresh seeds each time); scores must be identical")
    ap.add_argument("--no-sanitize", action="store_true",
                    help="pass --no-sanitize to the grader for corpus cases (faster)")
    ap.add_argument("--skip-solutions", action="store_true",
                    help="grade only the corpus (no solutions, starters or their re-grading)")
    ap.add_argument("--bench-any", action="store_true",
                    help="benchmark the cases whose performance is not asserted too (slower: "
                         "benchmarks run one at a time on the GPU)")
    ap.add_argument("--print-labs", action="store_true",
                    help="print the chosen labs' folder names, ';'-separated, and exit "
                         "(scripts/gpu-check builds only those)")
    args = ap.parse_args(argv)
    if args.print_labs:
        print(";".join(resolve_labs(args.labs)))
        return 0
    if args.workers < 1:
        ap.error("--workers must be >= 1")
    labs = resolve_labs(args.labs)
    if not labs:
        print("no labs (labs/*/grading.toml)")
        return 2
    cases = load_corpus(labs, args.cases)
    if args.shard is not None:
        try:
            k, n = parse_shard(args.shard)
        except ValueError as e:
            ap.error(str(e))
        cases = shard_cases(cases, k, n)
        args.skip_solutions = args.skip_solutions or k != 0
        print(f"part {k} of 0-{n - 1}: {len(cases)} corpus cases"
              + ("" if k == 0 else " (the solutions and starters are graded in part 0)"))
    slot_dirs = [REPO / "build" / f"check-{i}" for i in range(max(1, args.workers))]
    problems = preflight([args.out, *slot_dirs])
    if problems:
        print("gpu_check: cannot write where it must (remove or chown these, e.g. after a run as "
              "root):\n  " + "\n  ".join(problems))
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    ok = True
    summary = []
    timed = []   # (title, results) of the gradings whose stage times are shown at the end

    def log(msg: str) -> None:
        print(f"[{time.monotonic() - t0:5.0f} s] {msg}", flush=True)

    slots_total = max(1, min(args.workers, len(cases) or 1))
    jobs = max(2, (os.cpu_count() or 2) // slots_total)

    def case_args(timeout_s: float, case: Case) -> dict:
        """The grader's options for a corpus case (GradeArgs fields)."""
        # compute-sanitizer re-runs cost seconds each: only the cases that assert what the
        # sanitizer found (`sanitize = true`) get them, unless --no-sanitize turns them off too.
        wants_sanitizer = case.spec.get("sanitize", False)
        # Benchmarks hold the GPU alone, one case at a time: a case whose performance verdict
        # is not asserted ("any") skips them unless --bench-any asks for its figures, or its
        # `max_ratio` bounds what they measure.
        skip_bench = (case.want("performance") == "any" and not args.bench_any
                      and "max_ratio" not in case.spec)
        return {"test_timeout_s": timeout_s, "jobs": jobs,
                "sanitize": wants_sanitizer and not args.no_sanitize,
                "performance": not skip_bench}

    slot0 = REPO / "build" / "check-0"

    # ---- 1. solutions (this first grading also builds the harness in slot 0)
    if not args.skip_solutions:
        sol = run_grader(GradeArgs(labs=tuple(labs), solutions=True, seed=SEED,
                                   output=args.out / "solutions.json", build_dir=slot0))
        res = sol["result"]
        if res is None:
            print(sol["output"][-3000:])
            print(f"solutions were not graded (exit {sol['rc']})")
            return 1
        for lab_name in labs:
            lab = lab_result(res, lab_name)
            if lab is None:
                ok = False
                summary.append(f"solution {lab_name:<18} NOT GRADED")
                continue
            full = lab.get("status") == "graded" and lab["points"] >= lab["max_points"] - EPS
            ok &= full
            summary.append(f"solution {lab_name:<18} {lab['points']:6.2f} / {lab['max_points']:<5g} "
                           f"{'OK' if full else 'NOT FULL MARKS (' + str(lab.get('status')) + ')'}")
            for e in perf_entries(lab):
                c = e.get("counters") or {}
                base = c.get("baseline_GFLOPS", c.get("cublas_GFLOPS", 0))
                spread = (c.get("student_iqr", 0), c.get("baseline_iqr", c.get("cublas_iqr", 0)))
                summary.append(f"    {e.get('name') or e.get('benchmark') or 'performance':<28} "
                               f"{e.get('points', 0):5.2f} / {e.get('max_points', 0):<4g} "
                               f"{c.get('GFLOPS', 0):8.1f} GFLOP/s vs baseline {base:8.1f}  "
                               f"{e.get('metric_name') or 'metric'} {e.get('metric') or 0:.3f}  "
                               f"(spread {spread[0]:.3f} / {spread[1]:.3f})")
        summary.append(f"solutions: one grading took {res.get('seconds', 0):.1f} s "
                       f"(grader's own clock, cold build included), {sol['wall']:.0f} s wall")
        timed.append(("solutions, first grading (builds the harness)", res))
        log("solutions graded")

    # ---- 2. starters, in slot 0 while the corpus starts in the other slots: a starter fails its
    # tests, so it runs no benchmark and shares the GPU like any corpus case (grader/gpulock.py).
    starter_run = None
    if not args.skip_solutions:
        starter_run = concurrent.futures.ThreadPoolExecutor(1)
        starter_future = starter_run.submit(run_grader, GradeArgs(
            labs=tuple(labs), seed=SEED, output=args.out / "starters.json", build_dir=slot0))

    def report_starters() -> None:
        nonlocal ok
        start = starter_future.result()
        timed.append(("starters", start["result"]))
        for lab_name in labs:
            lab = lab_result(start["result"], lab_name)
            if lab is None:
                ok = False
                summary.append(f"starter  {lab_name:<18} NOT GRADED (exit {start['rc']}): "
                               f"{start['output'][-300:].strip()}")
                continue
            got, top = correctness_points(lab)
            zero = got <= EPS and lab.get("status") == "graded"
            ok &= zero
            summary.append(f"starter  {lab_name:<18} correctness {got:6.2f} / {top:<5g} "
                           f"{'OK' if zero else 'NOT ZERO (' + str(lab.get('status')) + ')'}")
        log("starters graded")

    # ---- 3. the corpus: one build directory per slot, so only the student file recompiles.
    # Slot 0 (built by the solutions' grading) joins the pool when the starters are graded.
    slots: queue.Queue = queue.Queue()
    for i in range(1 if starter_run else 0, slots_total):
        slots.put(REPO / "build" / f"check-{i}")
    if starter_run:
        starter_future.add_done_callback(lambda _: slots.put(slot0))
    printed = threading.Lock()
    done = [0]

    def grade_case(case: Case, timeout_s: float, build_dir: Path, tag: str = "case",
                   seed: int | None = SEED) -> dict:
        root = stage_case(case, args.out / "submissions" / f"{tag}-{case.lab}-{case.name}")
        return run_grader(GradeArgs(labs=(case.lab,), submission=root, seed=seed,
                                    output=args.out / f"{tag}-{case.lab}-{case.name}.json",
                                    build_dir=build_dir, **case_args(timeout_s, case)))

    def run_case(case: Case, timeout_s: float) -> dict:
        build_dir = slots.get()
        try:
            row = judge_case(case, grade_case(case, timeout_s, build_dir))
        finally:
            slots.put(build_dir)
        with printed:
            done[0] += 1
            mark = "ok " if not row["problems"] else "BAD"
            log(f"{mark} {done[0]:3d}/{len(cases)} {case.id} ({row['seconds']:.0f} s)")
        return row

    # Slow cases first (full correctness means a benchmark runs; refused ones are quick), so
    # the pool does not end waiting on one long case; hanging cases last, one at a time.
    together = sorted((c for c in cases if not c.spec.get("alone")),
                      key=lambda c: (c.want("build") != "ok", c.want("correctness") != "full",
                                     c.id))
    alone = [c for c in cases if c.spec.get("alone")]
    rows = []
    if cases:
        with concurrent.futures.ThreadPoolExecutor(slots_total) as pool:
            rows = list(pool.map(lambda c: run_case(c, args.case_timeout), together))
        rows += [run_case(c, min(args.case_timeout, ALONE_TIMEOUT_S)) for c in alone]
        log("corpus graded")
    if starter_run:
        report_starters()
        starter_run.shutdown()
    rows.sort(key=lambda r: r["case"])
    bad = [r for r in rows if r["problems"]]
    ok &= not bad
    outlived = check_results_unchanged()
    ok &= not outlived
    summary += outlived

    # ---- 4. repeat check: same submission, no --seed (fresh seeds each time), same scores
    repeat_lines = []
    if args.repeat_check:
        def repeat(label: str, grade_once) -> None:
            nonlocal ok
            scores, seconds = [], []
            for i in range(REPEATS):
                graded = grade_once(i)
                res = graded["result"]
                scores.append(None if res is None else round(res.get("points", 0.0), 2))
                if res is not None:
                    seconds.append(res.get("seconds", graded["wall"]))
            same = None not in scores and len(set(scores)) == 1
            ok &= same
            shown = (f"{REPEATS} x {scores[0]:.2f}" if same
                     else ", ".join("-" if s is None else f"{s:.2f}" for s in scores))
            repeat_lines.append(f"re-grading {label}: {shown}, "
                                f"{'identical' if same else 'NOT IDENTICAL'}")
            if seconds:
                repeat_lines.append(f"    one grading took {statistics.median(seconds):.1f} s "
                                    f"(median; min {min(seconds):.1f}, max {max(seconds):.1f})")
            if label.startswith("solutions") and res is not None:
                timed.append((f"solutions, warm (repeat check, last of {REPEATS})", res))
            if label.startswith("solutions") and seconds:
                per_lab = statistics.median(seconds) / max(1, len(repeat_labs))
                repeat_lines.append(f"    warm grading of the solutions: {per_lab:.1f} s per lab, "
                                    f"target <= {WARM_TARGET_S:g} s: "
                                    f"{'met' if per_lab <= WARM_TARGET_S else 'NOT MET'}")

        # The labs with a `repeat = true` case: re-grading every lab 5 times would not fit in
        # one device call as the suite grows.
        repeat_labs = sorted({c.lab for c in load_corpus(labs) if c.spec.get("repeat")})
        if not args.skip_solutions and repeat_labs:
            repeat(f"solutions ({', '.join(repeat_labs)})", lambda i: run_grader(GradeArgs(
                labs=tuple(repeat_labs), solutions=True,
                output=args.out / f"repeat-solutions-{i}.json", build_dir=slot0)))
        for case in [c for c in cases if c.spec.get("repeat")]:  # those chosen (--cases, --shard)
            repeat(case.id, lambda i, case=case: grade_case(case, args.case_timeout, slot0,
                                                            tag=f"repeat{i}", seed=None))
        log("repeat check done")

    # ---- report
    print("\n=== corpus: case, build, correctness, performance, points, metric, seconds ===")
    for r in rows:
        extra = "; ".join(r["problems"])
        if r.get("rules"):
            extra = (extra + "; " if extra else "") + "rules: " + ",".join(r["rules"])
        print(f"{'OK ' if not r['problems'] else 'BAD'} {r['case']:<52} {r.get('build', '?'):<8}"
              f" {r.get('correctness', '?'):<8} {r.get('performance', '?'):<8}"
              f" {r.get('points', 0):7.2f} {fmt_metric(r.get('metric')):>7}"
              f" {r['seconds']:6.1f} s  {extra}")
    stage_lines = [line for title, result in timed for line in stage_table(title, result)]
    stage_lines += corpus_stage_table(rows)
    if stage_lines:
        print("\n=== stage times, s (wall clock; docs/grading.md, \"Stage times\") ===")
        print("\n".join(stage_lines))
    print("\n=== summary ===")
    for line in summary + repeat_lines:
        print(line)
    print(f"corpus: {len(rows) - len(bad)} of {len(rows)} cases got the expected verdict")
    wall = time.monotonic() - t0
    print(f"gpu-check: {'PASS' if ok else 'FAIL'}; wall time {wall:.0f} s "
          f"({slots_total} workers, {len(cases)} cases)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
