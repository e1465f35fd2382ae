"""grader/gpulock.py: a per-user lock in a private directory; links, other owners and
directories others can write are refused; LABS_GPU_LOCK gets the same checks; shared and
exclusive semantics."""

import fcntl
import os
import stat
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from grader import gpulock
from grader.gpulock import GpuLockError


class GpuLockTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())            # 0700, ours
        self.addCleanup(lambda: __import__("shutil").rmtree(self.tmp))
        env = {k: v for k, v in os.environ.items()
               if k not in ("LABS_GPU_LOCK", "XDG_RUNTIME_DIR", "LABS_GPU_LOCK_EXCLUSIVE")}
        patcher = mock.patch.dict(os.environ, env, clear=True)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_default_is_per_user(self):
        self.assertEqual(gpulock.default_lock_path(),
                         Path(f"/tmp/cuda-labs-{os.getuid()}") / "gpu.lock")
        os.environ["XDG_RUNTIME_DIR"] = str(self.tmp)
        self.assertEqual(gpulock.default_lock_path(), self.tmp / gpulock.LOCK_NAME)
        self.tmp.chmod(0o777)                          # not private: not used
        self.assertEqual(gpulock.default_lock_path().parent,
                         Path(f"/tmp/cuda-labs-{os.getuid()}"))
        self.tmp.chmod(0o700)
        os.environ["LABS_GPU_LOCK"] = str(self.tmp / "x.lock")
        self.assertEqual(gpulock.default_lock_path(), self.tmp / "x.lock")

    def test_default_is_per_gpu_once_the_probe_named_it(self):
        self.addCleanup(gpulock.use_gpu, None)
        uid = os.getuid()
        gpulock.use_gpu("GPU-451607bd-f6e8-69f7-4b69-d39bbe37fccb")
        self.assertEqual(gpulock.default_lock_path(), Path(f"/tmp/cuda-labs-{uid}") /
                         "gpu-GPU-451607bd-f6e8-69f7-4b69-d39bbe37fccb.lock")
        os.environ["XDG_RUNTIME_DIR"] = str(self.tmp)
        self.assertEqual(gpulock.default_lock_path(),
                         self.tmp / "cuda-labs-gpu-GPU-451607bd-f6e8-69f7-4b69-d39bbe37fccb.lock")
        self.assertEqual(gpulock.memory_lock_path().name,
                         "cuda-labs-gpu-GPU-451607bd-f6e8-69f7-4b69-d39bbe37fccb.lock.memory")
        gpulock.use_gpu("MIG-2c3e9f1a-0000-1111-2222-333344445555")
        self.assertIn("MIG-2c3e9f1a", gpulock.default_lock_path().name)
        # Not a UUID (a path, an empty probe): no GPU in the name.
        for bad in ("GPU-../../etc/x", "", None, 3, "gpu-0"):
            gpulock.use_gpu(bad)
            self.assertEqual(gpulock.default_lock_path(), self.tmp / gpulock.LOCK_NAME)
        # LABS_GPU_LOCK (the batch's lock per GPU) still names the file.
        gpulock.use_gpu("GPU-451607bd-f6e8-69f7-4b69-d39bbe37fccb")
        os.environ["LABS_GPU_LOCK"] = str(self.tmp / "x.lock")
        self.assertEqual(gpulock.default_lock_path(), self.tmp / "x.lock")

    def test_directory_made_private_and_lock_taken(self):
        path = self.tmp / "sub" / "gpu.lock"
        with gpulock.gpu_lock(path=path):
            self.assertEqual(stat.S_IMODE(os.stat(path.parent).st_mode), 0o700)
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode) & 0o077, 0)
        os.environ["LABS_GPU_LOCK"] = str(self.tmp / "env.lock")
        with gpulock.gpu_lock():
            self.assertTrue((self.tmp / "env.lock").is_file())

    def test_symlink_is_refused(self):
        target = self.tmp / "target"
        target.write_text("")
        link = self.tmp / "gpu.lock"
        link.symlink_to(target)
        with self.assertRaises(GpuLockError) as e:
            with gpulock.gpu_lock(path=link):
                pass
        self.assertIn("symbolic link", e.exception.message)
        os.environ["LABS_GPU_LOCK"] = str(link)         # the override gets the same check
        with self.assertRaises(GpuLockError):
            with gpulock.gpu_lock():
                pass

    def test_symlinked_directory_is_refused(self):
        real = self.tmp / "real"
        real.mkdir(mode=0o700)
        (self.tmp / "dir").symlink_to(real)
        with self.assertRaises(GpuLockError) as e:
            with gpulock.gpu_lock(path=self.tmp / "dir" / "gpu.lock"):
                pass
        self.assertIn("not a directory", e.exception.message)

    def test_directory_writable_by_others_is_refused_unless_sticky(self):
        d = self.tmp / "open"
        d.mkdir()
        d.chmod(0o777)
        with self.assertRaises(GpuLockError) as e:
            with gpulock.gpu_lock(path=d / "gpu.lock"):
                pass
        self.assertIn("writable by other users", e.exception.message)
        d.chmod(0o1777)                                # sticky, ours: like /tmp for the override
        with gpulock.gpu_lock(path=d / "gpu.lock"):
            pass

    @unittest.skipUnless(os.getuid() == 0, "changing a file's owner needs root")
    def test_owned_by_someone_else_is_refused(self):
        path = self.tmp / "gpu.lock"
        path.write_text("")
        os.chown(path, 65534, 65534)
        with self.assertRaises(GpuLockError) as e:
            with gpulock.gpu_lock(path=path):
                pass
        self.assertIn("belongs to uid 65534", e.exception.message)
        d = self.tmp / "theirs"
        d.mkdir(mode=0o700)
        os.chown(d, 65534, 65534)
        with self.assertRaises(GpuLockError) as e:
            with gpulock.gpu_lock(path=d / "gpu.lock"):
                pass
        self.assertIn("belongs to uid 65534", e.exception.message)

    def test_owner_check_reads_the_opened_file(self):
        path = self.tmp / "gpu.lock"
        real = os.fstat
        fake = lambda fd: mock.Mock(st_mode=real(fd).st_mode, st_uid=os.getuid() + 1)
        with mock.patch.object(gpulock.os, "fstat", side_effect=fake):
            with self.assertRaises(GpuLockError) as e:
                gpulock.open_lock(path)
        self.assertIn(f"belongs to uid {os.getuid() + 1}", e.exception.message)

    def held(self, path, mode):
        """Whether another descriptor can take the lock in `mode` now."""
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        except BlockingIOError:
            return True
        finally:
            os.close(fd)

    def test_shared_and_exclusive(self):
        path = self.tmp / "gpu.lock"
        with gpulock.gpu_lock(shared=True, path=path):
            self.assertFalse(self.held(path, fcntl.LOCK_SH), "shared holders coexist")
            self.assertTrue(self.held(path, fcntl.LOCK_EX))
        with gpulock.gpu_lock(path=path):
            self.assertTrue(self.held(path, fcntl.LOCK_SH))
        self.assertFalse(self.held(path, fcntl.LOCK_EX), "released")

    def test_a_whole_grading_covers_every_thread_of_the_grading(self):
        # A batch grading (LABS_GPU_LOCK_EXCLUSIVE=1) holds the GPU from its first test to its
        # last benchmark; its labs' threads, tests and benchmarks alike, run inside that hold.
        # (Taking the lock themselves, each would wait for its own grading.)
        import threading
        path = self.tmp / "gpu.lock"
        done = []
        with gpulock.whole_grading(path=path):
            self.assertTrue(self.held(path, fcntl.LOCK_SH), "held exclusively")

            def lab(shared):
                with gpulock.gpu_lock(shared=shared, path=path):
                    done.append(shared)

            threads = [threading.Thread(target=lab, args=(s,), daemon=True)
                       for s in (True, True, False)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=5)
            self.assertEqual(sorted(done), [False, True, True], "a lab waited for its grading")
            self.assertTrue(self.held(path, fcntl.LOCK_SH), "still held by the grading")
        self.assertFalse(self.held(path, fcntl.LOCK_EX), "released")
        with gpulock.gpu_lock(shared=True, path=path):       # outside it: shared again
            self.assertFalse(self.held(path, fcntl.LOCK_SH))

    def test_whole_grading_is_what_the_batch_asks_for(self):
        os.environ.pop("LABS_GPU_LOCK_EXCLUSIVE", None)
        self.assertFalse(gpulock.whole_grading_requested())
        os.environ["LABS_GPU_LOCK_EXCLUSIVE"] = "1"
        self.assertTrue(gpulock.whole_grading_requested())

    def test_gpu_lock_says_when_it_waits(self):
        path = self.tmp / "gpu.lock"
        waits = []
        with gpulock.gpu_lock(shared=True, path=path, on_wait=lambda: waits.append("x")):
            pass
        self.assertEqual(waits, [], "a free lock: no wait")
        holder = os.open(path, os.O_RDWR)
        self.addCleanup(os.close, holder)
        fcntl.flock(holder, fcntl.LOCK_EX)
        import threading
        threading.Timer(0.3, fcntl.flock, (holder, fcntl.LOCK_UN)).start()
        with gpulock.gpu_lock(shared=True, path=path, on_wait=lambda: waits.append("x")):
            self.assertEqual(waits, ["x"])


    def test_an_exclusive_taker_keeps_new_shared_takers_out(self):
        """Writers first: a benchmark waiting for the tests that hold the lock shared is not
        overtaken by tests that start after it began to wait."""
        import threading
        import time
        path = self.tmp / "gpu.lock"
        order = []
        first = threading.Event()
        release_first = threading.Event()

        def test_holder():
            with gpulock.gpu_lock(shared=True, path=path):
                first.set()
                release_first.wait(5)
                order.append("first tests done")

        def benchmark():
            with gpulock.gpu_lock(path=path):
                order.append("benchmark")

        def later_tests():
            with gpulock.gpu_lock(shared=True, path=path):
                order.append("later tests")

        threads = [threading.Thread(target=test_holder)]
        threads[0].start()
        self.assertTrue(first.wait(5))
        threads.append(threading.Thread(target=benchmark))
        threads[1].start()
        time.sleep(0.3)                       # the benchmark is waiting now
        threads.append(threading.Thread(target=later_tests))
        threads[2].start()
        time.sleep(0.3)
        self.assertEqual(order, [], "the later tests wait behind the waiting benchmark")
        release_first.set()
        for t in threads:
            t.join(5)
        self.assertEqual(order, ["first tests done", "benchmark", "later tests"])

    def test_a_nested_take_inside_an_exclusive_hold_holds_nothing_more(self):
        path = self.tmp / "gpu.lock"
        with gpulock.gpu_lock(path=path):
            with gpulock.gpu_lock(path=path):           # would wait for itself otherwise
                with gpulock.gpu_lock(shared=True, path=path):
                    self.assertTrue(self.held(path, fcntl.LOCK_SH))
            self.assertTrue(self.held(path, fcntl.LOCK_SH), "still held by the outer block")
        self.assertFalse(self.held(path, fcntl.LOCK_EX), "released")


class BuildLockTest(unittest.TestCase):
    """build_lock: one grading per build folder; the holder's pid for the one that waits."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(self.tmp))

    def test_held_for_the_block_with_the_pid_written(self):
        build = self.tmp / "build" / "grade"      # made when missing
        lock = build / gpulock.BUILD_LOCK_NAME
        with gpulock.build_lock(build):
            self.assertEqual(lock.read_text().strip(), str(os.getpid()))
            fd = os.open(lock, os.O_RDWR)
            try:
                with self.assertRaises(BlockingIOError):
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            finally:
                os.close(fd)
        self.assertEqual(lock.read_text(), "", "the pid goes with the lock")

    def test_a_second_grading_waits_and_is_told_who_holds_it(self):
        import subprocess
        import sys
        build = self.tmp / "build"
        holder = subprocess.Popen([sys.executable, "-c", (
            "import sys, time\n"
            "from grader import gpulock\n"
            f"with gpulock.build_lock({str(build)!r}):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(0.5)\n")], cwd=Path(gpulock.__file__).parents[1],
            stdout=subprocess.PIPE, text=True)
        self.addCleanup(holder.wait)
        self.assertEqual(holder.stdout.readline().strip(), "held")
        told = []
        t0 = time.monotonic()
        with gpulock.build_lock(build, on_wait=told.append):
            self.assertGreater(time.monotonic() - t0, 0.3, "entered while the other one held it")
        self.assertEqual(told, [holder.pid])

    def test_a_shared_build_folder_is_fine_a_link_is_not(self):
        build = self.tmp / "shared"
        build.mkdir()
        build.chmod(0o775)                 # a umask of 002: not refused, unlike the GPU lock
        with gpulock.build_lock(build):
            pass
        (build / gpulock.BUILD_LOCK_NAME).unlink()
        (build / gpulock.BUILD_LOCK_NAME).symlink_to(self.tmp / "elsewhere")
        with self.assertRaises(GpuLockError) as e:
            with gpulock.build_lock(build):
                pass
        self.assertIn("build folder lock", e.exception.message)
        self.assertIn("symbolic link", e.exception.message)
        self.assertFalse((self.tmp / "elsewhere").exists())


if __name__ == "__main__":
    unittest.main()
