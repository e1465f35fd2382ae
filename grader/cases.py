"""A lab's tests as data: the one reader of its cases files.

labs/<lab>/tests/cases.toml holds the public tests, labs/<lab>/hidden/cases.toml the hidden ones
(the student release drops hidden/). Each file is a list of suites:

  [[suite]]
  instance = "Sizes"             # the test names' first part
  suite = "ScanPublic"           # what grading.toml's filters select
  test = "MatchesReference"
  seeded = false                 # optional: inputs from the judge's seed (default: true in
                                 # hidden/, false elsewhere)
  dtype = ["f32", "i32"]         # any other key: the op family's (a list: one test per value,
  n = [1, 2, 31, 32]             # the value in the test's name; a scalar: the same for all)

Every variant of the lab runs every combination of the list values:
<instance>/<suite>.<test>/<variant>_<values> (labkit/cases.hpp). The family says what its keys
mean and which may be lists (e.g. labkit/ops/scan_cases.hpp); the test program refuses an
unknown key when it starts. At configure time cmake/lab_config.py writes the suites into the
lab's test program (cpp_source). Standard library only.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from grader.errors import GraderError

try:
    import tomllib  # Python 3.11+
except ModuleNotFoundError:  # pragma: no cover
    tomllib = None

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")     # a GoogleTest suite or test name, no '_'
_KEY = re.compile(r"[a-z][a-z0-9_]*")
_VALUE = re.compile(r"[A-Za-z0-9]+")            # goes into a test's name
_RESERVED = ("instance", "suite", "test", "seeded")


@dataclasses.dataclass(frozen=True)
class Param:
    key: str
    values: tuple      # of str: numbers in decimal, booleans as true/false
    in_name: bool      # a list in the file


@dataclasses.dataclass(frozen=True)
class Suite:
    instance: str
    suite: str
    test: str
    seeded: bool
    file: str
    line: int
    params: tuple


def _text(value, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if value < 0:
            raise GraderError(f"{where}: {value} is negative")
        return str(value)
    if isinstance(value, str) and _VALUE.fullmatch(value):
        return value
    raise GraderError(f"{where}: {value!r} is not a count, true/false or a word of letters and "
                      f"digits")


def _lines(text: str) -> list:
    """The line of each [[suite]] header, in order."""
    return [i for i, line in enumerate(text.splitlines(), 1)
            if line.strip().startswith("[[suite]]")]


def load_cases(path: Path, seeded_default: bool, shown_as: str | None = None) -> list:
    """The suites of one cases file. Raises GraderError naming the file and the suite."""
    shown = shown_as or str(path)
    if tomllib is None:
        raise GraderError("the grader needs Python 3.11 or newer (for tomllib)", 2)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as e:
        raise GraderError(f"cannot read {shown}: {e.strerror}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise GraderError(f"{shown}: not valid TOML ({e})") from None
    unknown = sorted(set(data) - {"suite"})
    if unknown:
        raise GraderError(f"{shown}: unknown table or key {unknown[0]!r} (only [[suite]])")
    raw = data.get("suite", [])
    if not isinstance(raw, list) or not raw:
        raise GraderError(f"{shown}: no [[suite]]")
    lines = _lines(text)
    suites, names = [], set()
    for i, table in enumerate(raw):
        line = lines[i] if i < len(lines) else 0
        where = f"{shown}:{line}"
        for key in ("instance", "suite", "test"):
            value = table.get(key)
            if not isinstance(value, str) or not _NAME.fullmatch(value):
                raise GraderError(f"{where}: '{key}' must be a name of letters and digits")
        seeded = table.get("seeded", seeded_default)
        if not isinstance(seeded, bool):
            raise GraderError(f"{where}: 'seeded' must be true or false")
        params = []
        for key, value in table.items():
            if key in _RESERVED:
                continue
            if not _KEY.fullmatch(key):
                raise GraderError(f"{where}: {key!r} is not a key of lowercase letters")
            if isinstance(value, list):
                if not value:
                    raise GraderError(f"{where}: '{key}' is an empty list")
                values = tuple(_text(v, f"{where}: '{key}'") for v in value)
                if len(set(values)) != len(values):
                    raise GraderError(f"{where}: '{key}' repeats a value (two tests of one name)")
                params.append(Param(key, values, True))
            else:
                params.append(Param(key, (_text(value, f"{where}: '{key}'"),), False))
        ident = (table["instance"], table["suite"], table["test"])
        if ident in names:
            raise GraderError(f"{where}: {ident[0]}/{ident[1]}.{ident[2]} is declared twice")
        names.add(ident)
        suites.append(Suite(*ident, seeded, shown, line, tuple(params)))
    return suites


def lab_case_files(lab_dir: Path) -> list:
    """(path, seeded by default) of the lab's cases files that exist: tests/cases.toml, then
    hidden/cases.toml."""
    found = []
    for rel, seeded in (("tests/cases.toml", False), ("hidden/cases.toml", True)):
        if (lab_dir / rel).is_file():
            found.append((lab_dir / rel, seeded))
    return found


def load_lab_cases(lab_dir: Path) -> list:
    """Every suite of the lab's cases files; a suite declared in both is an error."""
    suites, seen = [], {}
    for path, seeded in lab_case_files(lab_dir):
        for s in load_cases(path, seeded, f"labs/{lab_dir.name}/{path.relative_to(lab_dir)}"):
            ident = (s.instance, s.suite, s.test)
            if ident in seen:
                raise GraderError(f"{s.file}:{s.line}: {s.instance}/{s.suite}.{s.test} is also "
                                  f"declared at {seen[ident]}")
            seen[ident] = f"{s.file}:{s.line}"
            suites.append(s)
    return suites


def _cpp(text: str) -> str:
    return json.dumps(text)   # names, keys and values are plain ASCII words: a valid C++ literal


def cpp_source(suites: list) -> str:
    """labkit::cases::lab_suites() holding `suites` (labkit/cases.hpp)."""
    out = ["// Written at configure time by cmake/lab_config.py from the lab's cases files: do not",
           "// edit. The reader is grader/cases.py.",
           '#include "labkit/cases.hpp"', "",
           "namespace labkit::cases {", "",
           "const std::vector<Suite>& lab_suites() {",
           "  static const std::vector<Suite> suites = {"]
    for s in suites:
        params = ", ".join(
            "{" + f"{_cpp(p.key)}, {{{', '.join(_cpp(v) for v in p.values)}}}, "
            + ("true" if p.in_name else "false") + "}" for p in s.params)
        out.append(f"      {{{_cpp(s.instance)}, {_cpp(s.suite)}, {_cpp(s.test)}, "
                   f"{'true' if s.seeded else 'false'}, {_cpp(s.file)}, {s.line}, {{{params}}}}},")
    out += ["  };", "  return suites;", "}", "", "}  // namespace labkit::cases", ""]
    return "\n".join(out)
