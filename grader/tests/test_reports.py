"""The reports for other readers (grader/reports.py): Gradescope's results.json, JUnit XML, the
Markdown summary, the CSV gradebook, reading results files back, and the command line paths
that write them (`grade --gradescope/--junit/--markdown`, `report`), errors included.

Results are built here as GradeResult objects, and read back from the JSON that
GradeResult.to_json() writes, as `report` reads a real results file.
"""

import copy
import csv
import io
import json
import os
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

from grader import grade, report_text, reports
from grader.results import (BuildResult, GradeResult, GroupResult, LabResult, PerfResult,
                            PolicyReport, TestResult)
from grader.tests import fakes

LAB, LAB5 = "01_naive_matmul", "05_reduction"
PUB, HID = "Shapes/MatmulPublic", "Shapes/MatmulHidden"
NASTY = 'C[3,4] = 1.5 <expected> 2.5 & "quoted" \x00\x1b[31mred\x1b[0m \ud800 end'


def matmul_lab(points=45.0) -> LabResult:
    pub = GroupResult("public", "*MatmulPublic*", 30.0, points=20.0, tests=[
        TestResult(f"{PUB}.MatchesCpuReference/v1_naive_M1_N1_K1", "passed", "", 0.25),
        TestResult(f"{PUB}.MatchesCpuReference/v1_naive_M7_N3_K5", "failed",
                   "C[3,4] = 1.5, expected 2.5 (tolerance 1e-4)\n  2 of 21 elements differ",
                   0.5),
        TestResult(f"{PUB}.MatchesCpuReference/v1_naive_M64_N64_K64", "passed", "", 0.25)])
    hid = GroupResult("hidden", "*MatmulHidden*", 50.0, points=25.0, tests=[
        TestResult(f"{HID}.SecretShape_A", "passed", "", 1.0),
        TestResult(f"{HID}.SecretShape_B", "crashed", "the worker crashed (SIGSEGV)", 1.0)])
    perf = PerfResult(max_points=20.0, status="gated", target=0.07, floor=0.015,
                      label="speed / cuBLAS", name="matmul/v1_naive/4096",
                      benchmark="matmul/v1_naive/4096", metric_name="ratio", bands=4,
                      message="not measured: every correctness test must pass first")
    return LabResult(lab=LAB, title="Naive matmul", max_points=100.0, points=points,
                     seed=987654321, build=BuildResult(ok=True, seconds=12.5),
                     policy=PolicyReport(ok=True, seconds=0.5), groups=[pub, hid],
                     performance=[perf], files={"matmul.cu": "ab" * 32})


def reduction_lab() -> LabResult:
    """Every test passes; 7 public tests share 30 points unevenly; a measured perf entry."""
    pub = GroupResult("public", "*ReducePublic*", 30.0, points=30.0,
                      tests=[TestResult(f"ReducePublic.T{i}", "passed", "", 0.1)
                             for i in range(7)])
    hid = GroupResult("hidden", "*ReduceHidden.*:*ReduceHiddenRepeat*", 40.0, points=40.0,
                      tests=[TestResult(f"ReduceHidden.T{i}", "passed") for i in range(3)])
    races = GroupResult("races", "*ReduceHiddenRace*", 10.0, points=10.0,
                        tests=[TestResult("ReduceHiddenRace.v1", "passed")])
    perf = PerfResult(max_points=20.0, points=15.0, status="measured", metric=0.75,
                      metric_lo=0.74, metric_hi=0.76, band=3, bands=4, target=0.9, floor=0.3,
                      label="speed / CUB", name="v4 2^28", metric_name="ratio",
                      benchmark="reduce/v4_optimized/268435456")
    return LabResult(lab=LAB5, title="Parallel reduction", max_points=100.0, points=95.0,
                     seed=42, build=BuildResult(ok=True, seconds=3.0), groups=[pub, hid, races],
                     performance=[perf])


def make_result(*labs, status="graded", message="", exit_code=0) -> GradeResult:
    labs = list(labs) or [matmul_lab()]
    return GradeResult(submission="/subs/alice/labs", seed=None, grader_version="0.2.0",
                       status=status, message=message, exit_code=exit_code,
                       gpu={"available": True, "name": "NVIDIA H100"}, labs=labs,
                       started="2024-01-01T00:00:00+00:00", seconds=3.5)


def failed_lab(status: str, message: str, **kw) -> LabResult:
    return LabResult(lab=LAB5, title="Parallel reduction", max_points=100.0, status=status,
                     message=message, **kw)


def round_trip(result: GradeResult) -> GradeResult:
    """What `report` sees: the result written as a results file and read back."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.json"
        path.write_text(result.to_json(), encoding="utf-8")
        return reports.load_results(path)


class GradescopeTest(unittest.TestCase):
    def gs(self, result):
        text = reports.gradescope_json(result)
        return json.loads(text)

    def test_scores_sum_to_the_total(self):
        for labs in ([matmul_lab()], [reduction_lab()], [matmul_lab(), reduction_lab()]):
            result = round_trip(make_result(*labs))
            with self.subTest(labs=[lab.lab for lab in labs]):
                d = self.gs(result)
                self.assertAlmostEqual(sum(t["score"] for t in d["tests"]), d["score"], places=6)
                self.assertAlmostEqual(d["score"], result.points, places=6)
                self.assertAlmostEqual(sum(t["max_score"] for t in d["tests"]),
                                       result.max_points, places=6)

    def test_uneven_shares_still_sum_and_stay_within_each_maximum(self):
        tests = [TestResult(f"T{i}", "passed" if i in (4, 5, 6) else "failed") for i in range(7)]
        group = GroupResult("public", "*P*", 30.0, points=12.86, tests=tests)   # 30/7*3
        lab = LabResult(lab=LAB, title="t", max_points=30.0, points=12.86, groups=[group])
        d = self.gs(make_result(lab))
        scores = [(t["score"], t["max_score"]) for t in d["tests"]]
        self.assertAlmostEqual(sum(s for s, _ in scores), 12.86, places=6)
        self.assertAlmostEqual(sum(m for _, m in scores), 30.0, places=6)
        self.assertTrue(all(s <= m for s, m in scores), scores)
        self.assertEqual([s > 0 for s, _ in scores], [t.passed for t in tests])

    def test_a_file_that_disagrees_with_itself_still_sums(self):
        for points, passed in ((30.0, 2), (0.0, 2), (5.0, 0)):
            tests = [TestResult(f"T{i}", "passed" if i < passed else "failed") for i in range(3)]
            group = GroupResult("public", "*P*", 30.0, points=points, tests=tests)
            lab = LabResult(lab=LAB, title="t", max_points=30.0, points=points, groups=[group])
            with self.subTest(points=points, passed=passed):
                d = self.gs(make_result(lab))
                self.assertAlmostEqual(sum(t["score"] for t in d["tests"]), points, places=6)
                self.assertAlmostEqual(d["score"], points, places=6)

    def test_hidden_groups_show_after_the_due_date(self):
        d = self.gs(make_result(matmul_lab(), reduction_lab()))
        vis = {}
        for t in d["tests"]:
            vis.setdefault(t["tags"][1], set()).add(t["visibility"])
        self.assertEqual(vis["public"], {"visible"})
        self.assertEqual(vis["hidden"], {"after_due_date"})
        self.assertEqual(vis["races"], {"after_due_date"})
        self.assertEqual(vis["performance"], {"visible"})
        self.assertEqual(d["visibility"], "visible")
        self.assertEqual(d["stdout_visibility"], "hidden")

    def test_what_counts_as_a_hidden_group(self):
        hidden = report_text.is_hidden_group
        self.assertTrue(hidden(GroupResult("hidden", "*Anything*", 1)))
        self.assertTrue(hidden(GroupResult("extra", "*MatmulHidden*", 1)))
        self.assertTrue(hidden(GroupResult("races", "*Race*", 1)))
        self.assertFalse(hidden(GroupResult("public", "*MatmulPublic*", 1)))
        self.assertFalse(hidden(GroupResult("public", "*Matmul*-*Hidden*", 1)))

    def test_each_test_carries_its_message_and_status(self):
        d = self.gs(make_result())
        by_name = {t["name"]: t for t in d["tests"]}
        failed = by_name[f"{LAB} public: {PUB}.MatchesCpuReference/v1_naive_M7_N3_K5"]
        self.assertEqual(failed["status"], "failed")
        self.assertEqual(failed["output"], matmul_lab().groups[0].tests[1].message)
        self.assertEqual((failed["score"], failed["max_score"]), (0.0, 10.0))
        passed = by_name[f"{LAB} public: {PUB}.MatchesCpuReference/v1_naive_M1_N1_K1"]
        self.assertEqual((passed["status"], passed["score"]), ("passed", 10.0))
        crashed = by_name[f"{LAB} hidden: {HID}.SecretShape_B"]
        self.assertEqual(crashed["output"], "the worker crashed (SIGSEGV)")
        self.assertEqual(len(d["tests"]), 6)   # 5 tests + 1 performance entry
        for t in d["tests"]:
            self.assertIn(t["status"], ("passed", "failed"))

    def test_the_visible_summary_names_no_hidden_test(self):
        d = self.gs(make_result())
        self.assertIn("Total: 45.00 / 100", d["output"])
        self.assertIn("seed 987654321", d["output"])
        self.assertNotIn("SecretShape", d["output"])
        self.assertIn("after the due date", d["output"])

    def test_performance_entries_are_tests(self):
        d = self.gs(make_result(reduction_lab()))
        (perf,) = [t for t in d["tests"] if "performance" in t["tags"]]
        self.assertEqual(perf["name"], f"{LAB5} performance: v4 2^28")
        self.assertEqual((perf["score"], perf["max_score"], perf["status"]),
                         (15.0, 20.0, "failed"))
        self.assertIn("0.750 [0.740, 0.760] band 3/4", perf["output"])
        lab = reduction_lab()
        lab.performance[0].points, lab.performance[0].band = 20.0, 4
        lab.points = 100.0
        (perf,) = [t for t in self.gs(make_result(lab))["tests"] if "performance" in t["tags"]]
        self.assertEqual((perf["score"], perf["status"]), (20.0, "passed"))

    def test_labs_not_graded_are_one_visible_failing_test_each(self):
        cases = {
            "build_failed": failed_lab("build_failed", "reduce.cu(3): error: expected a ';'",
                                       build=BuildResult(ok=False, log="reduce.cu(3): error: "
                                                         "expected a ';'\n  int x\n       ^")),
            "rejected": failed_lab("rejected", "forbidden import: cudaMemcpy (rule imports)"),
            "bad_files": failed_lab("bad_files", "reduce.cu is a symbolic link"),
            "no_gpu": failed_lab("no_gpu", "no CUDA GPU: no device"),
            "error": failed_lab("error", "not graded: the harness does not build"),
        }
        for status, lab in cases.items():
            with self.subTest(status=status):
                d = self.gs(round_trip(make_result(matmul_lab(), lab, status=status)))
                mine = [t for t in d["tests"] if t["tags"][0] == LAB5]
                self.assertEqual(len(mine), 1)
                (t,) = mine
                self.assertEqual((t["status"], t["visibility"], t["score"], t["max_score"]),
                                 ("failed", "visible", 0.0, 100.0))
                self.assertIn(lab.message, t["output"])
                self.assertAlmostEqual(d["score"], 45.0)
        d = self.gs(make_result(cases["build_failed"]))
        self.assertIn("int x", d["tests"][0]["output"])   # the compiler's log is shown
        self.assertIn(f"{LAB5} - Parallel reduction: 0.00 / 100 - did not build", d["output"])

    def test_nothing_per_lab_is_still_a_failing_test(self):
        d = self.gs(GradeResult("/s", None, "0.2.0", status="error", message="configure failed"))
        self.assertEqual(d["score"], 0.0)
        self.assertEqual([(t["status"], t["output"]) for t in d["tests"]],
                         [("failed", "configure failed")])

    def test_catastrophic_failure_is_valid_json_with_score_zero(self):
        for text in (reports.gradescope_json(None, "the grading crashed: KeyError: 'x'"),
                     reports.gradescope_json(None)):
            d = json.loads(text)
            self.assertEqual(d["score"], 0.0)
            self.assertEqual(d["visibility"], "visible")
            self.assertEqual(d["tests"][0]["status"], "failed")
            self.assertEqual(d["tests"][0]["visibility"], "visible")
        d = json.loads(reports.gradescope_json(None, "the grading crashed: KeyError: 'x'"))
        self.assertIn("KeyError: 'x'", d["output"])
        self.assertIn("KeyError: 'x'", d["tests"][0]["output"])

    def test_a_rendering_bug_still_gives_a_valid_file(self):
        with mock.patch.object(reports, "gradescope", side_effect=KeyError("boom")):
            d = json.loads(reports.gradescope_json(make_result()))
        self.assertEqual(d["score"], 0.0)
        self.assertIn("KeyError", d["tests"][0]["output"])

    def test_strict_json_without_control_characters(self):
        lab = matmul_lab()
        lab.groups[0].tests[1].message = NASTY
        lab.groups[0].tests[1].name = "Bad\x07Name"
        text = reports.gradescope_json(make_result(lab))
        text.encode("utf-8")   # no lone surrogate
        self.assertNotIn("\\u0000", text)
        d = json.loads(text, parse_constant=lambda c: self.fail(f"{c} in the JSON"))
        out = [t["output"] for t in d["tests"] if "Bad" in t["name"]][0]
        self.assertIn('<expected> 2.5 & "quoted" \\x00\\x1b[31mred', out)
        self.assertIn("\\ud800 end", out)

    def test_long_output_is_cut(self):
        lab = matmul_lab()
        lab.groups[0].tests[1].message = "\n".join(f"line {i}" for i in range(5000))
        d = self.gs(make_result(lab))
        out = d["tests"][1]["output"]
        self.assertIn("line 399", out)
        self.assertNotIn("line 400\n", out)
        self.assertIn("[... 4600 more lines]", out)


class JUnitTest(unittest.TestCase):
    def parse(self, result) -> ET.Element:
        return ET.fromstring(reports.junit_xml(result).encode("utf-8"))

    def suites(self, root):
        return {s.get("name"): s for s in root.iter("testsuite")}

    def test_structure_and_counts(self):
        root = self.parse(round_trip(make_result(matmul_lab(), reduction_lab())))
        self.assertEqual(root.tag, "testsuites")
        suites = self.suites(root)
        self.assertEqual(list(suites), [LAB, f"{LAB}.public", f"{LAB}.hidden",
                                        f"{LAB}.performance", LAB5, f"{LAB5}.public",
                                        f"{LAB5}.hidden", f"{LAB5}.races",
                                        f"{LAB5}.performance"])
        pub = suites[f"{LAB}.public"]
        self.assertEqual((pub.get("tests"), pub.get("failures"), pub.get("skipped")),
                         ("3", "1", "0"))
        self.assertEqual(pub.get("time"), "1.000")
        for case in pub.iter("testcase"):
            self.assertEqual(case.get("classname"), f"{LAB}.public")
        hid = suites[f"{LAB}.hidden"]
        self.assertEqual((hid.get("tests"), hid.get("failures")), ("2", "1"))
        self.assertEqual(hid.find("testcase/failure").get("type"), "crashed")
        perf = suites[f"{LAB}.performance"]
        self.assertEqual((perf.get("tests"), perf.get("skipped")), ("1", "1"))
        # the measured reduction entry at 15/20 is a failure: below its target
        self.assertEqual(suites[f"{LAB5}.performance"].get("failures"), "1")
        self.assertEqual(suites[f"{LAB5}.races"].get("failures"), "0")
        cases = list(root.iter("testcase"))
        self.assertEqual(root.get("tests"), str(len(cases)))
        self.assertEqual(root.get("failures"),
                         str(sum(c.find("failure") is not None for c in cases)))
        self.assertEqual(root.get("failures"), "3")
        self.assertEqual(root.get("skipped"), "1")
        self.assertEqual(suites[LAB].find("properties/property").get("value"), "987654321")

    def test_failure_message_and_body(self):
        root = self.parse(make_result())
        (failure,) = [c.find("failure") for c in root.iter("testcase")
                      if c.get("name").endswith("M7_N3_K5")]
        self.assertEqual(failure.get("message"), "C[3,4] = 1.5, expected 2.5 (tolerance 1e-4)")
        self.assertEqual(failure.text, matmul_lab().groups[0].tests[1].message)

    def test_escaping_of_markup_and_control_characters(self):
        lab = matmul_lab()
        lab.groups[0].tests[1].message = NASTY + "\nsecond line"
        lab.groups[0].tests[1].name = 'Name<&">\x01'
        root = self.parse(make_result(lab))   # well-formed, or this raises
        (case,) = [c for c in root.iter("testcase") if c.get("name").startswith("Name")]
        self.assertEqual(case.get("name"), 'Name<&">\\x01')
        failure = case.find("failure")
        self.assertIn('<expected> 2.5 & "quoted" \\x00\\x1b[31mred', failure.get("message"))
        self.assertIn("\\ud800 end\nsecond line", failure.text)

    def test_skipped_and_not_run(self):
        lab = matmul_lab()
        lab.groups[0].tests.append(TestResult("T.skip", "skipped", "needs 2 GPUs"))
        lab.groups[0].tests.append(TestResult("T.notrun", "not_run"))
        lab.groups[0].tests.append(TestResult("T.slow", "timeout", "killed after 60 s"))
        suites = self.suites(self.parse(make_result(lab)))
        pub = suites[f"{LAB}.public"]
        self.assertEqual((pub.get("tests"), pub.get("failures"), pub.get("skipped")),
                         ("6", "2", "2"))
        skipped = {c.get("name"): c.find("skipped") for c in pub.iter("testcase")}
        self.assertEqual(skipped["T.skip"].get("message"), "needs 2 GPUs")
        self.assertIsNotNone(skipped["T.notrun"])

    def test_labs_not_graded(self):
        build = failed_lab("build_failed", "reduce.cu(3): error: expected a ';'",
                           build=BuildResult(ok=False, seconds=2.0, log="int x\n     ^"))
        suites = self.suites(self.parse(make_result(build)))
        (case,) = suites[LAB5].iter("testcase")
        self.assertEqual((case.get("name"), case.get("time")), ("build", "2.000"))
        self.assertIn("int x", case.find("failure").text)
        gpu = failed_lab("no_gpu", "no CUDA GPU: no device",
                         groups=[GroupResult("public", "*P*", 30.0, note="not run: no GPU")])
        root = self.parse(make_result(gpu, status="no_gpu"))
        self.assertEqual((root.get("failures"), root.get("skipped")), ("0", "1"))
        self.assertEqual(list(self.suites(root)), [LAB5])   # no empty suite per group
        rejected = failed_lab("rejected", "forbidden import: cudaMemcpy",
                              policy=PolicyReport(ok=False))
        suites = self.suites(self.parse(make_result(rejected)))
        self.assertEqual([c.get("name") for c in suites[LAB5].iter("testcase")], ["policy"])
        self.assertEqual(suites[LAB5].get("failures"), "1")


class MarkdownTest(unittest.TestCase):
    def test_score_tables(self):
        md = reports.markdown(round_trip(make_result(matmul_lab(), reduction_lab())))
        self.assertIn("## Grade: 140.00 / 200", md)
        self.assertIn(f"### {LAB} - Naive matmul: 45.00 / 100 (seed 987654321)", md)
        self.assertIn("| group | passed | points |", md)
        self.assertIn("| public | 2/3 | 20.00 / 30 |", md)
        self.assertIn("| hidden | 1/2 | 25.00 / 50 |", md)
        self.assertIn("| races | 1/1 | 10.00 / 10 |", md)
        self.assertIn("| **total** | | **45.00 / 100** |", md)
        self.assertIn("| performance | metric | value | 95% interval | band | points |", md)
        self.assertIn("| v4 2^28 | speed / CUB | 0.750 | [0.740, 0.760] | 3/4 | 15.00 / 20 |", md)
        self.assertIn("| matmul/v1_naive/4096 | speed / cuBLAS | not measured: correctness "
                      "first |  |  | 0.00 / 20 |", md)

    def test_profile_lines_under_the_performance_table(self):
        lab = reduction_lab()
        lab.performance[0].counters.update(
            GBps=3000.0, student_ms=0.36, prof_status=1, prof_kernels=1, prof_registers=32,
            prof_dram_read_bytes=2.2e9, prof_dram_write_bytes=0.0, prof_ld_sectors=1e7,
            prof_ld_sector_use_pct=100.0, prof_occupancy_pct=90.0)
        md = reports.markdown(round_trip(make_result(lab)))
        self.assertIn("v4 2^28, profile: DRAM 2.2 GB read, 0 B written: 2.04x the 1.08 GB the "
                      "model counts", md)
        self.assertIn("- 2.0x the model's bytes: data crosses DRAM more than once", md)
        (perf,) = [t for t in reports.gradescope_tests(round_trip(make_result(lab)))
                   if "2^28" in t["name"]]
        self.assertIn("using 100% of each sector", perf["output"])

    def test_failures_in_details(self):
        md = reports.markdown(make_result())
        self.assertEqual(md.count("<details>"), 2)
        self.assertEqual(md.count("</details>"), 2)
        self.assertIn(f"<code>{PUB}.MatchesCpuReference/v1_naive_M7_N3_K5</code>: failed"
                      f"</summary>\n\n```text\nC[3,4] = 1.5, expected 2.5", md)
        self.assertIn("the worker crashed (SIGSEGV)\n```\n\n</details>", md)

    def test_only_the_first_failures_and_long_messages_cut(self):
        lab = matmul_lab()
        lab.groups[0].tests = [TestResult(f"T.f{i}", "failed", "\n".join(
            f"line {j}" for j in range(100))) for i in range(14)]
        md = reports.markdown(make_result(lab))
        self.assertEqual(md.count("<details>"), reports.MD_MAX_FAILURES)
        self.assertIn("<code>T.f9</code>", md)
        self.assertNotIn("<code>T.f10</code>", md)
        self.assertIn("... and 5 more", md)   # 4 more in public, the crash in hidden
        self.assertIn("line 39\n[... 60 more lines]", md)
        self.assertNotIn("line 40", md)

    def test_escaping(self):
        lab = matmul_lab()
        lab.groups[0].name = "pub|lic"
        lab.groups[0].tests[1].name = "T<script>"
        lab.groups[0].tests[1].message = "before\n```\ninside\n```\nafter"
        md = reports.markdown(make_result(lab))
        self.assertIn("| pub\\|lic | 2/3 |", md)
        self.assertIn("<code>T&lt;script&gt;</code>", md)
        self.assertNotIn("<script>", md)
        self.assertIn("````text\nbefore\n```\ninside\n```\nafter\n````", md)

    def test_no_gpu_and_build_failure(self):
        gpu = failed_lab("no_gpu", "no CUDA GPU: no device", groups=[
            GroupResult("public", "*P*", 30.0, note="not run: no GPU")])
        md = reports.markdown(make_result(gpu, status="no_gpu", message="no CUDA GPU: no device",
                                          exit_code=3))
        self.assertIn("**Not graded on a GPU:** no CUDA GPU: no device", md)
        self.assertIn("| public | not run: no GPU | 0.00 / 30 |", md)
        self.assertIn("**Not run: no GPU**", md)
        build = failed_lab("build_failed", "reduce.cu(3): error: x",
                           build=BuildResult(ok=False, log="reduce.cu(3): error: x\n  int x"))
        md = reports.markdown(make_result(build))
        self.assertIn("**Did not build**", md)
        self.assertIn("<b>05_reduction</b>: did not build</summary>", md)
        self.assertIn("  int x\n```", md)

    def test_several_submissions(self):
        md = reports.markdown_many([("alice", make_result()),
                                    ("bob", make_result(reduction_lab()))])
        self.assertIn("| alice | graded | 45.00 / 100 |", md)
        self.assertIn("| bob | graded | 95.00 / 100 |", md)
        self.assertIn("### alice", md)
        self.assertIn("#### Grade: 95.00 / 100", md)


class GradebookTest(unittest.TestCase):
    def rows(self, named):
        return list(csv.reader(io.StringIO(reports.gradebook(named))))

    def test_columns_and_rows(self):
        rows = self.rows([("alice", make_result(matmul_lab(), reduction_lab())),
                          ("bob", make_result(reduction_lab())),
                          ("carol", make_result(matmul_lab()))])
        self.assertEqual(rows[0], [
            "submission", "total", "max_points", "status",
            LAB, f"{LAB}:public", f"{LAB}:hidden", f"{LAB}:perf:matmul/v1_naive/4096",
            LAB5, f"{LAB5}:public", f"{LAB5}:hidden", f"{LAB5}:races", f"{LAB5}:perf:v4 2^28"])
        self.assertEqual(rows[1], ["alice", "140.00", "200", "graded", "45.00", "20.00", "25.00",
                                   "0.00", "95.00", "30.00", "40.00", "10.00", "15.00"])
        self.assertEqual(rows[2], ["bob", "95.00", "100", "graded", "", "", "", "",
                                   "95.00", "30.00", "40.00", "10.00", "15.00"])
        self.assertEqual(rows[3][4:9], ["45.00", "20.00", "25.00", "0.00", ""])
        self.assertEqual(len(rows), 4)

    def test_race_audit_column_only_where_a_submission_was_audited(self):
        self.assertNotIn("race_audit", self.rows([("a", make_result(reduction_lab()))])[0])
        clean, racy, slow, plain = (make_result(reduction_lab()) for _ in range(4))
        clean.labs[0].performance[0].counters["race_audit"] = 1.0
        slow.labs[0].performance[0].counters["race_audit"] = -1.0
        perf = racy.labs[0].performance[0]
        perf.status, perf.message = "failed", ("the race audit (this benchmark's last timed call "
                                               "replayed under compute-sanitizer racecheck) found")
        rows = self.rows([("clean", clean), ("racy", racy), ("slow", slow), ("plain", plain)])
        self.assertEqual(rows[0][-1], "race_audit")
        self.assertEqual([r[-1] for r in rows[1:]], ["clean", "hazards", "no verdict", ""])

    def test_column_order_does_not_depend_on_the_order_of_files(self):
        a, b = make_result(reduction_lab()), make_result(matmul_lab())
        self.assertEqual(self.rows([("a", a), ("b", b)])[0], self.rows([("b", b), ("a", a)])[0])

    def test_no_formulas_and_quoting(self):
        rows = self.rows([("=HYPERLINK(\"x\")", make_result()), ("a,b \"c\"", make_result())])
        self.assertEqual(rows[1][0], "'=HYPERLINK(\"x\")")
        self.assertEqual(rows[2][0], "a,b \"c\"")

    def test_names(self):
        r = make_result()
        path = Path("/results/alice/grade-results.json")
        self.assertEqual(reports.submission_name(path, r), "/subs/alice/labs")
        self.assertEqual(reports.submission_name(path, r, "folder"), "alice")
        self.assertEqual(reports.submission_name(Path("/r/bob.json"), r, "file"), "bob")

    def test_names_that_are_not_utf8(self):
        # Folder names in Latin-1 come from the file system as lone surrogates: escaped.
        r = make_result()
        r.submission = os.fsdecode(b"/subs/caf\xe9/labs")
        path = Path(os.fsdecode(b"/results/j\xf6rg/grade-results.json"))
        self.assertEqual(reports.submission_name(path, r, "folder"), "j\\xf6rg")
        self.assertEqual(reports.submission_name(path, r), "/subs/caf\\xe9/labs")
        json.loads(r.to_json().encode("utf-8"))        # valid UTF-8 JSON


class LoadTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.tmp = Path(self._tmp.name)

    def write(self, text, name="r.json") -> Path:
        path = self.tmp / name
        path.write_text(text, encoding="utf-8")
        return path

    def test_round_trip(self):
        for r in (make_result(matmul_lab(), reduction_lab()),
                  make_result(failed_lab("rejected", "no", policy=PolicyReport(
                      ok=False, violations=[{"rule": "r", "symbol": "s", "message": "m"}])))):
            loaded = reports.load_results(self.write(r.to_json()))
            self.assertEqual(loaded, r)   # dataclasses all the way down, or this fails
            self.assertEqual(loaded.to_json(), r.to_json())

    def assertBad(self, path, *words):
        with self.assertRaises(reports.GraderError) as cm:
            reports.load_results(path)
        self.assertEqual(cm.exception.exit_code, 2)
        for w in words:
            self.assertIn(w, cm.exception.message)

    def test_bad_files(self):
        self.assertBad(self.tmp / "none.json", "cannot read", "none.json")
        self.assertBad(self.write("{"), "not JSON")
        (self.tmp / "bin.json").write_bytes(b"\xff\xfe")
        self.assertBad(self.tmp / "bin.json", "not UTF-8")
        self.assertBad(self.write("[1, 2]"), "not a grader results file")
        self.assertBad(self.write('{"score": 3, "tests": []}'), "not a grader results file")
        d = json.loads(make_result().to_json())
        d["labs"][0]["groups"][1]["tests"][0]["status"] = 7
        self.assertBad(self.write(json.dumps(d)), "labs[0].groups[1].tests[0].status",
                       "expected str")
        d = json.loads(make_result().to_json())
        del d["labs"][0]["title"]
        self.assertBad(self.write(json.dumps(d)), "labs[0]: missing 'title'")
        d = json.loads(make_result().to_json())
        d["labs"][0]["points"] = True
        self.assertBad(self.write(json.dumps(d)), "labs[0].points")
        for seed in ("12", 1.5, True):
            d = json.loads(make_result().to_json())
            d["labs"][0]["seed"] = seed
            self.assertBad(self.write(json.dumps(d)), "labs[0].seed", "expected int | None")
        text = make_result().to_json().replace('"seconds": 3.5', '"seconds": NaN')
        self.assertBad(self.write(text), "NaN")
        self.assertBad(self.tmp, "cannot read")   # a directory

    def test_unknown_keys_are_ignored(self):
        d = json.loads(make_result().to_json())
        d["from_a_newer_grader"] = {"x": 1}
        d["labs"][0]["groups"][0]["new_field"] = []
        self.assertEqual(reports.load_results(self.write(json.dumps(d))), make_result())


class CliTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.tmp = Path(self._tmp.name)

    def main(self, argv):
        return fakes.run_cli(argv)

    def results_file(self, result=None, name="r.json") -> Path:
        path = self.tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((result or make_result()).to_json() + "\n", encoding="utf-8")
        return path

    def assertUsageError(self, argv, *words):
        code, out, err = self.main(argv)
        self.assertEqual(code, 2, err)
        self.assertIn("grader: error:", err)
        self.assertNotIn("Traceback", err)
        for w in words:
            self.assertIn(w, err)
        return err

    def test_report_writes_every_format(self):
        r = self.results_file(make_result(matmul_lab(), reduction_lab()))
        gs, ju, md = self.tmp / "results.json", self.tmp / "junit.xml", self.tmp / "summary.md"
        code, out, err = self.main(["report", r, "--gradescope", gs, "--junit", ju,
                                    "--markdown", md])
        self.assertEqual(code, 0, err)
        self.assertEqual(out, "")
        self.assertEqual(json.loads(gs.read_text())["score"], 140.0)
        self.assertEqual(ET.parse(ju).getroot().get("failures"), "3")
        self.assertIn("## Grade: 140.00 / 200", md.read_text())

    def test_report_csv_of_several(self):
        a = self.results_file(make_result(), "alice/grade-results.json")
        b = self.results_file(make_result(reduction_lab()), "bob/grade-results.json")
        book = self.tmp / "book.csv"
        code, _, err = self.main(["report", a, b, "--csv", book, "--name-from", "folder"])
        self.assertEqual(code, 0, err)
        rows = list(csv.reader(io.StringIO(book.read_text())))
        self.assertEqual([row[:2] for row in rows], [["submission", "total"], ["alice", "45.00"],
                                                     ["bob", "95.00"]])

    def test_report_to_standard_output(self):
        code, out, err = self.main(["report", self.results_file(), "--markdown", "-"])
        self.assertEqual(code, 0, err)
        self.assertTrue(out.startswith("## Grade: 45.00 / 100"), out[:80])

    def test_report_without_outputs_prints_the_console_report(self):
        code, out, err = self.main(["report", self.results_file()])
        self.assertEqual(code, 0, err)
        self.assertIn("TOTAL 45.00 / 100", out)

    def test_report_errors(self):
        self.assertUsageError(["report", self.tmp / "none.json", "--junit", self.tmp / "j.xml"],
                              "cannot read the results file", "none.json")
        self.assertFalse((self.tmp / "j.xml").exists())
        bad = self.tmp / "bad.json"
        bad.write_text("not json")
        self.assertUsageError(["report", bad], "not JSON")
        bad.write_text('{"score": 1}')
        self.assertUsageError(["report", bad, "--csv", self.tmp / "b.csv"],
                              "not a grader results file")
        r = self.results_file()
        self.assertUsageError(["report", r, r, "--gradescope", self.tmp / "g.json"],
                              "--gradescope renders one results file, got 2")
        self.assertUsageError(["report", r, r, "--junit", self.tmp / "j.xml"], "--junit")
        self.assertUsageError(["report", r, "--junit", "-", "--csv", "-"], "standard output")
        self.assertUsageError(["report", r, "--markdown", self.tmp / "no" / "s.md"],
                              "--markdown", "does not exist")
        self.assertUsageError(["report", r, "--csv", self.tmp], "--csv", "is a directory")
        before = r.read_text()
        self.assertUsageError(["report", r, "--junit", r], "--junit", "results file read")
        self.assertEqual(r.read_text(), before)
        self.assertUsageError(["report", r, "--junit", self.tmp / "x", "--markdown",
                               self.tmp / "x"], "--markdown", "also --junit")
        self.assertUsageError(["report"], "RESULTS.json")
        self.assertUsageError(["report", r, "--name-from", "nope"], "--name-from")

    def test_report_of_a_missing_file_still_gives_gradescope_a_file(self):
        gs = self.tmp / "results.json"
        self.assertUsageError(["report", self.tmp / "grade-results.json", "--gradescope", gs],
                              "cannot read")
        d = json.loads(gs.read_text())
        self.assertEqual(d["score"], 0.0)
        self.assertIn("cannot read the results file", d["tests"][0]["output"])
        self.assertEqual(d["tests"][0]["visibility"], "visible")

    # grade --gradescope/--junit/--markdown, with the grading itself replaced

    def grade_args(self, *extra):
        sub = self.tmp / "sub"
        (sub / LAB).mkdir(parents=True, exist_ok=True)
        (sub / LAB / "matmul.cu").write_text("// x\n")
        return ["grade", LAB, "--submission", sub, "--build-dir", self.tmp / "build", "-q",
                "-o", self.tmp / "grade-results.json", *extra]

    def outputs(self):
        return (self.tmp / "grade-results.json", self.tmp / "gs.json", self.tmp / "junit.xml",
                self.tmp / "summary.md")

    def run_grade(self, fake, *extra):
        out, gs, ju, md = self.outputs()
        with mock.patch.object(grade, "grade", fake):
            return self.main(self.grade_args("--gradescope", gs, "--junit", ju, "--markdown", md,
                                             *extra))

    def test_grade_writes_the_reports_beside_the_json(self):
        result = make_result(matmul_lab(), failed_lab("build_failed", "x.cu(1): error"),
                             status="build_failed", exit_code=4)
        code, out, err = self.run_grade(lambda *a, **kw: copy.deepcopy(result))
        self.assertEqual(code, 4, err)
        results, gs, ju, md = self.outputs()
        self.assertEqual(reports.load_results(results), result)
        d = json.loads(gs.read_text())
        self.assertEqual(d["score"], 45.0)
        self.assertIn(f"{LAB5}: build", [t["name"] for t in d["tests"]])
        self.assertEqual(ET.parse(ju).getroot().get("failures"), "3")
        self.assertIn("**Did not build**", md.read_text())
        self.assertIn("TOTAL 45.00 / 200", out)

    def test_grade_crash_still_writes_every_report(self):
        partial = make_result(failed_lab("error", "not graded: internal error of the grader: "
                                                  "ZeroDivisionError: oops"),
                              status="error", exit_code=1,
                              message="internal error of the grader: ZeroDivisionError: oops")

        def crash(*args, **kw):
            try:
                raise ZeroDivisionError("oops")
            except ZeroDivisionError as e:
                raise grade.GradeCrashed(partial) from e

        code, out, err = self.run_grade(crash)
        self.assertEqual(code, 1, err)
        self.assertIn("internal error: ZeroDivisionError: oops", err)
        results, gs, ju, md = self.outputs()
        self.assertEqual(json.loads(results.read_text())["status"], "error")
        d = json.loads(gs.read_text())
        self.assertEqual(d["score"], 0.0)
        self.assertIn("ZeroDivisionError: oops", d["tests"][0]["output"])
        self.assertEqual(ET.parse(ju).getroot().get("failures"), "1")
        self.assertIn("The grading stopped", md.read_text())

    def test_an_unexpected_exception_still_gives_gradescope_a_file(self):
        code, out, err = self.run_grade(mock.Mock(side_effect=RuntimeError("kaput")))
        self.assertEqual(code, 1, err)
        results, gs, ju, md = self.outputs()
        d = json.loads(gs.read_text())
        self.assertEqual(d["score"], 0.0)
        self.assertIn("RuntimeError: kaput", d["tests"][0]["output"])
        self.assertFalse(ju.exists())

    def test_grade_of_a_missing_submission_still_gives_gradescope_a_file(self):
        gs = self.tmp / "results.json"
        with mock.patch.object(grade, "grade", lambda *a, **kw: self.fail("graded")):
            self.assertUsageError(["grade", "--submission", self.tmp / "nope",
                                   "--gradescope", gs], "does not exist")
        d = json.loads(gs.read_text())
        self.assertEqual(d["score"], 0.0)
        self.assertIn(f"--submission: {self.tmp / 'nope'} does not exist", d["output"])

    def test_grade_output_errors(self):
        with mock.patch.object(grade, "grade", lambda *a, **kw: self.fail("graded")):
            self.assertUsageError(self.grade_args("--markdown", "-"), "--markdown", "name a file")
            self.assertUsageError(self.grade_args("--junit", self.tmp / "grade-results.json"),
                                  "--junit", "also the results JSON")
            self.assertUsageError(self.grade_args("--junit", self.tmp / "none" / "j.xml"),
                                  "--junit", "does not exist")

    def test_help_lists_the_options(self):
        code, out, _ = self.main(["report", "--help"])
        self.assertEqual(code, 0)
        for flag in ("--gradescope", "--junit", "--markdown", "--csv", "--name-from"):
            self.assertIn(flag, out)
        code, out, _ = self.main(["grade", "--help"])
        self.assertEqual(code, 0)
        self.assertIn("--gradescope", out)


if __name__ == "__main__":
    unittest.main()


class ProfileLinesTest(unittest.TestCase):
    """The profile stage's lines under a measured entry (grade --profile)."""

    def perf(self, **counters) -> PerfResult:
        base = {"GBps": 3000.0, "student_ms": 0.36}     # the model's bytes: 1.08 GB
        return PerfResult(max_points=10, status="measured", metric=1.0,
                          counters={**base, **counters})

    def profiled(self, **counters) -> PerfResult:
        return self.perf(**{**dict(prof_status=1, prof_kernels=2, prof_registers=32,
                                   prof_dram_read_bytes=1.08e9, prof_dram_write_bytes=0.0,
                                   prof_ld_sectors=1e7, prof_ld_requests=2.5e6,
                                   prof_ld_sector_use_pct=100.0, prof_st_sectors=0, prof_shared_bank_conflicts=0,
                                   prof_occupancy_pct=87.3), **counters})

    def test_not_profiled_no_lines(self):
        self.assertEqual(report_text.profile_lines(self.perf()), [])

    def test_the_counters_beside_the_models_bytes(self):
        lines = report_text.profile_lines(self.profiled())
        self.assertEqual(lines[0], "profile: DRAM 1.08 GB read, 0 B written: 1.00x the 1.08 GB "
                                   "the model counts")
        self.assertIn("global loads moved 320 MB in 2.5e+06 warp requests, using 100% of each sector", lines[1])
        self.assertIn("occupancy 87%", lines[1])
        self.assertIn("2 kernels, 32 registers", lines[1])
        self.assertEqual(len(lines), 2)          # no gap: no sentence

    def test_a_gap_gets_one_sentence(self):
        (*_, twice) = report_text.profile_lines(self.profiled(prof_dram_read_bytes=2.2e9))
        self.assertIn("2.0x the model's bytes: data crosses DRAM more than once", twice)
        (*_, strided) = report_text.profile_lines(self.profiled(prof_ld_sector_use_pct=12.5))
        self.assertIn("coalescing", strided)

    def test_the_lectures_model_beside_the_measurement(self):
        p = self.profiled(prof_ld_requests=4.29e9)
        p.lecture = {"measure": "global_load_requests", "value": 4294967296.0,
                     "says": "2N loads per element of C"}
        self.assertIn("  lecture: 2N loads per element of C: 4.29e+09 global load requests; "
                      "measured 4.29e+09 (1.00x)", report_text.profile_lines(p))
        p.lecture = {"measure": "global_load_bytes", "value": 1.6e8, "says": "2N^3 / L"}
        self.assertIn("  lecture: 2N^3 / L: 160 MB; measured 320 MB (2.00x)",
                      report_text.profile_lines(p))
        p.lecture = {"measure": "dram_bytes", "value": 1.08e9, "says": "n once"}
        self.assertIn("  lecture: n once: 1.08 GB; measured 1.08 GB (1.00x)",
                      report_text.profile_lines(p))
        self.assertEqual(report_text.lecture_line(self.perf()), "")   # not profiled

    def test_no_counters_says_why(self):
        self.assertEqual(report_text.profile_lines(self.perf(prof_status=2)),
                         ["profile: none: this machine opens the GPU's performance counters to "
                          "administrators only"])
        self.assertIn("did not finish", report_text.profile_lines(self.perf(prof_status=4))[0])
