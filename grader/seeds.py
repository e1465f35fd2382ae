"""The base seed of a lab's hidden inputs: drawn afresh for every grading from the operating
system's entropy (`secrets`, that is os.urandom).

Nobody can compute it in advance: not the student (a submission that knew its inputs could
carry their answers), not anything the build or the student's code can read. The grader draws
it in its own process (non-dumpable: grader/grade.py), after the build, for each lab whose
tests are about to run; it is written nowhere before the judges run and reaches them on their
standard input only (`--labkit-seed-stdin`, grader/gtest.py and grader/bench.py), never the
worker. It is recorded in the results (each lab's `seed`), so that an instructor can replay a
grading exactly: `python3 -m grader grade <lab> --seed <its seed>`.

The same file graded twice gets the same score, not the same inputs: a correct submission
passes every draw.

An instructor's secret (`--secret-file`, $LABS_GRADER_SECRET) was once mixed into a seed
derived from the graded files; with seeds drawn from the system's entropy it is no longer
needed. The option is still accepted, so that existing scripts keep working, and ignored with a
notice (SECRET_NOTICE).
"""

from __future__ import annotations

import os
import secrets

MAX_SEED = 2**63 - 1
SECRET_ENV = "LABS_GRADER_SECRET"   # no longer read; only named in the notice
SECRET_NOTICE = ("no longer used (ignored): every grading draws its seeds from the system's "
                 "entropy, so no secret is needed; remove it (docs/grading.md)")


def draw_seed() -> int:
    """A fresh base seed in [0, 2**63-1], from the operating system's entropy."""
    return secrets.randbits(63)


def secret_notice(secret_file=None, environ=None) -> str | None:
    """The one-line notice for an instructor who still names a secret (--secret-file, or
    $LABS_GRADER_SECRET set), else None."""
    environ = os.environ if environ is None else environ
    named = []
    if secret_file is not None:
        named.append("--secret-file")
    if environ.get(SECRET_ENV):
        named.append(f"${SECRET_ENV}")
    if not named:
        return None
    return f"{' and '.join(named)}: {SECRET_NOTICE}"
