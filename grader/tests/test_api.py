"""The grader's Python API (grader/api.py), the grade command's typed arguments and the command
line built from them (grader/grade_args.py: what batch and scripts/gpu_check.py run), the wording
all reports share (grader/report_text.py), and the shape of the package: no import cycles."""

import argparse
import ast
import dataclasses
import math
import tempfile
import unittest
from pathlib import Path

from grader import api, cli, grade_args, report_text
from grader.errors import GraderError
from grader.grade_args import GradeArgs
from grader.seeds import MAX_SEED
from grader.tests import fakes

GRADER = Path(__file__).resolve().parents[1]


def parse(argv: list) -> GradeArgs:
    """The grade command's arguments as the grader itself parses them."""
    return grade_args.from_namespace(cli.parser().parse_args(["grade", *argv]))


class GradeArgvTest(unittest.TestCase):
    """argv() and the parser agree: what batch and gpu_check ask for is what the grader does."""

    EXAMPLES = [
        GradeArgs(),
        GradeArgs(labs=("01", "05_reduction"), quiet=True),
        GradeArgs(labs=("01_naive_matmul",), submission=Path("/subs/alice/labs"),
                  output=Path("/out/.alice.json.part"), build_dir=Path("/b/slot-3"), jobs=4,
                  seed=0, secret_file=Path("/etc/secret"), performance=False, sanitize=False,
                  labs_at_once=1, quiet=True, profile=True, race_audit=True),
        GradeArgs(solutions=True, seed=MAX_SEED, test_timeout_s=0.1 + 0.2,
                  gradescope=Path("results.json"), junit=Path("j.xml"),
                  markdown=Path("s.md"), html=Path("r.html")),
        # values a plain `-o VALUE` would read as options or split
        GradeArgs(submission=Path("-odd"), output=Path("-o.json"), build_dir=Path("a b/c"),
                  test_timeout_s=1e-3),
    ]

    def test_round_trip(self):
        for args in self.EXAMPLES:
            with self.subTest(args=args):
                self.assertEqual(parse(grade_args.argv(args)), args)

    def test_defaults_are_the_parsers(self):
        self.assertEqual(parse([]), GradeArgs())
        self.assertEqual(grade_args.argv(GradeArgs()),
                         ["--output=grade-results.json",
                          f"--build-dir={grade_args.DEFAULT_BUILD_DIR}"])

    def test_every_argument_of_the_parser_is_typed(self):
        # A new `grade` option must get a GradeArgs field, from_namespace and argv(): this
        # lists what the parser gives, as the round trip above cannot see a field it lacks.
        p = argparse.ArgumentParser()
        grade_args.add_arguments(p)
        self.assertEqual(set(vars(p.parse_args([]))),
                         {"labs", "submission", "solutions", "output", "seed", "secret_file",
                          "build_dir", "jobs", "no_performance", "no_sanitize", "profile",
                          "race_audit", "test_timeout",
                          "labs_at_once", "unsandboxed_build", "quiet", *grade_args.REPORTS})
        self.assertEqual(len(dataclasses.fields(GradeArgs)), 16 + len(grade_args.REPORTS))

    def test_what_no_command_line_can_say(self):
        for args, words in ((GradeArgs(submission=Path("x"), solutions=True), "not both"),
                            (GradeArgs(labs=("-q",)), "not a lab name"),
                            (GradeArgs(labs=("",)), "not a lab name")):
            with self.subTest(args=args), self.assertRaises(ValueError) as cm:
                grade_args.argv(args)
            self.assertIn(words, str(cm.exception))

    def test_options_of_the_grading(self):
        o = GradeArgs(seed=5, jobs=3, performance=False, test_timeout_s=2.5,
                      labs_at_once=2).options()
        self.assertEqual((o.seed, o.jobs, o.performance, o.sanitize, o.test_timeout_s,
                          o.labs_at_once), (5, 3, False, True, 2.5, 2))
        # a secret is no longer part of a grading (seeds are drawn: grader/seeds.py)
        self.assertNotIn("secret", {f.name for f in dataclasses.fields(o)})
        self.assertEqual(GradeArgs(secret_file=Path("/etc/s")).options(), GradeArgs().options())
        self.assertFalse(o.unsandboxed_build)
        self.assertTrue(GradeArgs(unsandboxed_build=True).options().unsandboxed_build)
        self.assertIn("--unsandboxed-build", grade_args.argv(GradeArgs(unsandboxed_build=True)))
        self.assertFalse(o.profile)
        self.assertTrue(parse(["--profile"]).options().profile)
        self.assertFalse(o.race_audit)
        self.assertTrue(parse(["--race-audit"]).options().race_audit)


class ApiTest(unittest.TestCase):
    """Mistakes in what is asked raise GraderError before anything is built."""

    def setUp(self):
        patch = fakes.use_policy(fakes.FakePolicy())
        patch.start()
        self.addCleanup(patch.stop)
        self.tmp = Path(self.enterContext(tempfile.TemporaryDirectory()))

    def assertRefused(self, words, *args, **kw):
        with self.assertRaises(GraderError) as cm:
            api.grade(*args, build_dir=self.tmp / "build", **kw)
        self.assertIn(words, cm.exception.message)
        self.assertFalse((self.tmp / "build").exists(), "nothing is built for a mistake")

    def test_missing_submission(self):
        self.assertRefused("does not exist", self.tmp / "nope")

    def test_unknown_lab(self):
        self.assertRefused("unknown lab 'nosuchlab'", self.tmp, ["nosuchlab"])

    def test_submission_that_is_a_link_is_refused(self):
        # A student's repository with `labs -> /opt/cuda-labs/solutions` committed: graded as
        # named, never resolved, so refused; the same for a link to a folder of their own.
        solutions = self.tmp / "solutions"
        (solutions / "01_naive_matmul").mkdir(parents=True)
        (solutions / "01_naive_matmul" / "matmul.cu").write_text("// solution\n")
        repo = self.tmp / "alice"
        repo.mkdir()
        (repo / "labs").symlink_to(solutions)
        for given in (repo / "labs", str(repo / "labs") + "/", str(repo / "labs") + "/."):
            with self.subTest(given=str(given)):
                self.assertRefused(f"--submission: {repo / 'labs'} is a symbolic link: refused",
                                   given, ["01"])
        # '..' is read as the name reads: alice/labs/.. is alice, not the solutions' parent
        self.assertEqual(api.submission_path(repo / "labs" / ".."), repo)

    def test_submission_path_is_never_resolved(self):
        real = self.tmp / "real"
        real.mkdir()
        (self.tmp / "link").symlink_to(real)
        self.assertEqual(api.submission_path(self.tmp / "link"), self.tmp / "link")

    def test_lab_configs(self):
        every = api.lab_configs()     # whichever labs there are (a release may have some)
        self.assertEqual([c.name for c in every], sorted(c.name for c in every))
        self.assertTrue(every)
        last = every[-1].name
        self.assertEqual([c.name for c in api.lab_configs([last.split("_", 1)[0]])], [last])

    def test_build_dir_that_is_a_file(self):
        (self.tmp / "f").write_text("")
        with self.assertRaises(GraderError) as cm:
            api.make_build_dir(self.tmp / "f")
        self.assertIn("is not a directory", cm.exception.message)


class ReportTextTest(unittest.TestCase):
    def test_finite(self):
        for x in (0, 3, -2.5, 1e300):
            self.assertTrue(report_text.finite(x), x)
        for x in (None, True, False, "1", math.nan, math.inf, -math.inf):
            self.assertFalse(report_text.finite(x), x)

    def test_points(self):
        self.assertEqual(report_text.points_text(12.5), "12.50")
        self.assertEqual(report_text.points_text(0), "0.00")


def _grader_imports() -> dict:
    """{module: the grader modules it imports, at its top or inside a function}."""
    modules = {p.stem for p in GRADER.glob("*.py")} | {
        p.name for p in GRADER.iterdir() if (p / "__init__.py").is_file() and p.name != "tests"}
    graph = {}
    for name in modules:
        path = GRADER / f"{name}.py"
        files = [path] if path.is_file() else sorted((GRADER / name).glob("*.py"))
        deps = set()
        for f in files:
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "grader":
                    deps |= {a.name for a in node.names}
                elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("grader."):
                    deps.add(node.module.split(".")[1])
                elif isinstance(node, ast.Import):
                    deps |= {a.name.split(".")[1] for a in node.names
                             if a.name.startswith("grader.")}
        graph[name] = (deps & modules) - {name}
    return graph


class PackageShapeTest(unittest.TestCase):
    def test_no_import_cycles(self):
        graph = _grader_imports()
        self.assertIn("cli", graph["__main__"])
        cycles = []

        def walk(node, path):
            for dep in sorted(graph[node]):
                if dep in path:
                    cycles.append(" -> ".join(path[path.index(dep):] + [dep]))
                elif dep not in seen:
                    seen.add(dep)
                    walk(dep, path + [dep])

        for start in sorted(graph):
            seen = {start}
            walk(start, [start])
        self.assertEqual(sorted(set(cycles)), [])

    def test_the_command_line_is_on_top(self):
        graph = _grader_imports()
        users = sorted(m for m, deps in graph.items() if "cli" in deps)
        self.assertEqual(users, ["__main__"])


if __name__ == "__main__":
    unittest.main()
