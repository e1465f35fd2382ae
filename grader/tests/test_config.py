"""grading.toml parsing and checks, lab name resolution, and gtest filter matching."""

import copy
import tempfile
import unittest
from pathlib import Path

from grader import config, gtest
from grader.config import GraderError, LabConfig, load_lab_config, parse_lab_config, resolve_labs
from grader.errors import EXIT_USAGE
from grader.tests import fakes

FAKE_POLICY = fakes.FakePolicy()


def setUpModule():
    # The parse tests see a fake grader.policy (PolicyRules.from_toml records its table).
    global _patch
    _patch = fakes.use_policy(FAKE_POLICY)
    _patch.start()


def tearDownModule():
    _patch.stop()

REPO = Path(__file__).resolve().parents[2]
LABS = REPO / "labs"

GOOD = {
    "lab": {"title": "Naive matmul", "student_files": ["matmul.cu"], "test_timeout_s": 45},
    "correctness": [
        {"name": "public", "filter": "*MatmulPublic*", "points": 30},
        {"name": "hidden", "filter": "*MatmulHidden*", "points": 50.5},
    ],
    "performance": {"points": 20, "benchmark": "matmul/v1_naive/4096", "metric": "ratio",
                    "metric_label": "speed / cuBLAS", "target": 0.05, "floor": 0.01,
                    "timeout_s": 120},
}


def good():
    return copy.deepcopy(GOOD)


class ParseGoodTest(unittest.TestCase):
    def test_full_config(self):
        cfg = parse_lab_config("01_naive_matmul", good())
        self.assertIsInstance(cfg, LabConfig)
        self.assertEqual(cfg.name, "01_naive_matmul")
        self.assertEqual(cfg.title, "Naive matmul")
        self.assertEqual(cfg.student_files, ("matmul.cu",))
        self.assertEqual(cfg.test_timeout_s, 45.0)
        self.assertEqual([(g.name, g.filter, g.points) for g in cfg.groups],
                         [("public", "*MatmulPublic*", 30.0), ("hidden", "*MatmulHidden*", 50.5)])
        self.assertIsInstance(cfg.groups[0].points, float)
        (p,) = cfg.performance          # the old single [performance] table: one entry
        self.assertEqual((p.points, p.benchmark, p.metric, p.target, p.floor, p.metric_label,
                          p.timeout_s, p.name, p.bands),
                         (20.0, "matmul/v1_naive/4096", "ratio", 0.05, 0.01, "speed / cuBLAS",
                          120.0, "matmul/v1_naive/4096", 4))
        self.assertEqual(cfg.max_points, 100.5)
        self.assertEqual(cfg.max_file_kib, 256)
        self.assertEqual(cfg.policy.table, {})
        self.assertIn("[policy]", cfg.policy.where)

    def test_performance_array(self):
        data = good()
        first = dict(data["performance"], bands=2)
        second = {"name": "big", "points": 10, "benchmark": "matmul/v1_naive/8192",
                  "metric": "GFLOPS", "target": 3000, "floor": 1000}
        data["performance"] = [first, second]
        cfg = parse_lab_config("x", data)
        self.assertEqual([(p.name, p.benchmark, p.metric, p.bands, p.points)
                          for p in cfg.performance],
                         [("matmul/v1_naive/4096", "matmul/v1_naive/4096", "ratio", 2, 20.0),
                          ("big", "matmul/v1_naive/8192", "GFLOPS", 4, 10.0)])
        self.assertEqual(cfg.max_points, 110.5)

    def test_policy_table_and_file_size(self):
        data = good()
        data["policy"] = {"forbid_imports": ["cudaMemcpy*"]}
        data["lab"]["max_file_kib"] = 64
        cfg = parse_lab_config("x", data, where="lab.toml")
        self.assertEqual(cfg.policy.table, {"forbid_imports": ["cudaMemcpy*"]})
        self.assertEqual(cfg.policy.where, "lab.toml [policy]")
        self.assertEqual(cfg.max_file_kib, 64)

    def test_defaults(self):
        data = {"lab": {"student_files": ["a.cu", "b.cu"]},
                "correctness": [{"name": "only", "filter": "*", "points": 10}]}
        cfg = parse_lab_config("02_x", data)
        self.assertEqual(cfg.title, "02_x")
        self.assertEqual(cfg.student_files, ("a.cu", "b.cu"))
        self.assertEqual(cfg.performance, ())
        self.assertEqual(cfg.test_timeout_s, 60.0)
        self.assertEqual(cfg.test_budget_s, 240.0)
        self.assertEqual(cfg.max_points, 10.0)

    def test_performance_defaults(self):
        data = good()
        del data["performance"]["metric_label"], data["performance"]["timeout_s"]
        (p,) = parse_lab_config("x", data).performance
        self.assertEqual(p.metric_label, "")
        self.assertEqual(p.bands, 4)
        self.assertEqual(p.timeout_s, 300.0)

    def test_reference_is_optional_and_positive(self):
        data = good()
        self.assertIsNone(parse_lab_config("x", data).performance[0].reference)
        data["performance"]["reference"] = 2
        (p,) = parse_lab_config("x", data).performance
        self.assertEqual(p.reference, 2.0)
        self.assertIsInstance(p.reference, float)
        for bad in (0, -1.5, True, "0.9", float("inf"), float("nan")):
            data["performance"]["reference"] = bad
            with self.subTest(reference=bad), self.assertRaises(GraderError) as cm:
                parse_lab_config("x", data)
            self.assertIn("'reference'", cm.exception.message)

    def test_bonus_entries_stay_out_of_the_maximum(self):
        data = good()
        bonus = dict(data["performance"], name="faster", points=7, bonus=True)
        data["performance"] = [data["performance"], bonus]
        cfg = parse_lab_config("x", data)
        self.assertEqual([p.bonus for p in cfg.performance], [False, True])
        self.assertEqual(cfg.max_points, 30 + 50.5 + 20)   # the bonus 7 is not in it

    def test_bonus_defaults_to_false(self):
        (p,) = parse_lab_config("x", good()).performance
        self.assertFalse(p.bonus)

    def test_zero_points_and_zero_floor_are_allowed(self):
        data = good()
        data["correctness"][0]["points"] = 0
        data["performance"]["floor"] = 0
        cfg = parse_lab_config("x", data)
        self.assertEqual(cfg.groups[0].points, 0.0)
        self.assertEqual(cfg.performance[0].floor, 0.0)


    def test_lessons_count_in_the_maximum(self):
        data = good()
        data["lesson"] = [{"name": "registers", "counter": "local_memory", "points": 5}]
        cfg = parse_lab_config("x", data)
        (lesson,) = cfg.lessons
        self.assertEqual((lesson.name, lesson.counter, lesson.points, lesson.max),
                         ("registers", "local_memory", 5.0, 0))
        self.assertEqual(cfg.max_points, 30 + 50.5 + 20 + 5)
        self.assertEqual(parse_lab_config("x", good()).lessons, ())

    def test_a_profile_counter_lesson_names_a_benchmark_and_bounds(self):
        data = good()
        data["lesson"] = [{"name": "coalescing", "counter": "global_load_sector_use",
                           "benchmark": "matmul/v1_naive/4096", "min": 50, "points": 5}]
        (lesson,) = parse_lab_config("x", data).lessons
        self.assertTrue(lesson.profiled)
        self.assertEqual((lesson.benchmark, lesson.min, lesson.max),
                         ("matmul/v1_naive/4096", 50.0, None))
        self.assertFalse(config.Lesson("registers", "local_memory", 5.0).profiled)

    def test_the_labs_profile_lessons_read_their_lectures_benchmark(self):
        # Labs 01, 05 and 08 grade the counter their lecture's model is about, on the benchmark
        # whose `lecture` states it; each still totals 100, and its handout states the points.
        for lab, counter, says in (("01_naive_matmul", "global_load_sectors", "coalesc"),
                                   ("05_reduction", "dram_bytes", "once"),
                                   ("08_scan", "dram_bytes", "once")):
            cfg = load_lab_config(LABS, lab)
            (lesson,) = [e for e in cfg.lessons if e.profiled]
            self.assertEqual(lesson.counter, counter)
            (perf,) = [p for p in cfg.performance if p.benchmark == lesson.benchmark]
            self.assertIsNotNone(perf.lecture)
            if counter == "dram_bytes":   # the bound sits above the model, below a second pass
                self.assertLess(perf.lecture["value"], lesson.max)
                self.assertLess(lesson.max, 1.5 * perf.lecture["value"])
            if counter == "global_load_sectors":
                # Above the lecture's coalesced reads (5 N^3 / 32 sectors at N = 4096), far
                # below threadIdx.x walking rows (33 N^3 / 32 / 2: 32 sectors of A, one of B).
                n3 = 4096.0 ** 3
                self.assertLess(5 * n3 / 32, lesson.max)
                self.assertLess(lesson.max, 0.5 * 33 * n3 / 64)
                self.assertIsNone(lesson.min)
            self.assertEqual(cfg.max_points, 100)
            scoring_text = (LABS / lab / "README.md").read_text().split(
                "## Scoring", 1)[1].split("\n## ", 1)[0]
            self.assertIn("the lesson 5", scoring_text)
            self.assertIn(says, scoring_text)

    def test_lab_02_grades_its_lesson_and_still_totals_100(self):
        cfg = load_lab_config(LABS, "02_register_tiling")
        self.assertEqual([(e.counter, e.max) for e in cfg.lessons], [("local_memory", 0)])
        self.assertEqual(cfg.max_points, 100)
        # Its handout states the points (every graded thing a handout names, and the reverse).
        scoring_text = (LABS / "02_register_tiling" / "README.md").read_text().split(
            "## Scoring", 1)[1].split("\n## ", 1)[0]
        self.assertIn("hidden tests 45, the lesson 5", scoring_text)
        self.assertIn("no local memory", scoring_text)


class ParseRejectedTest(unittest.TestCase):
    def test_bad_lessons(self):
        def with_lesson(**entry):
            data = good()
            data["lesson"] = [dict({"name": "registers", "counter": "local_memory",
                                    "points": 5}, **entry)]
            return data
        self.assertRejected(with_lesson(counter="bank_conflicts"), "[[lesson]] #1", "counter",
                            "local_memory")
        self.assertRejected(with_lesson(points=0), "points must be > 0")
        self.assertRejected(with_lesson(max=-1), "'max'")
        self.assertRejected(with_lesson(max=True), "'max'")
        self.assertRejected(with_lesson(threshold=3), "unknown key(s) threshold")
        data = good()
        data["lesson"] = {"name": "registers", "counter": "local_memory", "points": 5}
        self.assertRejected(data, "write [[lesson]]")
        data = good()
        data["lesson"] = [with_lesson()["lesson"][0]] * 2
        self.assertRejected(data, "lesson names must be unique")
        # A static counter takes no benchmark; local_memory no minimum, tensor_cores no maximum.
        self.assertRejected(with_lesson(benchmark="matmul/v1_naive/4096"), "'benchmark' is for")
        self.assertRejected(with_lesson(min=1), "'min' is for")
        self.assertRejected(with_lesson(counter="tensor_cores", max=0), "graded with 'min'")
        self.assertRejected(with_lesson(counter="tensor_cores", min=0), "'min'")
        self.assertRejected(with_lesson(counter="tensor_cores", min=1.5), "'min'")
        data = with_lesson(counter="tensor_cores")
        data["correctness"][0]["points"] -= 5
        (lesson,) = parse_lab_config("x", data).lessons
        self.assertEqual((lesson.counter, lesson.min, lesson.max), ("tensor_cores", 1, None))
        # The speed gate names a graded benchmark, and only tensor_cores has one.
        self.assertRejected(with_lesson(faster_than_fp32_peak="matmul/v1_naive/4096"),
                            "'faster_than_fp32_peak' is for tensor_cores")
        self.assertRejected(with_lesson(counter="tensor_cores", faster_than_fp32_peak="nope"),
                            "'faster_than_fp32_peak' must name a [[performance]]")

    def test_bad_profile_lessons(self):
        def with_lesson(**entry):
            data = good()
            data["lesson"] = [{k: v for k, v in dict(
                {"name": "one pass", "counter": "dram_bytes", "points": 5,
                 "benchmark": "matmul/v1_naive/4096", "max": 1.25e9}, **entry).items()
                if v is not None}]
            return data
        self.assertRejected(with_lesson(benchmark=None), "missing 'benchmark'")
        self.assertRejected(with_lesson(benchmark="matmul/v1_naive/1024"), "'benchmark' must name",
                            "matmul/v1_naive/4096")
        self.assertRejected(with_lesson(max=None), "needs 'min' or 'max'")
        self.assertRejected(with_lesson(max=-1.0), "'max' must be a number >= 0")
        self.assertRejected(with_lesson(max=float("nan")), "'max' must be a number >= 0")
        self.assertRejected(with_lesson(min="50"), "'min' must be a number >= 0")
        self.assertRejected(with_lesson(min=2e9), "'min' is above 'max'")

    def assertRejected(self, data, *words):
        with self.assertRaises(GraderError) as cm:
            parse_lab_config("x", data, where="lab.toml")
        self.assertEqual(cm.exception.exit_code, EXIT_USAGE)
        self.assertIn("lab.toml", cm.exception.message)
        for w in words:
            self.assertIn(w, cm.exception.message)
        return cm.exception

    def test_missing_lab_table_or_student_files(self):
        data = good()
        del data["lab"]["student_files"]
        self.assertRejected(data, "student_files", "missing")
        data = good()
        del data["lab"]
        self.assertRejected(data, "student_files")

    def test_student_files_not_plain_names(self):
        for files in (["sub/matmul.cu"], ["../matmul.cu"], ["/etc/passwd"], [".."], [""], [],
                      ["ok.cu", "a/b.cu"], ["ok.cu", 3], ["."], ["a\0.cu"]):
            with self.subTest(files=files):
                data = good()
                data["lab"]["student_files"] = files
                self.assertRejected(data, "student_files", "plain file names")

    def test_student_files_not_a_list(self):
        data = good()
        data["lab"]["student_files"] = "matmul.cu"
        self.assertRejected(data, "student_files", "must be list")

    def test_student_file_named_twice(self):
        data = good()
        data["lab"]["student_files"] = ["a.cu", "a.cu"]
        self.assertRejected(data, "twice")

    def test_max_file_kib(self):
        for value in (0, -1, 1.5, "256", True, 2**21):
            with self.subTest(value=value):
                data = good()
                data["lab"]["max_file_kib"] = value
                self.assertRejected(data, "max_file_kib")

    def test_bands(self):
        for value in (0, -2, 2.5, "4", True):
            with self.subTest(value=value):
                data = good()
                data["performance"]["bands"] = value
                self.assertRejected(data, "[performance]", "bands")

    def test_performance_array_entries(self):
        data = good()
        data["performance"] = [dict(data["performance"]), dict(data["performance"])]
        self.assertRejected(data, "distinct names")
        data["performance"][1]["name"] = "again"
        self.assertEqual(len(parse_lab_config("x", data).performance), 2)
        data["performance"][1]["bands"] = 0
        self.assertRejected(data, "[[performance]] #2", "bands")
        data["performance"] = [3]
        self.assertRejected(data, "[[performance]] #1", "must be a table")

    def test_policy_not_a_table(self):
        data = good()
        data["policy"] = ["cudaMemcpy"]
        self.assertRejected(data, "[policy]", "must be a table")

    def test_no_groups(self):
        data = good()
        del data["correctness"]
        self.assertRejected(data, "[[correctness]]")
        data = good()
        data["correctness"] = []
        self.assertRejected(data, "[[correctness]]")

    def test_duplicate_group_names(self):
        data = good()
        data["correctness"][1]["name"] = "public"
        self.assertRejected(data, "unique")

    def test_negative_group_points(self):
        data = good()
        data["correctness"][1]["points"] = -5
        self.assertRejected(data, "#2", "points must be >= 0")

    def test_group_missing_keys(self):
        for key in ("name", "filter", "points"):
            with self.subTest(key=key):
                data = good()
                del data["correctness"][0][key]
                self.assertRejected(data, "#1", f"missing '{key}'")

    def test_group_wrong_types(self):
        for key, value in (("name", 3), ("filter", ["*"]), ("points", "30"), ("points", True),
                           ("points", None)):
            with self.subTest(key=key, value=value):
                data = good()
                data["correctness"][0][key] = value
                self.assertRejected(data, "#1", f"'{key}' must be")

    def test_floor_not_below_target(self):
        for floor, target in ((0.05, 0.05), (0.06, 0.05), (-0.01, 0.05), (float("nan"), 0.05)):
            with self.subTest(floor=floor, target=target):
                data = good()
                data["performance"]["floor"] = floor
                data["performance"]["target"] = target
                self.assertRejected(data, "[performance]", "floor < target")

    def test_policy_module_missing_is_an_internal_error(self):
        with fakes.use_policy(None):     # None in sys.modules: the import fails
            with self.assertRaises(GraderError) as cm:
                parse_lab_config("x", good())
        self.assertEqual(cm.exception.exit_code, 1)
        self.assertIn("grader/policy/", cm.exception.message)

    def test_policy_rules_errors_name_the_file(self):
        broken = fakes.FakePolicy()
        def from_toml(table, where):
            raise ValueError("unknown key 'forbid_everything'")
        broken.PolicyRules.from_toml = staticmethod(from_toml)
        data = good()
        data["policy"] = {"forbid_everything": True}
        with fakes.use_policy(broken):
            self.assertRejected(data, "[policy]", "forbid_everything")

    def test_bonus_must_be_a_boolean(self):
        for value in ("true", 1, 0, None, [True]):
            with self.subTest(value=value):
                data = good()
                data["performance"]["bonus"] = value
                self.assertRejected(data, "'bonus'", "true or false")

    def test_performance_missing_keys(self):
        for key in ("points", "benchmark", "metric", "target", "floor"):
            with self.subTest(key=key):
                data = good()
                del data["performance"][key]
                self.assertRejected(data, "[performance]", f"missing '{key}'")

    def test_performance_wrong_types(self):
        for key, value in (("points", "20"), ("benchmark", 4096), ("metric", None),
                           ("target", "0.05"), ("floor", False)):
            with self.subTest(key=key, value=value):
                data = good()
                data["performance"][key] = value
                self.assertRejected(data, "[performance]", f"'{key}' must be")


    def test_lecture_of_a_performance_entry(self):
        data = good()
        data["performance"]["lecture"] = {"measure": "dram_bytes", "value": 1073741824,
                                          "says": "one pass reads n once"}
        (perf,) = parse_lab_config("x", data).performance
        self.assertEqual(perf.lecture, {"measure": "dram_bytes", "value": 1073741824.0,
                                        "says": "one pass reads n once"})
        self.assertIsNone(parse_lab_config("x", good()).performance[0].lecture)
        for lecture, words in (({"measure": "bytes", "value": 1, "says": "x"}, "'measure' must"),
                               ({"measure": "dram_bytes", "value": 0, "says": "x"}, "'value'"),
                               ({"measure": "dram_bytes", "value": True, "says": "x"}, "'value'"),
                               ({"measure": "dram_bytes", "value": 1, "says": " "}, "'says'"),
                               ({"measure": "dram_bytes", "value": 1, "says": "x", "unit": "B"},
                                "unknown key(s) unit"),
                               ("2N^3", "must be a table")):
            with self.subTest(lecture=lecture):
                data = good()
                data["performance"]["lecture"] = lecture
                self.assertRejected(data, "lecture", words)

    def test_every_labs_lecture_names_a_measure(self):
        # the labs' own files: each declared model is one the profile stage measures
        labs = Path(__file__).resolve().parents[2] / "labs"
        names = resolve_labs(labs, None)
        declared = {name: [p.lecture for p in load_lab_config(labs, name).performance
                           if p.lecture] for name in names}
        self.assertTrue(all(d["measure"] in config.LECTURE_MEASURES
                            for lectures in declared.values() for d in lectures))
        if "01_naive_matmul" in declared:       # a release may hold only some labs
            self.assertEqual([d["measure"] for d in declared["01_naive_matmul"]],
                             ["global_load_requests"])


class ParseRejectedGapsTest(unittest.TestCase):
    """Shapes the config checks let through in grader 0.1.0 (as internal errors or silently);
    each is rejected with a message naming the file since."""

    assertRejected = ParseRejectedTest.assertRejected

    def test_correctness_written_as_a_single_table(self):
        # `[correctness]` instead of `[[correctness]]`: today a TypeError (an "internal error").
        data = good()
        data["correctness"] = {"name": "public", "filter": "*", "points": 30}
        self.assertRejected(data, "correctness")

    def test_performance_not_a_table(self):
        data = good()
        data["performance"] = 20     # `performance = 20` at top level: today a TypeError
        self.assertRejected(data, "performance")

    def test_negative_performance_points(self):
        data = good()
        data["performance"]["points"] = -20   # today accepted: max_points becomes 60.5
        self.assertRejected(data, "[performance]", "points")

    def test_test_timeout_not_a_number(self):
        data = good()
        data["lab"]["test_timeout_s"] = "fast"   # today a ValueError (an "internal error")
        self.assertRejected(data, "test_timeout_s")

    def test_test_timeout_not_positive(self):
        data = good()
        data["lab"]["test_timeout_s"] = 0        # today accepted: every test would time out
        self.assertRejected(data, "test_timeout_s")

    def test_test_budget(self):
        data = good()
        data["lab"]["test_budget_s"] = 90
        self.assertEqual(parse_lab_config("01_naive_matmul", data).test_budget_s, 90.0)
        for bad in (0, -5, "long", float("inf")):
            data["lab"]["test_budget_s"] = bad
            self.assertRejected(data, "test_budget_s")

    def test_nan_group_points(self):
        data = good()
        data["correctness"][0]["points"] = float("nan")   # TOML allows `points = nan`
        self.assertRejected(data, "points")


class LoadRealLabTest(unittest.TestCase):
    def test_lab01_grading_toml(self):
        cfg = load_lab_config(LABS, "01_naive_matmul")
        self.assertEqual(cfg.name, "01_naive_matmul")
        self.assertEqual(cfg.student_files, ("matmul.cu",))
        self.assertEqual(cfg.max_points, 100.0)
        self.assertEqual([(g.name, g.points) for g in cfg.groups],
                         [("public", 30.0), ("hidden", 45.0)])
        (perf,) = cfg.performance
        self.assertEqual((perf.target, perf.floor, perf.points, perf.bands, perf.metric),
                         (0.07, 0.015, 20.0, 4, "ratio"))
        self.assertEqual(cfg.max_file_kib, 256)
        # the student file it names exists in the starter
        for f in cfg.student_files:
            self.assertTrue((LABS / cfg.name / f).is_file(), f)

    def test_lab04_bonus_entries(self):
        cfg = load_lab_config(LABS, "04_boundary")
        bonus = [p.benchmark for p in cfg.performance if p.bonus]
        self.assertEqual(bonus, ["matmul/v5_optimized/4096", "matmul/v5_optimized/4095x4097x4093"])
        self.assertEqual(cfg.max_points, 100.0)   # the v5 bonus points come on top

    def test_lab01_policy_table(self):
        cfg = load_lab_config(LABS, "01_naive_matmul")
        self.assertEqual(cfg.policy.table["forbid_imports"],
                         ["cudaMemcpy*", "cudaLaunchHostFunc", "cudaStreamAddCallback"])

    def test_lab01_loads_with_the_real_policy_module(self):
        import sys
        from unittest import mock
        with mock.patch.dict(sys.modules):
            sys.modules.pop("grader.policy", None)     # this module's fake stands aside
            policy = fakes.real_or_fake_policy()
            if isinstance(policy, fakes.FakePolicy):
                self.skipTest("grader/policy/ is not there yet")
            cfg = load_lab_config(LABS, "01_naive_matmul")
        self.assertIsInstance(cfg.policy, policy.PolicyRules)
        self.assertEqual(cfg.policy.forbid_imports,
                         ("cudaMemcpy*", "cudaLaunchHostFunc", "cudaStreamAddCallback"))

    def test_student_files_alone(self):
        # scripts/export-release reads only the student files, with the same reader.
        self.assertEqual(config.load_student_files(LABS, "01_naive_matmul"), ("matmul.cu",))
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "99_x").mkdir()
            toml = Path(tmp) / "99_x" / "grading.toml"
            toml.write_text('[lab]\nstudent_files = [\n  "a.cu",   # two lines, a comment\n'
                            '  "b.cu",\n]\n')
            self.assertEqual(config.load_student_files(Path(tmp), "99_x"), ("a.cu", "b.cu"))
            toml.write_text('[lab]\nstudent_files = ["../x.cu"]\n')
            with self.assertRaises(GraderError) as cm:
                config.load_student_files(Path(tmp), "99_x")
            self.assertIn("plain file names", cm.exception.message)

    def test_every_lab_config_loads(self):
        labs = config.discover_labs(LABS)
        self.assertIn("01_naive_matmul", labs)
        for lab in labs:
            with self.subTest(lab=lab):
                self.assertGreater(load_lab_config(LABS, lab).max_points, 0)

    def test_missing_config(self):
        with self.assertRaises(GraderError) as cm:
            load_lab_config(LABS, "99_nothing")
        self.assertIn("99_nothing", cm.exception.message)

    def test_bad_toml(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "01_x").mkdir()
            (Path(tmp) / "01_x" / "grading.toml").write_text("[lab\nstudent_files = 3\n")
            with self.assertRaises(GraderError) as cm:
                load_lab_config(Path(tmp), "01_x")
            self.assertIn("grading.toml", cm.exception.message)


class CMakeReaderTest(unittest.TestCase):
    """cmake/lab_config.py: what add_cuda_lab (cmake/CudaLab.cmake) includes at configure time,
    from the grader's reader; a mistake in grading.toml is the configure's error."""

    SCRIPT = REPO / "cmake" / "lab_config.py"

    def run_script(self, toml: str, name: str = "01_x"):
        import subprocess
        import sys
        tmp = Path(self.enterContext(tempfile.TemporaryDirectory()))
        (tmp / "labs" / name).mkdir(parents=True)
        (tmp / "labs" / name / "grading.toml").write_text(toml)
        out = tmp / "build" / "student_files.cmake"
        proc = subprocess.run([sys.executable, str(self.SCRIPT), str(tmp / "labs" / name),
                               str(out)], capture_output=True, text=True, timeout=60)
        return proc, (out.read_text() if out.exists() else None)

    GOOD_TOML = ('[lab]\nstudent_files = [\n  "matmul.cu",\n  "more $x \\\\ \\"q\\".cu",\n]\n'
                 '[[correctness]]\nname = "public"\nfilter = "*"\npoints = 1\n')

    def test_writes_the_student_files(self):
        proc, text = self.run_script(self.GOOD_TOML)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('set(LAB_STUDENT_FILES "matmul.cu" "more \\$x \\\\ \\"q\\".cu")', text)

    def test_a_mistake_is_the_readers_message_and_nothing_is_written(self):
        for toml, words in (("[lab\nstudent_files = 3\n", "grading.toml"),
                            ('[lab]\nstudent_files = ["a.cu"]\n', "[[correctness]]"),
                            (self.GOOD_TOML.replace("points = 1", 'points = "one"'),
                             "'points' must be float"),
                            ('[lab]\nstudent_files = ["a;b.cu"]\n[[correctness]]\n'
                             'name = "p"\nfilter = "*"\npoints = 1\n', "cannot be a CMake")):
            with self.subTest(toml=toml):
                proc, text = self.run_script(toml)
                self.assertEqual(proc.returncode, 1)
                self.assertIn(words, proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
                self.assertIsNone(text)

    def test_the_cmake_side_has_no_reader_of_its_own(self):
        text = (REPO / "cmake" / "CudaLab.cmake").read_text()
        self.assertIn("lab_config.py", text)
        self.assertNotIn("file(STRINGS", text)
        self.assertNotIn("student_files[", text)


class ResolveLabsTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.labs = Path(self._tmp.name)
        for name in ("01_naive_matmul", "02_tiled_matmul", "03_reduce"):
            (self.labs / name).mkdir()
            (self.labs / name / "grading.toml").write_text("")
        (self.labs / "04_no_config").mkdir()   # no grading.toml: not a lab

    def tearDown(self):
        self._tmp.cleanup()

    def test_words(self):
        for word in ("01", "01_naive_matmul", "naive_matmul"):
            with self.subTest(word=word):
                self.assertEqual(resolve_labs(self.labs, [word]), ["01_naive_matmul"])
        self.assertEqual(resolve_labs(self.labs, ["03", "tiled_matmul"]),
                         ["03_reduce", "02_tiled_matmul"])

    def test_no_words_is_every_lab_in_order(self):
        self.assertEqual(resolve_labs(self.labs, []),
                         ["01_naive_matmul", "02_tiled_matmul", "03_reduce"])

    def test_duplicates_collapse(self):
        self.assertEqual(resolve_labs(self.labs, ["01", "naive_matmul", "01_naive_matmul"]),
                         ["01_naive_matmul"])

    def test_unknown_names_the_available_labs(self):
        for word in ("nosuchlab", "04", "04_no_config", "matmul", "1"):
            with self.subTest(word=word):
                with self.assertRaises(GraderError) as cm:
                    resolve_labs(self.labs, [word])
                msg = cm.exception.message
                self.assertIn(f"'{word}'", msg)
                for lab in ("01_naive_matmul", "02_tiled_matmul", "03_reduce"):
                    self.assertIn(lab, msg)
                self.assertNotIn("04_no_config", msg.partition("labs:")[2])

    def test_real_labs(self):
        self.assertEqual(resolve_labs(LABS, ["01"]), ["01_naive_matmul"])
        self.assertEqual(resolve_labs(LABS, ["naive_matmul"]), ["01_naive_matmul"])
        with self.assertRaises(GraderError) as cm:
            resolve_labs(LABS, ["nosuchlab"])
        self.assertIn("01_naive_matmul", cm.exception.message)


class MatchesFilterTest(unittest.TestCase):
    PUB = "Shapes/MatmulPublic.MatchesCpuReference/v1_naive_M1_N1_K1"
    HID = "Shapes/MatmulHidden.MatchesCpuReference/v1_naive_M7_N3_K5"

    def test_single_pattern(self):
        self.assertTrue(gtest.matches_filter(self.PUB, "*MatmulPublic*"))
        self.assertFalse(gtest.matches_filter(self.HID, "*MatmulPublic*"))
        self.assertTrue(gtest.matches_filter(self.PUB, self.PUB))
        self.assertFalse(gtest.matches_filter(self.PUB, "MatmulPublic*"))

    def test_case_sensitive(self):
        self.assertFalse(gtest.matches_filter(self.PUB, "*matmulpublic*"))

    def test_alternatives(self):
        self.assertTrue(gtest.matches_filter("alpha.x", "a*:b*"))
        self.assertTrue(gtest.matches_filter("beta.x", "a*:b*"))
        self.assertFalse(gtest.matches_filter("gamma.x", "a*:b*"))

    def test_negative(self):
        self.assertTrue(gtest.matches_filter("abc.fast", "a*-*slow*"))
        self.assertFalse(gtest.matches_filter("abc.slow_big", "a*-*slow*"))
        self.assertFalse(gtest.matches_filter("xyz.fast", "a*-*slow*"))
        self.assertFalse(gtest.matches_filter("abc.fast", "a*-*slow*:*fast"))

    def test_only_negative_means_everything_else(self):
        self.assertTrue(gtest.matches_filter("xyz.fast", "-*slow*"))
        self.assertFalse(gtest.matches_filter("xyz.slow", "-*slow*"))

    def test_question_mark(self):
        self.assertTrue(gtest.matches_filter("T.a1", "T.a?"))
        self.assertFalse(gtest.matches_filter("T.a12", "T.a?"))


if __name__ == "__main__":
    unittest.main()
