"""Build messages a student reads (link and compile errors) and staging of the student files."""

import hashlib
import os
import socket
import tempfile
import threading
import time
import subprocess
import unittest
from pathlib import Path
from unittest import mock

from grader import build
from grader.errors import EXIT_USAGE, GraderError
from grader.results import BuildResult

STAGE = "/home/ci/labs-grader/build/grade/submission"
SIG = "matmul_v1_naive(float const*, float const*, float*, int, int, int, CUstream_st*)"

# Captured shape of a GNU ld failure under Ninja: the student renamed the launcher.
LD_LOG = f"""\
[1/3] Building CUDA object labs/01_naive_matmul/CMakeFiles/01_naive_matmul_student.dir{STAGE}/01_naive_matmul/matmul.cu.o
[2/3] Linking CXX executable labs/01_naive_matmul/01_naive_matmul_test
FAILED: labs/01_naive_matmul/01_naive_matmul_test
: && /usr/bin/c++ -O3 -DNDEBUG labs/01_naive_matmul/CMakeFiles/01_naive_matmul_test.dir/tests/public_test.cpp.o -o labs/01_naive_matmul/01_naive_matmul_test  common/liblabkit.a  -lcudart_static && :
/usr/bin/ld: labs/01_naive_matmul/CMakeFiles/01_naive_matmul_test.dir/tests/public_test.cpp.o: in function `(anonymous namespace)::MatmulPublic_MatchesCpuReference_Test::TestBody()':
public_test.cpp:(.text+0x5a): undefined reference to `{SIG}'
/usr/bin/ld: labs/01_naive_matmul/CMakeFiles/01_naive_matmul_test.dir/tests/public_test.cpp.o:(.data.rel.ro.local+0x8): undefined reference to `{SIG}'
collect2: error: ld returned 1 exit status
ninja: build stopped: subcommand failed.
"""

# Captured shape of an nvcc compile error under Ninja.
NVCC_LOG = f"""\
[1/4] Building CUDA object labs/01_naive_matmul/CMakeFiles/01_naive_matmul_student.dir/matmul.cu.o
FAILED: labs/01_naive_matmul/CMakeFiles/01_naive_matmul_student.dir/matmul.cu.o
/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -I/repo/common/include -O3 -DNDEBUG -std=c++17 "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -x cu -c {STAGE}/01_naive_matmul/matmul.cu -o labs/01_naive_matmul/CMakeFiles/01_naive_matmul_student.dir/matmul.cu.o
{STAGE}/01_naive_matmul/matmul.cu(12): error: identifier "rowz" is undefined
      C[rowz * N + col] = acc;
        ^

1 error detected in the compilation of "{STAGE}/01_naive_matmul/matmul.cu".
ninja: build stopped: subcommand failed.
"""


class ExplainBuildFailureTest(unittest.TestCase):
    def test_undefined_reference(self):
        hint = build.explain_build_failure(LD_LOG)
        self.assertTrue(hint.startswith("link error"), hint)
        self.assertIn(SIG, hint)
        self.assertEqual(hint.count("matmul_v1_naive"), 1)   # named once, not per reference
        self.assertIn("signature", hint)
        self.assertNotIn("does not compile", hint)

    def test_undefined_reference_in_student_terms(self):
        hint = build.readable(build.explain_build_failure(LD_LOG), Path(STAGE))
        self.assertIn("matmul_v1_naive(float const*, float const*, float*, int, int, int, "
                      "cudaStream_t)", hint)
        self.assertNotIn("CUstream_st", hint)

    def test_undefined_reference_with_typographic_quotes_and_several_names(self):
        log = ("x.o: in function ‘main’:\nx.cpp:(.text+0x1): undefined reference to ‘foo(int)’\n"
               "x.cpp:(.text+0x9): undefined reference to `bar'\n"
               "collect2: error: ld returned 1 exit status\n")
        hint = build.explain_build_failure(log)
        self.assertIn("bar, foo(int)", hint)   # sorted, each once
        self.assertNotIn("main", hint)

    def test_nvcc_error(self):
        hint = build.explain_build_failure(NVCC_LOG)
        self.assertIn("does not compile", hint)
        self.assertNotIn("link error", hint)

    def test_multiple_definition(self):
        log = ("/usr/bin/ld: b.o: in function `matmul_v1_naive(...)':\n"
               "matmul.cu:(.text+0x0): multiple definition of `matmul_v1_naive(...)'; a.o first "
               "defined here\ncollect2: error: ld returned 1 exit status\n")
        self.assertIn("defined twice", build.explain_build_failure(log))

    def test_other_failure(self):
        hint = build.explain_build_failure("ninja: build stopped: subcommand failed.\nKilled\n")
        self.assertEqual(hint, "the build failed: see the log below")


class RelevantLogTest(unittest.TestCase):
    def test_nvcc_error_keeps_source_and_caret(self):
        out = build._relevant_log(NVCC_LOG).splitlines()
        i = next(n for n, line in enumerate(out) if 'error: identifier "rowz" is undefined' in line)
        self.assertEqual(out[i + 1], "      C[rowz * N + col] = acc;")
        self.assertEqual(out[i + 2], "        ^")
        text = "\n".join(out)
        self.assertIn("1 error detected", text)
        self.assertNotIn("[1/4] Building", text)
        self.assertNotIn("ninja: build stopped", text)
        self.assertNotIn("nvcc -forward-unknown-to-host-compiler", text)
        self.assertNotIn("FAILED:", text)

    def test_ld_log_keeps_undefined_references(self):
        out = build._relevant_log(LD_LOG)
        self.assertEqual(out.count("undefined reference to"), 2)
        self.assertIn("collect2: error: ld returned 1 exit status", out)
        self.assertNotIn("[2/3] Linking", out)
        self.assertNotIn("ninja: build stopped", out)

    def test_two_errors_in_a_row(self):
        log = ("a.cu(1): error: first\n  src1\n  ^\n"
               "a.cu(2): error: second\n"
               "a.cu(3): error: third\n  src3\n  ^\nninja: build stopped\n")
        self.assertEqual(build._relevant_log(log).splitlines(),
                         ["a.cu(1): error: first", "  src1", "  ^", "a.cu(2): error: second",
                          "a.cu(3): error: third", "  src3", "  ^"])

    def test_no_error_lines_gives_the_log_trimmed(self):
        log = "\n".join(f"step {i}" for i in range(100))
        out = build._relevant_log(log).splitlines()
        self.assertEqual(out[0], "step 0")
        self.assertEqual(out[59], "step 59")
        self.assertEqual(out[60], "[... 40 more lines ...]")
        self.assertEqual(len(out), 61)


class ReadableTest(unittest.TestCase):
    def test_strips_stage_dir_and_renames_stream_type(self):
        out = build.readable(build._relevant_log(NVCC_LOG) + "\n" + LD_LOG, Path(STAGE))
        self.assertNotIn(STAGE, out)
        self.assertIn('01_naive_matmul/matmul.cu(12): error: identifier "rowz"', out)
        self.assertIn('compilation of "01_naive_matmul/matmul.cu"', out)
        self.assertIn("int, int, int, cudaStream_t)", out)
        self.assertNotIn("CUstream_st", out)

    def test_leaves_other_paths_alone(self):
        text = "/repo/common/include/labkit/gpu.hpp(3): warning\n/home/ci/labs-grader/x.cu"
        self.assertEqual(build.readable(text, Path(STAGE)), text)


class StageSubmissionTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        tmp = Path(self._tmp.name)
        self.sub = tmp / "sub"
        self.stage = tmp / "build" / "submission"
        (self.sub / "01_naive_matmul").mkdir(parents=True)
        self.src = self.sub / "01_naive_matmul" / "matmul.cu"
        self.src.write_bytes(b"__global__ void k() {}\n// \xc3\xa9\n")
        (self.sub / "01_naive_matmul" / "notes.txt").write_text("not a student file")

    def tearDown(self):
        self._tmp.cleanup()

    def test_copies_and_hashes(self):
        hashes = build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        dst = self.stage / "01_naive_matmul" / "matmul.cu"
        self.assertEqual(dst.read_bytes(), self.src.read_bytes())
        self.assertEqual(hashes, {"matmul.cu": hashlib.sha256(self.src.read_bytes()).hexdigest()})
        self.assertEqual(hashes["matmul.cu"], build.sha256(self.src))
        # only the listed files are taken
        self.assertEqual(sorted(p.name for p in (self.stage / "01_naive_matmul").iterdir()),
                         ["matmul.cu"])

    def test_restaging_replaces_the_old_copy(self):
        build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        self.src.write_text("// second version\n")
        hashes = build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        self.assertEqual((self.stage / "01_naive_matmul" / "matmul.cu").read_text(),
                         "// second version\n")
        self.assertEqual(hashes["matmul.cu"],
                         hashlib.sha256(b"// second version\n").hexdigest())

    def test_an_unchanged_file_that_was_built_keeps_its_staged_copy(self):
        dst = self.stage / "01_naive_matmul" / "matmul.cu"
        old = (1_000_000_000, 1_000_000_000)
        hashes = build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        os.utime(dst, ns=old)
        # not marked built (a build cut short): written afresh
        build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        self.assertNotEqual(dst.stat().st_mtime_ns, old[0])
        # built, same bytes: the staged copy (and its mtime) stay, so the build is reused
        build.mark_built(self.stage, "01_naive_matmul", hashes)
        os.utime(dst, ns=old)
        self.assertEqual(build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",),
                                                self.stage), hashes)
        self.assertEqual(dst.stat().st_mtime_ns, old[0])
        # one byte different, same size: written afresh, and the mark is gone
        self.src.write_bytes(self.src.read_bytes()[:-1] + b"!")
        build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        self.assertNotEqual(dst.stat().st_mtime_ns, old[0])
        self.assertEqual(dst.read_bytes(), self.src.read_bytes())
        self.assertFalse((dst.parent / build.BUILT_MARKER).exists())
        # the staged copy changed behind the mark's back (same size): written afresh
        hashes = build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        build.mark_built(self.stage, "01_naive_matmul", hashes)
        dst.write_bytes(dst.read_bytes()[:-1] + b"?")
        os.utime(dst, ns=old)
        build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        self.assertEqual(dst.read_bytes(), self.src.read_bytes())
        # a link where the staged copy goes is replaced, even when it shows the same bytes
        build.mark_built(self.stage, "01_naive_matmul", hashes)
        twin = self.stage / "twin.cu"
        twin.write_bytes(self.src.read_bytes())
        dst.unlink()
        dst.symlink_to(twin)
        build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        self.assertFalse(dst.is_symlink())

    def test_missing_file_is_named(self):
        with self.assertRaises(GraderError) as cm:
            build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu", "helpers.cuh"),
                                   self.stage)
        msg = cm.exception.message
        self.assertIn("helpers.cuh", msg)
        self.assertNotIn("matmul.cu,", msg)
        self.assertIn("01_naive_matmul", msg)
        self.assertIn(str(self.sub / "01_naive_matmul"), msg)
        self.assertEqual(cm.exception.exit_code, EXIT_USAGE)
        self.assertFalse((self.stage / "01_naive_matmul" / "matmul.cu").exists())

    def test_missing_lab_folder(self):
        with self.assertRaises(GraderError) as cm:
            build.stage_submission(self.sub, "02_tiled", ("tiled.cu",), self.stage)
        self.assertIn("tiled.cu", cm.exception.message)

    def test_a_repository_root_gets_a_hint(self):
        root = self.sub.parent / "clone"
        root.mkdir()
        self.sub.rename(root / "labs")
        with self.assertRaises(build.BadFilesError) as cm:
            build.stage_submission(root, "01_naive_matmul", ("matmul.cu",), self.stage)
        msg = cm.exception.message
        self.assertIn("looks like a repository root", msg)
        self.assertIn(f"--submission {root / 'labs'}", msg)
        # the right folder grades
        self.assertIn("matmul.cu", build.stage_submission(root / "labs", "01_naive_matmul",
                                                          ("matmul.cu",), self.stage))

    def test_a_binary_file_is_refused_without_echoing_it(self):
        self.src.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
        msg = self.refused()
        self.assertIn("matmul.cu is not a source file: it is an ELF object or program", msg)
        self.assertIn("NUL byte at offset 7", msg)
        self.assertNotIn("ELF\x02", msg)
        self.assertLess(len(msg), 300)

    def test_a_nul_byte_anywhere_is_binary(self):
        self.src.write_bytes(b"__global__ void k() {}\n\0\n")
        self.assertIn("it is binary data (a NUL byte at offset 23)", self.refused())

    def refused(self, files=("matmul.cu",), max_file_kib=256, lab="01_naive_matmul"):
        with self.assertRaises(build.BadFilesError) as cm:
            build.stage_submission(self.sub, lab, files, self.stage, max_file_kib)
        self.assertEqual(cm.exception.exit_code, EXIT_USAGE)
        self.assertFalse((self.stage / lab / files[0]).exists())
        return cm.exception.message

    def test_a_directory_is_not_a_file(self):
        self.src.unlink()
        self.src.mkdir()
        msg = self.refused()
        self.assertIn("matmul.cu is a directory", msg)

    def test_symlink_to_a_secret_is_refused_and_never_read(self):
        secret = Path(self._tmp.name) / "instructor" / "answers.cu"
        secret.parent.mkdir()
        secret.write_text("TOP-SECRET-ANSWER-KEY 42\n")
        self.src.unlink()
        self.src.symlink_to(secret)
        msg = self.refused()
        self.assertIn("matmul.cu is a symbolic link", msg)
        self.assertNotIn("TOP-SECRET", msg)
        self.assertNotIn(str(secret), msg)          # not even where it points

    def test_symlink_to_a_sibling_in_the_submission(self):
        (self.sub / "01_naive_matmul" / "real.cu").write_text("// real\n")
        self.src.unlink()
        self.src.symlink_to("real.cu")
        self.assertIn("symbolic link", self.refused())

    def test_symlinked_lab_folder_is_refused(self):
        elsewhere = Path(self._tmp.name) / "elsewhere"
        (self.sub / "01_naive_matmul").rename(elsewhere)
        (self.sub / "01_naive_matmul").symlink_to(elsewhere)
        msg = self.refused()
        self.assertIn("symbolic link", msg)
        self.assertIn("folder", msg)

    def test_lab_folder_that_is_a_file(self):
        (self.sub / "02_tiled").write_text("not a folder")
        msg = self.refused(files=("tiled.cu",), lab="02_tiled")
        self.assertIn("not a folder", msg)

    def test_fifo_is_refused_without_blocking(self):
        self.src.unlink()
        os.mkfifo(self.src)
        done = []
        t = threading.Thread(target=lambda: done.append(self.refused()), daemon=True)
        t.start()
        t.join(10)
        if t.is_alive():    # unblock the staging thread so the test run can end
            fd = os.open(self.src, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
            self.fail("staging a FIFO blocked")
        self.assertIn("matmul.cu is a named pipe (FIFO)", done[0])

    def test_socket_is_refused(self):
        self.src.unlink()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(s.close)
        try:
            s.bind(str(self.src))
        except OSError as e:     # a path too long for a socket address
            self.skipTest(f"cannot bind a unix socket here: {e}")
        self.assertIn("socket", self.refused())

    def test_oversize_file_is_refused_with_its_size(self):
        self.src.write_bytes(b"x" * (5 * 1024 + 1))
        msg = self.refused(max_file_kib=5)
        self.assertIn("5121 bytes", msg)
        self.assertIn("limit is 5 KiB", msg)
        self.assertIn("max_file_kib", msg)
        # exactly the limit is fine
        self.src.write_bytes(b"x" * (5 * 1024))
        self.assertIn("matmul.cu", build.stage_submission(self.sub, "01_naive_matmul",
                                                          ("matmul.cu",), self.stage, 5))

    def test_every_problem_is_named_at_once(self):
        (self.sub / "01_naive_matmul" / "b.cuh").symlink_to("/etc/hostname")
        msg = self.refused(files=("matmul.cu", "b.cuh", "c.cu"))
        self.assertIn("no c.cu", msg)
        self.assertIn("b.cuh is a symbolic link", msg)

    def test_a_link_left_in_the_stage_is_replaced_not_written_through(self):
        target = Path(self._tmp.name) / "victim.txt"
        target.write_text("untouched")
        dst = self.stage / "01_naive_matmul" / "matmul.cu"
        dst.parent.mkdir(parents=True)
        dst.symlink_to(target)
        build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        self.assertEqual(target.read_text(), "untouched")
        self.assertFalse(dst.is_symlink())
        self.assertEqual(dst.read_bytes(), self.src.read_bytes())

    def test_fresh_mtime(self):
        past = time.time() - 10 * 24 * 3600
        os.utime(self.src, (past, past))
        # A stale staged copy from an earlier grading, also in the past and with the same content:
        dst = self.stage / "01_naive_matmul" / "matmul.cu"
        dst.parent.mkdir(parents=True)
        dst.write_bytes(self.src.read_bytes())
        os.utime(dst, (past + 60, past + 60))
        before = time.time()
        build.stage_submission(self.sub, "01_naive_matmul", ("matmul.cu",), self.stage)
        mtime = dst.stat().st_mtime
        self.assertGreater(mtime, self.src.stat().st_mtime + 3600)
        self.assertGreaterEqual(mtime, before - 2)   # written now (allow coarse clocks)


class ConfigureTest(unittest.TestCase):
    """configure() is skipped when the build dir is already configured the same way."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        tmp = Path(self._tmp.name)
        self.repo, self.build_dir, self.stage = tmp / "repo", tmp / "build", tmp / "build" / "sub"
        self.build_dir.mkdir()
        self.calls = []

    def tearDown(self):
        self._tmp.cleanup()

    def write_cache(self, **changes):
        entries = {"CMAKE_HOME_DIRECTORY:INTERNAL": str(self.repo),
                   "CMAKE_BUILD_TYPE:STRING": "Release",
                   "LABS_SUBMISSION_DIR:PATH": str(self.stage),
                   "LABS_ONLY:STRING": "01_naive_matmul;02_tiled",
                   "LABS_WITH_SOLUTIONS:BOOL": "OFF", "LABS_TEST_SUBMISSION:BOOL": "OFF",
                   "CMAKE_EXPORT_COMPILE_COMMANDS:BOOL": "ON", "LABS_SANDBOX_BUILD:BOOL": "ON"}
        entries.update(changes)
        (self.build_dir / "CMakeCache.txt").write_text(
            "# This is the CMakeCache file.\n//comment\n"
            + "".join(f"{k}={v}\n" for k, v in entries.items()))
        (self.build_dir / "labs-manifest.json").write_text("{}")

    def configure(self):
        def run(args, timeout_s, **kw):
            self.calls.append(args)
            from grader.runner import ProcResult
            return ProcResult(returncode=0, timed_out=False, seconds=1.5, stdout="", stderr="")
        with mock.patch.object(build.runner, "run", run), \
                mock.patch.object(build, "find_tool", lambda name: f"/usr/bin/{name}"), \
                mock.patch.object(build, "ensure_build_tools",
                                  lambda: self.calls.append(["set-up"])):
            return build.configure(self.repo, self.build_dir, self.stage,
                                   ["01_naive_matmul", "02_tiled"])

    def test_first_configure_exports_compile_commands(self):
        r = self.configure()
        self.assertEqual(r, BuildResult(ok=True, seconds=1.5))
        setup, args = self.calls   # the set-up (scripts/install-deps) first, then CMake
        self.assertEqual(setup, ["set-up"])
        self.assertIn("-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", args)
        self.assertIn(f"-DLABS_SUBMISSION_DIR={self.stage}", args)
        self.assertIn("-DLABS_ONLY=01_naive_matmul;02_tiled", args)
        # The student's compile in the build sandbox (grader/buildbox.py, cmake/CudaLab.cmake)
        self.assertIn("-DLABS_SANDBOX_BUILD=ON", args)

    def test_the_sandbox_setting_is_passed_and_a_change_configures_again(self):
        self.write_cache()
        with mock.patch.object(build.runner, "run", lambda *a, **k: None):
            self.assertTrue(build.configure_is_current(
                self.repo, self.build_dir, self.stage, ["01_naive_matmul", "02_tiled"]))
            self.assertFalse(build.configure_is_current(
                self.repo, self.build_dir, self.stage, ["01_naive_matmul", "02_tiled"],
                sandbox=False))
        self.assertEqual(build.cache_settings(self.repo, self.stage, ["x"], sandbox=False)
                         ["LABS_SANDBOX_BUILD"], "OFF")

    def test_compilers_give_way_to_timed_gpu_calls(self):
        # In the idle scheduling class and niced (BUILD_NICENESS), so that in a batch another
        # grading's benchmark judge is not kept waiting for a core; the command itself is
        # unchanged after the prefix.
        idle = ("/usr/bin/chrt", "--idle", "0")
        nice = ["/usr/bin/nice", "-n", str(build.BUILD_NICENESS)]
        with mock.patch.object(build.shutil, "which", lambda name: f"/usr/bin/{name}"), \
                mock.patch.object(build, "_idle_prefix", lambda: idle):
            self.configure()
            _, args = self.calls
            self.assertEqual(args[:6], [*idle, *nice])
            self.assertEqual(args[6:9], ["/usr/bin/cmake", "-S", str(self.repo)])
            self.calls.clear()

            def run(args, timeout_s, **kw):
                self.calls.append(args)
                from grader.runner import ProcResult
                return ProcResult(returncode=1, timed_out=False, seconds=0.1, stdout="", stderr="")
            with mock.patch.object(build.runner, "run", run), \
                    mock.patch.object(build, "find_tool", lambda name: f"/usr/bin/{name}"):
                build.build_targets(self.build_dir, ["a_worker"], jobs=4)
            self.assertEqual(self.calls[0][:6], [*idle, *nice])
            self.assertIn("a_worker", self.calls[0])
        with mock.patch.object(build.shutil, "which", lambda name: None), \
                mock.patch.object(build, "_idle_prefix", lambda: ()):   # neither: as is
            self.assertEqual(build._niced(["cmake", "--build"]), ["cmake", "--build"])

    def test_the_idle_class_only_where_the_machine_grants_it(self):
        def probe(returncode=0, missing=False, error=None):
            build._idle_prefix.cache_clear()
            self.addCleanup(build._idle_prefix.cache_clear)
            ran = []

            def run(args, **kw):
                ran.append(args)
                if error:
                    raise error
                return subprocess.CompletedProcess(args, returncode)
            which = (lambda name: None) if missing else (lambda name: f"/usr/bin/{name}")
            with mock.patch.object(build.shutil, "which", which), \
                    mock.patch.object(build.subprocess, "run", run):
                return build._idle_prefix(), ran
        prefix, ran = probe()
        self.assertEqual(prefix, ("/usr/bin/chrt", "--idle", "0"))
        self.assertEqual(ran, [["/usr/bin/chrt", "--idle", "0", "true"]])
        self.assertEqual(probe(returncode=1)[0], ())          # refused (a sandboxed kernel)
        self.assertEqual(probe(missing=True), ((), []))       # no chrt: not even tried
        self.assertEqual(probe(error=OSError(8, "exec format"))[0], ())

    def test_same_settings_skip_configure(self):
        self.write_cache()
        r = self.configure()
        self.assertTrue(r.ok)
        self.assertEqual(self.calls, [])   # nor the set-up: this build dir was configured

    def test_bool_spelling_does_not_matter(self):
        self.write_cache(**{"LABS_WITH_SOLUTIONS:BOOL": "FALSE",
                            "CMAKE_EXPORT_COMPILE_COMMANDS:BOOL": "TRUE"})
        self.configure()
        self.assertEqual(self.calls, [])

    def test_any_difference_configures_again(self):
        for key, value in (("LABS_ONLY:STRING", "01_naive_matmul"),
                           ("LABS_SUBMISSION_DIR:PATH", "/elsewhere"),
                           ("CMAKE_EXPORT_COMPILE_COMMANDS:BOOL", "OFF"),
                           ("CMAKE_HOME_DIRECTORY:INTERNAL", "/other/repo")):
            with self.subTest(key=key):
                self.calls.clear()
                self.write_cache(**{key: value})
                self.configure()
                self.assertEqual(len(self.calls), 2)   # the set-up, then CMake

    def test_a_cache_of_another_checkout_is_forgotten_before_configuring(self):
        # A checkout moved or copied elsewhere: CMake refuses a cache made from another source
        # folder, so the grader removes it (and CMakeFiles) and configures afresh.
        self.write_cache(**{"CMAKE_HOME_DIRECTORY:INTERNAL": "/old/place/of/the/repo"})
        (self.build_dir / "CMakeFiles").mkdir()
        (self.build_dir / "CMakeFiles" / "x").write_text("x")
        (self.build_dir / "object.o").write_text("kept")
        self.configure()
        self.assertEqual(len(self.calls), 2)   # the set-up, then CMake
        self.assertFalse((self.build_dir / "CMakeCache.txt").exists())
        self.assertFalse((self.build_dir / "CMakeFiles").exists())
        self.assertTrue((self.build_dir / "object.o").exists())
        # This checkout's own cache stays (CMake reconfigures it in place).
        self.calls.clear()
        self.write_cache(**{"LABS_ONLY:STRING": "01_naive_matmul"})
        self.configure()
        self.assertTrue((self.build_dir / "CMakeCache.txt").exists())

    def test_no_manifest_configures_again(self):
        self.write_cache()
        (self.build_dir / "labs-manifest.json").unlink()
        self.configure()
        self.assertEqual(len(self.calls), 2)


if __name__ == "__main__":
    unittest.main()
