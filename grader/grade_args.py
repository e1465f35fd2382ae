"""The `grade` command's arguments, typed, both ways.

add_arguments() defines them (grader/cli.py builds its `grade` command with it), GradeArgs is
what a parse of them gives (from_namespace), and argv() is the command line that parses back to
a given GradeArgs. Programs that grade in a grader process of their own, for its timeout, its
process group and its GPU (grader/batch.py, scripts/gpu_check.py), build that process's command
with argv(), never by hand: what the command line takes is known here only, and
grader/tests/test_api.py proves that argv() and the parser agree.

Nothing here imports the rest of the command line (cli.py) or the batch (batch.py): both import
this module.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
from pathlib import Path

from grader.seeds import MAX_SEED

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = Path("grade-results.json")
DEFAULT_BUILD_DIR = REPO / "build" / "grade"
# The report files `grade` writes beside its results (grader/reports.py).
REPORTS = ("gradescope", "junit", "markdown", "html")

REPORT_HELP = {
    "gradescope": "Gradescope's results.json (one submission; written even when the grading "
                  "fails)",
    "junit": "JUnit XML, a testsuite per lab and group (one submission)",
    "markdown": "a Markdown summary, e.g. $GITHUB_STEP_SUMMARY",
    "csv": "a CSV gradebook, one row per results file",
    "html": "an HTML page of one submission: scores, failing tests with their where maps "
            "drawn, performance and a roofline (needs matplotlib)",
    "class_page": "an HTML class page of a batch: score histograms, the hidden tests that fail "
                  "most, speed histograms (needs matplotlib)",
}


# ---------------------------------------------------------------------------------------------
# Values

def seed_arg(text: str) -> int:
    if not re.fullmatch(r"[0-9]+", text.strip()) or int(text) > MAX_SEED:
        raise argparse.ArgumentTypeError(
            f"the seed must be a whole number from 0 to 2**63-1 = {MAX_SEED}, got {text!r}")
    return int(text)


def jobs_arg(text: str) -> int:
    if not re.fullmatch(r"[0-9]+", text.strip()) or not 1 <= int(text) <= 4096:
        raise argparse.ArgumentTypeError(f"a number of parallel jobs >= 1, got {text!r}")
    return int(text)


def seconds_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"a positive number of seconds, got {text!r}")
    return value


def fraction_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise argparse.ArgumentTypeError(f"a fraction from 0 to 1, got {text!r}")
    return value


def flag(fmt: str) -> str:
    """The option of a report format: 'class_page' is --class-page."""
    return "--" + fmt.replace("_", "-")


def add_report_flags(parser, formats, stdout: bool) -> None:
    for fmt in formats:
        parser.add_argument(flag(fmt), type=Path, metavar="FILE", dest=fmt,
                            help=REPORT_HELP[fmt] + (" ('-': standard output)" if stdout else ""))


# ---------------------------------------------------------------------------------------------
# Both ways

@dataclasses.dataclass(frozen=True)
class GradeArgs:
    """`python3 -m grader grade`'s command line, typed."""
    labs: tuple = ()                      # lab words ('01', '01_naive_matmul'); () = every lab
    submission: Path | None = None        # a folder shaped like labs/; None: labs/
    solutions: bool = False               # grade solutions/ (not with `submission`)
    output: Path = DEFAULT_OUTPUT         # the results JSON
    seed: int | None = None
    secret_file: Path | None = None       # accepted, unused: a notice says so (grader/seeds.py)
    build_dir: Path = DEFAULT_BUILD_DIR
    jobs: int | None = None
    performance: bool = True
    sanitize: bool = True
    profile: bool = False                 # profile one timed call per benchmark under ncu
    race_audit: bool = False              # each benchmark's last timed call under racecheck
    test_timeout_s: float | None = None
    labs_at_once: int | None = None       # labs whose tests run side by side; None: all
    unsandboxed_build: bool = False       # build even where no build sandbox is possible
    quiet: bool = False
    gradescope: Path | None = None        # the report files (REPORTS), each where wanted
    junit: Path | None = None
    markdown: Path | None = None
    html: Path | None = None

    def reports(self) -> dict:
        """{format: path} of the report files asked for."""
        return {fmt: getattr(self, fmt) for fmt in REPORTS if getattr(self, fmt) is not None}

    def options(self) -> "GradeOptions":
        """The grading's options (grader/grade.py)."""
        from grader.grade import GradeOptions   # the pipeline: not for `--help` and `list`
        return GradeOptions(seed=self.seed, jobs=self.jobs,
                            performance=self.performance, sanitize=self.sanitize,
                            profile=self.profile, race_audit=self.race_audit,
                            test_timeout_s=self.test_timeout_s,
                            labs_at_once=self.labs_at_once,
                            unsandboxed_build=self.unsandboxed_build)


def add_arguments(g) -> None:
    """The `grade` command's arguments, on its (sub)parser `g`."""
    g.add_argument("labs", nargs="*", metavar="LAB",
                   help="labs to grade: '01', '01_naive_matmul' or 'naive_matmul' (default: all)")
    src = g.add_mutually_exclusive_group()
    src.add_argument("--submission", type=Path, metavar="DIR",
                     help="a directory shaped like labs/ (<DIR>/01_naive_matmul/matmul.cu ...); "
                          "default: this repository's labs/")
    src.add_argument("--solutions", action="store_true", help="grade the reference solutions")
    g.add_argument("--output", "-o", type=Path, default=DEFAULT_OUTPUT,
                   help="where to write the JSON results (default: grade-results.json); its "
                        "folder must exist. One grading at a time per file: a second one "
                        "started while another writes the same file is refused (exit 2), "
                        "naming the other")
    g.add_argument("--seed", type=seed_arg, metavar="N",
                   help="base seed of the hidden inputs for every lab graded (0 to 2**63-1), "
                        "to replay a grading; default: a fresh seed per lab for every "
                        "grading, from the system's entropy, recorded in the results: pass a "
                        "lab's seed to replay it")
    # No longer used (seeds are drawn from the system's entropy): accepted, so that existing
    # scripts keep working, with a notice (grader/seeds.py); not in --help.
    g.add_argument("--secret-file", type=Path, metavar="PATH", help=argparse.SUPPRESS)
    g.add_argument("--build-dir", type=Path, default=DEFAULT_BUILD_DIR,
                   help="build directory (default: build/grade)")
    g.add_argument("--jobs", "-j", type=jobs_arg, default=None, help="parallel build jobs")
    g.add_argument("--no-performance", action="store_true", help="skip the benchmarks")
    g.add_argument("--no-sanitize", action="store_true",
                   help="do not re-run failing calls under compute-sanitizer memcheck (a lab's "
                        "graded race checks still run)")
    g.add_argument("--profile", action="store_true",
                   help="profile one timed call of each benchmark under Nsight Compute (ncu) "
                        "and report its kernels' counters (DRAM bytes against the lecture's "
                        "model, coalescing, bank conflicts, occupancy); slower; never changes "
                        "a score")
    g.add_argument("--race-audit", action="store_true",
                   help="also replay each benchmark's last timed call under compute-sanitizer "
                        "racecheck, at the benchmark's size (the graded race checks run a small "
                        "hidden shape): minutes per benchmark; hazards found there cost that "
                        "benchmark's points. For spot checks of suspicious or top submissions")
    g.add_argument("--test-timeout", type=seconds_arg, metavar="S",
                   help="seconds one call of the student's code may take in a test "
                        "(default: the lab's grading.toml)")
    g.add_argument("--labs-at-once", type=jobs_arg, metavar="N",
                   help="labs whose correctness tests run side by side on the GPU (default: all "
                        "of them; 1 for a GPU with little memory); benchmarks always run one "
                        "at a time, alone")
    g.add_argument("--unsandboxed-build", action="store_true",
                   help="instructors: where no build sandbox is possible (no Landlock, no user "
                        "namespaces), build anyway, with a warning in every lab's results; "
                        "without it such a machine grades nothing (docs/threat-model.md, "
                        "'The build')")
    g.add_argument("--quiet", "-q", action="store_true", help="print only the final table")
    add_report_flags(g, REPORTS, stdout=False)


def from_namespace(ns: argparse.Namespace) -> GradeArgs:
    """What add_arguments' parse gave, typed."""
    return GradeArgs(labs=tuple(ns.labs), submission=ns.submission, solutions=ns.solutions,
                     output=ns.output, seed=ns.seed, secret_file=ns.secret_file,
                     build_dir=ns.build_dir, jobs=ns.jobs, performance=not ns.no_performance,
                     sanitize=not ns.no_sanitize, profile=ns.profile,
                     race_audit=ns.race_audit, test_timeout_s=ns.test_timeout,
                     labs_at_once=ns.labs_at_once, unsandboxed_build=ns.unsandboxed_build,
                     quiet=ns.quiet, **{fmt: getattr(ns, fmt) for fmt in REPORTS})


def argv(args: GradeArgs) -> list:
    """The arguments of `python3 -m grader grade` (those after 'grade') that parse back to
    `args`. ValueError for what no command line can say: a submission and the solutions at
    once, a lab word that would read as an option."""
    if args.submission is not None and args.solutions:
        raise ValueError("a grading takes --submission or --solutions, not both")
    bad = [lab for lab in args.labs if not lab or lab.startswith("-")]
    if bad:
        raise ValueError(f"not a lab name: {bad[0]!r}")
    out = ["-q"] if args.quiet else []
    out.append(f"--output={args.output}")        # --name=value: a value may start with '-'
    out.append(f"--build-dir={args.build_dir}")
    if args.submission is not None:
        out.append(f"--submission={args.submission}")
    if args.solutions:
        out.append("--solutions")
    if args.seed is not None:
        out.append(f"--seed={args.seed}")
    if args.secret_file is not None:
        out.append(f"--secret-file={args.secret_file}")
    if args.jobs is not None:
        out.append(f"--jobs={args.jobs}")
    if not args.performance:
        out.append("--no-performance")
    if not args.sanitize:
        out.append("--no-sanitize")
    if args.profile:
        out.append("--profile")
    if args.race_audit:
        out.append("--race-audit")
    if args.test_timeout_s is not None:
        out.append(f"--test-timeout={args.test_timeout_s!r}")   # repr: the exact float
    if args.labs_at_once is not None:
        out.append(f"--labs-at-once={args.labs_at_once}")
    if args.unsandboxed_build:
        out.append("--unsandboxed-build")
    for fmt, path in args.reports().items():
        out.append(f"{flag(fmt)}={path}")
    return out + list(args.labs)
