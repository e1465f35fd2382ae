#!/usr/bin/env python3
"""On a GPU machine: prove the suite works end to end, and print a short table.

  1. grade the reference solutions: every lab must score full marks;
  2. grade the starters (labs/): every lab must score zero correctness;
  3. grade every case of the corpus tests/submissions/ (wrong, cheating and unusual
     submissions) and compare each verdict with tests/submissions/cases.toml.
The CTest suite itself runs separately (cmake --workflow --preset test).

  python3 scripts/gpu_check.py [--out DIR] [--workers N] [--cases NAME ...]
Exit status 0 when every check holds, 1 otherwise."""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import queue
import subprocess
import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SEED = 20261121


def grade(args: list, out: Path, build_dir: Path, extra: list = ()) -> tuple:
    cmd = [sys.executable, "-m", "grader", "grade", "-q", "--seed", str(SEED), "-o", str(out),
           "--build-dir", str(build_dir), *extra, *args]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    result = json.loads(out.read_text()) if out.is_file() else None
    return proc.returncode, result, proc.stdout + proc.stderr


def correctness(lab: dict) -> tuple:
    got = sum(g["points"] for g in lab["groups"])
    top = sum(g["max_points"] for g in lab["groups"])
    return got, top


def verdict(got: float, top: float) -> str:
    if top > 0 and got >= top - 1e-6:
        return "full"
    return "zero" if got <= 1e-6 else "partial"


def check_case(name: str, spec: dict, build_dir: Path, out_dir: Path, timeout: float) -> dict:
    rc, result, output = grade(["--submission", str(REPO / "tests/submissions" / name),
                                spec["lab"]], out_dir / f"case-{name}.json", build_dir,
                               ["--test-timeout", str(timeout)])
    row = {"case": name, "problems": []}
    if result is None:
        row["problems"].append(f"no results file (exit {rc}): {output[-300:]}")
        return row
    lab = result["labs"][0]
    build_ok = lab["build"] is not None and lab["build"]["ok"]
    row["build"] = "ok" if build_ok else "fail"
    got, top = correctness(lab)
    row["correctness"] = verdict(got, top) if build_ok else "zero"
    perf = lab.get("performance") or {}
    row["performance"] = verdict(perf.get("points", 0), perf.get("max_points", 0))
    row["points"] = lab["points"]
    row["metric"] = perf.get("metric")
    for key in ("build", "correctness", "performance"):
        want = spec.get(key, "any")
        if want != "any" and want != row[key]:
            row["problems"].append(f"{key}: expected {want}, got {row[key]}")
    failing = [t for g in lab["groups"] for t in g["tests"] if t["status"] != "passed"]
    for part in spec.get("fails", []):
        if not any(part in t["name"] for t in failing):
            row["problems"].append(f"no failing test named like '{part}'")
    text = "\n".join([t["message"] for t in failing] + [lab.get("message", "")]
                     + [(lab["build"] or {}).get("log", "") if lab["build"] else ""]
                     + [perf.get("message", "")])
    for part in spec.get("feedback", []):
        if part.lower() not in text.lower():
            row["problems"].append(f"feedback lacks '{part}'")
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=REPO / "build" / "gpu-check")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--cases", nargs="*")
    ap.add_argument("--case-timeout", type=float, default=30.0, help="seconds per test process")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    ok = True
    lines = []

    t0 = time.monotonic()
    rc, sol, text = grade(["--solutions"], args.out / "solutions.json", REPO / "build" / "check-0")
    print(text, flush=True)
    if sol is None or sol["status"] != "graded":
        print(f"solutions were not graded (exit {rc})")
        return 1
    for lab in sol["labs"]:
        perf = lab.get("performance") or {}
        c = perf.get("counters", {})
        full = lab["points"] >= lab["max_points"] - 1e-6
        ok &= full
        lines.append(f"solution {lab['lab']:<18} {lab['points']:6.2f} / {lab['max_points']:<5g} "
                     f"{'OK' if full else 'NOT FULL MARKS'}  "
                     f"{c.get('GFLOPS', 0):8.1f} GFLOP/s vs cuBLAS {c.get('cublas_GFLOPS', 0):8.1f}"
                     f"  ratio {perf.get('metric') or 0:.3f}  (spread {c.get('student_iqr', 0):.3f}"
                     f" / {c.get('cublas_iqr', 0):.3f})")

    rc, start, text = grade([], args.out / "starters.json", REPO / "build" / "check-0")
    for lab in (start or {}).get("labs", []):
        got, top = correctness(lab)
        zero = got == 0
        ok &= zero
        lines.append(f"starter  {lab['lab']:<18} correctness {got:6.2f} / {top:<5g} "
                     f"{'OK' if zero else 'NOT ZERO'}")
    if start is None:
        ok = False
        lines.append(f"starters were not graded (exit {rc}): {text[-300:]}")
    print(f"[{time.monotonic() - t0:.0f} s] solutions and starters done", flush=True)

    cases_file = REPO / "tests/submissions/cases.toml"
    cases = tomllib.loads(cases_file.read_text()) if cases_file.is_file() else {}
    names = args.cases or sorted(cases)
    # Each worker owns a build directory: only the student file recompiles between cases.
    slots = queue.Queue()
    for i in range(args.workers):
        slots.put(REPO / "build" / f"check-{i}")

    def run_case(name: str) -> dict:
        build_dir = slots.get()
        # A case graded alone has the GPU to itself: a short limit still tells a hang.
        timeout = min(args.case_timeout, 10.0) if cases[name].get("alone") else args.case_timeout
        try:
            return check_case(name, cases[name], build_dir, args.out, timeout)
        finally:
            slots.put(build_dir)

    # Cases whose kernels hang share the GPU badly (time slicing slows every other process):
    # they run last, one at a time.
    together = [n for n in names if not cases[n].get("alone")]
    alone = [n for n in names if cases[n].get("alone")]
    with concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
        rows = list(pool.map(run_case, together))
    rows += [run_case(n) for n in alone]
    rows.sort(key=lambda r: r["case"])
    bad = [r for r in rows if r["problems"]]
    ok &= not bad
    print(f"[{time.monotonic() - t0:.0f} s] corpus done", flush=True)

    print("\n=== corpus: case, build, correctness, performance, points, metric ===")
    for r in rows:
        metric = f"{r['metric']:.3f}" if r.get("metric") is not None else "-"
        print(f"{'OK ' if not r['problems'] else 'BAD'} {r['case']:<40} {r.get('build', '?'):<5}"
              f" {r.get('correctness', '?'):<8} {r.get('performance', '?'):<8}"
              f" {r.get('points', 0):7.2f} {metric:>7}  {'; '.join(r['problems'])}")
    print("\n=== summary ===")
    for line in lines:
        print(line)
    print(f"corpus: {len(rows) - len(bad)} of {len(rows)} cases got the expected verdict")
    print(f"gpu-check: {'PASS' if ok else 'FAIL'} in {time.monotonic() - t0:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
