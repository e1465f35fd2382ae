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


def safe_text(text) -> str:
    """`text` as valid Unicode (encodable as UTF-8). A path or file name that is not UTF-8
    comes from Python (os.fsdecode) with its bytes as lone surrogates; those bytes become
    visible escapes (b'\\xff' -> '\\xff'). Any other lone surrogate becomes '\\udXXX'."""
    text = str(text)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    out = []
    for ch in text:
        if "\udc80" <= ch <= "\udcff":                 # an undecodable byte of a file name
            out.append(f"\\x{ord(ch) - 0xdc00:02x}")
        elif "\ud800" <= ch <= "\udfff":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _safe_strings(value):
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_text(k) if isinstance(k, str) else k: _safe_strings(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_safe_strings(v) for v in value]
    return value


@dataclasses.dataclass
class TestResult:
    name: str
    status: str          # one of STATUSES
    message: str = ""
    seconds: float = 0.0
    # A failed comparison as data, beside the message that tells it: the JSON object the test
    # judge computed from the outputs it compared (common/src/compare.cpp, where_json), for the
    # where maps of the HTML report (grader/wheremap.py). None for a test without one.
    where: dict | None = None

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
    # A [[lesson]] of a profile counter on a machine that gave no counters, or in a grading that
    # ran no benchmarks: its points are withheld (scoring.profile_lesson_group), and gpu_check
    # leaves it out of its verdicts.
    unmeasured: bool = False

    @property
    def passed_count(self) -> int:
        return sum(t.passed for t in self.tests)


@dataclasses.dataclass
class PerfResult:
    """One graded performance entry ([[performance]] in grading.toml)."""
    max_points: float
    points: float = 0.0
    # measured | gated | failed | timeout | not_run | withheld (measured, but the GPU's ceilings
    # were not, so the speed could not be checked: no points; grader/scoring.py)
    status: str = "not_run"
    metric: float | None = None
    target: float = 0.0
    floor: float = 0.0
    label: str = ""
    message: str = ""
    counters: dict = dataclasses.field(default_factory=dict)
    # What the ratio is to, as the benchmark names it, with the library's version ("CUB
    # DeviceScan::ExclusiveSum (CCCL 3.0.1)"); "" when the benchmark gave none.
    baseline: str = ""
    name: str = ""            # the entry's name (default: its benchmark)
    benchmark: str = ""
    metric_name: str = ""     # the counter graded, e.g. 'ratio'
    bands: int = 1
    band: int | None = None   # 0..bands once measured
    metric_lo: float | None = None   # the benchmark's 95% interval of the metric, when given
    metric_hi: float | None = None   # (counters '<metric>_lo', '<metric>_hi')
    reference: float | None = None   # grading.toml's `reference`: the solution's metric, if given
    bonus: bool = False       # bonus entry: its points count in the score, not in the maximum
    # Measured faster than the GPU's ceilings allow (scoring.check_plausibility): status 'failed',
    # 0 points, flagged for review; the counters are kept as measured.
    implausible: bool = False
    # grading.toml's `lecture` ({measure, value, says}): the lecture's model of the call, shown
    # beside the profile stage's measurement (report_text.profile_lines); never scored.
    lecture: dict | None = None


@dataclasses.dataclass
class BuildResult:
    ok: bool
    seconds: float = 0.0
    log: str = ""         # the compiler's output, trimmed to what matters
    hint: str = ""
    # It compiled and linked, but a linked worker was refused (build.check_linked_workers: an
    # executable stack or a writable and executable segment; the reason in `hint`): a policy
    # refusal, which grade records as status 'rejected', not as a build failure.
    refused: bool = False


@dataclasses.dataclass
class PolicyReport:
    """What grader.policy.check_submission found, as plain data."""
    ok: bool
    violations: list = dataclasses.field(default_factory=list)   # {rule, symbol, message}
    seconds: float = 0.0
    # The student's kernels as compiled, one per kernel and architecture: {kernel, arch,
    # registers, shared_bytes, local_bytes, stack_bytes, local_loads, local_stores}
    # (grader/policy/device.py, kernel_resources); None when they were not read.
    kernels: list | None = None


@dataclasses.dataclass
class LabResult:
    lab: str
    title: str
    max_points: float
    points: float = 0.0
    status: str = "graded"   # one of LAB_STATUSES
    message: str = ""
    # The base seed of this lab's tests and benchmarks (drawn for this grading, or --seed's):
    # pass it to `grade --seed` to replay them. None: none was used (nothing was run).
    seed: int | None = None
    files: dict = dataclasses.field(default_factory=dict)      # name -> sha256
    build: BuildResult | None = None
    policy: PolicyReport | None = None
    binaries: dict = dataclasses.field(default_factory=dict)   # target -> sha256, as built
    sandbox: dict | None = None   # the test judge's 'worker' event: how the worker was confined
    groups: list = dataclasses.field(default_factory=list)
    performance: list = dataclasses.field(default_factory=list)   # PerfResult per entry
    warnings: list = dataclasses.field(default_factory=list)
    implausible: bool = False   # a performance entry is implausible: flagged for review
    # Wall-clock seconds of this lab's stages, in order: [{"stage": name, "seconds": s}]
    # (docs/grading.md, "Stage times"); stage_totals() sums them by kind.
    stages: list = dataclasses.field(default_factory=list)


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
    # The grading's own stages, shared by its labs (waiting for the build folder, configure,
    # the harness's build, the GPU probe and ceilings), as LabResult.stages.
    stages: list = dataclasses.field(default_factory=list)

    @property
    def points(self) -> float:
        return round(sum(lab.points for lab in self.labs), 2)

    @property
    def max_points(self) -> float:
        return round(sum(lab.max_points for lab in self.labs), 2)

    @property
    def implausible(self) -> bool:
        """A lab's benchmark was measured faster than the GPU can run: flagged for review."""
        return any(lab.implausible or any(p.implausible for p in lab.performance)
                   for lab in self.labs)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["points"] = self.points
        d["max_points"] = self.max_points
        d["implausible"] = self.implausible
        return d

    def to_json(self) -> str:
        # Valid UTF-8 whatever the submission's path or the tests printed (safe_text).
        return json.dumps(_safe_strings(self.to_dict()), indent=2, sort_keys=False)

    @classmethod
    def from_dict(cls, data) -> "GradeResult":
        """The inverse of to_dict, for a results file read back (grader/reports.py). Checks the
        shape field by field and raises ValueError naming the first field that is missing or of
        the wrong type; keys it does not know (a newer grader's) are ignored, as are the
        computed 'points', 'max_points' and 'implausible'."""
        return _from_dict(cls, data, "results")


def stage_kind(name: str) -> str:
    """'tests: public' -> 'tests'; a name without a colon is its own kind ('configure')."""
    return name.split(":", 1)[0].strip()


def stage_totals(stages) -> dict:
    """{kind: seconds} over a stages list, in the order the kinds first appear."""
    totals = {}
    for s in stages or []:
        if isinstance(s, dict) and isinstance(s.get("stage"), str) \
                and isinstance(s.get("seconds"), (int, float)):
            kind = stage_kind(s["stage"])
            totals[kind] = totals.get(kind, 0.0) + float(s["seconds"])
    return totals


# Which dataclass the items of a list field hold, for from_dict.
_ITEMS = {("GradeResult", "labs"): "LabResult", ("LabResult", "groups"): "GroupResult",
          ("GroupResult", "tests"): "TestResult", ("LabResult", "performance"): "PerfResult"}
_CLASSES = {c.__name__: c for c in (TestResult, GroupResult, PerfResult, BuildResult,
                                    PolicyReport, LabResult, GradeResult)}


def _from_dict(cls, data, where: str):
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object, got {type(data).__name__}")
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            kwargs[f.name] = _field_value(cls, f, data[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ValueError(f"{where}: missing '{f.name}'")
    return cls(**kwargs)


def _field_value(cls, field, value, where: str):
    kinds = [k.strip() for k in str(field.type).split("|")]   # annotations are strings here
    if value is None and "None" in kinds:
        return None
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    for kind in kinds:
        if kind == "str" and isinstance(value, str):
            return value
        if kind == "float" and number:
            return float(value)
        if kind == "int" and number and isinstance(value, int):
            return value
        if kind == "bool" and isinstance(value, bool):
            return value
        if kind == "dict" and isinstance(value, dict):
            return value
        if kind == "list" and isinstance(value, list):
            item = _ITEMS.get((cls.__name__, field.name))
            if item is None:
                return value
            return [_from_dict(_CLASSES[item], x, f"{where}[{i}]") for i, x in enumerate(value)]
        if kind in _CLASSES and isinstance(value, dict):
            return _from_dict(_CLASSES[kind], value, where)
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise ValueError(f"{where}: expected {field.type}, got {shown}")
