#!/usr/bin/env python3
"""A CTest check of every lab, student release included: no GPU needed.

  python3 cmake/check_benchmarks.py LAB_DIR BENCH_BINARY

Every [[performance]] entry of LAB_DIR/grading.toml must name a benchmark that BENCH_BINARY (the
lab's benchmark judge) has: it lists them with --labkit-list-benchmarks, which makes the
benchmarks' specs (data) and runs nothing. A misspelt or renamed benchmark would otherwise be
found only on a GPU, at grading time, as a benchmark that "did not run".

Exits 0 when every entry names one, 1 naming each that does not (with the names there are), 2
when the lab or the binary cannot be read or run.
"""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grader import config  # noqa: E402
from grader.errors import GraderError  # noqa: E402


def main(argv: list) -> int:
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2
    lab_dir, binary = Path(argv[1]), Path(argv[2])
    try:
        cfg = config.load_lab_config(lab_dir.parent, lab_dir.name)
    except GraderError as e:
        print(f"check_benchmarks: {lab_dir}: {e.message}", file=sys.stderr)
        return 2
    try:
        proc = subprocess.run([str(binary), "--labkit-list-benchmarks"], capture_output=True,
                              text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"check_benchmarks: could not run {binary}: {e}", file=sys.stderr)
        return 2
    if proc.returncode != 0:
        print(f"check_benchmarks: {binary} --labkit-list-benchmarks exited {proc.returncode}:\n"
              f"{proc.stderr[-2000:]}", file=sys.stderr)
        return 2
    names = [line for line in proc.stdout.splitlines() if line.strip()]
    missing = [p for p in cfg.performance if p.benchmark not in names]
    for p in missing:
        print(f"{lab_dir.name}: grading.toml's performance entry '{p.name}' names the benchmark "
              f"'{p.benchmark}', which {binary.name} does not have", file=sys.stderr)
    if missing:
        print(f"the benchmarks {binary.name} has:\n  " + "\n  ".join(names), file=sys.stderr)
        return 1
    print(f"{lab_dir.name}: {len(cfg.performance)} performance entries, each names one of the "
          f"{len(names)} benchmarks of {binary.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
