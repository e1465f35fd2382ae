"""Command line: python3 -m grader grade [LAB ...] [options] | report RESULTS.json... | list |
batch SUBMISSIONS -o OUT | batch-merge OUT.

Wiring only: each command parses its arguments into typed values, checks the files it will
write, calls the grader's API (grader/api.py: grade and list; grader/batch.py; grader/reports.py)
and prints what came back. The `grade` command's arguments are grader/grade_args.py's, which
also builds the command line of a grader process for those that run one (batch, gpu_check)."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tempfile
from pathlib import Path

from grader import __version__, grade_args
from grader.course import load_course
from grader.errors import EXIT_INTERNAL, EXIT_NO_GPU, EXIT_OK, EXIT_USAGE, GraderError
from grader.grade_args import flag, fraction_arg, jobs_arg, seconds_arg, seed_arg
from grader.seeds import secret_notice

REPO = Path(__file__).resolve().parent.parent


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors worded like the grader's own ('grader: error: ...')."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"grader: error: {message}\n")


# What each command's exit status means (grader/errors.py), printed by --help.
GRADE_EXIT = ("exit status: 0 graded (whatever the score); 1 the grader could not finish (a "
              "lab's error, a bug); 2 bad arguments, or the submission's files refused; 3 "
              "built and checked, but no GPU to run on (no GPU points); 4 a lab did not build "
              "or its compiled code was refused by the policy (0 for that lab, results still "
              "written); 130 interrupted.")
BATCH_EXIT = ("exit status: 0 every submission graded (whatever its score); 1 some grading "
              "failed (crashed or timed out: listed, and tried again on the next run); 2 bad "
              "arguments, or a submission refused (a symbolic link); 3 some only built and "
              "checked, without a GPU; 130 interrupted.")


def parser() -> argparse.ArgumentParser:
    """The command line's parser: every command and its arguments."""
    p = _Parser(prog="python3 -m grader",
                description="Build, test and score CUDA lab submissions.",
                epilog="`python3 -m grader COMMAND --help` says what each command takes and "
                       "what its exit status means.")
    p.add_argument("--version", action="version", version=f"grader {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade a submission (default: your labs/ folder)",
                       description="Builds the submission's student files against the harness, "
                                   "checks the compiled code against the lab's policy, runs the "
                                   "public and hidden tests and the benchmarks in judge "
                                   "processes that start the student's code in a worker of its "
                                   "own, and scores them.",
                       epilog=GRADE_EXIT)
    grade_args.add_arguments(g)
    r = sub.add_parser("report", help="render reports from results files",
                       description="Renders results files written by `grade` as Gradescope's "
                                   "results.json, JUnit XML, a Markdown summary or a CSV "
                                   "gradebook (docs/reports.md). Without an output option, "
                                   "prints the console report of each file.")
    r.add_argument("results", nargs="+", type=Path, metavar="RESULTS.json",
                   help="results files written by `python3 -m grader grade -o`")
    grade_args.add_report_flags(r, ("gradescope", "junit", "markdown", "csv", "html",
                                    "class_page"), stdout=True)
    r.add_argument("--name-from", choices=("submission", "folder", "file"), default="submission",
                   help="name of a submission in the CSV and the Markdown: the submission path "
                        "recorded in its results (default), the name of the folder holding the "
                        "results file, or the results file's name less .json")
    sub.add_parser("list", help="list the labs")
    _batch_parsers(sub)
    return p


def _batch_parsers(sub) -> None:
    b = sub.add_parser("batch", help="grade a folder of submissions (resumable; --shard for "
                                     "a Slurm array)",
                       description="Grades every submission folder of SUBMISSIONS (a student "
                                   "repository, <sub>/labs/<lab>/..., or a folder shaped like "
                                   "labs/) with one grader process each: builds in parallel, "
                                   "the GPU part one submission at a time per GPU. Resumes: a "
                                   "submission whose graded files have not changed since its "
                                   "last grading is skipped. Writes OUT/results/<name>.json, "
                                   "OUT/gradebook.csv and, with the HTML reports, "
                                   "OUT/class.html (docs/instructor-guide.md).",
                       epilog=BATCH_EXIT)
    b.add_argument("submissions", type=Path, metavar="SUBMISSIONS",
                   help="a folder holding one folder per submission")
    b.add_argument("--output", "-o", type=Path, required=True, metavar="OUT",
                   help="the batch's folder: results, logs, state, gradebook (created)")
    b.add_argument("--labs", nargs="+", metavar="LAB", default=[],
                   help="labs to grade (default: all)")
    b.add_argument("--gpus", metavar="IDS",
                   help="CUDA devices to use, e.g. 0,1 (default: $CUDA_VISIBLE_DEVICES, else "
                        "every GPU nvidia-smi lists); each is a worker of its own")
    b.add_argument("--jobs", "-j", type=jobs_arg, default=None,
                   help="grader processes at once (default: 3 per GPU, at most one per CPU)")
    b.add_argument("--build-jobs", type=jobs_arg, default=None,
                   help="build jobs of each grader process (default: CPUs / --jobs)")
    b.add_argument("--shard", metavar="I/N",
                   help="grade only shard I of N (0 <= I < N: every N-th submission in name "
                        "order, from the I-th); the gradebook is then left to batch-merge")
    b.add_argument("--seed", type=seed_arg, metavar="N", help="as for grade")
    b.add_argument("--secret-file", type=Path, metavar="PATH",
                   help=argparse.SUPPRESS)   # no longer used: a notice (grader/seeds.py)
    b.add_argument("--no-performance", action="store_true", help="as for grade")
    b.add_argument("--no-sanitize", action="store_true", help="as for grade")
    b.add_argument("--race-audit-fraction", type=fraction_arg, metavar="F", default=0.0,
                   help="grade this share of the submissions (0 to 1, default 0) with grade's "
                        "--race-audit, each drawn at random when its grading starts: a spot "
                        "check of races at the benchmarks' sizes that no student can predict; "
                        "minutes more per audited grading")
    b.add_argument("--timeout", type=seconds_arg, metavar="S",
                   help="seconds one submission's grading may take before it is stopped and "
                        "listed as failed (default: 3600)")
    b.add_argument("--build-root", type=Path, metavar="DIR",
                   help="where the reused build directories go (default: build/batch)")
    m = sub.add_parser("batch-merge", help="one gradebook from the results of batch shards",
                       description="Writes OUT/gradebook.csv (and OUT/class.html, with the HTML "
                                   "reports) over every submission graded into OUT, e.g. by "
                                   "the tasks of a Slurm array; lists those that failed and, "
                                   "with --submissions, those never graded. Exit 0 when every "
                                   "submission has a final result, 2 when some were refused (a "
                                   "symbolic link), 3 when the others were only built and "
                                   "checked without a GPU, 1 otherwise.")
    m.add_argument("output", type=Path, metavar="OUT", help="the batch's folder")
    m.add_argument("--submissions", type=Path, metavar="SUBMISSIONS",
                   help="the submissions folder: every submission in it gets a row")


def check_output_path(path: Path, flag: str = "--output",
                      example: str = "grade-results.json") -> Path:
    """-o (or `flag`) must name a file we may create or replace: its folder exists and is
    writable, and it is not a directory, a link (writing through it would land elsewhere) or a
    special file."""
    path = Path(os.path.abspath(path))
    parent = path.parent
    if not parent.is_dir():
        raise GraderError(f"{flag}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise GraderError(f"{flag}: the folder {parent} is not writable")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        _probe_writable(parent, flag)
        return path
    if stat.S_ISLNK(st.st_mode):
        raise GraderError(f"{flag}: {path} is a symbolic link; name a plain file")
    if stat.S_ISDIR(st.st_mode):
        raise GraderError(f"{flag}: {path} is a directory; name a file, e.g. {path / example}")
    if not stat.S_ISREG(st.st_mode):
        raise GraderError(f"{flag}: {path} exists and is not a regular file")
    _probe_writable(parent, flag)
    return path


def _probe_writable(folder: Path, flag: str) -> None:
    """Results are written beside their name and renamed over it (write_output): that must work
    in `folder` before any grading starts, not fail after it (a read-only mount, /proc, a
    full disk, access the permission bits do not show)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".grader-probe.", dir=folder)
    except OSError as e:
        raise GraderError(f"{flag}: cannot write in {folder}: {e.strerror}") from None
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass


_EXAMPLES = {"gradescope": "results.json", "junit": "junit.xml", "markdown": "summary.md",
             "csv": "gradebook.csv", "html": "report.html", "class_page": "class.html"}


def report_targets(args, formats, taken: dict, stdout: bool = False) -> dict:
    """{format: checked path, or '-' for standard output} of the report options given. Two
    outputs may not name one file, nor an output a file in `taken`, {path: what it is} (the
    results JSON; the results files that `report` reads)."""
    targets, seen = {}, {os.path.abspath(p): what for p, what in taken.items()}
    for fmt in formats:
        path = getattr(args, fmt, None)
        if path is None:
            continue
        if str(path) == "-":
            if not stdout:
                raise GraderError(f"{flag(fmt)}: name a file (standard output is the console "
                                  f"report's; `python3 -m grader report` can write to it)")
            if "-" in targets.values():
                raise GraderError("only one report can go to standard output ('-')")
            targets[fmt] = "-"
            continue
        checked = check_output_path(path, flag(fmt), _EXAMPLES[fmt])
        if str(checked) in seen:
            raise GraderError(f"{flag(fmt)}: {checked} is also {seen[str(checked)]}; name another "
                              f"file")
        seen[str(checked)] = flag(fmt)
        targets[fmt] = checked
    if any(fmt in ("html", "class_page") for fmt in targets):
        from grader import html_report
        html_report.require_matplotlib()   # exit 2 now, naming the install, not after grading
    return targets


def write_reports(named: list, targets: dict, written: list) -> list:
    """Writes every report of `targets`, Gradescope's first, appending each format written to
    `written`; returns the errors, one line each, after trying them all (one that fails does
    not stop the others)."""
    from grader import reports
    errors = []
    for fmt in sorted(targets, key=lambda f: f != "gradescope"):
        try:
            text = reports.render(fmt, named)
        except Exception as e:   # a bug in a renderer: the other reports are still written
            errors.append(f"{flag(fmt)}: the report could not be rendered: "
                          f"{type(e).__name__}: {e}")
            continue
        try:
            if targets[fmt] == "-":
                sys.stdout.write(text)
                sys.stdout.flush()
            else:
                write_output(targets[fmt], text)
        except GraderError as e:
            errors.append(f"{flag(fmt)}: {e.message}")
        except OSError as e:
            errors.append(f"{flag(fmt)}: cannot write to standard output: {e.strerror}")
        else:
            written.append(fmt)
    return errors


def with_gradescope_fallback(command, args) -> int:
    """Runs command(args, written); should it fail before writing --gradescope, Gradescope
    still gets a valid results.json (score 0, the error as its message). Best effort: the
    command's own error is what is reported."""
    written = []
    try:
        return command(args, written)
    except Exception as e:
        path = getattr(args, "gradescope", None)
        if path is not None and "gradescope" not in written:
            from grader import reports
            message = (e.message if isinstance(e, GraderError)
                       else f"internal error of the grader: {type(e).__name__}: {e}")
            text = reports.gradescope_json(None, message)
            try:
                if str(path) == "-":
                    sys.stdout.write(text)
                else:
                    write_output(check_output_path(path, "--gradescope"), text)
            except (GraderError, OSError):
                pass
        raise


def write_output(path: Path, text: str) -> None:
    """Written beside its final name, then renamed over it: a link put there meanwhile is
    replaced, never written through, and a reader never sees half a file."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as e:
        raise GraderError(f"cannot write the results to {path}: {e.strerror}") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise GraderError(f"cannot write the results to {path}: {e.strerror}") from None


def say_secret_unused(secret_file: Path | None) -> None:
    """One line on standard error for an instructor who still names a secret: seeds are drawn
    from the system's entropy now, and a secret is accepted but not used (grader/seeds.py)."""
    notice = secret_notice(secret_file)
    if notice:
        print(f"grader: notice: {notice}", file=sys.stderr, flush=True)


def cmd_grade(args: grade_args.GradeArgs) -> int:
    """Grades; whatever goes wrong, --gradescope gets a valid results.json."""
    return with_gradescope_fallback(_grade, args)


def _grade(args: grade_args.GradeArgs, written: list) -> int:
    """One grading per results file at a time: a second one is refused (grader/outlock.py)."""
    from grader import outlock
    output = check_output_path(args.output)
    with outlock.output_lock(output):
        return _grade_into(args, written, output)


def _grade_into(args: grade_args.GradeArgs, written: list, output: Path) -> int:
    from grader import api, console_report, grade  # imported late: `list` and --help stay light

    targets = report_targets(args, grade_args.REPORTS,
                             taken={output: "the results JSON (--output)"})
    say_secret_unused(args.secret_file)
    options = args.options()
    course = load_course(REPO)

    def notice(msg: str) -> None:
        """A line shown even with --quiet (this grading waits for another one)."""
        clear = "\r\033[K" if not args.quiet and sys.stderr.isatty() else ""
        print(f"{clear}grader: {msg}", file=sys.stderr, flush=True)

    def progress(msg: str) -> None:
        if not args.quiet and sys.stderr.isatty():
            print(f"\r\033[K... {msg}", end="", file=sys.stderr, flush=True)
        elif not args.quiet:
            print(f"... {msg}", file=sys.stderr, flush=True)

    def save(result) -> list:
        """The JSON, then the reports, each tried whatever became of the others."""
        errors = []
        try:
            write_output(output, result.to_json() + "\n")
        except GraderError as e:
            errors.append(e.message)
        return errors + write_reports([(result.submission, result)], targets, written)

    try:
        result = api.grade(api.SOLUTIONS if args.solutions else args.submission, args.labs,
                           options, build_dir=args.build_dir, progress=progress, notice=notice)
    except grade.GradeCrashed as e:
        for message in save(e.result):   # what was recorded, for the log
            print(f"grader: error: {message}", file=sys.stderr)
        raise e.__cause__ from None
    finally:
        if not args.quiet and sys.stderr.isatty():
            print("\r\033[K", end="", file=sys.stderr)
    errors = save(result)
    print(console_report.render(result, str(args.output), times=not args.quiet))
    if result.status == "no_gpu":
        print(f"For a graded run: {course.graded_run_hint}")
    if result.status == "error" and result.message:
        print(f"grader: error: {result.message}", file=sys.stderr)
    for message in errors:
        print(f"grader: error: {message}", file=sys.stderr)
    if errors:
        return result.exit_code or EXIT_INTERNAL
    return result.exit_code


def cmd_report(args) -> int:
    """Renders results files; one that cannot be read is an error (exit 2), and --gradescope
    still gets a valid results.json saying so."""
    return with_gradescope_fallback(_report, args)


def _report(args, written: list) -> int:
    from grader import console_report, reports

    single = [f for f in reports.SINGLE if getattr(args, f) is not None]
    if single and len(args.results) != 1:
        raise GraderError(f"{flag(single[0])} renders one results file, got "
                          f"{len(args.results)} (--markdown, --csv and --class-page take several)")
    targets = report_targets(args, reports.FORMATS, stdout=True,
                             taken={p: "a results file read" for p in args.results})
    named = []
    for path in args.results:
        result = reports.load_results(path)
        named.append((reports.submission_name(path, result, args.name_from), result))
    if not targets:
        print("\n\n".join(console_report.render(r, str(p))
                          for (_, r), p in zip(named, args.results)))
        return EXIT_OK
    errors = write_reports(named, targets, written)
    for message in errors:
        print(f"grader: error: {message}", file=sys.stderr)
    return EXIT_INTERNAL if errors else EXIT_OK


def cmd_list(_args) -> int:
    from grader import api
    for cfg in api.lab_configs():
        print(f"{cfg.name:<24} {cfg.title:<32} {cfg.max_points:g} points, "
              f"edit: labs/{cfg.name}/{', '.join(cfg.student_files)}")
    return EXIT_OK


def cmd_batch(args) -> int:
    from grader import api, batch
    configs = api.lab_configs(args.labs)
    if not configs:
        raise GraderError("no labs to grade (no labs/*/grading.toml)")
    labs = [cfg.name for cfg in configs]
    subs = batch.discover(args.submissions)
    total = len(subs)
    all_subs = subs
    if args.shard:
        try:
            index, count = batch.parse_shard(args.shard)
        except ValueError as e:
            raise GraderError(f"--shard: {e}") from None
        subs = batch.shard(subs, index, count)
    batch.refuse_slips(args.submissions, all_subs, api.all_lab_names())
    batch.refuse_output(args.output, args.submissions, api.REPO)
    try:
        gpus = batch.parse_gpus(args.gpus) if args.gpus else batch.detect_gpus()
    except ValueError as e:
        raise GraderError(str(e)) from None
    absent = batch.absent_gpus(gpus) if args.gpus else []
    if absent:
        raise GraderError(f"--gpus {args.gpus}: this machine has no GPU {', '.join(absent)} "
                          f"(nvidia-smi -L lists those it has; ids count from 0)")
    jobs = args.jobs or batch.default_jobs(gpus)
    say_secret_unused(args.secret_file)
    opts = batch.Options(labs=labs, configs=configs, jobs=jobs, gpus=gpus,
                         build_jobs=args.build_jobs or max(1, (os.cpu_count() or 1) // jobs),
                         seed=args.seed,
                         no_performance=args.no_performance, no_sanitize=args.no_sanitize,
                         race_audit_fraction=args.race_audit_fraction,
                         timeout_s=args.timeout or batch.DEFAULT_TIMEOUT_S)
    if args.build_root is not None:
        opts.build_root = args.build_root.resolve()
    layout = batch.Layout(args.output.resolve())
    layout.make()
    where = f"shard {args.shard} of " if args.shard else ""
    print(f"batch: {len(subs)} submissions ({where}{total} in {args.submissions}), labs "
          f"{', '.join(labs)}; GPUs {', '.join(g or 'any' for g in gpus)}; {jobs} at once",
          flush=True)
    try:
        summary = batch.run_batch(subs, layout, opts, total_in_folder=total)
    except batch.Interrupted as e:
        print(f"batch: interrupted ({e}); every grader stopped. What finished is kept: run the "
              f"same command again to resume.", file=sys.stderr)
        return 130
    name = f"summary-shard-{args.shard.replace('/', '-of-')}.json" if args.shard else "summary.json"
    batch.atomic_write(layout.out / name, json.dumps(summary, indent=2) + "\n")
    rate = summary["per_hour"]
    no_gpu = summary["no_gpu"]
    refused = summary["refused"]
    print(f"batch: {summary['graded']} graded, {len(summary['failed'])} failed, "
          + (f"{len(refused)} refused, " if refused else "")
          + (f"{len(no_gpu)} not graded on a GPU, " if no_gpu else "")
          + f"{summary['skipped']} already done, in {summary['wall_s']:.0f} s"
          + (f": {rate:g} submissions per hour" if rate else ""))
    for f in summary["failed"]:
        print(f"batch: FAILED {f['name']}: {f['outcome']}: {f['reason']} (log: "
              f"{layout.out / f['log']})")
    for f in refused:
        print(f"batch: REFUSED {f['name']}: {f['reason']}")
    for f in no_gpu:    # reason: "built and checked, NOT GRADED ON A GPU (no CUDA GPU: ...)"
        print(f"batch: {f['name']}: {f['reason']}")
    if no_gpu:
        print("batch: run the same command on a machine with a GPU to grade "
              + ("it" if len(no_gpu) == 1 else "them") + " (what is graded is kept)")
    if not args.shard:
        merged = batch.merge(layout, [s.name for s in subs])
        print(f"batch: gradebook {merged['csv']}"
              + (f", class page {merged['class_page']}" if merged["class_page"] else ""))
    if summary["failed"]:
        return EXIT_INTERNAL
    if refused:
        return EXIT_USAGE
    return EXIT_NO_GPU if no_gpu else EXIT_OK


def cmd_batch_merge(args) -> int:
    from grader import batch
    layout = batch.Layout(args.output.resolve())
    if not layout.state.is_dir():
        raise GraderError(f"{layout.out} holds no batch results (no state/ folder)")
    names = None
    if args.submissions is not None:
        names = [s.name for s in batch.discover(args.submissions)]
    merged = batch.merge(layout, names, command="batch-merge")
    print(f"batch-merge: {merged['rows']} submissions, gradebook {merged['csv']}"
          + (f", class page {merged['class_page']}" if merged["class_page"] else ""))
    states = layout.all_states()
    failed = [n for n in merged["failed"] if states.get(n, {}).get("outcome") != batch.NO_GPU]
    no_gpu = [n for n in merged["failed"] if n not in failed]
    for name in failed:
        st = states.get(name, {})
        print(f"batch-merge: FAILED {name}: {st.get('outcome')}: {st.get('reason')}")
    for name in merged["refused"]:
        print(f"batch-merge: REFUSED {name}: {states[name].get('reason')}")
    for name in no_gpu:
        print(f"batch-merge: {name}: {states[name].get('reason')}")
    for name in merged["missing"]:
        print(f"batch-merge: NOT GRADED {name}: no result under {layout.out} (a shard that did "
              f"not run or did not finish?)")
    if failed or merged["missing"]:
        return EXIT_INTERNAL
    if merged["refused"]:
        return EXIT_USAGE
    return EXIT_NO_GPU if no_gpu else EXIT_OK


def main(argv=None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:   # --help, --version, or a usage error already printed
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    if args.command == "grade":
        args = grade_args.from_namespace(args)
        command = cmd_grade
    else:
        command = {"report": cmd_report, "list": cmd_list, "batch": cmd_batch,
                   "batch-merge": cmd_batch_merge}[args.command]
    try:
        return command(args)
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
