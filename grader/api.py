"""The grader as a Python API: what `python3 -m grader grade` and `list` do, as functions that
return results objects. grader/cli.py is the wiring of these to the command line (arguments,
the files it writes, what it prints, its exit status); a program that grades in its own process
calls them directly:

    from grader import api
    result = api.grade(Path("alice/labs"), ["01"], api.GradeOptions(seed=7))
    print(result.points, result.max_points, result.to_json())   # grader/results.py

Mistakes in what is asked (a missing folder, an unknown lab) raise GraderError before anything
is built. A program that needs a grader process of its own (a time limit, a GPU per process:
grader/batch.py, scripts/gpu_check.py) runs `python3 -m grader grade` with the command line that
grader/grade_args.py's argv() builds from typed arguments.
"""

from __future__ import annotations

import os
from pathlib import Path

from grader import config
from grader import grade as pipeline
from grader.errors import GraderError
from grader.grade import GradeOptions  # noqa: F401  (part of this API: api.GradeOptions)
from grader.grade_args import DEFAULT_BUILD_DIR
from grader.results import GradeResult

REPO = Path(__file__).resolve().parent.parent
LABS = REPO / "labs"              # the labs, and the starters a student edits
SOLUTIONS = REPO / "solutions"    # the reference solutions (not in a student release)


def lab_configs(words=()) -> list:
    """The LabConfig (grader/config.py) of each lab named by `words` ('01', '01_naive_matmul'
    or 'naive_matmul'), in the order named; every lab when `words` is empty."""
    return [config.load_lab_config(LABS, lab) for lab in config.resolve_labs(LABS, list(words))]


LINK_REFUSED = ("refused: a link could point at someone else's work or at the solutions, "
                "so links are not followed; grade the folder itself")


def submission_path(submission) -> Path:
    """The submission folder as named, made absolute without resolving anything: a symbolic
    link on the way is never followed here, so check_submission_dir can refuse it. ('..' and
    '.' are folded into the name, as the name reads.)"""
    return Path(os.path.abspath(submission))


def all_lab_names() -> list:
    """Every lab's folder name (labs/*/grading.toml), in order."""
    return config.discover_labs(LABS)


def check_submission_dir(submission: Path) -> None:
    """A submission is the folder that holds the lab folders (shaped like labs/), and not a
    symbolic link: a committed `labs -> /opt/cuda-labs/solutions` would otherwise be graded as
    the student's own work. (The lab folders and files in it are refused if they are links
    when they are staged: grader/build.py.)"""
    if os.path.islink(submission):
        raise GraderError(f"--submission: {submission} is a symbolic link: {LINK_REFUSED}")
    if submission.is_dir():
        names = all_lab_names()
        one_lab = submission.name in names or (submission / "grading.toml").is_file()
        if one_lab and not any((submission / lab).is_dir() for lab in names):
            lab = submission.name.split("_", 1)[0] if submission.name in names else None
            raise GraderError(
                f"--submission: {submission} is one lab's folder; name the folder that holds "
                f"the lab folders (shaped like labs/), e.g. --submission {submission.parent}"
                + (f", and the lab to grade: grade --submission {submission.parent} {lab}"
                   if lab else ""))
        return
    if not os.path.lexists(submission):
        raise GraderError(f"--submission: {submission} does not exist")
    where = submission.parent
    lab = where.name if (where / "grading.toml").is_file() or "_" in where.name else None
    hint = (f"; name the folder that holds the lab folders, e.g. --submission {where.parent}"
            if lab else "; name the folder that holds the lab folders (shaped like labs/)")
    raise GraderError(f"--submission: {submission} is a file, not a folder{hint}")


def make_build_dir(build_dir: Path) -> Path:
    """The build folder, created if missing, as an absolute path."""
    build_dir = Path(build_dir).resolve()
    if build_dir.exists() and not build_dir.is_dir():
        raise GraderError(f"--build-dir: {build_dir} is not a directory")
    try:
        build_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise GraderError(f"--build-dir: cannot create {build_dir}: {e.strerror}") from None
    return build_dir


def grade(submission: Path | None = None, labs=(), options: GradeOptions = GradeOptions(), *,
          build_dir: Path = DEFAULT_BUILD_DIR, progress=None, notice=None) -> GradeResult:
    """Grades the labs named by `labs` (every lab when empty) of `submission`, a folder shaped
    like labs/ (default: this repository's labs/; SOLUTIONS for the reference solutions), in
    `build_dir`. progress(line) hears what is being done, notice(line) a wait for another
    grading of the same build folder (grader/grade.py, grade()).

    The submission folder may not be a symbolic link, nor may the lab folders and files in it
    (GraderError, exit 2; bad_files for a lab): the path is never resolved.

    Returns the GradeResult, whatever the submission did (its status and exit_code say it).
    Raises GraderError on a mistake in what was asked, setup.SetupError when what the build
    needs is missing, grade.GradeCrashed (carrying the result so far) on a grader bug."""
    submission = LABS if submission is None else submission_path(submission)
    check_submission_dir(submission)
    configs = lab_configs(labs)
    if not configs:
        raise GraderError("no labs to grade (no labs/*/grading.toml)")
    return pipeline.grade(REPO, submission, configs, make_build_dir(build_dir), options,
                          progress=progress, notice=notice)
