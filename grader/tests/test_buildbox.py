"""The build sandbox (grader/buildbox.py): what a command run through it can read and write,
as root and as an ordinary user, with Landlock and with the namespace fallback; and nvcc through
it, against the two ways a source reads a file at build time (the assembler's .incbin, an
#include that exists only in nvcc's second preprocessing pass). No GPU needed.

As root the sandboxed command runs as uid 65534; the test files it must read are then made
readable to others (as a grading machine's staged files are)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import unittest.mock
from pathlib import Path

from grader import buildbox, elf

BOX = str(Path(buildbox.__file__).resolve())
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
PROBE = buildbox.probe()
MODES = [m for m in ("landlock", "namespace") if buildbox.probe(m).get("mechanism") == m]

# Run inside the sandbox: tries each path named, prints one JSON object of what happened.
PROBE_SCRIPT = r"""
import json, os, sys
out = {}
for op, path in zip(sys.argv[1::2], sys.argv[2::2]):
    try:
        if op == "read":
            with open(path, "rb") as f:
                f.read(1)
        elif op == "list":
            os.listdir(path)
        else:
            with open(path, "wb") as f:
                f.write(b"x")
        out[path + ":" + op] = "ok"
    except OSError as e:
        out[path + ":" + op] = os.strerror(e.errno)
print(json.dumps(out))
"""


def box(args: list, reads=(), deny=(), mode="auto", cwd=None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, BOX, "--mode", mode]
    for r in reads:
        cmd += ["--read", str(r)]
    for d in deny:
        cmd += ["--deny", str(d)]
    return subprocess.run(cmd + ["--"] + [str(a) for a in args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


class OutputsTest(unittest.TestCase):
    """How a command's outputs are pointed into the private folder (no sandbox needed)."""

    def test_every_output_option_is_redirected_and_mapped_back(self):
        args = ["-c", "a.cu", "-o", "obj/a.o", "-MD", "-MT", "obj/a.o", "-MF", "obj/a.o.d",
                "--output-file=x.ii", "-oy.o", "-MFz.d", "-o", "-"]
        new, moves = buildbox.redirect_outputs(args, "/P")
        self.assertEqual(new, ["-c", "a.cu", "-o", "/P/0-a.o", "-MD", "-MT", "obj/a.o",
                               "-MF", "/P/1-a.o.d", "--output-file=/P/2-x.ii", "-o/P/3-y.o",
                               "-MF/P/4-z.d", "-o", "-"])
        self.assertEqual(moves, [("/P/0-a.o", "obj/a.o"), ("/P/1-a.o.d", "obj/a.o.d"),
                                 ("/P/2-x.ii", "x.ii"), ("/P/3-y.o", "y.o"), ("/P/4-z.d", "z.d")])

    def test_an_nvcc_compile_to_an_object_keeps_its_fatbin(self):
        args = ["-x", "cu", "-c", "a.cu", "-o", "obj/a.o", "-MD", "-MT", "obj/a.o", "-MF",
                "obj/a.o.d"]
        new, moves = buildbox.redirect_outputs(args, "/P")
        kept, obj = buildbox.keep_fatbin(new, moves, "/K")
        self.assertEqual(obj, "obj/a.o")
        self.assertEqual(kept, new + ["--keep", "--keep-dir", "/K"])
        # not a compile to one object: nothing kept, the command unchanged
        for other in (["-E", "-x", "cu", "a.cu", "-o", "a.ii"], ["-M", "a.cu", "-MF", "a.d"],
                      ["a.cu", "-o", "a.out"], ["-c", "a.cu", "-fatbin", "-o", "a.fatbin"],
                      ["-c", "a.cu", "b.cu"]):
            with self.subTest(other=other):
                new, moves = buildbox.redirect_outputs(other, "/P")
                self.assertEqual(buildbox.keep_fatbin(new, moves, "/K"), (new, None))

    def test_the_one_fatbin_left_is_moved_beside_the_object(self):
        with tempfile.TemporaryDirectory() as keep:
            self.assertEqual(buildbox.kept_fatbin_move(keep, "obj/a.o"), [])
            Path(keep, "a.ptx").write_text("x")
            Path(keep, "a.fatbin").write_bytes(b"f")
            self.assertEqual(buildbox.kept_fatbin_move(keep, "obj/a.o"),
                             [(os.path.join(keep, "a.fatbin"), "obj/a.o.fatbin")])
            Path(keep, "b.fatbin").write_bytes(b"g")     # two: which one is nvcc's? none
            self.assertEqual(buildbox.kept_fatbin_move(keep, "obj/a.o"), [])

    def test_a_denied_path_is_cut_out_of_an_allowed_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp).resolve()
            for d in ("usr/bin", "usr/src/repo/labs", "usr/src/other", "usr/lib"):
                (t / d).mkdir(parents=True)
            self.assertEqual(buildbox.carve(str(t / "usr"), [str(t / "usr/src/repo")]),
                             [str(t / "usr/bin"), str(t / "usr/lib"), str(t / "usr/src/other")])
            self.assertEqual(buildbox.carve(str(t / "usr"), [str(t / "elsewhere")]),
                             [str(t / "usr")])
            self.assertEqual(buildbox.carve(str(t / "usr"), [str(t / "usr")]), [])


@unittest.skipUnless(PROBE.get("mechanism"), f"no build sandbox here: {PROBE.get('why')}")
class SandboxTest(unittest.TestCase):
    """A command in the sandbox, with each mechanism this machine has."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="buildbox-test-")).resolve()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        os.chmod(self.tmp, 0o755)
        self.inputs = self.tmp / "inputs"
        self.inputs.mkdir()
        (self.inputs / "student.cu").write_text("int x;\n")
        (self.tmp / "secret.txt").write_text("hidden\n")
        (self.tmp / "out").mkdir()
        self.script = self.inputs / "probe.py"
        self.script.write_text(PROBE_SCRIPT)
        for p in (self.inputs, self.tmp / "out"):
            os.chmod(p, 0o755)
        for p in (self.inputs / "student.cu", self.tmp / "secret.txt", self.script):
            os.chmod(p, 0o644)   # readable by 65534 when root: only the sandbox stands between

    def probe(self, mode, *ops):
        # A Python outside any home folder (its installation is allowed as the "compiler's")
        py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        r = box([py, "-S", "-I", self.script, *ops], reads=[self.inputs], deny=[self.tmp],
                mode=mode, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_reads_only_what_it_is_given_and_writes_only_its_own_folder(self):
        home = Path(os.path.expanduser("~"))
        for mode in MODES:
            with self.subTest(mode=mode):
                got = self.probe(mode,
                                 "read", self.inputs / "student.cu",       # given: --read
                                 "read", NVCC or "/usr/bin/env",          # the toolchain
                                 "read", "/etc/ld.so.cache",
                                 "read", self.tmp / "secret.txt",          # beside the inputs
                                 "read", Path(__file__).resolve(),         # the repository
                                 "list", home,
                                 "write", self.tmp / "out" / "x.o",        # the build tree
                                 "write", self.inputs / "student.cu",      # its own input
                                 "write", "/tmp/buildbox-escape",
                                 "write", "tmp-file-in-cwd")
                ok = {k for k, v in got.items() if v == "ok"}
                self.assertEqual(ok, {f"{self.inputs}/student.cu:read",
                                      f"{NVCC or '/usr/bin/env'}:read",
                                      "/etc/ld.so.cache:read"}, got)
                # Landlock: EACCES; the namespace: a path that is not there (or read-only)
                for k, v in got.items():
                    if k not in ok:
                        self.assertIn(v, ("Permission denied", "No such file or directory",
                                          "Read-only file system"), k)
                if mode == "landlock":
                    self.assertEqual(got[f"{self.tmp}/secret.txt:read"], "Permission denied")
                    self.assertEqual(got[f"{self.tmp}/out/x.o:write"], "Permission denied")
                self.assertFalse((self.tmp / "out" / "x.o").exists())
                self.assertFalse(os.path.exists("/tmp/buildbox-escape"))
                self.assertEqual((self.inputs / "student.cu").read_text(), "int x;\n")

    def test_outputs_come_back_and_nothing_else(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                target = self.tmp / "out" / f"{mode}.o"
                # The command names "-o TARGET"; sh gets the private path as $2 and writes it
                # there, as the uid it runs as (65534 when the grader is root).
                r = box(["/bin/sh", "-c", 'echo built > "$2"; test "$(id -u)" = "$3"', "sh",
                         "-o", target, "65534" if os.geteuid() == 0 else str(os.geteuid())],
                        reads=[self.inputs], deny=[self.tmp], mode=mode, cwd=self.tmp)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(target.read_text(), "built\n")
                self.assertEqual(target.stat().st_uid, os.geteuid())   # the grader's own file
                self.assertEqual(sorted(p.name for p in (self.tmp / "out").iterdir()),
                                 sorted(f"{m}.o" for m in MODES[:MODES.index(mode) + 1]))

    def test_a_failed_command_leaves_no_output(self):
        target = self.tmp / "out" / "failed.o"
        r = box(["/bin/sh", "-c", 'echo half > "$2"; exit 3', "sh", "-o", target],
                reads=[self.inputs], deny=[self.tmp], cwd=self.tmp)
        self.assertEqual(r.returncode, 3)
        self.assertFalse(target.exists())

    def test_no_sandbox_no_command(self):
        with unittest.mock.patch.object(buildbox, "probe",
                                        lambda mode="auto": {"mechanism": None, "why": "none"}):
            code = buildbox.run(["/bin/true"], [], [])
        self.assertEqual(code, buildbox.EXIT_NO_SANDBOX)

    def test_the_probe_says_which_mechanism(self):
        r = subprocess.run([sys.executable, BOX, "--probe"], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(json.loads(r.stdout)["mechanism"], PROBE["mechanism"])


LEAK = "LEAKED_SECRET_7f3a"
GOOD = """
__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }
void launch(float* x) { k<<<1, 32>>>(x); }
"""
# The assembler copies a file into the object.
INCBIN = """
asm(".pushsection .rodata.leak, \\"a\\"\\n.globl leaked\\nleaked:\\n"
    ".incbin \\"@SECRET@\\"\\n.byte 0\\n.popsection\\n");
extern "C" const char leaked[];
__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }
const char* get() { return leaked; }
"""
# An #include that only nvcc's second preprocessing pass sees: gcc's pass expands H I into a
# line "# include ..." that it passes on; `nvcc -M` and the policy's gcc -E see no include.
SECOND_PASS_INCLUDE = """
#define H #
#define I include
H I "@SECRET@"
__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }
const char* get() { return secret_value; }
"""


@unittest.skipUnless(PROBE.get("mechanism"), f"no build sandbox here: {PROBE.get('why')}")
@unittest.skipUnless(NVCC, "nvcc not found (PATH, /usr/local/cuda/bin): the end-to-end "
                           "compiles through the build sandbox were not run")
class NvccThroughTheSandboxTest(unittest.TestCase):
    """nvcc (cudafe++, cicc, ptxas, fatbinary, gcc, as) inside the sandbox."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="buildbox-nvcc-")).resolve()
        os.chmod(cls.tmp, 0o755)
        secret_dir = cls.tmp / "secret"
        secret_dir.mkdir()
        cls.secret_bin = secret_dir / "cases.toml"
        cls.secret_bin.write_text(f"{LEAK}\n")
        cls.secret_h = secret_dir / "secret.h"
        cls.secret_h.write_text(f'const char* secret_value = "{LEAK}";\n')
        cls.src = cls.tmp / "src"
        cls.src.mkdir()
        os.chmod(cls.src, 0o755)
        for name, text, secret in (("good.cu", GOOD, None), ("incbin.cu", INCBIN, cls.secret_bin),
                                   ("include.cu", SECOND_PASS_INCLUDE, cls.secret_h)):
            (cls.src / name).write_text(text.replace("@SECRET@", str(secret)))
        for p in [secret_dir, cls.secret_bin, cls.secret_h, *cls.src.iterdir()]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compile(self, name, mode="auto", sandboxed=True):
        obj = self.tmp / f"{name}.{mode}.{'box' if sandboxed else 'plain'}.o"
        cmd = [NVCC, "-arch=sm_90", "-c", self.src / name, "-o", obj, "-MD", "-MT", obj,
               "-MF", f"{obj}.d"]
        if sandboxed:
            r = box(cmd, reads=[self.src / name], deny=[self.tmp], mode=mode, cwd=self.tmp)
        else:
            r = subprocess.run([str(a) for a in cmd], capture_output=True, text=True,
                               cwd=self.tmp, timeout=600)
        return r, obj

    def test_a_compile_keeps_nvccs_fatbin_the_policys_compare_reads(self):
        from grader.policy import device
        for mode in MODES:
            with self.subTest(mode=mode):
                obj = self.tmp / f"kept.{mode}.o"
                stale = Path(f"{obj}.fatbin")
                stale.write_bytes(b"an earlier build's")
                cmd = [sys.executable, BOX, "--mode", mode, "--keep-fatbin",
                       "--read", self.src / "good.cu", "--deny", self.tmp, "--",
                       NVCC, "-arch=sm_90", "-c", self.src / "good.cu", "-o", obj.name]
                r = subprocess.run([str(a) for a in cmd], capture_output=True, text=True,
                                   cwd=self.tmp, timeout=600)
                self.assertEqual(r.returncode, 0, r.stderr)
                kept = device.kept_fatbin(obj).read_bytes()
                self.assertNotEqual(kept, b"an earlier build's")
                (section,) = elf.section_bytes(obj, elf.FATBIN_SECTION)
                self.assertEqual(section[:len(kept)], kept)
                self.assertEqual(device.check_device_sections(obj, kept_required=True), [])
                self.assertEqual(sorted(p.name for p in self.tmp.glob(f"kept.{mode}.*")),
                                 [obj.name, stale.name])   # nvcc's other files stay private

    def test_the_compare_refuses_a_fatbin_put_under_nvccs_label(self):
        # Red team round 18's file: its assembler skips nvcc's fatbin asm and keeps one compiled
        # from another source under nvcc's label, in nvcc's shape. The source rule refuses it
        # first; behind that rule, the kept fatbin differs from the section.
        from grader.policy import device
        repo = Path(BOX).parents[1]
        lab = repo / "labs" / "05_reduction"
        src = repo / "tests" / "submissions" / "05_reduction" / "asm_if_skips_fatbin" / "reduce.cu"
        if not src.is_file():
            self.skipTest("the corpus (tests/submissions/) is not part of a student release")
        obj = self.tmp / "round18.o"
        cmd = [sys.executable, BOX, "--keep-fatbin", "--read", src, "--read", lab / "reduce.h",
               "--deny", self.tmp, "--", NVCC, "-O3", "-DNDEBUG", "-arch=sm_90", "-lineinfo",
               "-std=c++17", f"-I{lab}", "-x", "cu", "-c", src, "-o", obj.name]   # CMake's
        r = subprocess.run([str(a) for a in cmd], capture_output=True, text=True, cwd=self.tmp,
                           timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(device.check_device_sections(obj), [])      # nvcc's shape: passes
        (v,) = device.check_device_sections(obj, kept_required=True)
        self.assertIn("not the fatbin nvcc compiled from your file", v.message)

    def test_the_attacks_work_without_the_sandbox(self):
        # The test's own control: these files do read the secret when nothing stops them.
        for name in ("incbin.cu", "include.cu"):
            with self.subTest(name=name):
                r, obj = self.compile(name, sandboxed=False)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(LEAK.encode(), obj.read_bytes())

    def test_a_kernel_compiles_and_the_attacks_fail(self):
        for mode in MODES:
            with self.subTest(mode=mode, file="good.cu"):
                r, obj = self.compile("good.cu", mode)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(obj.read_bytes().startswith(b"\x7fELF"))
                self.assertIn(str(self.src / "good.cu"), Path(f"{obj}.d").read_text())
            for name, words in (("incbin.cu", "file not found"),
                                ("include.cu", "cannot open source file")):
                with self.subTest(mode=mode, file=name):
                    r, obj = self.compile(name, mode)
                    self.assertNotEqual(r.returncode, 0)
                    self.assertNotEqual(r.returncode, buildbox.EXIT_NO_SANDBOX, r.stderr)
                    self.assertIn(words, r.stderr)
                    self.assertNotIn(LEAK, r.stdout + r.stderr)
                    self.assertFalse(obj.exists())


if __name__ == "__main__":
    unittest.main()
