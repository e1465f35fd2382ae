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

A key may have named values, declared once as tables of the file ([<key>.<name>], before or
after the suites; the hidden file may use the public file's):

  [matrix.powerlaw]              # a suite's  matrix = ["powerlaw", ...]  takes these fields
  kind = "power_law"             # (the family reads them as 'matrix.kind', 'matrix.alpha', ...)
  alpha = 2.1
  description = "power-law row lengths"

A named value goes into the test's name as its name (letters, digits and '_'); its fields are
counts, numbers, true/false or text.

Every variant of the lab runs every combination of the list values:
<instance>/<suite>.<test>/<variant>_<values> (labkit/cases.hpp). The family says what its keys
mean and which may be lists (e.g. labkit/ops/vector_family.hpp); the test program refuses an
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
_RECORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*")  # a named value's name, also in test names
_FIELD_TEXT = re.compile(r"[ -~]*")             # printable ASCII: a named value's text field
_RESERVED = ("instance", "suite", "test", "seeded")


@dataclasses.dataclass(frozen=True)
class Param:
    key: str
    values: tuple      # of str: numbers in decimal, booleans as true/false
    in_name: bool      # a list in the file
    records: tuple = ()  # a named value's fields for each value ((field, text), ...), or ()


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


def _field(value, where: str) -> str:
    """A named value's field as text: counts and numbers as written, true/false, or text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return repr(value)
    if isinstance(value, str) and _FIELD_TEXT.fullmatch(value):
        return value
    raise GraderError(f"{where}: {value!r} is not a number, true/false or a line of printable "
                      f"text")


def _records(data: dict, shown: str, text: str) -> dict:
    """{key: {name: ((field, text), ...)}} of the file's named values ([<key>.<name>])."""
    found = {}
    for key, table in data.items():
        if key == "suite":
            continue
        where = f"{shown}:{_line_of(text, key)}"
        if not _KEY.fullmatch(key) or key in _RESERVED or not isinstance(table, dict):
            raise GraderError(f"{where}: unknown table or key {key!r} (only [[suite]] and "
                              f"named values [<key>.<name>])")
        if not table or not all(isinstance(v, dict) for v in table.values()):
            raise GraderError(f"{where}: {key!r} must be named values: tables [{key}.<name>]")
        named = {}
        for name, fields in table.items():
            at = f"{shown}:{_line_of(text, f'{key}.{name}')}"
            if not _RECORD.fullmatch(name):
                raise GraderError(f"{at}: {name!r} is not a name of letters, digits and '_'")
            if not fields:
                raise GraderError(f"{at}: [{key}.{name}] has no fields")
            for field in fields:
                if not _KEY.fullmatch(field):
                    raise GraderError(f"{at}: {field!r} is not a key of lowercase letters")
            named[name] = tuple((f, _field(v, f"{at}: '{f}'")) for f, v in fields.items())
        found[key] = named
    return found


def _line_of(text: str, header: str) -> int:
    """The line of the table header [header] (or of the first [header.*]); for a named value
    written inline ([key] then `name = {...}`), the line of its name; 0 if not found."""
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        head = line.strip()
        if head == f"[{header}]" or head.startswith(f"[{header}."):
            return i
    key, _, name = header.partition(".")
    inside = False
    for i, line in enumerate(lines, 1):
        head = line.strip()
        if head.startswith("["):
            inside = head == f"[{key}]"
        elif inside and name and re.match(rf'"?{re.escape(name)}"?\s*=', head):
            return i
    return 0


def _lines(text: str) -> list:
    """The line of each [[suite]] header, in order."""
    return [i for i, line in enumerate(text.splitlines(), 1)
            if line.strip().startswith("[[suite]]")]


def _read(path: Path, shown: str):
    if tomllib is None:
        raise GraderError("the grader needs Python 3.11 or newer (for tomllib)", 2)
    try:
        text = path.read_text(encoding="utf-8")
        return text, tomllib.loads(text)
    except OSError as e:
        raise GraderError(f"cannot read {shown}: {e.strerror}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise GraderError(f"{shown}: not valid TOML ({e})") from None


def load_records(path: Path, shown_as: str | None = None) -> dict:
    """The named values a cases file declares: {key: {name: ((field, text), ...)}}."""
    shown = shown_as or str(path)
    text, data = _read(path, shown)
    return _records(data, shown, text)


def load_cases(path: Path, seeded_default: bool, shown_as: str | None = None,
               inherited: dict | None = None) -> list:
    """The suites of one cases file, a key's named values resolved among the file's own and
    `inherited` ones (the public file's, for the hidden file). Raises GraderError naming the
    file and the suite."""
    shown = shown_as or str(path)
    text, data = _read(path, shown)
    records = _records(data, shown, text)
    for key, named in (inherited or {}).items():
        for name, fields in named.items():
            if name in records.get(key, {}):
                raise GraderError(f"{shown}:{_line_of(text, f'{key}.{name}')}: [{key}.{name}] "
                                  f"is declared in the public cases file too")
            records.setdefault(key, {})[name] = fields
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
            listed = isinstance(value, list)
            if listed and not value:
                raise GraderError(f"{where}: '{key}' is an empty list")
            if key in records:
                values = tuple(_named(v, records[key], f"{where}: '{key}'")
                               for v in (value if listed else [value]))
                fields = tuple(records[key][v] for v in values)
            else:
                values = tuple(_text(v, f"{where}: '{key}'")
                               for v in (value if listed else [value]))
                fields = ()
            if len(set(values)) != len(values):
                raise GraderError(f"{where}: '{key}' repeats a value (two tests of one name)")
            params.append(Param(key, values, listed, fields))
        ident = (table["instance"], table["suite"], table["test"])
        if ident in names:
            raise GraderError(f"{where}: {ident[0]}/{ident[1]}.{ident[2]} is declared twice")
        names.add(ident)
        suites.append(Suite(*ident, seeded, shown, line, tuple(params)))
    return suites


def _named(value, named: dict, where: str) -> str:
    if isinstance(value, str) and value in named:
        return value
    known = ", ".join(sorted(named))
    raise GraderError(f"{where}: {value!r} is not one of its named values ({known})")


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
    suites, seen, public = [], {}, {}
    for path, seeded in lab_case_files(lab_dir):
        shown = f"labs/{lab_dir.name}/{path.relative_to(lab_dir)}"
        # The hidden file may use the public file's named values, never the other way round
        # (a student release has the public file alone).
        for s in load_cases(path, seeded, shown, inherited=public if seeded else None):
            ident = (s.instance, s.suite, s.test)
            if ident in seen:
                raise GraderError(f"{s.file}:{s.line}: {s.instance}/{s.suite}.{s.test} is also "
                                  f"declared at {seen[ident]}")
            seen[ident] = f"{s.file}:{s.line}"
            suites.append(s)
        if not seeded:
            public = load_records(path, shown)
            continue
        # A public suite naming a key whose named values the hidden file declares: the release
        # would read its values as plain words.
        for key in set(load_records(path, shown)) - set(public):
            for s in suites:
                if not s.seeded and any(p.key == key for p in s.params):
                    raise GraderError(f"{s.file}:{s.line}: '{key}' has its named values in "
                                      f"{shown} only (a student release drops it): declare "
                                      f"them in the public cases file")
    return suites


def _cpp(text: str) -> str:
    return json.dumps(text)   # plain printable ASCII (the reader's rules): a valid C++ literal


def cpp_source(suites: list) -> str:
    """labkit::cases::lab_suites() holding `suites` (labkit/cases.hpp)."""
    out = ["// Written at configure time by cmake/lab_config.py from the lab's cases files: do not",
           "// edit. The reader is grader/cases.py.",
           '#include "labkit/cases.hpp"', "",
           "namespace labkit::cases {", "",
           "const std::vector<Suite>& lab_suites() {",
           "  static const std::vector<Suite> suites = {"]
    def fields(record: tuple) -> str:
        return "{" + ", ".join(f"{{{_cpp(f)}, {_cpp(v)}}}" for f, v in record) + "}"

    for s in suites:
        params = ", ".join(
            "{" + f"{_cpp(p.key)}, {{{', '.join(_cpp(v) for v in p.values)}}}, "
            + ("true" if p.in_name else "false")
            + (f", {{{', '.join(fields(r) for r in p.records)}}}" if p.records else "") + "}"
            for p in s.params)
        out.append(f"      {{{_cpp(s.instance)}, {_cpp(s.suite)}, {_cpp(s.test)}, "
                   f"{'true' if s.seeded else 'false'}, {_cpp(s.file)}, {s.line}, {{{params}}}}},")
    out += ["  };", "  return suites;", "}", "", "}  // namespace labkit::cases", ""]
    return "\n".join(out)
