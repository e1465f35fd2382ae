"""A lab's grading.toml, read into typed objects and checked for mistakes."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from grader.errors import GraderError

try:
    import tomllib  # Python 3.11+
except ModuleNotFoundError:  # pragma: no cover - older Pythons
    tomllib = None


@dataclasses.dataclass(frozen=True)
class Group:
    name: str
    filter: str
    points: float


@dataclasses.dataclass(frozen=True)
class Performance:
    points: float
    benchmark: str
    metric: str
    target: float
    floor: float
    metric_label: str = ""
    timeout_s: float = 300.0


@dataclasses.dataclass(frozen=True)
class LabConfig:
    name: str            # the lab's folder name, e.g. 01_naive_matmul
    title: str
    student_files: tuple
    groups: tuple
    performance: Performance | None
    test_timeout_s: float = 60.0

    @property
    def test_binary(self) -> str:
        return f"{self.name}_test"

    @property
    def bench_binary(self) -> str:
        return f"{self.name}_bench"

    @property
    def max_points(self) -> float:
        perf = self.performance.points if self.performance else 0.0
        return sum(g.points for g in self.groups) + perf


def _require(table: dict, key: str, kind, where: str):
    if key not in table:
        raise GraderError(f"{where}: missing '{key}'")
    value = table[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind):
        raise GraderError(f"{where}: '{key}' must be {kind.__name__}, got {value!r}")
    return value


def _table(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise GraderError(f"{where}: must be a table, got {value!r}")
    return value


def _seconds(table: dict, key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value <= 0):
        raise GraderError(f"{where}: '{key}' must be a positive number of seconds, got {value!r}")
    return float(value)


def parse_lab_config(name: str, data: dict, where: str = "grading.toml") -> LabConfig:
    lab = _table(data.get("lab", {}), f"{where} [lab]")
    files = _require(lab, "student_files", list, f"{where} [lab]")
    if not files or not all(isinstance(f, str) and f and "/" not in f and f != ".." for f in files):
        raise GraderError(f"{where} [lab]: student_files must be plain file names")
    groups = []
    correctness = data.get("correctness", [])
    if not isinstance(correctness, list):
        raise GraderError(f"{where}: correctness groups are an array of tables: write "
                          f"[[correctness]], not [correctness]")
    for i, g in enumerate(correctness):
        w = f"{where} [[correctness]] #{i + 1}"
        _table(g, w)
        group = Group(_require(g, "name", str, w), _require(g, "filter", str, w),
                      _require(g, "points", float, w))
        if not 0 <= group.points < math.inf:  # also rejects nan
            raise GraderError(f"{w}: points must be >= 0")
        groups.append(group)
    if not groups:
        raise GraderError(f"{where}: at least one [[correctness]] group is needed")
    if len({g.name for g in groups}) != len(groups):
        raise GraderError(f"{where}: correctness group names must be unique")
    perf = None
    if "performance" in data:
        w = f"{where} [performance]"
        p = _table(data["performance"], w)
        perf = Performance(
            points=_require(p, "points", float, w),
            benchmark=_require(p, "benchmark", str, w),
            metric=_require(p, "metric", str, w),
            target=_require(p, "target", float, w),
            floor=_require(p, "floor", float, w),
            metric_label=p.get("metric_label", ""),
            timeout_s=_seconds(p, "timeout_s", 300, w),
        )
        if not 0 <= perf.points < math.inf:
            raise GraderError(f"{w}: points must be >= 0")
        if not 0 <= perf.floor < perf.target:
            raise GraderError(f"{w}: need 0 <= floor < target (got {perf.floor}, {perf.target})")
    return LabConfig(name=name, title=lab.get("title", name), student_files=tuple(files),
                     groups=tuple(groups), performance=perf,
                     test_timeout_s=_seconds(lab, "test_timeout_s", 60, f"{where} [lab]"))


def load_lab_config(labs_dir: Path, name: str) -> LabConfig:
    path = labs_dir / name / "grading.toml"
    if not path.is_file():
        raise GraderError(f"lab '{name}' has no grading config ({path})")
    if tomllib is None:
        raise GraderError("the grader needs Python 3.11 or newer (for tomllib)", 2)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise GraderError(f"{path}: {e}") from None
    return parse_lab_config(name, data, str(path))


def discover_labs(labs_dir: Path) -> list:
    """Every lab folder (one with a grading.toml), in order."""
    return sorted(p.parent.name for p in labs_dir.glob("*/grading.toml"))


def resolve_labs(labs_dir: Path, requested: list) -> list:
    """Maps user words ('01', '01_naive_matmul', 'naive_matmul') to lab names."""
    available = discover_labs(labs_dir)
    if not requested:
        return available
    chosen = []
    for word in requested:
        matches = [lab for lab in available
                   if lab == word or lab.split("_", 1)[0] == word or lab.split("_", 1)[-1] == word]
        if len(matches) != 1:
            raise GraderError(f"unknown lab '{word}'; labs: {', '.join(available) or '(none)'}")
        if matches[0] not in chosen:
            chosen.append(matches[0])
    return chosen
