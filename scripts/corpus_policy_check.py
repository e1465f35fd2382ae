#!/usr/bin/env python3
"""Without a GPU (CI): check the build verdicts of the submission corpus with the real grader.

For every case of tests/submissions/<lab>/cases.toml, grade it with
`python3 -m grader grade -q --no-performance`, the GPU hidden (CUDA_VISIBLE_DEVICES=""), and
check the lab's status against the case's `build`:
  rejected  status 'rejected' (the policy refused the compiled object), and every `feedback`
            string in what the student reads (the lab message, the policy's violations);
  fail      status 'build_failed', and every `feedback` string in the build log or message;
  ok        it built and was not refused: status 'no_gpu' (or 'graded' where a GPU shows).
--jobs graders run side by side (default: 2, at most one per CPU), each taking the next lab
(the labs with the most cases first) when it is done with one, a lab's cases all to one of them;
each grader grades its cases one after another in a build directory of its own (DIR, DIR-2,
...), so only the student's file is recompiled between them. Prints a table; the last line is
"N passed, N failed".

  python3 scripts/corpus_policy_check.py [--labs LAB ...] [--cases NAME ...] [--build-dir DIR]
                                         [--jobs N]
Exit status 0 when every case got its build verdict, 1 otherwise, 2 on bad arguments."""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_check as gc  # noqa: E402  (the corpus loader and verdict rules are shared)

FIRST_LIMIT_S = 1800   # the first grading builds the whole harness (slow on a 2-core runner)
CASE_LIMIT_S = 600
NOT_BUILT = ("build_failed", "rejected", "bad_files", "missing_files", "error")


def check(case: gc.Case, graded: dict) -> dict:
    row = {"case": case.id, "want": case.want("build"), "problems": [], "rules": [],
           "seconds": graded["wall"]}
    lab = gc.lab_result(graded["result"], case.lab)
    if lab is None:
        row["got"] = "?"
        row["problems"].append(f"no result for the lab (exit {graded['rc']}): "
                               f"{graded['output'][-400:].strip()}")
        return row
    status = lab.get("status")
    row["got"] = status
    row["rules"] = sorted({str(v.get("rule")) for v in
                           (lab.get("policy") or {}).get("violations", []) or []})
    want = row["want"]
    if want == "rejected" and status != "rejected":
        row["problems"].append(f"expected the policy to refuse it, got status '{status}'"
                               + _why(lab))
    elif want == "fail" and status != "build_failed":
        row["problems"].append(f"expected a build failure, got status '{status}'" + _why(lab))
    elif want == "ok" and status in NOT_BUILT:
        row["problems"].append(f"expected it to build and pass the policy, got status '{status}'"
                               + _why(lab))
    if want in ("rejected", "fail") and not row["problems"]:
        text = gc.student_text(lab).lower()
        for part in case.spec.get("feedback", []):
            if part.lower() not in text:
                row["problems"].append(f"feedback lacks '{part}'")
    if want == "ok" and status not in NOT_BUILT:
        row["problems"] += lesson_problems(case, lab)
    return row


def lesson_problems(case: gc.Case, lab: dict) -> list:
    """The lab's [[lesson]] verdicts, read from the compiled kernels as the grader reads them
    (no GPU needed), scored as if every correctness test passed: a case expected to be fully
    correct must keep every lesson's points, and each `fails` entry naming a lesson test
    (Lesson.<counter>/<kernel>) must name one that fails. Only the lessons of static counters:
    a profile counter's verdict needs the GPU (gpu_check)."""
    from grader import config, scoring
    from grader.policy.device import MAX_KERNELS
    # A profile counter's lesson needs the GPU's counters: gpu_check reads its verdicts.
    lessons = [e for e in config.load_lab_config(gc.REPO / "labs", case.lab).lessons
               if not e.profiled]
    if not lessons:
        return []
    kernels = (lab.get("policy") or {}).get("kernels") or []
    tests = [t for e in lessons
             for t in scoring.lesson_group(e, kernels, True, len(kernels) > MAX_KERNELS).tests]
    problems = []
    if case.want("correctness") == "full":
        problems += [f"a fully correct case would fail {t.name}" for t in tests if not t.passed]
    # A lesson with a speed gate (faster_than_fp32_peak) can fail on the GPU alone.
    offline = tuple(f"Lesson.{e.counter}" for e in lessons if not e.faster_than_fp32_peak)
    for part in case.spec.get("fails", []):
        static = part.startswith(offline)
        if static and not any(part in t.name and not t.passed for t in tests):
            problems.append(f"no lesson test named like '{part}' fails")
    return problems


def _why(lab: dict) -> str:
    """A short reason from the lab's result, for a mismatch."""
    parts = [lab.get("message") or ""]
    build = lab.get("build") or {}
    if build.get("log"):
        parts.append(build["log"])
    text = " | ".join(p.strip().replace("\n", " ") for p in parts if p and p.strip())
    return f": {text[:300]}" if text else ""


def lab_queue(cases: list) -> list:
    """The cases as one list per lab, each in corpus order, the labs with the most cases first:
    the order in which the graders side by side take labs. A grader takes the next lab when it
    is done with one (a lab's cases all to one grader: its judges are built once), so a lab
    that is slow per case does not leave the other graders idle, as fixed shares by count did
    (CI: 1056 s against 856 s for the cases' time over two)."""
    by_lab = {}
    for case in cases:
        by_lab.setdefault(case.lab, []).append(case)
    return [by_lab[lab] for lab in sorted(by_lab, key=lambda lab: -len(by_lab[lab]))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labs", nargs="+", metavar="LAB", help="only these labs (default: all)")
    ap.add_argument("--cases", nargs="+", metavar="NAME",
                    help="only these cases ('case' or 'lab/case')")
    ap.add_argument("--build-dir", type=Path, default=gc.REPO / "build" / "corpus-policy",
                    help="the shared build directory (default: build/corpus-policy; keep it two "
                         "levels below the repository: incbin_solution_asm counts on it)")
    ap.add_argument("--out", type=Path, default=gc.REPO / "build" / "corpus-policy-results",
                    help="staged submissions and results JSON (default: build/corpus-policy-results)")
    ap.add_argument("--jobs", "-j", type=int, default=min(2, os.cpu_count() or 1), metavar="N",
                    help="graders side by side, each with its labs and build directory "
                         "(default: 2, at most one per CPU)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs takes a whole number >= 1")
    labs = gc.resolve_labs(args.labs)
    cases = gc.load_corpus(labs, args.cases)
    if not cases:
        print("no corpus cases selected")
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    args.build_dir.mkdir(parents=True, exist_ok=True)
    hide_gpu = {"CUDA_VISIBLE_DEVICES": ""}
    t0 = time.monotonic()
    queue = lab_queue(cases)
    graders = min(args.jobs, len(queue))
    rows = {}
    done = []
    printing, taking = threading.Lock(), threading.Lock()

    def next_lab() -> list:
        with taking:
            return queue.pop(0) if queue else []

    def grade_labs(k: int) -> None:
        build_dir = args.build_dir if k == 0 else args.build_dir.with_name(
            f"{args.build_dir.name}-{k + 1}")
        build_dir.mkdir(parents=True, exist_ok=True)
        warm = False  # until one case has built, the next grading may build the whole harness
        while lab := next_lab():
            for case in lab:
                grade_case(case, build_dir, warm)
                warm |= rows[case.id]["got"] in ("no_gpu", "graded")

    def grade_case(case, build_dir: Path, warm: bool) -> None:
        root = gc.stage_case(case, args.out / "submissions" / f"{case.lab}-{case.name}")
        graded = gc.run_grader(gc.GradeArgs(labs=(case.lab,), submission=root,
                                            output=args.out / f"{case.lab}-{case.name}.json",
                                            build_dir=build_dir, performance=False),
                               limit_s=CASE_LIMIT_S if warm else FIRST_LIMIT_S, env=hide_gpu)
        row = check(case, graded)
        with printing:
            rows[case.id] = row
            done.append(case.id)
            print(f"[{time.monotonic() - t0:5.0f} s] "
                  f"{'ok ' if not row['problems'] else 'BAD'} {len(done):3d}/{len(cases)} "
                  f"{case.id} -> {row['got']} ({row['seconds']:.0f} s)", flush=True)

    with concurrent.futures.ThreadPoolExecutor(graders) as pool:
        for f in [pool.submit(grade_labs, k) for k in range(graders)]:
            f.result()
    rows = [rows[case.id] for case in cases]

    print("\n=== corpus policy check: case, expected build, lab status, policy rules, seconds ===")
    for r in rows:
        print(f"{'OK ' if not r['problems'] else 'BAD'} {r['case']:<52} {r['want']:<8} "
              f"{r['got']:<13} {','.join(r['rules']) or '-':<24} {r['seconds']:5.1f} s  "
              f"{'; '.join(r['problems'])}")
    failed = sum(bool(r["problems"]) for r in rows)
    print(f"wall time {time.monotonic() - t0:.0f} s")
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
