"""A lab's grading.toml, read into typed objects and checked for mistakes.

The one reader of lab files: which folders of labs/ are labs (discover_labs, resolve_labs) and
what their grading.toml says (load_lab_config; load_student_files for the student files alone).
Everything else that needs them imports this module: the grader, scripts/export-release,
scripts/gpu_check.py, scripts/gradescope, and CMake's configure (cmake/lab_config.py writes
each lab's student files for add_cuda_lab)."""

from __future__ import annotations

import dataclasses
import importlib
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


# The counters a [[lesson]] entry may grade, read from the compiled kernels (the policy's
# kernel table: grader/policy/device.py, kernel_resources), so the same on every machine.
# local_memory: bytes of local memory per thread (spill area and stack), at least 1 where the
# machine code loads, stores or addresses local memory (scoring.lesson_value); graded with `max`.
# tensor_cores: the kernel's tensor-core instructions (HMMA, IMMA, HGMMA...: what the policy's
# tensor_cores family refuses elsewhere); graded with `min` (lab 10: every kernel multiplies on
# tensor cores).
LESSON_COUNTERS = ("local_memory", "tensor_cores")
# Which bound a static counter is graded with.
_STATIC_BOUND = {"local_memory": "max", "tensor_cores": "min"}

# The counters a [[lesson]] entry may grade from the profile stage (one timed call of its
# `benchmark` replayed under ncu, summed over the call's kernels; docs/grading.md), and the
# results' counters each is made of. dram_bytes: bytes read and written in DRAM; the sector
# uses: of the bytes global loads (stores) moved in 32-byte sectors, the percentage the warps
# asked for (100: coalesced), in the worst kernel of those that move at least 32 MiB each (a
# coalesced kernel added to the call cannot raise it).
PROFILE_LESSON_COUNTERS = {
    "dram_bytes": ("prof_dram_read_bytes", "prof_dram_write_bytes"),
    "global_load_sector_use": ("prof_ld_sector_use_worst_pct",),
    # Sectors moved by the call's global loads and value-returning atomics: a count, which a
    # coalesced load added beside an uncoalesced one can only raise (a share of each sector
    # used, averaged over a kernel's loads, it lifts: red team round 31).
    "global_load_sectors": ("prof_ld_sectors", "prof_atom_sectors"),
    "global_store_sector_use": ("prof_st_sector_use_worst_pct",),
}


@dataclasses.dataclass(frozen=True)
class Lesson:
    """[[lesson]]: points for the counter the lab's lesson is about, awarded only when every
    correctness test passes. A static counter (LESSON_COUNTERS) is read in every kernel of the
    submission; a profile counter (PROFILE_LESSON_COUNTERS) in the call its `benchmark` times."""
    name: str
    counter: str
    points: float
    max: float | None = 0    # the most allowed (each kernel's, or the call's); None: no limit
    label: str = ""
    benchmark: str = ""      # profile counters: the [[performance]] benchmark whose call is read
    min: float | None = None  # the least allowed (profile counters; tensor_cores, each kernel's)
    # tensor_cores: a [[performance]] benchmark that must also run faster than this GPU's FP32
    # peak (measured in the same grading), which no product on CUDA cores can
    faster_than_fp32_peak: str = ""

    @property
    def profiled(self) -> bool:
        return self.counter in PROFILE_LESSON_COUNTERS


@dataclasses.dataclass(frozen=True)
class Performance:
    """One graded benchmark: [[performance]] (a lab may have several)."""
    points: float
    benchmark: str
    metric: str
    target: float
    floor: float
    metric_label: str = ""
    timeout_s: float = 300.0
    name: str = ""       # shown in the report; default: the benchmark's name
    bands: int = 4       # points move in `bands` equal steps between floor and target
    reference: float | None = None   # the reference solution's measured metric (HTML report)
    bonus: bool = False  # its points add to the score but not to the maximum
    # What the lecture's model predicts for the benchmark's call, beside the profile stage's
    # measurement (grade --profile): {"measure": one of LECTURE_MEASURES, "value": the number,
    # "says": the model in words}. Never scored.
    lecture: dict | None = None


# The profile stage's quantities a [[performance]] entry's `lecture` may name, and the results'
# counters each is made of (docs/grading.md, "The profile stage").
LECTURE_MEASURES = {
    "global_load_requests": ("prof_ld_requests",),
    "global_load_bytes": ("prof_ld_sectors",),        # times 32: the bytes the sectors moved
    "dram_bytes": ("prof_dram_read_bytes", "prof_dram_write_bytes"),
    "dram_write_bytes": ("prof_dram_write_bytes",),
}


DEFAULT_MAX_FILE_KIB = 256


# The most one test judge of a lab may spend on its tests before the rest fail without running
# (grading.toml [lab] test_budget_s). The judges' hang rule bounds a wrong submission far inside
# it (docs/grading.md, "Bounded time"); this is the backstop, several times what the slowest
# lab's judge takes for a correct submission.
DEFAULT_TEST_BUDGET_S = 240.0


@dataclasses.dataclass(frozen=True)
class LabConfig:
    name: str            # the lab's folder name, e.g. 01_naive_matmul
    title: str
    student_files: tuple
    groups: tuple
    performance: tuple = ()        # Performance entries, in the file's order
    lessons: tuple = ()            # Lesson entries ([[lesson]]), in the file's order
    test_timeout_s: float = 60.0   # one worker call at most (the judge's --labkit-call-timeout)
    test_budget_s: float = DEFAULT_TEST_BUDGET_S   # one judge's tests (--labkit-test-budget)
    max_file_kib: int = DEFAULT_MAX_FILE_KIB
    policy: object = None          # grader.policy.PolicyRules for this lab
    flop_factor: float = 1.0       # [plausibility]: the FLOP ceiling is the FP32 peak times this
    # Not from grading.toml: ncu when this grading profiles its benchmarks (grade --profile,
    # or a profile counter's [[lesson]]), and the benchmarks it profiles (empty: every one)
    profiler: str | None = None
    profile_only: tuple = ()
    # Not from grading.toml: compute-sanitizer when this grading audits its benchmarks for
    # races (grade --race-audit): each benchmark's last timed call replayed under racecheck
    race_audit: str | None = None

    @property
    def max_points(self) -> float:
        return (sum(g.points for g in self.groups)
                + sum(p.points for p in self.performance if not p.bonus)
                + sum(lesson.points for lesson in self.lessons))


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


def parse_student_files(data: dict, where: str = "grading.toml") -> tuple:
    """[lab] student_files: the only files taken from a submission, plain file names."""
    lab = _table(data.get("lab", {}), f"{where} [lab]")
    files = _require(lab, "student_files", list, f"{where} [lab]")
    if not files or not all(isinstance(f, str) and f and "/" not in f and "\0" not in f
                            and f not in (".", "..") for f in files):
        raise GraderError(f"{where} [lab]: student_files must be plain file names")
    if len(set(files)) != len(files):
        raise GraderError(f"{where} [lab]: student_files names a file twice")
    return tuple(files)


def parse_lab_config(name: str, data: dict, where: str = "grading.toml") -> LabConfig:
    files = parse_student_files(data, where)
    lab = data["lab"]
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
    perf = _performance_entries(data.get("performance", []), where)
    lessons = _lesson_entries(data.get("lesson", []), where,
                              tuple(dict.fromkeys(p.benchmark for p in perf)))
    taken = {g.name for g in groups}
    for lesson in lessons:
        if lesson_group_name(lesson) in taken:
            raise GraderError(f"{where}: [[lesson]] '{lesson.name}' has the name of a "
                              f"correctness group ('{lesson_group_name(lesson)}')")
    max_kib = lab.get("max_file_kib", DEFAULT_MAX_FILE_KIB)
    if isinstance(max_kib, bool) or not isinstance(max_kib, int) or not 0 < max_kib <= 1 << 20:
        raise GraderError(f"{where} [lab]: 'max_file_kib' must be a whole number of KiB between 1 "
                          f"and {1 << 20}, got {max_kib!r}")
    return LabConfig(name=name, title=lab.get("title", name), student_files=files,
                     groups=tuple(groups), performance=perf, lessons=lessons,
                     test_timeout_s=_seconds(lab, "test_timeout_s", 60, f"{where} [lab]"),
                     test_budget_s=_seconds(lab, "test_budget_s", DEFAULT_TEST_BUDGET_S,
                                            f"{where} [lab]"),
                     max_file_kib=max_kib,
                     policy=_policy_rules(data.get("policy", {}), f"{where} [policy]"),
                     flop_factor=_flop_factor(data.get("plausibility", {}),
                                              f"{where} [plausibility]"))


def lesson_group_name(lesson: Lesson) -> str:
    """The name of the group a [[lesson]] entry scores as, in results and reports."""
    return f"lesson: {lesson.name}"


def _lesson_entries(value, where: str, benchmarks: tuple = ()) -> tuple:
    """[[lesson]] entries (none by default). `benchmarks`: those the lab's [[performance]]
    entries name (a profile counter's `benchmark` must be one)."""
    if not isinstance(value, list):
        raise GraderError(f"{where}: lessons are an array of tables: write [[lesson]], not "
                          f"[lesson]")
    known = {"name", "counter", "points", "max", "min", "benchmark", "label",
             "faster_than_fp32_peak"}
    counters = LESSON_COUNTERS + tuple(PROFILE_LESSON_COUNTERS)
    entries = []
    for i, t in enumerate(value):
        w = f"{where} [[lesson]] #{i + 1}"
        _table(t, w)
        unknown = sorted(set(t) - known)
        if unknown:
            raise GraderError(f"{w}: unknown key(s) {', '.join(unknown)} (known: "
                              f"{', '.join(sorted(known))})")
        counter = _require(t, "counter", str, w)
        if counter not in counters:
            raise GraderError(f"{w}: 'counter' must be one of {', '.join(counters)}, "
                              f"got {counter!r}")
        points = _require(t, "points", float, w)
        if not 0 < points < math.inf:
            raise GraderError(f"{w}: points must be > 0")
        label = t.get("label", "")
        if not isinstance(label, str):
            raise GraderError(f"{w}: 'label' must be a string, got {label!r}")
        name = _require(t, "name", str, w)
        if counter in PROFILE_LESSON_COUNTERS:
            bench = _require(t, "benchmark", str, w)
            if bench not in benchmarks:
                raise GraderError(f"{w}: 'benchmark' must name a [[performance]] entry's "
                                  f"benchmark ({', '.join(benchmarks) or 'none'}), got "
                                  f"{bench!r}")
            bounds = {}
            for key in ("min", "max"):
                v = t.get(key)
                if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                      or not 0 <= v < math.inf):
                    raise GraderError(f"{w}: '{key}' must be a number >= 0, got {v!r}")
                bounds[key] = None if v is None else float(v)
            if bounds["min"] is None and bounds["max"] is None:
                raise GraderError(f"{w}: a profile counter needs 'min' or 'max'")
            if None not in bounds.values() and bounds["min"] > bounds["max"]:
                raise GraderError(f"{w}: 'min' is above 'max'")
            entries.append(Lesson(name, counter, points, bounds["max"], label, bench,
                                  bounds["min"]))
            continue
        if "benchmark" in t:
            raise GraderError(f"{w}: 'benchmark' is for profile counters "
                              f"({', '.join(PROFILE_LESSON_COUNTERS)}), not {counter}")
        faster = t.get("faster_than_fp32_peak", "")
        if faster and counter != "tensor_cores":
            raise GraderError(f"{w}: 'faster_than_fp32_peak' is for tensor_cores, not {counter}")
        if faster and faster not in benchmarks:
            raise GraderError(f"{w}: 'faster_than_fp32_peak' must name a [[performance]] entry's "
                              f"benchmark ({', '.join(benchmarks) or 'none'}), got {faster!r}")
        if _STATIC_BOUND[counter] == "min":
            if "max" in t:
                raise GraderError(f"{w}: {counter} is graded with 'min', not 'max'")
            least = t.get("min", 1)
            if isinstance(least, bool) or not isinstance(least, int) or least < 1:
                raise GraderError(f"{w}: 'min' must be a whole number >= 1, got {least!r}")
            entries.append(Lesson(name, counter, points, None, label, "", least, faster))
            continue
        if "min" in t:
            raise GraderError(f"{w}: 'min' is for profile counters "
                              f"({', '.join(PROFILE_LESSON_COUNTERS)}) and tensor_cores, not "
                              f"{counter}")
        most = t.get("max", 0)
        if isinstance(most, bool) or not isinstance(most, int) or most < 0:
            raise GraderError(f"{w}: 'max' must be a whole number >= 0, got {most!r}")
        entries.append(Lesson(name, counter, points, most, label))
    if len({e.name for e in entries}) != len(entries):
        raise GraderError(f"{where}: lesson names must be unique")
    return tuple(entries)


def _flop_factor(table, where: str) -> float:
    """[plausibility] flop_factor (default 1): how many times the FP32 peak a benchmark's
    GFLOPS may legitimately reach (grader/scoring.py, check_plausibility)."""
    table = _table(table, where)
    unknown = sorted(set(table) - {"flop_factor"})
    if unknown:
        raise GraderError(f"{where}: unknown key(s) {', '.join(unknown)} (known: flop_factor)")
    value = table.get("flop_factor", 1.0)
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or not 1 <= value <= 100):
        raise GraderError(f"{where}: 'flop_factor' must be a number from 1 to 100, got {value!r}")
    return float(value)


def _performance_entries(value, where: str) -> tuple:
    """[[performance]] entries; a single [performance] table (the old form) is one entry."""
    if isinstance(value, dict):
        tables, label = [value], "[performance]"
    elif isinstance(value, list):
        tables, label = value, "[[performance]]"
    else:
        raise GraderError(f"{where}: 'performance' must be a table or an array of tables "
                          f"([[performance]]), got {value!r}")
    entries = []
    for i, p in enumerate(tables):
        w = f"{where} {label}" + (f" #{i + 1}" if label == "[[performance]]" else "")
        _table(p, w)
        bands = p.get("bands", 4)
        if isinstance(bands, bool) or not isinstance(bands, int) or not 1 <= bands <= 1000:
            raise GraderError(f"{w}: 'bands' must be a whole number >= 1, got {bands!r}")
        benchmark = _require(p, "benchmark", str, w)
        name = p.get("name", benchmark)
        if not isinstance(name, str) or not name:
            raise GraderError(f"{w}: 'name' must be a non-empty string, got {name!r}")
        bonus = p.get("bonus", False)
        if not isinstance(bonus, bool):
            raise GraderError(f"{w}: 'bonus' must be true or false, got {bonus!r}")
        label_text = p.get("metric_label", "")
        if not isinstance(label_text, str):
            raise GraderError(f"{w}: 'metric_label' must be str, got {label_text!r}")
        reference = p.get("reference")
        if reference is not None and (isinstance(reference, bool)
                                      or not isinstance(reference, (int, float))
                                      or not math.isfinite(reference) or reference <= 0):
            raise GraderError(f"{w}: 'reference' (the solution's measured {p.get('metric', 'metric')}) "
                              f"must be a positive number, got {reference!r}")
        perf = Performance(
            lecture=_lecture(p.get("lecture"), f"{w} lecture"),
            points=_require(p, "points", float, w),
            benchmark=benchmark,
            metric=_require(p, "metric", str, w),
            target=_require(p, "target", float, w),
            floor=_require(p, "floor", float, w),
            metric_label=label_text,
            timeout_s=_seconds(p, "timeout_s", 300, w),
            name=name,
            bands=bands,
            reference=None if reference is None else float(reference),
            bonus=bonus,
        )
        if not 0 <= perf.points < math.inf:
            raise GraderError(f"{w}: points must be >= 0")
        if not 0 <= perf.floor < perf.target < math.inf:
            raise GraderError(f"{w}: need 0 <= floor < target (got {perf.floor}, {perf.target})")
        if not benchmark:
            raise GraderError(f"{w}: 'benchmark' must name a benchmark")
        entries.append(perf)
    if len({e.name for e in entries}) != len(entries):
        raise GraderError(f"{where}: performance entries need distinct names (set 'name' when "
                          f"two entries grade the same benchmark)")
    return tuple(entries)


def _lecture(value, where: str) -> dict | None:
    """A [[performance]] entry's `lecture` = {measure, value, says}, checked; None when absent."""
    if value is None:
        return None
    _table(value, where)
    unknown = sorted(set(value) - {"measure", "value", "says"})
    if unknown:
        raise GraderError(f"{where}: unknown key(s) {', '.join(unknown)} (known: measure, value, "
                          f"says)")
    measure = value.get("measure")
    if measure not in LECTURE_MEASURES:
        raise GraderError(f"{where}: 'measure' must be one of {', '.join(LECTURE_MEASURES)}, "
                          f"got {measure!r}")
    number = value.get("value")
    if (isinstance(number, bool) or not isinstance(number, (int, float))
            or not math.isfinite(number) or number <= 0):
        raise GraderError(f"{where}: 'value' must be a positive number, got {number!r}")
    says = value.get("says")
    if not isinstance(says, str) or not says.strip():
        raise GraderError(f"{where}: 'says' must say the model in words, got {says!r}")
    return {"measure": measure, "value": float(number), "says": says.strip()}


def _policy_rules(table, where: str):
    """The lab's [policy] table as grader.policy.PolicyRules.

    Imported here, not at the top: the policy module is only needed once a lab is loaded, and
    importlib (not `from grader import policy`) lets tests stand in a fake through sys.modules."""
    table = _table(table, where)
    try:
        policy = importlib.import_module("grader.policy")
    except ImportError as e:
        raise GraderError(f"the grader's policy check (grader/policy/) cannot be loaded: {e}",
                          1) from None
    try:
        return policy.PolicyRules.from_toml(table, where)
    except GraderError:
        raise
    except (TypeError, ValueError, KeyError) as e:
        raise GraderError(f"{where}: {e}") from None


def read_grading_toml(labs_dir: Path, name: str) -> tuple:
    """(the parsed grading.toml of lab `name`, its path): GraderError when it is missing or not
    TOML."""
    path = Path(labs_dir) / name / "grading.toml"
    if not path.is_file():
        raise GraderError(f"lab '{name}' has no grading config ({path})")
    if tomllib is None:
        raise GraderError("the grader needs Python 3.11 or newer (for tomllib)", 2)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise GraderError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise GraderError(f"{path}: cannot read it: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise GraderError(f"{path}: {e}") from None
    return data, path


def load_lab_config(labs_dir: Path, name: str) -> LabConfig:
    data, path = read_grading_toml(labs_dir, name)
    return parse_lab_config(name, data, str(path))


def load_student_files(labs_dir: Path, name: str) -> tuple:
    """Lab `name`'s student files alone: its grading.toml read as load_lab_config reads it, and
    only [lab] student_files checked (scripts/export-release, which also copies labs whose
    scoring it does not need)."""
    data, path = read_grading_toml(labs_dir, name)
    return parse_student_files(data, str(path))


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
            hint = ""
            if word.isdigit() and len(word) < 2:
                near = [lab for lab in available if lab.split("_", 1)[0] == word.zfill(2)]
                if near:
                    hint = f"; did you mean '{word.zfill(2)}' ({near[0]})?"
            raise GraderError(f"unknown lab '{word}'{hint}; labs: "
                              f"{', '.join(available) or '(none)'}")
        if matches[0] not in chosen:
            chosen.append(matches[0])
    return chosen
