"""course.toml: the course's settings, set by an instructor in one place (the repository root).

[graded_run] where: what a student without a GPU is told about getting a graded run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from grader.errors import GraderError

try:
    import tomllib  # Python 3.11+
except ModuleNotFoundError:  # pragma: no cover - older Pythons
    tomllib = None

FILE = "course.toml"
UNSET = ("this course has not said where graded runs happen: ask your instructor "
         "(instructors: [graded_run] where in course.toml)")


@dataclasses.dataclass(frozen=True)
class Course:
    graded_run: str = ""          # [graded_run] where

    @property
    def graded_run_hint(self) -> str:
        return self.graded_run or UNSET


_KNOWN = {"graded_run": {"where"}}


def load_course(repo: Path) -> Course:
    """The course settings; a missing file means none are set. A file that cannot be read, is
    not TOML or names an unknown table or key is an error naming the file and what is wrong."""
    path = repo / FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Course()
    except (OSError, UnicodeDecodeError) as e:
        raise GraderError(f"{path}: cannot read it: {getattr(e, 'strerror', None) or e}") from None
    if tomllib is None:  # pragma: no cover
        raise GraderError("Python 3.11+ is needed (tomllib)")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GraderError(f"{path}: not valid TOML: {e}") from None
    for table, value in data.items():
        if table not in _KNOWN or not isinstance(value, dict):
            raise GraderError(f"{path}: unknown setting [{table}] (known: "
                              f"{', '.join(f'[{t}]' for t in _KNOWN)})")
        for key in value:
            if key not in _KNOWN[table]:
                raise GraderError(f"{path}: unknown key '{key}' in [{table}] (known: "
                                  f"{', '.join(sorted(_KNOWN[table]))})")
    where = data.get("graded_run", {}).get("where", "")
    if not isinstance(where, str):
        raise GraderError(f"{path}: [graded_run] where must be a string")
    return Course(graded_run=" ".join(where.split()))
