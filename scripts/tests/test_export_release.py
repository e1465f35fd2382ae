"""scripts/export-release without the builds: file selection, the grader's adaptations, the
README's lab table, the search for solution code, the path rules, argument errors.

  python3 -m unittest discover -s scripts/tests -v      (scripts/release-check runs it)
"""

import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path, PurePosixPath
from unittest import mock

SCRIPT = Path(__file__).resolve().parents[1] / "export-release"
REPO = SCRIPT.parents[1]


def load_script():
    loader = importlib.machinery.SourceFileLoader("export_release", str(SCRIPT))
    spec = importlib.util.spec_from_loader("export_release", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


er = load_script()

STARTER = """\
// Lab 99: the starter. THIS is the file you edit.
#include "x.h"

__device__ int helper(int a, int b) {
  // handed out: the same in the solution, outside any TODO region
  int s = 0;
  for (int i = 0; i < a; ++i) { s += b * i + (i % 3) - (b >> 1) + (a ^ i) * 7 - 11; }
  return s;
}

__global__ void x_kernel(const float* in, float* out, int n) {
  // ---- TODO(student) BEGIN ----
  // 1. one element per thread: i = blockIdx.x * blockDim.x + threadIdx.x
  (void)in; (void)out; (void)n;  // placeholder
  // ---- TODO(student) END ----
}
"""

ANSWER_BODY = """\
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = in[i] * 2.0f + 1.0f;
  for (int k = 0; k < 4; ++k) { acc = acc * 0.5f + in[(i + k) % n]; }
  out[i] = acc + helper(n, i);
"""

SOLUTION = f"""\
// Lab 99: the reference solution.
#include "x.h"

__device__ int helper(int a, int b) {{
  // handed out: the same in the solution, outside any TODO region
  int s = 0;
  for (int i = 0; i < a; ++i) {{ s += b * i + (i % 3) - (b >> 1) + (a ^ i) * 7 - 11; }}
  return s;
}}

__device__ float tiny(float v) {{ return v; }}

__global__ void x_kernel(const float* in, float* out, int n) {{
{ANSWER_BODY}}}
"""

CORRECT_CASE = """\
#include "x.h"
__global__ void x_kernel(const float* in, float* out, int n) {
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
    out[j] = in[j] * 3.0f - 1.0f + in[(j + 1) % n] * in[(j + 2) % n] - in[(j + 3) % n] * 0.25f;
  }
}
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def fake_repo(root: Path) -> None:
    write(root, "labs/99_x/grading.toml", '[lab]\ntitle = "x"\nstudent_files = ["x.cu"]\n')
    write(root, "labs/99_x/x.cu", STARTER)
    write(root, "solutions/99_x/x.cu", SOLUTION)
    write(root, "tests/submissions/99_x/cases.toml",
          '[right]\ncorrectness = "full"\n\n[wrong]\ncorrectness = "zero"\n')
    write(root, "tests/submissions/99_x/right/x.cu", CORRECT_CASE)
    write(root, "tests/submissions/99_x/wrong/x.cu",
          "__global__ void x_kernel(const float* in, float* out, int n) {\n"
          + "  out[0] = in[0] + 1.0f + 2.0f + 3.0f + 4.0f + 5.0f + 6.0f + 7.0f + 8.0f + 9.0f;\n}\n")


class TokensTest(unittest.TestCase):
    def test_comments_and_whitespace_do_not_matter(self):
        a = er.tokenize("int  x = a<<<1, 2>>>(p); // comment\n/* block\n */ return \"s // t\";")
        b = er.tokenize("int x=a <<< 1,2 >>> (p);return \"s // t\";")
        self.assertEqual([t[0] for t in a], [t[0] for t in b])
        self.assertIn('"s // t"', [t[0] for t in a])
        self.assertEqual(a[-2][3], 3)   # the line of `"s // t"`

    def test_function_bodies(self):
        text = textwrap.dedent("""\
            namespace {
            constexpr int k = 4;
            struct S { int f() const { return k; } };
            }
            int arr[] = {1, 2};
            template <typename T>
            __global__ void __launch_bounds__(256) kern(T* p) { if (p) { p[0] = T(1); } }
            void host() { auto l = [] { return 1; }; l(); }
            """)
        tokens = er.tokenize(text)
        found = []
        for head, first, last in er.function_bodies(tokens):
            found.append((" ".join(t[0] for t in tokens[head:first]).split("(")[0].split()[-1],
                          tokens[last][3] - tokens[first][3]))
        self.assertEqual([name for name, _ in found], ["f", "__launch_bounds__", "host"])

    def test_hollow_kernels_only(self):
        text = ("__device__ int h(int a) { return a + 1; }\n"
                "__global__ void k(int* p) { p[0] = h(2); }\n")
        out, n = er.hollow(text, "gone", kernels_only=True)
        self.assertEqual(n, 1)
        self.assertIn("return a + 1;", out)
        self.assertIn("__global__ void k(int* p) { /* gone */ }", out)
        out, n = er.hollow(text, "gone")
        self.assertEqual(n, 2)
        self.assertNotIn("return", out)


class ScanTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="export-release-test-")
        self.repo = Path(self.tmp.name) / "repo"
        self.dest = Path(self.tmp.name) / "dest"
        fake_repo(self.repo)
        write(self.dest, "labs/99_x/x.cu", STARTER)   # the starter itself is never a hit

    def tearDown(self):
        self.tmp.cleanup()

    def scan(self):
        files = er.release_files(self.dest)
        hits, stats, notes = er.scan_for_solutions(self.dest, self.repo, files)
        return hits, stats

    def test_starter_alone_is_clean_and_its_handed_out_code_is_not_a_hit(self):
        hits, stats = self.scan()
        self.assertEqual(hits, [])
        self.assertGreater(stats["given"], 0)          # helper() is in both
        self.assertEqual(stats["short_bodies"], 1)     # tiny()
        self.assertEqual(stats["answer_files"], 2)     # the solution and the correct case only

    def test_solution_in_a_doc_is_found_with_its_lines(self):
        reformatted = ANSWER_BODY.replace("\n", " /* x */\n\n").replace("  ", "    ")
        write(self.dest, "docs/notes.md", "# Notes\n\nSee:\n\n```cuda\n" + reformatted + "```\n")
        hits, _ = self.scan()
        self.assertEqual(len(hits), 1, hits)
        rel, first, last, src, s1, s2 = hits[0]
        self.assertEqual((rel, src), ("docs/notes.md", "solutions/99_x/x.cu"))
        self.assertEqual(first, 6)
        self.assertEqual((s1, s2), (14, 18))

    def test_solution_inside_the_starters_todo_region_is_found(self):
        leaked = STARTER.replace("  (void)in; (void)out; (void)n;  // placeholder\n", ANSWER_BODY)
        write(self.dest, "labs/99_x/x.cu", leaked)
        hits, _ = self.scan()
        self.assertEqual([(h[0], h[3]) for h in hits], [("labs/99_x/x.cu", "solutions/99_x/x.cu")])

    def test_a_correct_corpus_case_is_an_answer_too(self):
        write(self.dest, "grader/tests/fixture.cu", CORRECT_CASE)
        hits, _ = self.scan()
        self.assertEqual([h[3] for h in hits], ["tests/submissions/99_x/right/x.cu"])

    def test_a_correct_case_keeping_the_starters_unfinished_kernel_is_not_a_hit(self):
        # A correct submission that left a starter kernel unused, its TODO region as handed out
        # (placeholders and all): that text is the starter's, in every release.
        unfinished = ("__global__ void y_kernel(const float* in, float* out, int n) {\n"
                      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "  // ---- TODO(student) BEGIN ----\n"
                      "  (void)in; (void)out; (void)n; (void)i;  // placeholder: remove\n"
                      "  (void)blockDim; (void)gridDim; (void)threadIdx;  // these lines\n"
                      "  // ---- TODO(student) END ----\n}\n")
        write(self.repo, "labs/99_x/x.cu", STARTER + unfinished)
        write(self.dest, "labs/99_x/x.cu", STARTER + unfinished)
        write(self.repo, "tests/submissions/99_x/right/x.cu", CORRECT_CASE + unfinished)
        hits, _ = self.scan()
        self.assertEqual(hits, [])
        # The same text in the solution is still a leak where the release holds it elsewhere.
        write(self.repo, "solutions/99_x/x.cu", SOLUTION + unfinished)
        write(self.dest, "docs/notes.md", "```cuda\n" + unfinished + "```\n")
        hits, _ = self.scan()
        self.assertIn(("docs/notes.md", "solutions/99_x/x.cu"), [(h[0], h[3]) for h in hits])

    def test_a_short_body_is_matched_whole(self):
        body = "for (int o = 16; o > 0; o >>= 1) { v += __shfl_down_sync(0xffffffffu, v, o); } return v;"
        write(self.repo, "solutions/99_x/x.cu",
              SOLUTION + "__device__ float warp_sum(float v) { " + body + " }\n")
        write(self.dest, "README.md", "Use `" + body + "`\n")
        hits, _ = self.scan()
        self.assertEqual([(h[0], h[1]) for h in hits], [("README.md", 1)])

    def test_starter_without_markers_hands_out_nothing(self):
        write(self.repo, "labs/99_x/x.cu", STARTER.replace("TODO(student)", "TODO"))
        write(self.dest, "labs/99_x/x.cu", STARTER.replace("TODO(student)", "TODO"))
        hits, _ = self.scan()
        self.assertEqual([h[0] for h in hits], ["labs/99_x/x.cu"])   # helper() now counts


def export_checkout(dest: Path) -> list:
    """This checkout's release, every lab, written into `dest` without the builds and checks of
    the real export. -> its files."""
    files, _untracked = er.list_checkout(REPO)
    labs = er.discover_labs(REPO)
    keep, _left = er.select(files, labs, labs)
    ad = er.grader_adaptations(REPO, keep, labs, labs)
    er.write_release(REPO, dest, keep, labs, {lab: er.student_files(REPO, lab) for lab in labs}, ad)
    return er.release_files(dest)


# A working lab 01 answer written unlike the solution: other names, 1-D blocks, a grid-stride
# loop over the elements of C.
PLANTED = """\
#include "matmul.h"

namespace {
__global__ void gemm_any(const float* __restrict__ x, const float* __restrict__ y,
                         float* __restrict__ z, int rows, int cols, int inner) {
  const size_t total = size_t(rows) * cols;
  for (size_t e = blockIdx.x * size_t(blockDim.x) + threadIdx.x; e < total;
       e += size_t(gridDim.x) * blockDim.x) {
    const size_t r = e / cols, c = e % cols;
    float sum = 0.f;
    for (int t = 0; t < inner; ++t) sum = fmaf(x[r * inner + t], y[size_t(t) * cols + c], sum);
    z[e] = sum;
  }
}
}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  gemm_any<<<1024, 128, 0, stream>>>(A, B, C, M, N, K);
}
"""


class InterfaceDefinitionsTest(unittest.TestCase):
    """Step 4's search for definitions of a lab's interface outside its starter, on a release of
    this checkout (written once, without the builds)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="export-release-test-")
        cls.dest = Path(cls.tmp.name) / "release"
        cls.files = export_checkout(cls.dest)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def plant(self, rel, text):
        path = write(self.dest, rel, text)
        self.addCleanup(path.unlink)
        return rel

    def check(self, gpu=False):
        return er.check_definitions(self.dest, REPO, er.release_files(self.dest), gpu,
                                    Path(self.tmp.name))

    def test_the_interface_comes_from_the_headers_and_starters(self):
        interface = er.interface_functions(REPO)
        self.assertEqual(interface["matmul_v1_naive"], ["01_naive_matmul"])
        self.assertEqual(interface["reduce_v2_strided"], ["05_reduction"])   # a template
        self.assertNotIn("conv_sgemm", interface)   # declared in conv.h, defined by the harness
        self.assertNotIn("reduce_workspace_size", interface)   # defined in the header itself

    def test_this_checkouts_release_holds_no_working_lab_kernel(self):
        for rel in ("common/tests/selftest_worker.cu", "common/tests/protocol_test.cpp"):
            self.assertNotIn(rel, self.files)
        self.assertNotIn("matmul", (self.dest / "common/tests/guard_kernels.cu").read_text())
        # The kernels a release holds outside the starters are the harness's own. A new file
        # here: leave it out if it holds a lab's answer (HARNESS_SELFTESTS), else add it.
        kernels = []
        for rel in self.files:
            if PurePosixPath(rel).suffix in er.C_LIKE and not rel.startswith("labs/"):
                text = (self.dest / rel).read_text(errors="replace")
                tokens = er.code_tokens(text)
                if er.kernel_code(text, [t[0] for t in tokens], er.defined_functions(tokens)):
                    kernels.append(rel)
        self.assertEqual(kernels, ["common/include/labkit/elementwise_fill.cuh",
                                   "common/src/device_compare.cu", "common/src/device_fill.cu",
                                   "common/src/gpu_ceilings_main.cu",
                                   "common/src/ops/attention_reference.cu",
                                   "common/src/ops/device_reference.cu",
                                   "common/src/ops/scan_device.cu",
                                   "common/tests/guard_kernels.cu",
                                   "common/tests/planner_demo.cu"])
        line = self.check()
        # Every lab's launchers (17 in labs 01-08), each looked for outside its starter.
        count = len(er.interface_functions(REPO))
        self.assertGreaterEqual(count, 17)
        self.assertIn(f"no lab interface ({count} functions) defined outside its starter", line)
        self.assertIn("not graded: no GPU here", line)   # the grader's fixtures: kernels emptied
        refused, kept, _ = er.interface_definitions(self.dest, REPO, self.files)
        self.assertEqual(refused, [])
        self.assertTrue(kept)
        self.assertTrue(all(rel.startswith("grader/tests/policy_fixtures/") for rel, *_ in kept))

    def test_a_planted_answer_is_refused_wherever_it_is(self):
        for rel in ("common/tests/extra.cu", "labs/01_naive_matmul/helper.cu"):
            with self.subTest(rel):
                path = write(self.dest, rel, PLANTED)
                try:
                    with self.assertRaisesRegex(er.ExportError, rf"{rel}:17: defines "
                                                                rf"matmul_v1_naive, of 01_naive_matmul"):
                        self.check()
                finally:
                    path.unlink()

    def test_another_labs_starter_is_not_its_starter(self):
        starter = self.dest / "labs/01_naive_matmul/matmul.cu"
        original = starter.read_text()
        self.addCleanup(starter.write_text, original)
        starter.write_text(original + textwrap.dedent("""
            template <typename T>
            __global__ void sum_kernel(const T* in, T* out, size_t n) { if (n) atomicAdd(out, in[0]); }
            template <>
            void reduce_v1_interleaved<float>(const float* in, float* out, size_t n, float* w,
                                              cudaStream_t s) { sum_kernel<<<1, 1, 0, s>>>(in, out, n); }
            """))
        with self.assertRaisesRegex(er.ExportError, r"labs/01_naive_matmul/matmul.cu:\d+: defines "
                                                    r"reduce_v1_interleaved, of 05_reduction"):
            self.check()

    def test_prototypes_comments_strings_and_if0_are_not_definitions(self):
        proto = "void matmul_v1_naive(const float*, const float*, float*, int, int, int, cudaStream_t)"
        body = PLANTED.split("namespace {\n", 1)[1]
        self.plant("common/tests/extra.cu", "\n".join([
            "#include \"matmul.h\"", proto + ";", "// " + proto + " { launch(); }",
            "/*\n" + body + "*/", "#if 0\n" + body + "#endif",
            "const char* s = \"" + proto + " { }\";",
            "__global__ void unrelated(float* p) { p[0] = 1.0f; }"]) + "\n")
        self.plant("docs/extra.md", "```cuda\n" + PLANTED + "```\n")   # not C/C++/CUDA
        refused, kept, _ = er.interface_definitions(self.dest, REPO, er.release_files(self.dest))
        self.assertEqual((refused, [k for k in kept if "extra" in k[0]]), ([], []))

    def test_a_launcher_without_kernel_code_is_kept_and_graded_on_a_gpu(self):
        # The same file with its kernel's body emptied, as the export empties the fixtures'.
        text = PLANTED.replace(PLANTED[PLANTED.index("  const size_t total"):
                                       PLANTED.index("}  // namespace") - 2], "")
        rel = self.plant("common/tests/extra.cu", text)
        line = text[:text.index("void matmul_v1_naive")].count("\n") + 1
        refused, kept, _ = er.interface_definitions(self.dest, REPO, er.release_files(self.dest))
        self.assertEqual(refused, [])
        self.assertIn((rel, line, "matmul_v1_naive", ["01_naive_matmul"]), kept)
        self.assertIn("not graded: no GPU here", self.check())
        with mock.patch.object(er, "grade_definitions", return_value=[f"{rel}:{line}: x"]):
            with self.assertRaisesRegex(er.ExportError, rf"passes its hidden tests.*\n    {rel}:"):
                self.check(gpu=True)
        with mock.patch.object(er, "grade_definitions", return_value=[]):
            self.assertIn("graded: none passes its lab's hidden tests", self.check(gpu=True))


class GradeDefinitionsTest(unittest.TestCase):
    """The GPU half of the search, with the grader faked: each file that defines a lab's
    interface is graded as that lab's student file and must not pass its hidden tests."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="export-release-test-")
        self.dest = Path(self.tmp.name) / "dest"
        write(self.dest, "grader/tests/a.cu", "// a\n")
        write(self.dest, "grader/tests/b.cu", "// b\n")
        self.found = [("grader/tests/a.cu", 3, "matmul_v1_naive", ["01_naive_matmul"]),
                      ("grader/tests/b.cu", 5, "matmul_v1_naive", ["01_naive_matmul"])]

    def tearDown(self):
        self.tmp.cleanup()

    def grade(self, results):
        seen = []

        def run_logged(cmd, cwd, log, env=None):
            sub = Path(cmd[cmd.index("--submission") + 1])
            text = (sub / "01_naive_matmul" / "matmul.cu").read_text()
            seen.append((text, cmd[-1], "--no-performance" in cmd))
            if results.get(text) is not None:
                Path(cmd[cmd.index("-o") + 1]).write_text(json.dumps(results[text]))
            log.write_text("")
            return 0
        with mock.patch.object(er, "run_logged", run_logged):
            bad = er.grade_definitions(REPO, self.dest, self.found, Path(self.tmp.name))
        self.assertEqual(seen, [("// a\n", "01_naive_matmul", True), ("// b\n", "01_naive_matmul", True)])
        return bad

    @staticmethod
    def lab(status, hidden=()):
        tests = [{"name": f"t{i}", "status": s} for i, s in enumerate(hidden)]
        return {"labs": [{"lab": "01_naive_matmul", "status": status,
                          "groups": [{"name": "public", "tests": []},
                                     {"name": "hidden", "tests": tests}]}]}

    def test_verdicts(self):
        bad = self.grade({"// a\n": self.lab("rejected"),
                          "// b\n": self.lab("graded", ["passed", "failed"])})
        self.assertEqual(bad, [])
        bad = self.grade({"// a\n": self.lab("graded", ["passed", "passed"]),
                          "// b\n": None})
        self.assertEqual(len(bad), 2)
        self.assertRegex(bad[0], r"^grader/tests/a.cu:3: matmul_v1_naive: passes 01_naive_matmul's "
                                 r"hidden tests")
        self.assertRegex(bad[1], r"^grader/tests/b.cu:5: matmul_v1_naive: could not be graded")
        bad = self.grade({"// a\n": self.lab("no_gpu"), "// b\n": self.lab("build_failed")})
        self.assertEqual([b.split(":")[0] for b in bad], ["grader/tests/a.cu"])


class ReadmeTest(unittest.TestCase):
    README = textwrap.dedent("""\
        # Labs

        | lab | idea | you edit |
        | --- | --- | --- |
        | [01_a](labs/01_a/README.md) | a | `labs/01_a/a.cu` |
        | [05_b](labs/05_b/README.md) | b | `labs/05_b/b.cu` |

        More.
        """)

    def test_table_is_cut_to_the_chosen_labs(self):
        text, warnings = er.rewrite_readme(self.README, ["05_b"], {"05_b": ["b.cu"]})
        self.assertNotIn("[01_a]", text)                     # its row is cut
        self.assertIn("| [05_b](labs/05_b/README.md) | b |", text)
        self.assertIn("> **Student release** with lab `05_b`.", text)
        # the docs' examples name the table's first lab, which this release lacks
        self.assertIn("> The examples in these docs name lab `01_a` (`python3 -m grader grade 01`",
                      text)
        self.assertIn("use `05_b` (`grade 05`)", text)
        self.assertTrue(text.endswith("More.\n"))
        self.assertEqual(warnings, [])
        text, _ = er.rewrite_readme(self.README, ["01_a"], {"01_a": ["a.cu"]})
        self.assertNotIn("The examples in these docs", text)

    def test_a_chosen_lab_missing_from_the_table_gets_a_row(self):
        text, warnings = er.rewrite_readme(self.README, ["01_a", "07_c"],
                                           {"01_a": ["a.cu"], "07_c": ["c.cu", "c.cuh"]})
        self.assertIn("| [07_c](labs/07_c/README.md) | see the handout | `labs/07_c/c.cu`, "
                      "`labs/07_c/c.cuh` |", text)
        self.assertNotIn("05_b", text)
        self.assertEqual(len(warnings), 1)

    def test_no_table_only_a_note(self):
        text, warnings = er.rewrite_readme("# Labs\n\nText.\n", ["01_a"], {"01_a": ["a.cu"]})
        self.assertTrue(text.startswith("# Labs\n\n> **Student release**"))
        self.assertEqual(len(warnings), 1)


class SelectionTest(unittest.TestCase):
    FILES = [".ci/run", ".gitignore", "CMakeLists.txt", "CMakePresets.json", "README.md",
             "cmake/CudaLab.cmake", "common/src/a.cpp", "docs/x.md", "grader/cli.py",
             "labs/CMakeLists.txt", "labs/01_a/a.cu", "labs/01_a/hidden/hidden_test.cpp",
             "labs/01_a/tests/public_test.cpp", "labs/05_b/b.cu", "notes.txt",
             "scripts/gpu-check", "scripts/install-deps", "scripts/release-check",
             "scripts/test", "solutions/01_a/a.cu", "tests/submissions/01_a/cases.toml",
             "tools/x.py"]

    def test_allowlist(self):
        keep, left = er.select(self.FILES, ["01_a"], ["01_a", "05_b"])
        self.assertEqual(keep, [".gitignore", "CMakeLists.txt", "CMakePresets.json", "README.md",
                                "cmake/CudaLab.cmake", "common/src/a.cpp", "docs/x.md",
                                "grader/cli.py", "labs/CMakeLists.txt", "labs/01_a/a.cu",
                                "labs/01_a/tests/public_test.cpp", "scripts/install-deps",
                                "scripts/test"])
        self.assertEqual(left["solutions/"], 1)
        self.assertEqual(left["tests/"], 1)
        self.assertEqual(left["labs/*/hidden/ (hidden tests)"], 1)
        self.assertEqual(left["labs/05_b/ (not chosen)"], 1)
        self.assertEqual(left["scripts/ (instructor's)"], 2)

    def test_forbidden_paths(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = er.forbidden_paths(Path(tmp), ["solutions/a.cu", "labs/x/hidden/t.cpp",
                                                 "grader/x/solutions/r.cuh", "tests/submissions/c",
                                                 "labs/x/tests/my_hidden_test.cpp", "labs/x/a.cu"])
        self.assertEqual([b.split(":")[0] for b in bad],
                         ["solutions/a.cu", "labs/x/hidden/t.cpp", "grader/x/solutions/r.cuh",
                          "tests/submissions/c", "labs/x/tests/my_hidden_test.cpp"])

    def test_the_real_checkout(self):
        files, _untracked = er.list_checkout(REPO)
        labs = er.discover_labs(REPO)
        keep, _left = er.select(files, labs, labs)
        ad = er.grader_adaptations(REPO, keep, labs, labs)
        planned = [ad.renames.get(f, f) for f in keep if f not in ad.dropped]
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(er.forbidden_paths(Path(tmp), planned), [])
        self.assertFalse([f for f in planned if f.startswith(("solutions/", "tests/"))])


class GraderAdaptationTest(unittest.TestCase):
    def test_solution_standin_and_lab_bound_modules(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo, dest = Path(tmp) / "repo", Path(tmp) / "dest"
            files = {
                "grader/tests/fx/fake_repo/solutions/ref.cuh":
                    "__global__ void ref(int* p) { p[0] = 42; }\n",
                "grader/tests/fx/bad_include.cu": '#include "fake_repo/solutions/ref.cuh"\n',
                "grader/tests/fx/ok.cu": "__global__ void k(int* p) { p[0] = 1; }\n"
                                         "void launch(int* p) { k<<<1, 1>>>(p); }\n",
                "grader/tests/test_uses_lab.py": 'LAB = REPO / "labs" / "01_a"\n',
                "grader/tests/test_fake_names.py": 'root / "labs" / "01_a"\n',
            }
            for rel, text in files.items():
                write(repo, rel, text)
            ad = er.grader_adaptations(repo, sorted(files), ["05_b"], ["01_a", "05_b"])
            self.assertEqual(ad.renames, {"grader/tests/fx/fake_repo/solutions/ref.cuh":
                                          "grader/tests/fx/fake_repo/reference/ref.cuh"})
            self.assertEqual(list(ad.dropped), ["grader/tests/test_uses_lab.py"])
            dest.mkdir()
            written, _ = er.write_release(repo, dest, sorted(files), ["05_b"], {"05_b": ["b.cu"]}, ad)
            self.assertIn("grader/tests/test_fake_names.py", written)
            self.assertNotIn("grader/tests/test_uses_lab.py", written)
            self.assertIn('"fake_repo/reference/ref.cuh"',
                          (dest / "grader/tests/fx/bad_include.cu").read_text())
            self.assertNotIn("42", (dest / "grader/tests/fx/fake_repo/reference/ref.cuh").read_text())
            ok = (dest / "grader/tests/fx/ok.cu").read_text()
            self.assertNotIn("p[0] = 1", ok)
            self.assertIn("k<<<1, 1>>>(p);", ok)     # host code is kept
            self.assertTrue((dest / ".ci/run").stat().st_mode & 0o111)


class CtestTest(unittest.TestCase):
    def test_summary(self):
        log = ("      Start  1: 01_a:Public.X\n 1/2 Test  #1: 01_a:Public.X ....***Skipped   0.01 sec\n"
               " 2/2 Test  #2: 01_a:benchmark_smoke ...   Passed    0.01 sec\n\n"
               "50% tests passed, 1 tests failed out of 2\n")
        names, failed, total = er.ctest_summary(log)
        self.assertEqual((names, failed, total), (["01_a:Public.X", "01_a:benchmark_smoke"], 1, 2))
        self.assertEqual(er.ctest_summary("no tests")[1:], (None, None))


class GpuStepsTest(unittest.TestCase):
    """The steps that only run on a GPU machine, with the commands faked."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="export-release-test-")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def fake_run(self, rc, write):
        def run_logged(cmd, cwd, log, env=None):
            log.write_text("$ " + " ".join(map(str, cmd)) + "\n")
            write(cmd, log)
            return rc
        return mock.patch.object(er, "run_logged", run_logged)

    def grade(self, rc, labs_json):
        def write(cmd, log):
            out = Path(cmd[cmd.index("-o") + 1])
            if labs_json is not None:
                out.write_text(json.dumps({"status": "graded", "labs": labs_json}))
        with self.fake_run(rc, write):
            return er.grade_solutions(REPO, ["01_a", "05_b"], self.dir)

    def test_solutions_full_marks(self):
        labs = [{"lab": "01_a", "status": "graded", "points": 100.0, "max_points": 100.0},
                {"lab": "05_b", "status": "graded", "points": 80.0, "max_points": 80.0}]
        self.assertEqual(self.grade(0, labs), "01_a 100/100, 05_b 80/80")

    def test_solutions_short_of_full_marks(self):
        labs = [{"lab": "01_a", "status": "graded", "points": 100.0, "max_points": 100.0},
                {"lab": "05_b", "status": "graded", "points": 70.0, "max_points": 80.0,
                 "message": ""}]
        with self.assertRaisesRegex(er.ExportError, r"05_b: graded, 70 / 80"):
            self.grade(0, labs)
        with self.assertRaisesRegex(er.ExportError, r"05_b: not graded"):
            self.grade(0, labs[:1])
        with self.assertRaisesRegex(er.ExportError, r"without readable results"):
            self.grade(3, None)

    def workflow(self, gpu, student_log, test_log="100% tests passed, 0 tests failed out of 5\n",
                 rc=(0, 0)):
        def write(cmd, log):
            with open(log, "a") as f:
                f.write(student_log if cmd[-1] == "student" else test_log)
        rcs = iter(rc)

        def run_logged(cmd, cwd, log, env=None):
            log.write_text("")
            write(cmd, log)
            return next(rcs)
        with mock.patch.object(er, "run_logged", run_logged):
            return er.check_workflows(self.dir, ["01_a"], self.dir, gpu)

    STUDENT = (" 1/2 Test  #1: 01_a:Public.X .....***Failed    0.01 sec\n"
               " 2/2 Test  #2: 01_a:benchmark_smoke ...***Failed    0.01 sec\n\n"
               "0% tests passed, 2 tests failed out of 2\n")

    def test_on_a_gpu_the_starters_fail_their_tests(self):
        lines = self.workflow(True, self.STUDENT, rc=(8, 0))
        self.assertIn("2 failed: the starters fail their tests on a GPU", lines[0])
        with self.assertRaisesRegex(er.ExportError, "preset student` in .* failed"):
            self.workflow(False, self.STUDENT, rc=(8, 0))

    def test_the_labs_tests_must_run(self):
        only_smoke = (" 1/1 Test  #1: 01_a:benchmark_smoke ...***Skipped   0.01 sec\n"
                      "100% tests passed, 0 tests failed out of 1\n")
        with self.assertRaisesRegex(er.ExportError, "ran no tests of 01_a"):
            self.workflow(False, only_smoke)

    def test_a_build_failure(self):
        with self.assertRaisesRegex(er.ExportError, "failed before its tests ran"):
            self.workflow(True, "FAILED: labs/01_a/x.o\n", rc=(1, 0))
        with self.assertRaisesRegex(er.ExportError, "preset test` in .* failed"):
            self.workflow(False, self.STUDENT.replace("***Failed", "***Skipped")
                          .replace("0% tests passed, 2", "100% tests passed, 0"),
                          test_log="50% tests passed, 1 tests failed out of 2\n", rc=(0, 8))

    def test_gpu_detection(self):
        bin_dir = self.dir / "bin"
        bin_dir.mkdir()
        smi = bin_dir / "nvidia-smi"
        path = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        smi.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-1)'\n")
        smi.chmod(0o755)
        with mock.patch.dict(os.environ, path):
            self.assertEqual(er.gpu_present(), (True, "GPU 0: NVIDIA H200 (UUID: GPU-1)"))
            smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not "
                           "communicate with the NVIDIA driver.'\nexit 9\n")
            gpu, why = er.gpu_present()
            self.assertFalse(gpu)
            self.assertIn("could not communicate", why)
        with mock.patch.dict(os.environ, {"PATH": str(self.dir / "empty")}):
            self.assertEqual(er.gpu_present(), (False, "nvidia-smi was not found"))


class CommandLineTest(unittest.TestCase):
    """Bad input: a message and exit 2, never a traceback, nothing built or written."""

    def run_script(self, *args):
        proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                              text=True, timeout=120)
        self.assertNotIn("Traceback", proc.stderr)
        return proc.returncode, proc.stderr

    def test_unknown_lab(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, err = self.run_script(str(Path(tmp) / "out"), "--labs", "nosuchlab")
            self.assertEqual(rc, 2)
            self.assertIn("unknown lab 'nosuchlab'", err)
            self.assertFalse((Path(tmp) / "out").exists())

    def test_dest_not_empty(self):
        with tempfile.TemporaryDirectory() as tmp:
            write(Path(tmp), "keep.txt", "mine")
            rc, err = self.run_script(tmp)
            self.assertEqual(rc, 2)
            self.assertIn("not empty", err)
            rc, err = self.run_script(tmp, "--force")
            self.assertEqual(rc, 2)
            self.assertIn("does not look like an earlier release", err)
            self.assertTrue((Path(tmp) / "keep.txt").exists())

    def test_dest_is_a_file_or_inside_the_repo(self):
        with tempfile.NamedTemporaryFile() as f:
            rc, err = self.run_script(f.name)
            self.assertEqual(rc, 2)
            self.assertIn("not a folder", err)
        rc, err = self.run_script(str(REPO / "build" / "release"))
        self.assertEqual(rc, 2)
        self.assertIn("outside", err)

    def test_usage(self):
        rc, err = self.run_script()
        self.assertEqual(rc, 2)
        rc, err = self.run_script("x", "--labs")
        self.assertEqual(rc, 2)


def write_real_release(dest: Path) -> list:
    """Step 3 of the export (every lab) into `dest`, no checks. -> the files on disk."""
    labs = er.discover_labs(REPO)
    checkout, _untracked = er.list_checkout(REPO)
    files, _left_out = er.select(checkout, labs, labs)
    adapt = er.grader_adaptations(REPO, files, labs, labs)
    er.write_release(REPO, dest, files, labs, {lab: er.student_files(REPO, lab) for lab in labs},
                     adapt)
    return er.release_files(dest)


class RealReleaseTest(unittest.TestCase):
    """This checkout's release, written once: its kernels and the paths its docs name."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="export-release-test-")
        cls.dest = Path(cls.tmp.name)
        cls.files = write_real_release(cls.dest)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_kernel_of_the_release_is_on_the_allow_list(self):
        checked, stale = er.check_kernels(self.dest, self.files)
        self.assertGreater(checked, 10)
        self.assertEqual(stale, [], "KERNEL_ALLOWLIST names kernels that are gone")
        # The allow-list names files that the release holds, and no lab's starter.
        for rel in er.KERNEL_ALLOWLIST:
            self.assertIn(rel, self.files)
            self.assertFalse(rel.startswith("labs/"), rel)

    def test_no_judge_kernel_computes_a_labs_sum(self):
        # What device_fill.cu used to hold: a shared-memory tree, a warp-per-row SpMV with
        # shuffles, a direct convolution. None of their marks is left in common/, but for the
        # executor's scrub of shared memory between calls, which names a block's shared memory
        # to store zeros over it, and the scrub's test, which leaves a mark there (and nothing
        # else: no barrier, no shuffle).
        zeroing = {"shared_kernel", "shared_mark_kernel"}   # labkit::scrub::shared_kernel
        for rel in self.files:
            if rel.startswith("common/") and PurePosixPath(rel).suffix in (".cu", ".cuh"):
                tokens = er.code_tokens((self.dest / rel).read_text())
                scrub = set()
                for head, _first, last, names in er.defined_functions(tokens):
                    if names and names[0][0] in zeroing:
                        scrub.update(range(head, last + 1))
                words = {t[0] for k, t in enumerate(tokens) if k not in scrub}
                for mark in ("__shfl_down_sync", "__shfl_xor_sync", "__syncthreads",
                             "__shared__"):
                    self.assertNotIn(mark, words, f"{rel}: {mark}")
                scrub_words = {tokens[k][0] for k in scrub}
                for mark in ("__shfl_down_sync", "__shfl_xor_sync", "__syncthreads"):
                    self.assertNotIn(mark, scrub_words, f"{rel}: {mark} in the scrub")

    def test_instructor_guides_are_left_out(self):
        for doc in er.INSTRUCTOR_DOCS:
            self.assertTrue((REPO / doc).is_file(), doc)
            self.assertNotIn(doc, self.files)
        self.assertIn("docs/student-guide.md", self.files)

    def test_every_path_a_shipped_doc_names_is_in_the_release(self):
        self.assertEqual(er.missing_doc_paths(self.dest, self.files), [])


class KernelCheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="export-release-test-")
        self.dest = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, files: dict, allow: dict):
        for rel, text in files.items():
            write(self.dest, rel, text)
        return er.check_kernels(self.dest, sorted(files), allow)

    TREE = """\
namespace labkit { namespace {
__global__ void fill_kernel(float* p, int n) { if (threadIdx.x < n) p[threadIdx.x] = 0; }
template <typename T>
__global__ void __launch_bounds__(256) sum_kernel(const T* x, int n, T* out) {
  __shared__ T s[256];
  s[threadIdx.x] = threadIdx.x < n ? x[threadIdx.x] : T(0);
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = s[0];
}
__global__ void later(int* p);
__global__ void emptied(int* p) {}
}}
"""

    def test_a_kernel_not_on_the_allow_list_stops_the_export(self):
        allow = {"common/src/x.cu": {"fill_kernel": "a fill"}}
        with self.assertRaises(er.ExportError) as cm:
            self.check({"common/src/x.cu": self.TREE}, allow)
        msg = str(cm.exception)
        self.assertIn("common/src/x.cu:4: kernel sum_kernel is not on the allow-list", msg)
        self.assertNotIn("fill_kernel", msg)
        self.assertNotIn("later", msg)      # a prototype
        self.assertNotIn("emptied", msg)    # an empty body computes nothing

    def test_allowed_by_file_and_name(self):
        allow = {"common/src/x.cu": {"fill_kernel": "a fill", "sum_kernel": "reviewed"},
                 "common/src/gone.cu": {"old_kernel": "gone"}}
        checked, stale = self.check({"common/src/x.cu": self.TREE}, allow)
        self.assertEqual(checked, 2)
        self.assertEqual(stale, [])   # gone.cu is not in the release: nothing to say
        # The same kernel in another file is not allowed by the first file's entry.
        with self.assertRaises(er.ExportError) as cm:
            self.check({"common/src/x.cu": self.TREE, "common/src/y.cu": self.TREE}, allow)
        self.assertIn("common/src/y.cu:2: kernel fill_kernel", str(cm.exception))

    def test_a_kernel_behind_a_macro_or_if0_is_refused(self):
        macro = "#define K __global__\nK void k(float* p) { p[0] = 1; }\n"
        if0 = "#if 0\n__global__ void k(float* p) { p[0] = 1; }\n#endif\n"
        for text in (macro, if0):
            with self.assertRaises(er.ExportError) as cm:
                self.check({"common/src/m.cu": text}, {})
            self.assertIn("common/src/m.cu:", str(cm.exception))
            self.assertIn("outside a kernel definition", str(cm.exception))

    def test_the_labs_starters_are_not_checked(self):
        lab = er.discover_labs(REPO)[0]
        starter = f"labs/{lab}/{er.student_files(REPO, lab)[0]}"
        checked, _stale = self.check({starter: self.TREE}, {})
        self.assertEqual(checked, 0)
        with self.assertRaises(er.ExportError):
            self.check({f"labs/{lab}/other.cu": self.TREE}, {})


class DocPathsTest(unittest.TestCase):
    def test_paths_named_in_code_and_links(self):
        text = ("See `common/src/x.cu` and [the guide](docs/guide.md), `labs/<lab>/README.md`,\n"
                "`tests/` of a lab, and `scripts/gone --flag`.\n")
        self.assertEqual(er.doc_paths(text), [(1, "common/src/x.cu"), (1, "docs/guide.md"),
                                              (1, "labs/<lab>/README.md"), (2, "scripts/gone")])

    def test_missing_paths(self):
        with tempfile.TemporaryDirectory() as tmp:
            dest = Path(tmp)
            write(dest, "common/src/x.cu", "")
            write(dest, "docs/a.md", "`common/src/x.cu`, `common/src/`, [b](b.md), "
                                     "`solutions/01/x.cu`, `docs/instructor-guide.md`\n"
                                     "`scripts/gone` and [c](c.md)\n")
            write(dest, "docs/b.md", "")
            files = er.release_files(dest)
            self.assertEqual(er.missing_doc_paths(dest, files),
                             ["docs/a.md:2: scripts/gone"])
            # c.md is a relative link that docs/ does not hold either; top-level paths only are
            # read, so it is not a claim this check makes (b.md resolves).


class GradedRunTest(unittest.TestCase):
    def course(self, text):
        tmp = tempfile.TemporaryDirectory(prefix="export-release-test-")
        self.addCleanup(tmp.cleanup)
        if text is not None:
            write(Path(tmp.name), "course.toml", text)
        return Path(tmp.name)

    def test_an_empty_where_is_refused_unless_allowed(self):
        for text in (None, "[graded_run]\nwhere = \"\"\n", "[graded_run]\nwhere = \"  \"\n"):
            repo = self.course(text)
            with self.assertRaises(er.ExportError) as cm:
                er.check_graded_run(repo, False)
            self.assertEqual(cm.exception.code, er.EXIT_USAGE)
            self.assertIn("[graded_run] where is empty", str(cm.exception))
            self.assertIn("--allow-no-graded-run", str(cm.exception))
            er.check_graded_run(repo, True)   # allowed: no error

    def test_a_set_where_passes(self):
        er.check_graded_run(self.course("[graded_run]\nwhere = \"Push: CI grades it.\"\n"), False)

    def test_a_broken_course_file_is_a_usage_error(self):
        with self.assertRaises(er.ExportError) as cm:
            er.check_graded_run(self.course("[graded_run]\nwhen = 1\n"), True)
        self.assertEqual(cm.exception.code, er.EXIT_USAGE)
        self.assertIn("unknown key 'when'", str(cm.exception))

    def test_the_command_line_says_so_before_building(self):
        # This checkout's course.toml is the template: its where is empty.
        if er.load_course_where(REPO):
            self.skipTest("course.toml sets [graded_run] where")
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run([sys.executable, str(SCRIPT), str(Path(tmp) / "out")],
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("--allow-no-graded-run", proc.stderr)
            self.assertNotIn("Traceback", proc.stderr)
            self.assertFalse((Path(tmp) / "out").exists())


if __name__ == "__main__":
    unittest.main()
