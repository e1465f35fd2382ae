"""Command line: python3 -m grader grade [LAB ...] [options]."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path

from grader import __version__
from grader.config import discover_labs, load_lab_config, resolve_labs
from grader.errors import (EXIT_BUILD, EXIT_INTERNAL, EXIT_NO_GPU, EXIT_OK, EXIT_USAGE,
                           GraderError)

REPO = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m grader",
                                description="Build, test and score CUDA lab submissions.")
    p.add_argument("--version", action="version", version=f"grader {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade a submission (default: your labs/ folder)",
                       description="Builds the submission's student files against the harness, "
                                   "runs public and hidden tests (each in its own process), then "
                                   "the benchmark, and scores them.")
    g.add_argument("labs", nargs="*", metavar="LAB",
                   help="labs to grade: '01', '01_naive_matmul' or 'naive_matmul' (default: all)")
    src = g.add_mutually_exclusive_group()
    src.add_argument("--submission", type=Path, metavar="DIR",
                     help="a directory shaped like labs/ (<DIR>/01_naive_matmul/matmul.cu ...); "
                          "default: this repository's labs/")
    src.add_argument("--solutions", action="store_true", help="grade the reference solutions")
    g.add_argument("--output", "-o", type=Path, default=Path("grade-results.json"),
                   help="where to write the JSON results (default: grade-results.json)")
    g.add_argument("--seed", type=int, help="seed for the hidden tests (default: a fresh one, "
                                            "recorded in the results; pass it to replay)")
    g.add_argument("--build-dir", type=Path, default=REPO / "build" / "grade",
                   help="build directory (default: build/grade)")
    g.add_argument("--jobs", "-j", type=int, default=None, help="parallel build jobs")
    g.add_argument("--no-performance", action="store_true", help="skip the benchmark")
    g.add_argument("--test-timeout", type=float, metavar="S",
                   help="seconds per test process (default: the lab's grading.toml)")
    g.add_argument("--quiet", "-q", action="store_true", help="print only the final table")
    sub.add_parser("list", help="list the labs")
    return p


def cmd_grade(args) -> int:
    from grader import grade, report  # imported late: `list` and --help stay light

    if args.solutions:
        submission = REPO / "solutions"
    elif args.submission is not None:
        submission = args.submission.resolve()
    else:
        submission = REPO / "labs"
    if not submission.is_dir():
        raise GraderError(f"submission directory not found: {submission}")
    labs = resolve_labs(REPO / "labs", args.labs)
    if not labs:
        raise GraderError("no labs to grade (no labs/*/grading.toml)")
    configs = [load_lab_config(REPO / "labs", lab) for lab in labs]
    if args.test_timeout is not None and not args.test_timeout > 0:
        raise GraderError(f"--test-timeout must be a positive number of seconds, got {args.test_timeout}")
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31 - 1) + 1
    args.build_dir.mkdir(parents=True, exist_ok=True)

    def progress(msg: str) -> None:
        if not args.quiet and sys.stderr.isatty():
            print(f"\r\033[K... {msg}", end="", file=sys.stderr, flush=True)
        elif not args.quiet:
            print(f"... {msg}", file=sys.stderr, flush=True)

    result = grade.grade(REPO, submission, configs, seed, args.build_dir.resolve(), args.jobs,
                         not args.no_performance, progress, args.test_timeout)
    if not args.quiet and sys.stderr.isatty():
        print("\r\033[K", end="", file=sys.stderr)
    args.output.write_text(result.to_json() + "\n", encoding="utf-8")
    print(report.render(result, str(args.output)))
    if result.status == "no_gpu":
        return EXIT_NO_GPU
    if result.status == "build_failed":
        return EXIT_BUILD
    if result.status == "missing_files":
        return EXIT_USAGE
    if result.status == "error":
        return EXIT_INTERNAL
    return EXIT_OK


def cmd_list(_args) -> int:
    for lab in discover_labs(REPO / "labs"):
        cfg = load_lab_config(REPO / "labs", lab)
        print(f"{lab:<24} {cfg.title:<32} {cfg.max_points:g} points, "
              f"edit: labs/{lab}/{', '.join(cfg.student_files)}")
    return EXIT_OK


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {"grade": cmd_grade, "list": cmd_list}[args.command](args)
    except GraderError as e:
        print(f"grader: error: {e.message}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("grader: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # a bug in the grader: say so plainly, keep the trace for the log
        import traceback
        print(f"grader: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        if os.environ.get("GRADER_DEBUG"):
            traceback.print_exc()
        return EXIT_INTERNAL
