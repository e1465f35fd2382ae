"""runner.run with real tiny processes: exit codes, signals, timeouts (whole group), output cap."""

import os
import signal
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path

from grader import runner

PY = sys.executable
NO_CORE = "import resource; resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"


def py(code: str) -> list:
    return [PY, "-c", textwrap.dedent(code)]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie still answers kill(0); it is gone as far as running code goes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class ExitTest(unittest.TestCase):
    def test_exit_code_and_output(self):
        r = runner.run(py("""
            import sys
            print('hello out')
            print('hello err', file=sys.stderr)
            sys.exit(7)
        """), timeout_s=30)
        self.assertEqual(r.returncode, 7)
        self.assertFalse(r.timed_out)
        self.assertIsNone(r.signal_name)
        self.assertEqual(r.stdout, "hello out\n")
        self.assertEqual(r.stderr, "hello err\n")
        # `output`: stdout, then stderr, stripped
        self.assertEqual([line for line in r.output.splitlines() if line],
                         ["hello out", "hello err"])
        self.assertEqual(r.output, r.output.strip())
        self.assertGreaterEqual(r.seconds, 0.0)
        self.assertLess(r.seconds, 30)

    def test_output_joins_streams_on_separate_lines(self):
        r = runner.run(py("import sys; sys.stdout.write('a'); sys.stderr.write('b')"), timeout_s=30)
        self.assertEqual(r.output, "a\nb")
        r = runner.run(py("import sys; sys.stderr.write('only err\\n')"), timeout_s=30)
        self.assertEqual(r.output, "only err")

    def test_success(self):
        r = runner.run(py("pass"), timeout_s=30)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.output, "")

    def test_env_is_added_to_the_environment(self):
        before = os.environ.get("LABKIT_SEED")
        os.environ["GRADER_RUNNER_TEST_INHERITED"] = "inherited"
        try:
            r = runner.run(py("""
                import os
                print(os.environ['LABKIT_SEED'], os.environ['GRADER_RUNNER_TEST_INHERITED'])
            """), timeout_s=30, env={"LABKIT_SEED": "1234"})
        finally:
            del os.environ["GRADER_RUNNER_TEST_INHERITED"]
        self.assertEqual(r.returncode, 0, r.output)
        self.assertEqual(r.stdout.strip(), "1234 inherited")
        self.assertEqual(os.environ.get("LABKIT_SEED"), before)   # the caller's env is untouched

    def test_cwd_and_no_stdin(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = runner.run(py("""
                import os, sys
                print(os.getcwd())
                print(repr(sys.stdin.read()))
            """), timeout_s=30, cwd=tmp)
            self.assertEqual(r.stdout.splitlines(), [os.path.realpath(tmp), "''"])

    def test_own_session(self):
        r = runner.run(py("import os; print(os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid())"),
                       timeout_s=30)
        self.assertEqual(r.stdout.strip(), "True True")

    def test_missing_program_raises(self):
        with self.assertRaises(FileNotFoundError):
            runner.run(["/nonexistent/program-for-grader-tests"], timeout_s=5)


class SignalTest(unittest.TestCase):
    def test_sigsegv(self):
        r = runner.run(py(NO_CORE + "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"),
                       timeout_s=30)
        self.assertEqual(r.returncode, -signal.SIGSEGV)
        self.assertEqual(r.signal_name, "SIGSEGV")
        self.assertFalse(r.timed_out)

    def test_sigabrt(self):
        r = runner.run(py(NO_CORE + "import os\nos.abort()"), timeout_s=30)
        self.assertEqual(r.signal_name, "SIGABRT")

    def test_signal_name_of_unknown_and_positive_codes(self):
        p = runner.ProcResult(returncode=-200, timed_out=False, seconds=0, stdout="", stderr="")
        self.assertEqual(p.signal_name, "signal 200")
        p = runner.ProcResult(returncode=139, timed_out=False, seconds=0, stdout="", stderr="")
        self.assertIsNone(p.signal_name)
        p = runner.ProcResult(returncode=None, timed_out=True, seconds=0, stdout="", stderr="")
        self.assertIsNone(p.signal_name)


class TimeoutTest(unittest.TestCase):
    def test_timeout_kills_the_process_and_its_child(self):
        with tempfile.TemporaryDirectory() as tmp:
            marker = Path(tmp) / "child-was-alive"
            pidfile = Path(tmp) / "pids"
            # The child stays in the parent's process group; it writes `marker` after 3 s.
            child = f"import time; time.sleep(3); open({str(marker)!r}, 'w').write('alive')"
            parent = f"""
                import os, subprocess, sys, time
                c = subprocess.Popen([{PY!r}, '-c', {child!r}])
                with open({str(pidfile)!r}, 'w') as f:
                    f.write(f'{{os.getpid()}} {{c.pid}}')
                print('started', flush=True)
                time.sleep(100)
            """
            start = time.monotonic()
            r = runner.run(py(parent), timeout_s=2)
            elapsed = time.monotonic() - start
            self.assertTrue(r.timed_out)
            self.assertIsNone(r.returncode)
            self.assertIsNone(r.signal_name)
            self.assertLess(elapsed, 10)
            self.assertGreaterEqual(r.seconds, 1.9)
            self.assertIn("started", r.stdout)
            parent_pid, child_pid = map(int, pidfile.read_text().split())
            self.assertFalse(pid_alive(parent_pid))
            time.sleep(3.5)   # the child would have written the marker by now
            self.assertFalse(marker.exists(), "the child outlived the timeout")
            self.assertFalse(pid_alive(child_pid))

    def test_child_left_behind_by_a_finished_command_is_killed(self):
        with tempfile.TemporaryDirectory() as tmp:
            marker = Path(tmp) / "orphan-was-alive"
            child = f"import time; time.sleep(2); open({str(marker)!r}, 'w').write('alive')"
            # The command exits at once, leaving its child running in its group.
            r = runner.run(py(f"import subprocess; subprocess.Popen([{PY!r}, '-c', {child!r}])"),
                           timeout_s=30)
            self.assertEqual(r.returncode, 0)
            self.assertFalse(r.timed_out)
            time.sleep(2.5)
            self.assertFalse(marker.exists(), "a child outlived its finished command")

    def test_fast_command_is_not_a_timeout(self):
        r = runner.run(py("import time; time.sleep(0.1)"), timeout_s=20)
        self.assertFalse(r.timed_out)
        self.assertEqual(r.returncode, 0)


class OutputCapTest(unittest.TestCase):
    def test_small_output_is_whole(self):
        r = runner.run(py("print('x' * 999, end='')"), timeout_s=30, cap=1000)
        self.assertEqual(r.stdout, "x" * 999)

    def test_exactly_the_cap_is_whole(self):
        r = runner.run(py("print('y' * 1000, end='')"), timeout_s=30, cap=1000)
        self.assertEqual(r.stdout, "y" * 1000)
        self.assertNotIn("cut", r.stdout)
        self.assertFalse(r.stdout_cut)

    def test_a_cut_stdout_says_so(self):
        # The policy's tools refuse a listing they could not read whole (tools.ListingTooLarge).
        r = runner.run(py("print('y' * 1001, end='')"), timeout_s=30, cap=1000)
        self.assertTrue(r.stdout_cut)
        self.assertFalse(runner.run(py("print('y' * 10, end='')"), timeout_s=30).stdout_cut)

    def test_over_the_cap_keeps_start_and_end(self):
        cap = 4096
        # 100 000 bytes: 'START' + filler + 'END' on stdout, the same shape on stderr.
        code = """
            import sys
            body = 'START' + ''.join(chr(97 + i % 26) for i in range(100000 - 8)) + 'END'
            sys.stdout.write(body)
            sys.stderr.write(body.replace('START', 'BEGIN').replace('END', 'FIN'))
        """
        r = runner.run(py(code), timeout_s=30, cap=cap)
        self.assertEqual(r.returncode, 0)
        for text, first, last in ((r.stdout, "START", "END"), (r.stderr, "BEGIN", "FIN")):
            self.assertTrue(text.startswith(first), text[:50])
            self.assertTrue(text.endswith(last), text[-50:])
            self.assertIn(f"[... {100000 - cap} bytes of output cut ...]", text)
            marker = f"\n[... {100000 - cap} bytes of output cut ...]\n"
            head, tail = text.split(marker)
            self.assertEqual(len(head), cap // 4)
            self.assertEqual(len(tail), cap - cap // 4)
            self.assertLess(len(text), cap + 100)

    def test_default_cap(self):
        n = runner.OUTPUT_CAP + 5000
        r = runner.run(py(f"print('z' * {n}, end='')"), timeout_s=30)
        self.assertIn("[... 5000 bytes of output cut ...]", r.stdout)
        self.assertEqual(r.stdout.count("z"), runner.OUTPUT_CAP)

    def test_invalid_utf8_is_replaced(self):
        r = runner.run(py("import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe end')"), timeout_s=30)
        self.assertEqual(r.stdout, "ok \ufffd\ufffd end")


class BaseEnvTest(unittest.TestCase):
    def test_base_env_replaces_the_inherited_one(self):
        os.environ["GRADER_RUNNER_TEST_INHERITED"] = "inherited"
        try:
            r = runner.run(py("""
                import os
                print(sorted(os.environ))
            """), timeout_s=30, env={"ADDED": "1"}, base_env={"PATH": os.environ["PATH"]})
        finally:
            del os.environ["GRADER_RUNNER_TEST_INHERITED"]
        self.assertNotIn("GRADER_RUNNER_TEST_INHERITED", r.stdout)
        self.assertIn("'ADDED'", r.stdout)
        self.assertIn("'PATH'", r.stdout)


def with_fd(code: str):
    """A command that gets the results descriptor's number as its first argument."""
    return lambda fd: py(code) + [str(fd)]


class RunWithResultsTest(unittest.TestCase):
    def test_results_stdin_and_output(self):
        r = runner.run_with_results(with_fd("""
            import os, sys
            fd = int(sys.argv[1])
            seed = sys.stdin.readline().strip()
            os.write(fd, b'{"seed": "' + seed.encode() + b'"}\\n')
            print("console", flush=True)
        """), 30, stdin_data=b"1234\n")
        self.assertEqual(r.returncode, 0, r.output)
        self.assertEqual(r.results, b'{"seed": "1234"}\n')
        self.assertEqual(r.stdout, "console\n")
        self.assertFalse(r.timed_out)

    def test_only_the_results_descriptor_is_passed(self):
        r = runner.run_with_results(with_fd("""
            import os, sys
            def is_open(fd):
                try:
                    os.fstat(fd)
                    return True
                except OSError:
                    return False
            print(sys.argv[1], [fd for fd in range(3, 1024) if is_open(fd)])
        """), 30)
        fd, open_fds = r.stdout.split(" ", 1)
        self.assertEqual(eval(open_fds), [int(fd)])

    def test_env_is_the_whole_environment(self):
        # env(1), not Python: Python's locale coercion would add LC_CTYPE itself
        r = runner.run_with_results(lambda fd: ["env"], 30,
                                    env={"PATH": os.environ["PATH"], "ONLY": "this"})
        self.assertEqual(sorted(r.stdout.splitlines()), ["ONLY=this", f"PATH={os.environ['PATH']}"])

    def test_more_than_a_pipe_buffer_while_running(self):
        # 1 MiB down the pipe before the command exits: read while it runs, or it would block.
        r = runner.run_with_results(with_fd("""
            import os, sys
            fd = int(sys.argv[1])
            for i in range(1024):
                os.write(fd, b'x' * 1023 + b'\\n')
        """), 30)
        self.assertFalse(r.timed_out)
        self.assertEqual(len(r.results), 1024 * 1024)

    def test_results_cap(self):
        r = runner.run_with_results(with_fd("""
            import os, sys
            os.write(int(sys.argv[1]), b'y' * 5000)
        """), 30, results_cap=1000)
        self.assertEqual(r.results, b"y" * 1000)
        self.assertTrue(r.results_truncated)

    def test_timeout_kills_the_group_and_keeps_what_was_written(self):
        start = time.monotonic()
        r = runner.run_with_results(with_fd("""
            import os, sys, time
            os.write(int(sys.argv[1]), b'first line\\n')
            time.sleep(100)
        """), 1)
        self.assertLess(time.monotonic() - start, 10)
        self.assertTrue(r.timed_out)
        self.assertIsNone(r.returncode)
        self.assertEqual(r.results, b"first line\n")

    def test_an_escaped_holder_of_the_pipe_does_not_hold_up_the_grader(self):
        # The command exits at once; a grandchild in a session of its own keeps the write end.
        with tempfile.TemporaryDirectory() as tmp:
            pidfile = Path(tmp) / "pid"
            child = (f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); "
                     f"time.sleep(30)")
            start = time.monotonic()
            r = runner.run_with_results(with_fd(f"""
                import os, subprocess, sys, time
                fd = int(sys.argv[1])
                subprocess.Popen([{PY!r}, '-c', {child!r}], pass_fds=(fd,),
                                 start_new_session=True)
                os.write(fd, b'done\\n')
                time.sleep(0.5)
            """), 20)
            elapsed = time.monotonic() - start
            self.assertLess(elapsed, 10)
            self.assertFalse(r.timed_out)
            self.assertEqual(r.results, b"done\n")
            pid = int(pidfile.read_text())
            os.kill(pid, signal.SIGKILL)

    def test_a_command_that_ignores_stdin(self):
        r = runner.run_with_results(with_fd("pass"), 30, stdin_data=b"x" * 10)
        self.assertEqual(r.returncode, 0)

    def test_crash_is_reported(self):
        r = runner.run_with_results(with_fd(NO_CORE + "import os, signal\n"
                                            "os.kill(os.getpid(), signal.SIGSEGV)"), 30)
        self.assertEqual(r.signal_name, "SIGSEGV")
        self.assertEqual(r.results, b"")



def with_fds(code: str):
    """A command that gets the results and ready descriptors' numbers as its arguments."""
    return lambda fd, ready_fd: py(code) + [str(fd), str(ready_fd)]


class StartedTest(unittest.TestCase):
    """runner.Started: a command started now, sent its input and timed later."""

    def test_ready_then_stdin_then_results(self):
        with runner.Started(with_fds("""
            import os, sys, time
            seed = sys.stdin.readline().strip()
            os.write(int(sys.argv[2]), b"ready\\n")
            go = sys.stdin.readline().strip()     # only after the ready line
            time.sleep(0.3)
            os.write(int(sys.argv[1]), (seed + go).encode())
        """), ready=True) as started:
            started.send(b"77\n")
            self.assertTrue(started.wait_ready(30))
            time.sleep(1.0)                           # waiting is not part of its run
            r = started.finish(30, stdin_data=b"go\n")
        self.assertEqual(r.returncode, 0, r.output)
        self.assertEqual(r.results, b"77go")
        self.assertGreaterEqual(r.seconds, 0.25)
        self.assertLess(r.seconds, 0.95)

    def test_not_ready_when_it_ends_or_in_time(self):
        with runner.Started(with_fds("import sys; sys.exit(4)"), ready=True) as started:
            self.assertFalse(started.wait_ready(30))
            self.assertEqual(started.finish(30).returncode, 4)
        with runner.Started(with_fds("import time; time.sleep(60)"), ready=True) as started:
            t0 = time.monotonic()
            self.assertFalse(started.wait_ready(0.3))
            self.assertLess(time.monotonic() - t0, 5)
            r = started.finish(0.3)
        self.assertTrue(r.timed_out)

    def test_leaving_without_finish_kills_the_group(self):
        with tempfile.TemporaryDirectory() as tmp:
            pidfile = Path(tmp) / "pid"
            with runner.Started(with_fds(f"""
                import os, subprocess, sys, time
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
                open({str(pidfile)!r}, "w").write(str(child.pid))
                os.write(int(sys.argv[2]), b"ready\\n")
                time.sleep(60)
            """), ready=True) as started:
                self.assertTrue(started.wait_ready(30))
            pid = int(pidfile.read_text())
            for _ in range(100):
                try:      # gone, or a zombie nobody reaped yet
                    if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                        break
                except OSError:
                    break
                time.sleep(0.05)
            else:
                self.fail("the child of a started command outlived it")


if __name__ == "__main__":
    unittest.main()
