"""grader/cases.py, the reader of a lab's tests as data, and cmake/lab_config.py --cases, which
writes them into the lab's test program: on files written here, and on the labs' own (08, 07,
and the matmul labs 01-04)."""

import importlib.util
import re
import io
import tempfile
import unittest
from contextlib import redirect_stderr
from pathlib import Path

from grader import cases
from grader.errors import GraderError

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("lab_config", REPO / "cmake" / "lab_config.py")
lab_config = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lab_config)

PUBLIC = """# a comment
[[suite]]
instance = "Sizes"
suite = "ScanPublic"
test = "MatchesReference"
dtype = ["f32", "i32"]
n = [1, 1025]

[[suite]]
instance = "Variants"
suite = "ScanPublicRepeat"
test = "Fresh"
n = 300007
capture = true
"""

HIDDEN = """[[suite]]
instance = "BenchScale"
suite = "ScanHidden"
test = "MatchesReference"
dtype = ["f32"]
n = [268435456]
"""


class CasesTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.lab = Path(self._tmp.name) / "08_scan"
        (self.lab / "tests").mkdir(parents=True)
        (self.lab / "hidden").mkdir()

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, rel, text):
        (self.lab / rel).write_text(text)

    def error(self, text, rel="tests/cases.toml"):
        self.write(rel, text)
        with self.assertRaises(GraderError) as cm:
            cases.load_lab_cases(self.lab)
        return cm.exception.message

    def test_suites_params_lines_and_seeding(self):
        self.write("tests/cases.toml", PUBLIC)
        self.write("hidden/cases.toml", HIDDEN)
        s = cases.load_lab_cases(self.lab)
        self.assertEqual([(x.instance, x.suite, x.test, x.seeded, x.file, x.line) for x in s],
                         [("Sizes", "ScanPublic", "MatchesReference", False,
                           "labs/08_scan/tests/cases.toml", 2),
                          ("Variants", "ScanPublicRepeat", "Fresh", False,
                           "labs/08_scan/tests/cases.toml", 9),
                          ("BenchScale", "ScanHidden", "MatchesReference", True,
                           "labs/08_scan/hidden/cases.toml", 1)])
        self.assertEqual(s[0].params, (cases.Param("dtype", ("f32", "i32"), True),
                                       cases.Param("n", ("1", "1025"), True)))
        self.assertEqual(s[1].params, (cases.Param("n", ("300007",), False),
                                       cases.Param("capture", ("true",), False)))

    def test_a_student_release_has_the_public_file_only(self):
        self.write("tests/cases.toml", PUBLIC)
        self.assertEqual(len(cases.load_lab_cases(self.lab)), 2)

    def test_mistakes_are_named_with_file_and_line(self):
        self.assertIn("labs/08_scan/tests/cases.toml:1: 'suite' must be a name",
                      self.error('[[suite]]\ninstance = "A"\nsuite = "Scan_Public"\ntest = "T"\n'))
        self.assertIn("'n' is an empty list",
                      self.error('[[suite]]\ninstance = "A"\nsuite = "S"\ntest = "T"\nn = []\n'))
        self.assertIn("'n' repeats a value",
                      self.error('[[suite]]\ninstance = "A"\nsuite = "S"\ntest = "T"\nn = [1, 1]\n'))
        self.assertIn("-3 is negative",
                      self.error('[[suite]]\ninstance = "A"\nsuite = "S"\ntest = "T"\nn = -3\n'))
        self.assertIn("is not a count, true/false or a word",
                      self.error('[[suite]]\ninstance = "A"\nsuite = "S"\ntest = "T"\nd = "a b"\n'))
        self.assertIn("unknown table or key 'case'", self.error('[[case]]\nn = 1\n'))
        self.assertIn("no [[suite]]", self.error('# nothing\n'))
        self.assertIn("not valid TOML", self.error('[[suite]\n'))
        self.assertIn("'seeded' must be true or false",
                      self.error('[[suite]]\ninstance = "A"\nsuite = "S"\ntest = "T"\nseeded = 1\n'))

    def test_a_suite_declared_twice_is_an_error(self):
        self.write("tests/cases.toml", PUBLIC)
        again = '[[suite]]\ninstance = "Variants"\nsuite = "ScanPublicRepeat"\ntest = "Fresh"\nn = 1\n'
        self.assertIn("labs/08_scan/hidden/cases.toml:1: Variants/ScanPublicRepeat.Fresh is also "
                      "declared at labs/08_scan/tests/cases.toml:9",
                      self.error(again, rel="hidden/cases.toml"))
        self.assertIn("is declared twice", self.error(PUBLIC + PUBLIC))

    def test_the_cpp_source_holds_every_suite(self):
        self.write("tests/cases.toml", PUBLIC)
        text = cases.cpp_source(cases.load_lab_cases(self.lab))
        self.assertIn('{"Sizes", "ScanPublic", "MatchesReference", false, '
                      '"labs/08_scan/tests/cases.toml", 2, {{"dtype", {"f32", "i32"}, true}, '
                      '{"n", {"1", "1025"}, true}}},', text)
        self.assertIn('{"n", {"300007"}, false}, {"capture", {"true"}, false}', text)
        self.assertIn("const std::vector<Suite>& lab_suites()", text)

    def test_lab_config_writes_the_source_only_when_it_changes(self):
        self.write("tests/cases.toml", PUBLIC)
        out = Path(self._tmp.name) / "b" / "lab_cases.cpp"
        self.assertEqual(lab_config.main(["--cases", str(self.lab), str(out)]), 0)
        first = out.stat().st_mtime_ns
        self.assertEqual(lab_config.main(["--cases", str(self.lab), str(out)]), 0)
        self.assertEqual(out.stat().st_mtime_ns, first)   # unchanged: nothing recompiles
        self.write("tests/cases.toml", PUBLIC.replace("1025", "1026"))
        self.assertEqual(lab_config.main(["--cases", str(self.lab), str(out)]), 0)
        self.assertIn('"1026"', out.read_text())

    def test_lab_config_stops_on_a_mistake_with_the_readers_message(self):
        self.write("tests/cases.toml", '[[suite]]\ninstance = "A"\nsuite = "S"\ntest = "T"\nn = []\n')
        err = io.StringIO()
        with redirect_stderr(err):
            rc = lab_config.main(["--cases", str(self.lab), str(Path(self._tmp.name) / "x.cpp")])
        self.assertEqual(rc, 1)
        self.assertIn("'n' is an empty list", err.getvalue())
        (self.lab / "tests" / "cases.toml").unlink()
        with redirect_stderr(io.StringIO()):
            self.assertEqual(lab_config.main(["--cases", str(self.lab), "x.cpp"]), 1)

    def test_lab_08s_files_read(self):
        lab = REPO / "labs" / "08_scan"
        s = cases.load_lab_cases(lab)
        self.assertEqual([x.suite for x in s if not x.seeded], ["ScanPublic", "ScanPublicOffset"])
        if (lab / "hidden" / "cases.toml").is_file():   # not in a student release
            self.assertIn(("Past2p31", "ScanHidden"), [(x.instance, x.suite) for x in s])

    def test_lab_06s_files_read(self):
        """Every suite of lab 06 names matrices declared as named values, each with a kind (the
        spmv driver checks the rest when the test program starts); the public file declares all
        its suites use, for a student release has it alone."""
        lab = REPO / "labs" / "06_spmv"
        s = cases.load_lab_cases(lab)
        self.assertEqual([x.suite for x in s if not x.seeded], ["SpmvPublic", "SpmvPublicStream"])
        public = cases.load_records(lab / "tests" / "cases.toml")["matrix"]
        for x in s:
            matrix = [p for p in x.params if p.key == "matrix"]
            self.assertEqual(len(matrix), 1, f"{x.file}:{x.line}")
            for name, fields in zip(matrix[0].values, matrix[0].records):
                self.assertIn("kind", dict(fields), f"{x.file}:{x.line}: {name}")
                if not x.seeded:
                    self.assertIn(name, public)
        if (lab / "hidden" / "cases.toml").is_file():   # not in a student release
            self.assertIn(("Files", "SpmvHiddenMatrixMarket"), [(x.instance, x.suite) for x in s])
            for name, fields in cases.load_records(lab / "hidden" / "cases.toml")["matrix"].items():
                if dict(fields)["kind"] == "matrix_market":
                    self.assertTrue((lab / dict(fields)["file"]).is_file(), name)

    def test_every_lab_takes_its_tests_as_data(self):
        """A lab is data: each lab folder has a public cases file the reader accepts, its
        CMakeLists.txt asks for CASES, and every suite of its public file is unseeded (a
        student's failure repeats exactly)."""
        from grader import config
        labs = config.discover_labs(REPO / "labs")
        self.assertGreaterEqual(len(labs), 8)
        for name in labs:
            lab = REPO / "labs" / name
            with self.subTest(lab=name):
                self.assertTrue((lab / "tests" / "cases.toml").is_file())
                self.assertRegex((lab / "CMakeLists.txt").read_text(), r"\bCASES\b")
                suites = cases.load_lab_cases(lab)
                public = [x for x in suites if x.file.endswith("tests/cases.toml")]
                self.assertTrue(public)
                self.assertFalse(any(x.seeded for x in public))

    def test_a_matmul_shape_is_one_word_in_a_list_or_alone(self):
        self.write("tests/cases.toml", '[[suite]]\ninstance = "Shapes"\nsuite = "MatmulPublic"\n'
                   'test = "T"\nshape = ["127x129x33", "1x1x1"]\n\n[[suite]]\ninstance = "V"\n'
                   'suite = "MatmulPublicStream"\ntest = "T"\nshape = "96x80x40"\ncapture = true\n')
        s = cases.load_lab_cases(self.lab)
        self.assertEqual(s[0].params, (cases.Param("shape", ("127x129x33", "1x1x1"), True),))
        self.assertEqual(s[1].params, (cases.Param("shape", ("96x80x40",), False),
                                       cases.Param("capture", ("true",), False)))
        self.assertIn('{"shape", {"127x129x33", "1x1x1"}, true}', cases.cpp_source(s))
        # Written with spaces or another separator, it is not a word: the reader stops there.
        self.assertIn("labs/08_scan/tests/cases.toml:1: 'shape': '127 x 129 x 33' is not a count",
                      self.error('[[suite]]\ninstance = "A"\nsuite = "S"\ntest = "T"\n'
                                 'shape = ["127 x 129 x 33"]\n'))
        self.assertIn("is not a count", self.error('[[suite]]\ninstance = "A"\nsuite = "S"\n'
                                                   'test = "T"\nshape = "127*129*33"\n'))

    def test_named_values_resolve_to_their_fields_in_either_file(self):
        self.write("tests/cases.toml", '[matrix.band_3]\nkind = "band"\nwidth = 3\n'
                   'alpha = 2.1\ndescription = "a band, \\"three\\" wide"\n\n'
                   '[[suite]]\ninstance = "M"\nsuite = "SpmvPublic"\ntest = "T"\n'
                   'matrix = ["band_3"]\n')
        self.write("hidden/cases.toml", '[matrix.dense_row]\nkind = "dense"\n\n'
                   '[[suite]]\ninstance = "M"\nsuite = "SpmvHidden"\ntest = "T"\n'
                   'matrix = ["band_3", "dense_row"]\n')
        s = cases.load_lab_cases(self.lab)
        band = (("kind", "band"), ("width", "3"), ("alpha", "2.1"),
                ("description", 'a band, "three" wide'))
        self.assertEqual(s[0].params, (cases.Param("matrix", ("band_3",), True, (band,)),))
        self.assertEqual(s[1].params, (cases.Param("matrix", ("band_3", "dense_row"), True,
                                                   (band, (("kind", "dense"),))),))
        self.assertIn('{"matrix", {"band_3"}, true, {{{"kind", "band"}, {"width", "3"}, '
                      '{"alpha", "2.1"}, {"description", "a band, \\"three\\" wide"}}}}',
                      cases.cpp_source(s))

    def test_named_value_mistakes_are_named_with_file_and_line(self):
        suite = '[[suite]]\ninstance = "M"\nsuite = "S"\ntest = "T"\nmatrix = ["band"]\n'
        self.assertIn("labs/08_scan/tests/cases.toml:4: 'matrix': 'band' is not one of its "
                      "named values (band_3)",
                      self.error('[matrix.band_3]\nkind = "band"\n\n' + suite))
        self.assertIn("tests/cases.toml:1: 'bad-name' is not a name",
                      self.error('[matrix.bad-name]\nkind = "band"\n\n' + suite))
        self.assertIn("tests/cases.toml:1: 'matrix' must be named values",
                      self.error('[matrix]\nkind = "band"\n\n' + suite))
        self.assertIn("is not a number, true/false or a line of printable text",
                      self.error('[matrix.band]\nkind = ["a"]\n\n' + suite))
        # The public file cannot use the hidden file's (a student release has the public alone),
        # and a name is declared once.
        self.write("hidden/cases.toml", '[matrix.band]\nkind = "band"\n\n'
                   + suite.replace('"S"', '"H"'))
        self.assertIn("labs/08_scan/tests/cases.toml:1: 'matrix' has its named values in "
                      "labs/08_scan/hidden/cases.toml only", self.error(suite))
        self.write("tests/cases.toml", '[matrix.band]\nkind = "band"\n\n' + suite)
        self.assertIn("labs/08_scan/hidden/cases.toml:1: [matrix.band] is declared in the public "
                      "cases file too",
                      self.error('[matrix.band]\nkind = "band"\n\n' + suite.replace('"S"', '"H"'),
                                 rel="hidden/cases.toml"))

    def test_a_named_value_written_inline_is_named_with_its_line(self):
        self.assertIn("labs/08_scan/tests/cases.toml:3: 'bad-name' is not a name",
                      self.error('[shape]\nk1 = {n = 1}\nbad-name = {n = 2}\n\n[[suite]]\n'
                                 'instance = "A"\nsuite = "S"\ntest = "T"\nshape = ["k1"]\n'))

    def test_the_matmul_labs_files_read(self):
        """Every suite of labs 01-04 names a shape MxNxK (the driver's syntax, also checked when
        the test program starts); the public suites are the same four in every lab, and the
        hidden ones where hidden/ is (not in a student release)."""
        shape = re.compile(r"[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*")
        for name in ("01_naive_matmul", "02_register_tiling", "03_smem_tiling", "04_boundary"):
            lab = REPO / "labs" / name
            with self.subTest(lab=name):
                s = cases.load_lab_cases(lab)
                self.assertEqual([(x.instance, x.suite) for x in s if not x.seeded],
                                 [("Shapes", "MatmulPublic"), ("Variants", "MatmulPublicStream")])
                for x in s:
                    shapes = [p for p in x.params if p.key == "shape"]
                    self.assertEqual(len(shapes), 1, f"{x.file}:{x.line}")
                    for v in shapes[0].values:
                        self.assertTrue(shape.fullmatch(v), f"{x.file}:{x.line}: {v}")
                if (lab / "hidden" / "cases.toml").is_file():
                    self.assertIn(("Shapes", "MatmulHidden"), [(x.instance, x.suite) for x in s])
                    self.assertTrue(all(x.seeded for x in s if "Hidden" in x.suite))

    def test_lab_07s_files_read(self):
        """Every suite of lab 07 names shapes declared as named values with the nine fields the
        conv driver needs (labkit/ops/conv_cases.hpp, also checked when the test program
        starts), each naming its tests once per suite."""
        lab = REPO / "labs" / "07_im2col_conv"
        s = cases.load_lab_cases(lab)
        self.assertEqual([(x.instance, x.suite) for x in s if not x.seeded],
                         [("Shapes", "ConvPublic"), ("Variants", "ConvPublicStream")])
        needed = {"n", "c_in", "h", "w", "c_out", "k", "stride", "pad", "bias"}
        for x in s:
            shapes = [p for p in x.params if p.key == "shape"]
            self.assertEqual(len(shapes), 1, f"{x.file}:{x.line}")
            self.assertEqual(len(shapes[0].records), len(shapes[0].values), f"{x.file}:{x.line}")
            in_names = []
            for value, record in zip(shapes[0].values, shapes[0].records):
                fields = dict(record)
                self.assertEqual(set(fields) - {"name"}, needed, f"{x.file}:{x.line}: {value}")
                in_names.append(fields.get("name", value))
            self.assertEqual(len(set(in_names)), len(in_names), f"{x.file}:{x.line}")
        if (lab / "hidden" / "cases.toml").is_file():   # not in a student release
            self.assertEqual([(x.instance, x.suite) for x in s if x.seeded],
                             [("Shapes", "ConvHidden"), ("Variants", "ConvHiddenRepeat")])


if __name__ == "__main__":
    unittest.main()
