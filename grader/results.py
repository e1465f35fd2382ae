"""Typed results, one method per output format. Everything here is plain data."""

from __future__ import annotations

import dataclasses
import json

STATUSES = ("passed", "failed", "crashed", "timeout", "skipped", "not_run")

# A lab's outcome. bad_files: a student file is missing, a symlink, not a regular file, or too
# large (nothing was built). rejected: it built, but the policy check refused the compiled
# object (nothing of it was run). error: the grader or the harness failed, or a binary changed
# after it was built.
LAB_STATUSES = ("graded", "build_failed", "rejected", "bad_files", "no_gpu", "error")


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
    """One graded performance entry ([[performance]] in grading.toml)."""
    max_points: float
    points: float = 0.0
    status: str = "not_run"   # measured | gated | failed | timeout | not_run
    metric: float | None = None
    target: float = 0.0
    floor: float = 0.0
    label: str = ""
    message: str = ""
    counters: dict = dataclasses.field(default_factory=dict)
    name: str = ""            # the entry's name (default: its benchmark)
    benchmark: str = ""
    metric_name: str = ""     # the counter graded, e.g. 'ratio'
    bands: int = 1
    band: int | None = None   # 0..bands once measured
    metric_lo: float | None = None   # the benchmark's 95% interval of the metric, when given
    metric_hi: float | None = None   # (counters '<metric>_lo', '<metric>_hi')


@dataclasses.dataclass
class BuildResult:
    ok: bool
    seconds: float = 0.0
    log: str = ""         # the compiler's output, trimmed to what matters
    hint: str = ""


@dataclasses.dataclass
class PolicyReport:
    """What grader.policy.check_submission found, as plain data."""
    ok: bool
    violations: list = dataclasses.field(default_factory=list)   # {rule, symbol, message}
    seconds: float = 0.0


@dataclasses.dataclass
class LabResult:
    lab: str
    title: str
    max_points: float
    points: float = 0.0
    status: str = "graded"   # one of LAB_STATUSES
    message: str = ""
    seed: int | None = None   # the base seed of this lab's tests and benchmarks
    files: dict = dataclasses.field(default_factory=dict)      # name -> sha256
    build: BuildResult | None = None
    policy: PolicyReport | None = None
    binaries: dict = dataclasses.field(default_factory=dict)   # target -> sha256, as built
    sandbox: dict | None = None   # the test judge's 'worker' event: how the worker was confined
    groups: list = dataclasses.field(default_factory=list)
    performance: list = dataclasses.field(default_factory=list)   # PerfResult per entry
    warnings: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class GradeResult:
    submission: str
    seed: int | None          # the --seed that forced every lab's seed, else None
    grader_version: str
    status: str = "graded"    # graded | no_gpu | build_failed | rejected | bad_files | error
    message: str = ""
    exit_code: int = 0        # what `python3 -m grader grade` exits with
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
