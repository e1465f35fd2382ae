"""grader/elf.py and the check of the linked worker in grader/build.py: an executable stack or
a writable and executable segment refuses the worker before anything runs it. Small programs
linked with gcc (skipped without it), and malformed files."""

import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader import build, elf
from grader.errors import GraderError

GCC = shutil.which("gcc")
MAIN = "int main(void) { return 0; }\n"


@unittest.skipUnless(GCC, "gcc is needed to link the test programs")
class LinkedProgramTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        sources = {
            "plain": MAIN,
            "exec_stack": MAIN + '__asm__(".section .note.GNU-stack,\\"x\\",@progbits");\n',
            "rwx": MAIN + '__asm__(".section .wx,\\"awx\\",@progbits\\n.byte 0xc3\\n.previous");\n',
        }
        cls.paths = {}
        for name, text in sources.items():
            (d / f"{name}.c").write_text(text)
            subprocess.run([GCC, str(d / f"{name}.c"), "-o", str(d / name)], check=True,
                           capture_output=True)
            cls.paths[name] = d / name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_plain_program_passes(self):
        self.assertEqual(elf.executable_memory_problems(self.paths["plain"]), [])
        self.assertIsNone(build.worker_memory_problem(self.paths["plain"]))

    def test_executable_stack_is_refused(self):
        (problem,) = elf.executable_memory_problems(self.paths["exec_stack"])
        self.assertIn("PT_GNU_STACK program header asks for an executable stack", problem)
        text = build.worker_memory_problem(self.paths["exec_stack"])
        self.assertTrue(text.startswith("the worker linked from your file was refused: its "
                                        "PT_GNU_STACK"), text)
        self.assertIn("so the worker was not run", text)

    def test_writable_and_executable_segment_is_refused(self):
        problems = elf.executable_memory_problems(self.paths["rwx"])
        self.assertTrue(any("(PT_LOAD) maps memory both writable and executable (RWX)" in p
                            for p in problems), problems)

    def test_no_gnu_stack_header_counts_as_executable_stack(self):
        f = elf.read(self.paths["plain"])
        f.segments = [s for s in f.segments if s.type != elf.PT_GNU_STACK]
        with mock.patch.object(elf, "read", return_value=f):
            (problem,) = elf.executable_memory_problems(self.paths["plain"])
        self.assertIn("no PT_GNU_STACK", problem)

    def test_build_refuses_and_deletes_a_bad_worker_after_linking(self):
        with tempfile.TemporaryDirectory() as tmp:
            worker = Path(tmp) / "01_naive_matmul_worker"
            shutil.copy(self.paths["exec_stack"], worker)
            target = mock.Mock(target="01_naive_matmul_worker", path=worker)
            lab = mock.Mock(worker=target, workers=(target,))
            fake = mock.Mock(labs={"01_naive_matmul": lab})
            with mock.patch.object(build.manifest, "load_manifest", return_value=fake):
                self.assertIsNone(build.check_linked_workers(Path(tmp), ["labkit_gpu_info"]))
                text = build.check_linked_workers(Path(tmp), ["01_naive_matmul_worker",
                                                              "01_naive_matmul_test"])
            self.assertIn("executable stack", text)
            self.assertFalse(worker.exists(), "a refused worker is deleted")
            # through build_targets: the build "fails" with the refusal as its hint
            shutil.copy(self.paths["exec_stack"], worker)
            done = mock.Mock(returncode=0, seconds=1.0, timed_out=False, output="")
            with mock.patch.object(build.manifest, "load_manifest", return_value=fake), \
                    mock.patch.object(build, "find_tool", return_value="cmake"), \
                    mock.patch.object(build.runner, "run", return_value=done):
                result = build.build_targets(Path(tmp), ["01_naive_matmul_worker"])
            self.assertFalse(result.ok)
            self.assertTrue(result.refused)   # grade records it as 'rejected', not build_failed
            self.assertIn("executable stack", result.hint)

    def test_unlisted_worker_or_no_manifest_is_refused(self):
        with mock.patch.object(build.manifest, "load_manifest",
                               side_effect=GraderError("no manifest")):
            self.assertIn("could not be checked",
                          build.check_linked_workers(Path("/x"), ["a_worker"]))
        with mock.patch.object(build.manifest, "load_manifest", return_value=mock.Mock(labs={})):
            self.assertIn("does not list a_worker",
                          build.check_linked_workers(Path("/x"), ["a_worker"]))


@unittest.skipUnless(GCC, "gcc is needed to link the test programs")
class DynamicSectionTest(unittest.TestCase):
    """elf.read: the libraries a program needs, the names it imports, its symbols."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = Path(cls.tmp.name)
        # The "helper library": libm's cbrt, linked dynamically; a static copy of a function of
        # the same name in the other program stands for a library linked into it statically.
        uses = "#include <math.h>\nvolatile double x = 2;\nint main(void) { return cbrt(x) > 9; }\n"
        static_copy = "double cbrt(double v) { return v; }\n" + MAIN
        cls.paths = {}
        for name, text, libs in (("plain", MAIN, []), ("helper", uses, ["-lm"]),
                                 ("static_copy", static_copy, [])):
            (d / f"{name}.c").write_text(text)
            subprocess.run([GCC, str(d / f"{name}.c"), "-o", str(d / name), "-fno-builtin",
                            "-Wl,--no-as-needed", *libs], check=True, capture_output=True)
            cls.paths[name] = d / name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_reads_needed_libraries_and_imports(self):
        helper = elf.read(self.paths["helper"])
        self.assertIn("libm.so.6", helper.needed_libraries())
        self.assertIn("cbrt", helper.imports())
        self.assertNotIn("libm.so.6", elf.read(self.paths["plain"]).needed_libraries())
        self.assertIn(("cbrt", True), elf.read(self.paths["static_copy"]).symbols())


class MalformedTest(unittest.TestCase):
    def test_not_elf_and_truncated(self):
        for data in (b"", b"hello", b"\x7fELF\x02\x01" + bytes(10),
                     b"\x7fELF\x02\x01\x01" + bytes(9) + bytes(30)):
            with self.subTest(data[:8]):
                with self.assertRaises(elf.ElfError):
                    elf.ElfFile(data)

    def test_section_header_offset_past_the_end(self):
        with open("/proc/self/exe", "rb") as f:
            data = bytearray(f.read(64))
        data[0x28:0x30] = (1 << 40).to_bytes(8, "little")      # e_shoff, ELF64 little-endian
        with self.assertRaises(elf.ElfError):
            elf.ElfFile(bytes(data) + bytes(4096))

    def test_unreadable_worker_is_refused(self):
        with tempfile.NamedTemporaryFile() as f:
            f.write(b"not an elf")
            f.flush()
            self.assertIn("cannot be checked", build.worker_memory_problem(Path(f.name)))


if __name__ == "__main__":
    unittest.main()
