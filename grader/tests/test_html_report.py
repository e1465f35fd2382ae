"""The HTML reports (grader/html_report.py) and their command-line flags: what the pages hold,
that results-file text is escaped, and that a missing matplotlib is exit 2 with one line naming
the install. Skipped, saying so, where matplotlib is not installed (scripts/install-deps
installs it); the browser test is test_html_browser.py."""

from __future__ import annotations

import base64
import contextlib
import io
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from grader import cli, grade_args, reports


def html_report_hint() -> str:
    """html_report.install_hint(), read without importing matplotlib (the module does not)."""
    from grader import html_report
    return html_report.install_hint()
from grader.tests import html_samples

REPO = Path(__file__).resolve().parents[2]

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False
NEED_MPL = unittest.skipUnless(HAVE_MPL, "matplotlib is not installed (scripts/install-deps)")


def images(page: str) -> list:
    return re.findall(r'<img class="(\w+)" alt="([^"]*)" src="data:image/svg\+xml;base64,([^"]+)"',
                      page)


@NEED_MPL
class SubmissionPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from grader import html_report
        cls.h = html_report
        cls.page = html_report.submission_page(html_samples.submission())

    def test_score_table(self):
        p = self.page
        self.assertIn("<h1>Grade: 141.00 / 300</h1>", p)
        for text in ("01_naive_matmul", "05_reduction", "02_tiled", "did not build",
                     "16.67 / 50", "61.00 / 100", "0.00 / 100", "2 failing", "2/2",
                     "<span class=\"tag\">hidden</span>"):
            self.assertIn(text, p)

    def test_every_failing_map_is_a_picture_and_its_text_stays(self):
        maps = [i for i in images(self.page) if i[0] == "map"]
        self.assertEqual([m[1] for m in maps],
                         ["where map of the 300 x 200 output for 01_naive_matmul hidden "
                          "MatmulHidden.Tall300x200",
                          "where map of y[0..5000) for 05_reduction hidden ReduceHidden.Segments",
                          "where map of image 1, channel 2 (28 x 28) for 05_reduction hidden "
                          "ReduceHidden.Conv"])
        for _, _, data in maps:
            svg = base64.b64decode(data).decode()
            self.assertTrue(svg.lstrip().startswith("<?xml"), svg[:80])
            self.assertIn("<svg", svg)
        self.assertIn("8801 of 60000 elements wrong", self.page)   # the message's text
        self.assertIn("rows of length 33-4096</td><td class=\"num\">104</td>", self.page)

    def test_maps_come_from_the_where_data_never_from_the_message(self):
        from grader.results import TestResult
        from grader.tests.test_wheremap import matrix_where
        where = matrix_where([[1] * 8 for _ in range(8)], tile=4)
        text = ("64 of 64 elements wrong\n  map of the 8 x 8 output, one character per 4 x 4 "
                "tile ('.' right, 'x' some wrong, 'X' all wrong, '?' some never written):\n"
                "    XX\n    XX\n")
        drawn = self.h.test_html(TestResult("T.a", "failed", "no map in these words", 0, where),
                                 self.h._Budget(5), "t")
        self.assertEqual([a for _, a, _ in images(drawn)], ["where map of the 8 x 8 output for t"])
        self.assertIn("no map in these words", drawn)
        # A message with a map in it and no where data: text only, nothing drawn.
        told = self.h.test_html(TestResult("T.b", "failed", text), self.h._Budget(5), "t")
        self.assertEqual(images(told), [])
        self.assertIn("    XX\n    XX", told)
        # Where data that is not a map: the message alone.
        bad = dict(where, map={"cell": [4, 4], "rows": ["XX"]})
        alone = self.h.test_html(TestResult("T.c", "failed", "msg", 0, bad), self.h._Budget(5), "t")
        self.assertEqual((images(alone), "msg" in alone), ([], True))

    def test_performance_and_roofline(self):
        alts = [a for c, a, _ in images(self.page) if c == "chart"]
        self.assertEqual(alts, ["01_naive_matmul: performance against target and floor",
                                "05_reduction: performance against target and floor",
                                "roofline: achieved GFLOP/s against arithmetic intensity"])
        self.assertIn("cuBLAS SGEMM 51,000 GFLOP/s", self.page)
        self.assertIn("[0.0592, 0.0622]", self.page)

    def test_the_profile_under_the_performance_table(self):
        from grader import html_report
        from grader.results import LabResult, PerfResult
        perf = PerfResult(max_points=20.0, status="measured", metric=1.0, name="v4 2^28",
                          counters={"GBps": 3000.0, "student_ms": 0.36, "prof_status": 1,
                                    "prof_dram_read_bytes": 2.2e9, "prof_dram_write_bytes": 0.0,
                                    "prof_ld_sectors": 1e7,
                                    "prof_ld_requests": 2.5e6, "prof_ld_sector_use_pct": 100.0},
                          lecture={"measure": "dram_bytes", "value": 1.08e9,
                                   "says": "n <read> once"})
        lab = LabResult(lab="05_reduction", title="t", max_points=20.0, performance=[perf])
        table = html_report.perf_table(lab)
        self.assertIn("v4 2^28, profile: DRAM 2.2 GB read, 0 B written: 2.04x", table)
        self.assertIn("<li>lecture: n &lt;read&gt; once: 1.08 GB; measured 2.2 GB (2.04x)</li>",
                      table)
        perf.counters = {"prof_status": 3}
        self.assertIn("profile: none: the profiler measured no kernel",
                      html_report.perf_table(lab))
        # The baseline with its library's version, where the benchmark named it.
        self.assertNotIn("against", html_report.perf_table(lab))
        perf.baseline = "CUB DeviceReduce::Sum (CCCL 3.0.1)"
        self.assertIn("v4 2^28: against CUB DeviceReduce::Sum (CCCL 3.0.1)",
                      html_report.perf_table(lab))

    def test_roofline_points_and_the_reference(self):
        pts = self.h.roofline_points(html_samples.submission())
        (m_label, m_ai, m_gf, m_base, m_ref, m_measured), (r_label, r_ai, *_rest) = pts
        self.assertIsNone(m_measured)   # not profiled
        self.assertEqual(m_label, "01_naive_matmul: v1 4096")
        self.assertAlmostEqual(m_ai, 3050.0 / 18.0)
        self.assertEqual((m_gf, m_base), (3050.0, 50000.0))
        self.assertAlmostEqual(m_ref, 50000.0 * 0.066)   # baseline x the solution's ratio
        self.assertAlmostEqual(r_ai, 0.25)

    def test_a_profiled_call_is_placed_by_the_dram_bytes_it_moved(self):
        r = html_samples.submission()
        perf = r.labs[0].performance[0]
        perf.counters["student_ms"] = ms = 45.0
        flops = perf.counters["GFLOPS"] * 1e9 * ms * 1e-3
        perf.counters.update(prof_status=1, prof_dram_read_bytes=flops / 40,
                             prof_dram_write_bytes=flops / 40)
        (_, ai, _, _, _, measured), *_ = self.h.roofline_points(r)
        self.assertAlmostEqual(measured, 20.0)
        self.assertNotAlmostEqual(ai, measured)
        self.assertIn("<h3>Roofline</h3>", self.h.submission_page(r))   # drawn with both marks
        perf.counters["prof_status"] = 2
        self.assertIsNone(self.h.measured_intensity(perf))

    def test_no_ceilings_is_said_not_drawn(self):
        r = html_samples.submission(ceilings=False)
        self.assertEqual(self.h.ceilings(r)[:2], (None, None))
        page = self.h.submission_page(r)
        self.assertIn("No ceilings drawn: no ceilings were measured in this run: "
                      "labkit_gpu_ceilings was not built", page)
        r.gpu.pop("ceilings")
        self.assertIn("No ceilings drawn: no ceilings were measured in this run.",
                      self.h.submission_page(r))
        r.gpu = None
        self.assertEqual(self.h.ceilings(r)[:2], (None, None))

    def test_results_text_is_escaped(self):
        p = self.page
        self.assertNotIn("<script>document", p)
        self.assertNotIn("<script", p.split("</head>")[1])
        self.assertIn("&lt;script&gt;document.title=&#x27;pwned&#x27;", p)
        self.assertNotIn("<img src=x", p)
        self.assertIn("Hidden.&lt;img src=x onerror=&quot;window.pwned=2&quot;&gt;&amp;amp;", p)
        self.assertIn("<code>/subs/&lt;alice&gt;/labs</code>", p)
        self.assertIn("got 1 &lt;b&gt;bold&lt;/b&gt;", p)
        self.assertIn(f'http-equiv="Content-Security-Policy" content="{self.h.CSP}"', p)
        self.assertIn("default-src 'none'", self.h.CSP)

    def test_a_dollar_in_a_chart_label_is_not_math(self):
        r = html_samples.submission()
        r.labs[0].performance[0].name = "v1 $x^2$ \x1b[31m"
        page = self.h.submission_page(r)   # math text would fail or render x²
        self.assertIn("v1 $x^2$ \\x1b[31m", page)

    def test_a_grading_that_stopped(self):
        from grader.results import GradeResult
        r = GradeResult("/s", None, "0.2.0", status="no_gpu", message="no CUDA GPU: none",
                        gpu={"available": False, "reason": "none"})
        page = self.h.submission_page(r)
        self.assertIn("Not graded on a GPU:", page)
        self.assertIn("0.00 / 0", page)
        self.assertEqual(images(page), [])

    def test_maps_beyond_the_budget_are_not_drawn(self):
        budget = self.h._Budget(1)
        first = self.h.test_html(html_samples.matrix_failure(), budget, "t")
        second = self.h.test_html(html_samples.nchw_failure(), budget, "t")
        self.assertEqual((len(images(first)), len(images(second))), (1, 0))
        self.assertIn("more maps than the page draws", second)
        self.assertIn("elements wrong", second)


@NEED_MPL
class ClassPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from grader import html_report
        cls.h = html_report
        cls.named = html_samples.batch(12)
        cls.page = html_report.class_page(cls.named)

    def test_histograms(self):
        alts = [a for _, a, _ in images(self.page)]
        self.assertEqual(alts, ["01_naive_matmul: score distribution",
                                "02_tiled: score distribution",
                                "05_reduction: score distribution",
                                "01_naive_matmul v1 4096: speed histogram",
                                "05_reduction v4 2^28: speed histogram"])
        self.assertIn("12 submission(s)", self.page)

    def test_hidden_tests_that_fail_most(self):
        rows = self.h.failing_hidden_tests([r for _, r in self.named])
        counts = [r[3] for r in rows]
        self.assertEqual(counts, sorted(counts, reverse=True))
        self.assertTrue(all(r[1] in ("hidden", "races") for r in rows))
        self.assertTrue(all(r[4] == 12 for r in rows))
        expected = sum(not t.passed for _, r in self.named for t in r.labs[0].groups[1].tests
                       if t.name == "MatmulHidden.Tall300x200")
        self.assertIn(("01_naive_matmul", "hidden", "MatmulHidden.Tall300x200", expected, 12),
                      rows)
        self.assertNotIn("<img src=x", self.page)
        self.assertNotIn("MatmulPublic", self.page)   # public tests are not in the table

    def test_counters_and_lessons_across_the_class(self):
        from grader.results import GroupResult, TestResult as T
        named = html_samples.batch(4)
        for i, (_, r) in enumerate(named):
            perf = r.labs[0].performance[0]
            perf.counters.update(prof_status=1, prof_ld_sector_use_pct=[82.0, 12.0, 80.0, 90.0][i],
                                 prof_occupancy_pct=50.0)
            lesson = GroupResult("lesson: coalescing", "global_load_sector_use", 5.0)
            if i == 3:
                lesson.unmeasured = True
            else:
                lesson.tests = [T("Lesson.global_load_sector_use/x", "failed" if i == 1 else "passed")]
            r.labs[0].groups.append(lesson)
        named[3][1].labs[0].performance[0].counters["prof_status"] = 2   # not profiled
        rows = "".join(self.h.counters_table([r for _, r in named]))
        self.assertIn("<td>global-load sector use</td><td class=\"num\">80%</td>"
                      "<td class=\"num\">12%</td><td class=\"num\">82%</td>"
                      "<td class=\"num\">3</td>", rows)
        self.assertIn("<td>lesson: coalescing</td><td class=\"num\">2</td><td class=\"num\">1"
                      "</td><td class=\"num\">1</td><td class=\"num\">0</td>", rows)
        self.assertIn("Counters and lessons", self.h.class_page(named))
        self.assertIn("No benchmark was profiled",
                      "".join(self.h.counters_table([r for _, r in html_samples.batch(2)])))

    def test_not_graded_labs_are_left_out_and_counted(self):
        # Two of five not graded (no GPU): their 0 is not a score; one did not build: it is.
        named = html_samples.batch(5)
        for _, r in named[:2]:
            r.status = "no_gpu"
            for lab in r.labs:
                lab.status, lab.points = "no_gpu", 0.0
        named[2][1].labs[0].status, named[2][1].labs[0].points = "build_failed", 0.0
        first = [r.labs[0].points for _, r in named[2:]]
        page = self.h.class_page(named)
        self.assertIn(f"n = 3, mean {sum(first) / 3:.2f}", page)
        self.assertIn("of them 1 scored 0 (did not build", page)
        self.assertIn("2 not graded (no GPU or a grader error), not counted here", page)
        # Nobody graded: no histogram for the lab, said so.
        for _, r in named:
            r.labs[0].status, r.labs[0].points = "no_gpu", 0.0
        page = self.h.class_page(named)
        self.assertNotIn(f"{named[0][1].labs[0].lab}: score distribution", page)
        self.assertIn("no values; 5 not graded", page)

    def test_target_and_floor_lines(self):
        svg = base64.b64decode(images(self.page)[3][2]).decode()
        self.assertIn("<svg", svg)
        # text is drawn as paths: the floor and target lines are found by their colours
        self.assertIn("#c62828", svg)
        self.assertIn("#2e7d32", svg)


class CommandLine(unittest.TestCase):
    def run_cli(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(list(args))
        return code, out.getvalue(), err.getvalue()

    def results_file(self, folder: Path, name: str = "r.json", result=None) -> Path:
        path = folder / name
        path.write_text((result or html_samples.submission()).to_json())
        return path

    @NEED_MPL
    def test_report_html_and_class_page(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            a = self.results_file(d, "a.json")
            b = self.results_file(d, "b.json")
            code, _, err = self.run_cli("report", str(a), "--html", str(d / "a.html"))
            self.assertEqual((code, err), (0, ""))
            self.assertIn("where map of the 300 x 200 output", (d / "a.html").read_text())
            code, _, err = self.run_cli("report", str(a), str(b), "--class-page",
                                        str(d / "class.html"), "--csv", str(d / "g.csv"))
            self.assertEqual((code, err), (0, ""))
            self.assertIn("2 submission(s)", (d / "class.html").read_text())
            code, _, err = self.run_cli("report", str(a), str(b), "--html", str(d / "x.html"))
            self.assertEqual(code, 2)
            self.assertIn("--html renders one results file, got 2", err)

    def test_the_report_options_are_known(self):
        self.assertIn("html", reports.SINGLE)
        self.assertEqual(grade_args.flag("class_page"), "--class-page")

    def test_without_matplotlib_exit_2_and_one_line(self):
        # A fresh interpreter in which importing matplotlib fails.
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            self.results_file(d)
            stub = d / "stub"
            (stub / "matplotlib").mkdir(parents=True)
            (stub / "matplotlib" / "__init__.py").write_text("raise ImportError('no')\n")
            env = {"PYTHONPATH": f"{stub}:{REPO}", "PATH": "/usr/bin:/bin"}
            for argv in (["report", str(d / "r.json"), "--html", str(d / "o.html")],
                         ["report", str(d / "r.json"), "--class-page", str(d / "o.html")],
                         ["grade", "--submission", str(d), "-o", str(d / "g.json"),
                          "--html", str(d / "o.html")]):
                with self.subTest(argv=argv[:1] + argv[2:3]):
                    p = subprocess.run([sys.executable, "-m", "grader", *argv], cwd=d, env=env,
                                       capture_output=True, text=True, timeout=120)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
                    self.assertNotIn("Traceback", p.stderr)
                    # the install command for this interpreter: pip, or apt where the system
                    # manages its packages (PEP 668)
                    self.assertIn(html_report_hint(), p.stderr)
                    self.assertRegex(p.stderr, r"-m pip install matplotlib|apt-get install "
                                               r"python3-matplotlib")
                    self.assertFalse((d / "o.html").exists())
                    self.assertFalse((d / "g.json").exists())   # refused before grading
            # The other reports never need it.
            p = subprocess.run([sys.executable, "-m", "grader", "report", str(d / "r.json"),
                                "--markdown", "-", "--junit", str(d / "j.xml")], cwd=d, env=env,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("## Grade", p.stdout)

    def test_the_grading_core_does_not_import_matplotlib(self):
        code = ("import sys; from grader import (cli, grade, reports, console_report, report_text, "
                "bench, results); reports.render('markdown', [('x', results.GradeResult('/s', None, '0'))]); "
                "print(sorted(m for m in sys.modules if m.startswith('matplotlib')))")
        p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                           text=True, timeout=120)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "[]"), p.stderr)


if __name__ == "__main__":
    unittest.main()


class Ceilings(unittest.TestCase):
    """grade.measure_ceilings: the figures of labkit_gpu_ceilings, or {'error': why}, never an
    exception, whatever the tool does."""

    def measure(self, script: str | None, build_ok: bool = True) -> dict:
        from unittest import mock
        from grader import grade
        from grader.results import BuildResult
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            if script is not None:
                tool = d / grade.CEILINGS
                tool.write_text("#!/bin/sh\n" + script)
                tool.chmod(0o755)
            with mock.patch.object(grade.build, "build_targets",
                                   return_value=BuildResult(ok=build_ok, log="error: x")), \
                    mock.patch.object(grade.gpulock, "DEFAULT_LOCK", d / "lock"):
                return grade.measure_ceilings(d, d / "labkit_gpu_info", None)

    def test_figures(self):
        c = self.measure('echo \'{"sgemm_gflops": 51000.5, "copy_gbps": 4100, "sgemm_n": 4096, '
                         '"note": "x", "bad": true}\'\n')
        self.assertEqual(c, {"sgemm_gflops": 51000.5, "copy_gbps": 4100.0, "sgemm_n": 4096.0})

    def test_every_failure_is_an_error_entry(self):
        cases = {
            "did not build": self.measure("", build_ok=False),
            "No such file": self.measure(None),
            "exited 77": self.measure("echo 'no CUDA GPU' >&2; exit 77\n"),
            "JSONDecodeError": self.measure("echo not json\n"),
            "no usable figures": self.measure('echo \'{"sgemm_gflops": 0, "copy_gbps": 1}\'\n'),
        }
        for words, c in cases.items():
            with self.subTest(words=words):
                self.assertEqual(list(c), ["error"])
                self.assertIn(words, c["error"])
