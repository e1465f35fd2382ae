#!/usr/bin/env python3
"""A stand-in for `python3 -m grader grade`, for the batch's tests and the Slurm and Gradescope
recipes' tests (no GPU, no compiler). Not a test module itself.

It takes the flags the batch passes (-q, -o, --build-dir, --submission, --jobs, --seed, ...,
then lab names), reads each lab's student files from the submission as the grader would, and
acts on markers in them:
  CRASH       exits 1 without writing results (a crash of the grader)
  SEGV        kills itself with SIGSEGV
  HANG        sleeps for an hour (the batch's --timeout must stop it)
  BUILDFAIL   writes results with the lab 'build_failed', exits 4
  POINTS=<n>  the lab's points (default 100)
Otherwise it "builds" for $FAKE_GRADE_BUILD_S seconds, then holds the GPU lock
(grader/gpulock.py: $LABS_GPU_LOCK, shared; the whole grading's exclusive hold, as grade.py
takes it, when $LABS_GPU_LOCK_EXCLUSIVE=1) for
$FAKE_GRADE_GPU_S seconds, appending {"sub", "gpu", "start", "end", "pid"} to $FAKE_GRADE_LOG,
and writes a results file with the real classes (grader/results.py). Every call appends
{"sub", "pid", "argv"} to $FAKE_GRADE_CALLS. With $FAKE_GRADE_NO_GPU=1 it behaves as the real
grader on a machine without a GPU: a lab that does not build is build_failed; when another one
built, the grading is no_gpu (with the real grader's messages), exit 3; else build_failed,
exit 4.
A build directory used by two fakes at once is reported (exit 1, 'BUILD DIR SHARED').
"""

import argparse
import json
import os
import re
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from grader import gpulock  # noqa: E402
from grader.config import discover_labs, load_lab_config  # noqa: E402
from grader.results import GradeResult, GroupResult, LabResult, TestResult  # noqa: E402


def append(env: str, record: dict) -> None:
    path = os.environ.get(env)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-q", action="store_true")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--submission", required=True)
    ap.add_argument("--jobs")
    ap.add_argument("--seed")
    ap.add_argument("--secret-file")
    ap.add_argument("--no-performance", action="store_true")
    ap.add_argument("--no-sanitize", action="store_true")
    ap.add_argument("--race-audit", action="store_true")
    ap.add_argument("--gradescope")
    ap.add_argument("--junit")
    ap.add_argument("--markdown")
    ap.add_argument("labs", nargs="*")
    args = ap.parse_args()
    sub = Path(args.submission)
    name = sub.parent.name if sub.name == "labs" else sub.name
    append("FAKE_GRADE_CALLS", {"sub": name, "pid": os.getpid(), "argv": sys.argv[1:]})

    import fcntl
    Path(args.build_dir).mkdir(parents=True, exist_ok=True)
    with open(Path(args.build_dir) / "fake-in-use", "a+") as marker:
        try:
            fcntl.flock(marker, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            print(f"BUILD DIR SHARED: {args.build_dir}", file=sys.stderr)
            return 1
        return grade(args, sub, name)


def grade(args, sub: Path, name: str) -> int:
    labs = args.labs or discover_labs(REPO / "labs")
    result = GradeResult(submission=str(sub), seed=None, grader_version="fake")
    text = {}
    for lab in labs:
        cfg = load_lab_config(REPO / "labs", lab)
        parts = []
        for f in cfg.student_files:
            try:
                parts.append((sub / lab / f).read_text(errors="replace"))
            except OSError:
                parts.append("MISSING")
        text[lab] = "\n".join(parts)
        result.labs.append(LabResult(lab=lab, title=cfg.title, max_points=100.0))
    everything = "\n".join(text.values())
    if "CRASH" in everything:
        print("Traceback (most recent call last): a fake crash", file=sys.stderr)
        return 1
    if "SEGV" in everything:
        os.kill(os.getpid(), signal.SIGSEGV)
    if "HANG" in everything:
        time.sleep(3600)
    time.sleep(float(os.environ.get("FAKE_GRADE_BUILD_S", "0")))
    failed = False
    for lab in result.labs:
        if "BUILDFAIL" in text[lab.lab] or "MISSING" in text[lab.lab]:
            lab.status, lab.message = "build_failed", "matmul.cu:3: error: a fake build error"
            failed = True
    built = [lab for lab in result.labs if lab.status != "build_failed"]
    if os.environ.get("FAKE_GRADE_NO_GPU") == "1" and built:
        why = "no CUDA GPU: no NVIDIA driver on this machine (fake)"   # as grade.py words it
        for lab in built:
            lab.status = "no_gpu"
            lab.message = ("The build succeeded; GPU tests and benchmarks were not run and no "
                           "points were awarded (no GPU).")
        result.status, result.message, result.exit_code = "no_gpu", why, 3
        Path(args.output).write_text(result.to_json() + "\n")
        return 3
    if not failed:
        hold = (gpulock.whole_grading() if gpulock.whole_grading_requested()
                else gpulock.gpu_lock(shared=True))
        with hold:
            start = time.time()
            time.sleep(float(os.environ.get("FAKE_GRADE_GPU_S", "0")))
            append("FAKE_GRADE_LOG", {"sub": name, "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
                                      "lock": os.environ.get("LABS_GPU_LOCK"), "start": start,
                                      "end": time.time(), "pid": os.getpid()})
        for lab in result.labs:
            m = re.search(r"POINTS=([0-9.]+)", text[lab.lab])
            lab.points = float(m.group(1)) if m else 100.0
            lab.groups = [GroupResult("public", "*Public*", 100.0, points=lab.points,
                                      tests=[TestResult("Public.T0", "passed" if lab.points
                                                        else "failed")])]
    else:
        result.status, result.exit_code = "build_failed", 4
        result.message = "; ".join(f"{lab.lab}: {lab.message}" for lab in result.labs
                                   if lab.status != "graded")
    Path(args.output).write_text(result.to_json() + "\n")
    if args.gradescope:
        from grader import reports
        Path(args.gradescope).write_text(reports.gradescope_json(result))
    print(f"fake grade of {name}: {result.points}/{result.max_points}")
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
