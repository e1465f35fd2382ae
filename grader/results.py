"""Typed results, one method per output format. Everything here is plain data."""

from __future__ import annotations

import dataclasses
import json

STATUSES = ("passed", "failed", "crashed", "timeout", "skipped", "not_run")


@dataclasses.dataclass
class TestResult:
    name: str
    status: str          # one of STATUSES
    message: str = ""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclasses.dataclass
class GroupResult:
    name: str
    filter: str
    max_points: float
    points: float = 0.0
    tests: list = dataclasses.field(default_factory=list)
    note: str = ""

    @property
    def passed_count(self) -> int:
        return sum(t.passed for t in self.tests)


@dataclasses.dataclass
class PerfResult:
    max_points: float
    points: float = 0.0
    status: str = "not_run"   # measured | gated | failed | timeout | not_run
    metric: float | None = None
    target: float = 0.0
    floor: float = 0.0
    label: str = ""
    message: str = ""
    counters: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class BuildResult:
    ok: bool
    seconds: float = 0.0
    log: str = ""         # the compiler's output, trimmed to what matters
    hint: str = ""


@dataclasses.dataclass
class LabResult:
    lab: str
    title: str
    max_points: float
    points: float = 0.0
    status: str = "graded"   # graded | build_failed | no_gpu | missing_files | error
    message: str = ""
    files: dict = dataclasses.field(default_factory=dict)   # name -> sha256
    build: BuildResult | None = None
    groups: list = dataclasses.field(default_factory=list)
    performance: PerfResult | None = None


@dataclasses.dataclass
class GradeResult:
    submission: str
    seed: int
    grader_version: str
    status: str = "graded"    # graded | no_gpu | build_failed | error
    message: str = ""
    gpu: dict | None = None
    labs: list = dataclasses.field(default_factory=list)
    started: str = ""
    seconds: float = 0.0

    @property
    def points(self) -> float:
        return round(sum(lab.points for lab in self.labs), 2)

    @property
    def max_points(self) -> float:
        return round(sum(lab.max_points for lab in self.labs), 2)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["points"] = self.points
        d["max_points"] = self.max_points
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)
