"""Batch grading (grader/batch.py, `python3 -m grader batch` and `batch-merge`), without a GPU:
the grader is replaced by grader/tests/fake_grade.py ($LABS_BATCH_GRADER), which sleeps as a
build and a GPU run would, holds the real GPU lock (grader/gpulock.py) and writes real results
files. What is proven: sharding, resuming (skips what is done, re-grades what changed, after a
SIGKILL of the batch too), Ctrl-C, the progress output, one GPU job per GPU at a time, and
failures that cost their submission only.
"""

import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import unittest.mock
from pathlib import Path

from grader import batch
from grader.config import load_lab_config

REPO = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).resolve().parent / "fake_grade.py"
LAB1, LAB5 = "01_naive_matmul", "05_reduction"


def make_sub(root: Path, name: str, matmul: str = "ok", reduce: str = "ok",
             repo_shaped: bool = True) -> Path:
    base = root / name / "labs" if repo_shaped else root / name
    (base / LAB1).mkdir(parents=True, exist_ok=True)
    (base / LAB5).mkdir(parents=True, exist_ok=True)
    (base / LAB1 / "matmul.cu").write_text(f"// {name}\n{matmul}\n")
    (base / LAB5 / "reduce.cu").write_text(f"// {name}\n{reduce}\n")
    return root / name


def alive(pid: int) -> bool:
    """Running (a zombie, dead but not yet reaped by its new parent, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Env:
    """A submissions folder, an output folder, logs of the fake grader's calls and GPU runs."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.subs = tmp / "subs"
        self.subs.mkdir()
        self.out = tmp / "out"
        self.calls = tmp / "calls.jsonl"
        self.gpu_log = tmp / "gpu.jsonl"
        self.locks = tmp / "locks"

    def env(self, build_s=0.0, gpu_s=0.0, **extra) -> dict:
        env = dict(os.environ)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        env.update({batch.GRADER_ENV: f"{sys.executable} {FAKE}",
                    batch.LOCK_DIR_ENV: str(self.locks),
                    "FAKE_GRADE_CALLS": str(self.calls), "FAKE_GRADE_LOG": str(self.gpu_log),
                    "FAKE_GRADE_BUILD_S": str(build_s), "FAKE_GRADE_GPU_S": str(gpu_s),
                    "PYTHONPATH": str(REPO)})
        env.update(extra)
        return env

    def argv(self, *more) -> list:
        # The two labs the fake submissions hold, unless a test chooses (the repository's lab
        # list grows; a lab a submission lacks would fail its build).
        labs = [] if "--labs" in more else ["--labs", LAB1, LAB5]
        return [sys.executable, "-m", "grader", "batch", str(self.subs), "-o", str(self.out),
                "--build-root", str(self.tmp / "build"), *labs, *more]

    def run(self, *more, build_s=0.0, gpu_s=0.0, timeout=120, **extra):
        return subprocess.run(self.argv(*more), cwd=REPO, capture_output=True, text=True,
                              env=self.env(build_s, gpu_s, **extra), timeout=timeout)

    def read(self, path: Path) -> list:
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def called(self) -> list:
        return [c["sub"] for c in self.read(self.calls)]

    def gradebook(self) -> dict:
        import csv
        rows = list(csv.DictReader(io.StringIO((self.out / "gradebook.csv").read_text())))
        return {r["submission"]: r for r in rows}


class BatchTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="batch-test-")
        self.e = Env(Path(self._tmp.name))

    def tearDown(self):
        self._tmp.cleanup()

    def assertRan(self, proc, code=0):
        self.assertEqual(proc.returncode, code,
                         f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")


class ShardTest(unittest.TestCase):
    def test_every_submission_in_exactly_one_shard(self):
        for total in (0, 1, 2, 5, 17, 64):
            subs = [batch.Submission(f"s{i:03d}", Path("/x"), Path("/x"))
                    for i in reversed(range(total))]
            for count in (1, 2, 3, 4, 7, 80):
                shards = [batch.shard(subs, i, count) for i in range(count)]
                names = [s.name for part in shards for s in part]
                self.assertEqual(sorted(names), sorted(s.name for s in subs),
                                 f"{total} submissions in {count} shards: each exactly once")
                self.assertEqual(len(names), len(set(names)))
                sizes = [len(p) for p in shards]
                self.assertLessEqual(max(sizes) - min(sizes), 1, f"sizes {sizes}")

    def test_shard_argument(self):
        self.assertEqual(batch.parse_shard("2/5"), (2, 5))
        self.assertEqual(batch.parse_shard(" 0 / 1 "), (0, 1))
        for bad in ("5/5", "1", "-1/3", "a/b", "1/0", ""):
            with self.assertRaises(ValueError, msg=bad):
                batch.parse_shard(bad)

    def test_cli_shard_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run([sys.executable, "-m", "grader", "batch", tmp, "-o",
                                   f"{tmp}/out", "--shard", "4/4"], cwd=REPO,
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 2)
            self.assertIn("--shard: a shard is I/N with 0 <= I < N", proc.stderr)


class DiscoverAndKeyTest(BatchTestCase):
    def test_discover_both_shapes_skips_hidden_and_files_refuses_links(self):
        make_sub(self.e.subs, "alice")
        make_sub(self.e.subs, "bob", repo_shaped=False)
        (self.e.subs / ".git").mkdir()
        (self.e.subs / "notes.txt").write_text("x")
        os.symlink(self.e.subs / "notes.txt", self.e.subs / "notes-link.txt")   # not a folder
        os.symlink(self.e.subs / "alice", self.e.subs / "mallory")
        make_sub(self.e.subs, "trudy")
        solutions = self.e.tmp / "solutions"
        (solutions / LAB1).mkdir(parents=True)
        (solutions / LAB1 / "matmul.cu").write_text("// the solution\n")
        os.rename(self.e.subs / "trudy" / "labs", self.e.tmp / "trudy-labs")
        os.symlink(solutions, self.e.subs / "trudy" / "labs")
        found = batch.discover(self.e.subs)
        self.assertEqual([s.name for s in found], ["alice", "bob", "mallory", "trudy"])
        self.assertEqual(found[0].labs_dir, self.e.subs / "alice" / "labs")
        self.assertEqual(found[1].labs_dir, self.e.subs / "bob")
        self.assertEqual((found[0].refused, found[1].refused), ("", ""))
        self.assertEqual(found[2].refused, f"the submission folder {self.e.subs / 'mallory'} "
                                           f"{batch.LINK_REFUSED}")
        self.assertEqual(found[3].refused, f"its labs folder {self.e.subs / 'trudy' / 'labs'} "
                                           f"{batch.LINK_REFUSED}")
        self.assertIn("symbolic link: refused", batch.LINK_REFUSED)

    def test_discover_refuses_unsafe_names(self):
        (self.e.subs / "bad name;rm").mkdir()
        with self.assertRaises(batch.GraderError) as cm:
            batch.discover(self.e.subs)
        self.assertIn("'bad name;rm'", cm.exception.message)

    def test_key_follows_graded_files_and_options_only(self):
        sub = batch.discover(self.e.subs) if False else None
        make_sub(self.e.subs, "alice")
        sub = batch.discover(self.e.subs)[0]
        configs = [load_lab_config(REPO / "labs", lab) for lab in (LAB1, LAB5)]
        opts = {"labs": [LAB1, LAB5], "seed": None}
        key = batch.content_key(sub, configs, opts)
        self.assertEqual(key, batch.content_key(sub, configs, dict(opts)))
        (sub.labs_dir / LAB1 / "notes.md").write_text("not graded")
        (sub.root / "README.md").write_text("not graded")
        self.assertEqual(key, batch.content_key(sub, configs, opts),
                         "files the grader does not take must not change the key")
        self.assertNotEqual(key, batch.content_key(sub, configs, {**opts, "seed": 7}))
        (sub.labs_dir / LAB5 / "reduce.cu").write_text("changed")
        changed = batch.content_key(sub, configs, opts)
        self.assertNotEqual(key, changed)
        (sub.labs_dir / LAB5 / "reduce.cu").unlink()
        self.assertNotEqual(changed, batch.content_key(sub, configs, opts))

    def test_key_never_reads_through_a_linked_lab_folder(self):
        make_sub(self.e.subs, "alice")
        other = make_sub(self.e.tmp, "other")
        sub = batch.discover(self.e.subs)[0]
        configs = [load_lab_config(REPO / "labs", LAB1)]
        (sub.labs_dir / LAB1 / "matmul.cu").unlink()
        (sub.labs_dir / LAB1).rmdir()
        os.symlink(other / "labs" / LAB1, sub.labs_dir / LAB1)
        key = batch.content_key(sub, configs, {})
        (other / "labs" / LAB1 / "matmul.cu").write_text("changed elsewhere")
        self.assertEqual(key, batch.content_key(sub, configs, {}))


class LinkTest(BatchTestCase):
    """A submission folder that is a symbolic link, or whose labs/ is one, is refused: not
    graded (a link could point at the solutions), a 0 row saying why, exit 2; never followed,
    never taken as done."""

    def setUp(self):
        super().setUp()
        make_sub(self.e.subs, "alice", matmul="POINTS=30")
        solutions = self.e.tmp / "solutions"
        make_sub(self.e.tmp, "solutions", matmul="POINTS=100", reduce="POINTS=100",
                 repo_shaped=False)
        (self.e.subs / "trudy").mkdir()
        os.symlink(solutions, self.e.subs / "trudy" / "labs")   # committed in the repository
        os.symlink(self.e.subs / "alice", self.e.subs / "mallory")

    def test_links_are_refused_and_the_rest_graded(self):
        proc = self.e.run("--gpus", "0")
        self.assertRan(proc, code=2)
        self.assertEqual(self.e.called(), ["alice"])          # nothing graded through a link
        self.assertIn(f"batch: REFUSED mallory: the submission folder "
                      f"{self.e.subs / 'mallory'} is a symbolic link: refused", proc.stdout)
        self.assertIn(f"batch: REFUSED trudy: its labs folder {self.e.subs / 'trudy' / 'labs'} "
                      f"is a symbolic link: refused", proc.stdout)
        self.assertIn("1 graded, 0 failed, 2 refused", proc.stdout)
        book = self.e.gradebook()
        self.assertEqual(sorted(book), ["alice", "mallory", "trudy"])
        self.assertEqual(float(book["alice"]["total"]), 130)
        for name in ("mallory", "trudy"):
            self.assertEqual(float(book[name]["total"]), 0)
            self.assertFalse((self.e.out / "results" / f"{name}.json").exists())
            state = json.loads((self.e.out / "state" / f"{name}.json").read_text())
            self.assertEqual(state["outcome"], batch.REFUSED)
        summary = json.loads((self.e.out / "summary.json").read_text())
        self.assertEqual([r["name"] for r in summary["refused"]], ["mallory", "trudy"])
        self.assertEqual(summary["submissions"], 3)

        # a resume refuses them again (never done), and grades nothing else again
        again = self.e.run("--gpus", "0")
        self.assertRan(again, code=2)
        self.assertEqual(self.e.called(), ["alice"])
        self.assertIn("batch: REFUSED trudy", again.stdout)

        merged = subprocess.run([sys.executable, "-m", "grader", "batch-merge", str(self.e.out)],
                                cwd=REPO, capture_output=True, text=True, env=self.e.env())
        self.assertRan(merged, code=2)
        self.assertIn("batch-merge: REFUSED trudy: its labs folder", merged.stdout)
        self.assertNotIn("FAILED", merged.stdout)

        # fixed (the folder itself put there): graded by the next run, an old result dropped
        (self.e.subs / "trudy" / "labs").unlink()
        make_sub(self.e.subs, "trudy", matmul="POINTS=1")
        (self.e.subs / "mallory").unlink()
        fixed = self.e.run("--gpus", "0")
        self.assertRan(fixed)
        self.assertEqual(self.e.called(), ["alice", "trudy"])
        self.assertEqual(sorted(self.e.gradebook()), ["alice", "trudy"])
        self.assertEqual(float(self.e.gradebook()["trudy"]["total"]), 101)

    def test_a_submission_turned_into_a_link_loses_its_old_result(self):
        self.assertRan(self.e.run("--gpus", "0"), code=2)
        os.rename(self.e.subs / "alice" / "labs", self.e.tmp / "alice-labs")
        os.symlink(self.e.tmp / "alice-labs", self.e.subs / "alice" / "labs")
        self.assertRan(self.e.run("--gpus", "0"), code=2)
        self.assertEqual(self.e.called(), ["alice"])          # not graded again
        self.assertFalse((self.e.out / "results" / "alice.json").exists())
        self.assertEqual(float(self.e.gradebook()["alice"]["total"]), 0)


class SeedOptionsTest(BatchTestCase):
    """Seeds are drawn by each grader; --seed N is passed on and keys the results; a secret is
    accepted with a notice, never passed on and never part of the key."""

    def argv_of(self, name: str) -> list:
        return [c["argv"] for c in self.e.read(self.e.calls) if c["sub"] == name][-1]

    def test_no_seed_then_a_forced_one(self):
        make_sub(self.e.subs, "alice")
        secret = self.e.tmp / "secret"
        secret.write_text("k3y")
        proc = self.e.run("--gpus", "0", "--secret-file", str(secret))
        self.assertRan(proc)
        self.assertIn("grader: notice: --secret-file: no longer used (ignored)", proc.stderr)
        argv = self.argv_of("alice")
        self.assertFalse([a for a in argv if a.startswith(("--seed", "--secret-file"))], argv)
        # without --seed, the same batch resumes (the drawn seeds are each grading's own)
        self.assertRan(self.e.run("--gpus", "0"))
        self.assertEqual(len(self.e.called()), 1)
        # a forced seed grades again, with it
        self.assertRan(self.e.run("--gpus", "0", "--seed", "77"))
        self.assertEqual(len(self.e.called()), 2)
        self.assertIn("--seed=77", self.argv_of("alice"))
        self.assertRan(self.e.run("--gpus", "0", "--seed", "77"))
        self.assertEqual(len(self.e.called()), 2)
        self.assertRan(self.e.run("--gpus", "0", "--seed", "78"))
        self.assertEqual(len(self.e.called()), 3)

    def test_a_race_audit_fraction_is_drawn_per_submission(self):
        # --race-audit-fraction 1: every grading gets grade's --race-audit; 0 (the default):
        # none; outside 0..1: refused. A fraction is part of the key: another grades again.
        for name in ("alice", "bob"):
            make_sub(self.e.subs, name)
        self.assertRan(self.e.run("--gpus", "0"))
        self.assertFalse(any("--race-audit" in self.argv_of(n) for n in ("alice", "bob")))
        self.assertRan(self.e.run("--gpus", "0", "--race-audit-fraction", "1"))
        self.assertEqual(len(self.e.called()), 4)
        self.assertTrue(all("--race-audit" in self.argv_of(n) for n in ("alice", "bob")))
        proc = self.e.run("--gpus", "0", "--race-audit-fraction", "1.5")
        self.assertRan(proc, 2)
        self.assertIn("a fraction from 0 to 1", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertEqual(len(self.e.called()), 4)
        opts = batch.Options(labs=[LAB1], configs=[], jobs=1, gpus=[None], build_jobs=1,
                             race_audit_fraction=0.25)
        self.assertEqual(opts.key_options()["race_audit_fraction"], 0.25)

    def test_key_options_hold_no_secret(self):
        opts = batch.Options(labs=[LAB1], configs=[], jobs=1, gpus=[None], build_jobs=1)
        self.assertEqual(opts.key_options(), {"labs": [LAB1], "seed": None,
                                              "no_performance": False, "no_sanitize": False})
        self.assertFalse(hasattr(opts, "secret_file"))


class SlipTest(BatchTestCase):
    """An instructor's slips are refused with exit 2 and a hint, before anything is graded or
    written: one student's labs/ folder, the course repository, a folder with no submission."""

    def assertRefused(self, proc, *words):
        self.assertRan(proc, 2)
        self.assertNotIn("Traceback", proc.stderr)
        for w in words:
            self.assertIn(w, proc.stderr)
        self.assertEqual(self.e.called(), [], "nothing may be graded")
        self.assertFalse(self.e.out.exists(), "nothing may be written")

    def test_one_students_labs_folder(self):
        make_sub(self.e.subs, "alice")
        self.e.subs = self.e.subs / "alice" / "labs"          # batch alice/labs
        self.assertRefused(self.e.run(), "looks like one student's labs/ folder",
                           LAB1, f"grade --submission {self.e.subs}")

    def test_one_students_labs_folder_with_unknown_lab_names(self):
        # Folders with a grading.toml are lab folders too (a lab this checkout lacks).
        (self.e.subs / "99_future").mkdir()
        (self.e.subs / "99_future" / "grading.toml").write_text("")
        self.assertRefused(self.e.run(), "looks like one student's labs/ folder", "99_future")

    def test_the_course_repository(self):
        self.e.subs = self.e.tmp / "repo"
        for d in ("labs", "solutions", "build", "grader", "common"):
            (self.e.subs / d).mkdir(parents=True)
        (self.e.subs / "grader" / "__main__.py").write_text("")
        self.assertRefused(self.e.run(), "looks like the course repository",
                           f"grade --submission {self.e.subs / 'labs'}")
        self.e.subs = REPO                                    # this checkout itself
        self.assertRefused(self.e.run(), "looks like the course repository")

    def test_empty_folder(self):
        (self.e.subs / ".git").mkdir()                        # hidden: not a submission
        (self.e.subs / "notes.txt").write_text("x")
        self.assertRefused(self.e.run(), f"no submissions found in {self.e.subs}")

    def test_an_output_folder_that_mixes_with_what_is_graded(self):
        # red team of new instructors (round 36's trial): -o inside the submissions folder, the
        # folder itself, a student's folder, or the course repository
        make_sub(self.e.subs, "alice")
        beside = f"-o {self.e.tmp / 'subs-graded'}"
        self.e.out = self.e.subs / "out"
        self.assertRefused(self.e.run(), "inside the submissions folder", beside)
        for out, words in ((self.e.subs / "alice", "inside the submissions folder"),
                           (self.e.subs, "is the submissions folder")):
            self.e.out = out                                  # folders that exist already
            proc = self.e.run()
            self.assertRan(proc, 2)
            self.assertIn(words, proc.stderr)
            self.assertEqual(self.e.called(), [])
            self.assertFalse((out / "results").exists())
        self.e.out = REPO / "graded"
        self.assertRefused(self.e.run(), "inside the course repository")

    def test_students_named_like_folders_of_the_repository_are_graded(self):
        # A student called "labs" alone is not a repository.
        make_sub(self.e.subs, "labs")
        make_sub(self.e.subs, "bob")
        self.assertRan(self.e.run())
        self.assertEqual(sorted(self.e.called()), ["bob", "labs"])


class ResumeTest(BatchTestCase):
    def test_grades_all_then_skips_done_and_regrades_changed(self):
        for name in ("alice", "bob", "carol", "dave"):
            make_sub(self.e.subs, name, matmul=f"POINTS={len(name) * 10}")
        first = self.e.run("--gpus", "0", "--jobs", "2")
        self.assertRan(first)
        self.assertEqual(sorted(self.e.called()), ["alice", "bob", "carol", "dave"])
        self.assertIn("submissions per hour", first.stdout)
        book = self.e.gradebook()
        self.assertEqual(sorted(book), ["alice", "bob", "carol", "dave"])
        self.assertEqual(float(book["carol"][LAB1]), 50)
        self.assertEqual(float(book["alice"]["total"]), 150)
        for name in book:
            self.assertTrue((self.e.out / "results" / f"{name}.json").is_file())
            # the log's last line names the results file batch kept, not the grader's temporary
            self.assertTrue((self.e.out / "logs" / f"{name}.log").read_text().endswith(
                f"# batch: the results are in {self.e.out / 'results' / f'{name}.json'}\n"))
            state = json.loads((self.e.out / "state" / f"{name}.json").read_text())
            self.assertEqual(state["outcome"], "graded")
            self.assertEqual(len(state["key"]), 64)

        again = self.e.run("--gpus", "0", "--jobs", "2")
        self.assertRan(again)
        self.assertEqual(len(self.e.called()), 4, "nothing changed: nothing re-graded")
        self.assertIn("4 of 4 submissions already graded (unchanged): skipped", again.stdout)

        (self.e.subs / "bob" / "labs" / LAB1 / "matmul.cu").write_text("POINTS=7")
        (self.e.subs / "carol" / "labs" / "README.md").write_text("not graded: no re-grade")
        make_sub(self.e.subs, "erin")
        third = self.e.run("--gpus", "0", "--jobs", "2")
        self.assertRan(third)
        self.assertEqual(sorted(self.e.called()[4:]), ["bob", "erin"])
        book = self.e.gradebook()
        self.assertEqual(float(book["bob"][LAB1]), 7)
        self.assertEqual(len(book), 5)

        # Another choice of labs changes every key: everything is graded again.
        fourth = self.e.run("--gpus", "0", "--labs", "05")
        self.assertRan(fourth)
        self.assertEqual(len(self.e.called()), 11)
        self.assertNotIn(LAB1, self.e.gradebook()["alice"])

    def test_sigkill_mid_batch_then_resume(self):
        names = [f"s{i}" for i in range(6)]
        for name in names:
            make_sub(self.e.subs, name)
        # Each grading holds the one GPU 2 s: the 6 take 12 s, so a test process starved of CPU
        # for a few seconds (a release's suite on a loaded 2-core machine) still kills the batch
        # with some left to resume.
        proc = subprocess.Popen(self.e.argv("--gpus", "0", "--jobs", "2"), cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=self.e.env(build_s=0.3, gpu_s=2.0))
        state = self.e.out / "state"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if state.is_dir() and len(list(state.glob("*.json"))) >= 2:
                break
            time.sleep(0.05)
        else:
            proc.kill()
            self.fail("the batch finished no submission in 60 s")
        proc.kill()       # SIGKILL: no clean-up of any kind in the batch
        proc.wait()
        done_before = {p.stem for p in state.glob("*.json")}
        self.assertLess(len(done_before), len(names), "killed too late to prove a resume")
        pids = [c["pid"] for c in self.e.read(self.e.calls)]
        deadline = time.monotonic() + 10
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse([p for p in pids if alive(p)],
                         "graders must die with the batch (no orphans grading on)")
        self.assertFalse(list((self.e.out / "results").glob("*.json.part.*")))
        calls_before = len(self.e.called())

        resumed = self.e.run("--gpus", "0", "--jobs", "2")
        self.assertRan(resumed)
        regraded = self.e.called()[calls_before:]
        self.assertEqual(sorted(regraded), sorted(set(names) - done_before),
                         "the resumed batch grades exactly what was not finished")
        self.assertEqual(sorted(self.e.gradebook()), names)

    def test_ctrl_c_stops_every_grader_and_resumes(self):
        names = [f"s{i}" for i in range(4)]
        for name in names:
            make_sub(self.e.subs, name)
        proc = subprocess.Popen(self.e.argv("--gpus", "0", "--jobs", "2"), cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.e.env(build_s=30))
        deadline = time.monotonic() + 60
        while len(self.e.called()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(len(self.e.called()), 2, "two graders should be running")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("interrupted", err)
        self.assertIn("run the same command again to resume", err)
        for c in self.e.read(self.e.calls):
            self.assertFalse(alive(c["pid"]), f"grader {c['pid']} left running after Ctrl-C")
        self.assertFalse(list((self.e.out / "state").glob("*.json")))
        resumed = self.e.run("--gpus", "0", "--jobs", "2")
        self.assertRan(resumed)
        self.assertEqual(sorted(self.e.gradebook()), names)


def fake_nvidia_smi(folder: Path, uuids: dict) -> str:
    """A PATH whose nvidia-smi answers `-i N --query-gpu=uuid` from `uuids` (N -> UUID)."""
    folder.mkdir(exist_ok=True)
    smi = folder / "nvidia-smi"
    table = " ".join(f"{k}) echo {v} ;;" for k, v in uuids.items())
    smi.write_text(f'#!/bin/sh\n[ "$1" = -i ] || exit 9\ncase "$2" in {table} '
                   f'*) echo "No devices were found"; exit 6 ;; esac\n')
    smi.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


class GpuWorkersTest(BatchTestCase):
    def test_never_two_gpu_jobs_on_one_gpu(self):
        for i in range(8):
            make_sub(self.e.subs, f"s{i}")
        uuids = {"0": "GPU-aaaa-0000", "1": "GPU-bbbb-1111"}
        # 1 s per GPU job, so that the two GPUs' four jobs each overlap even on a loaded machine
        proc = self.e.run("--gpus", "0,1", "--jobs", "4", build_s=0.1, gpu_s=1.0,
                          PATH=fake_nvidia_smi(self.e.tmp / "fakebin", uuids))
        self.assertRan(proc)
        runs = self.e.read(self.e.gpu_log)
        self.assertEqual(len(runs), 8)
        by_gpu = {}
        for r in runs:
            by_gpu.setdefault(r["gpu"], []).append(r)
        self.assertEqual(sorted(by_gpu), ["0", "1"], "both GPUs must be used")
        for gpu, spans in by_gpu.items():
            self.assertTrue(all(r["lock"].endswith(f"cuda-labs-gpu-{uuids[gpu]}.lock")
                                for r in spans), spans)
            spans.sort(key=lambda r: r["start"])
            for a, b in zip(spans, spans[1:]):
                self.assertLessEqual(a["end"], b["start"] + 1e-3,
                                     f"GPU {gpu}: {a['sub']} and {b['sub']} overlapped")
        across = [(a, b) for a in by_gpu["0"] for b in by_gpu["1"]
                  if a["start"] < b["end"] and b["start"] < a["end"]]
        self.assertTrue(across, "the two GPUs never worked at the same time: not separate "
                                "workers")

    def test_a_gpu_the_machine_lacks_is_refused_before_anything_runs(self):
        make_sub(self.e.subs, "s0")
        path = fake_nvidia_smi(self.e.tmp / "onegpu", {"0": "GPU-aaaa"})
        proc = self.e.run("--gpus", "0,3", PATH=path)
        self.assertRan(proc, code=2)
        self.assertIn("this machine has no GPU 3", proc.stdout + proc.stderr)
        self.assertNotIn("Traceback", proc.stdout + proc.stderr)
        self.assertFalse(self.e.gpu_log.exists() and self.e.read(self.e.gpu_log))
        with unittest.mock.patch.dict(os.environ, {"PATH": path}):
            self.assertEqual(batch.absent_gpus(["0", "1"]), ["1"])
        # No nvidia-smi to ask: nothing refused here (the grading says what is missing).
        with unittest.mock.patch.dict(os.environ, {"PATH": str(self.e.tmp / "empty")}):
            self.assertEqual(batch.absent_gpus(["7"]), [])

    def test_lock_named_after_the_gpus_uuid(self):
        # cgroup-confined GPUs: each Slurm task sees its own GPU as 0; the locks differ.
        locks = self.e.tmp / "locks"
        for uuid in ("GPU-aaaa", "GPU-bbbb"):
            batch.gpu_identity.cache_clear()
            path = fake_nvidia_smi(self.e.tmp / uuid, {"0": uuid})
            with unittest.mock.patch.dict(os.environ, {"PATH": path}):
                self.assertEqual(batch.gpu_lock_path("0", locks),
                                 locks / f"cuda-labs-gpu-{uuid}.lock")
        batch.gpu_identity.cache_clear()
        self.assertEqual(batch.gpu_lock_path("GPU-cccc", locks),
                         locks / "cuda-labs-gpu-GPU-cccc.lock")
        self.assertEqual(batch.gpu_lock_path(None, locks), locks / "cuda-labs-gpu-any.lock")
        # No nvidia-smi, or it does not know the GPU: named after the number, as before.
        with unittest.mock.patch.dict(os.environ, {"PATH": str(self.e.tmp / "empty")}):
            self.assertEqual(batch.gpu_lock_path("3", locks), locks / "cuda-labs-gpu-3.lock")
        batch.gpu_identity.cache_clear()

    def test_detect_gpus(self):
        self.assertEqual(batch.detect_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}), ["2", "3"])
        self.assertEqual(batch.detect_gpus({"CUDA_VISIBLE_DEVICES": ""}), [None])
        self.assertEqual(batch.parse_gpus("0, 1"), ["0", "1"])
        for bad in ("", "0,0", "0;rm"):
            with self.assertRaises(ValueError):
                batch.parse_gpus(bad)
        self.assertEqual(batch.default_jobs(["0"], cpus=16), 3)
        self.assertEqual(batch.default_jobs(["0", "1"], cpus=4), 4)
        self.assertEqual(batch.default_jobs([None], cpus=1), 1)


class FailureTest(BatchTestCase):
    def test_failures_cost_their_submission_only(self):
        make_sub(self.e.subs, "good1")
        make_sub(self.e.subs, "crash", matmul="CRASH")
        make_sub(self.e.subs, "segv", reduce="SEGV")
        make_sub(self.e.subs, "hang", matmul="HANG")
        make_sub(self.e.subs, "nobuild", matmul="BUILDFAIL")
        make_sub(self.e.subs, "good2", matmul="POINTS=40")
        proc = self.e.run("--gpus", "0", "--jobs", "3", "--timeout", "3")
        self.assertRan(proc, 1)
        for name, outcome in (("crash", "crashed"), ("segv", "crashed"), ("hang", "timeout")):
            self.assertRegex(proc.stdout, rf"batch: FAILED {name}: {outcome}: ")
        self.assertIn("killed by SIGSEGV", proc.stdout)
        self.assertIn("exited 1 without writing results", proc.stdout)
        self.assertNotIn("FAILED nobuild", proc.stdout, "a build failure is a grade, not a "
                                                         "failure of the batch")
        book = self.e.gradebook()
        self.assertEqual(len(book), 6)
        self.assertEqual(float(book["good1"]["total"]), 200)
        self.assertEqual(float(book["good2"]["total"]), 140)
        self.assertEqual(book["nobuild"]["status"], "build_failed")
        self.assertEqual(float(book["nobuild"][LAB1]), 0)
        self.assertEqual(book["crash"]["status"], "crashed")
        self.assertEqual(book["hang"]["status"], "timeout")
        self.assertEqual(float(book["hang"]["total"]), 0)
        # Out of the maximum every other row has: 0 of 200, not 0 of 0.
        self.assertEqual({float(book[n]["max_points"]) for n in book}, {200.0})
        log = (self.e.out / "logs" / "crash.log").read_text()
        self.assertIn("a fake crash", log)
        summary = json.loads((self.e.out / "summary.json").read_text())
        self.assertEqual(sorted(f["name"] for f in summary["failed"]), ["crash", "hang", "segv"])

        # A re-run tries the failed ones again, and only those.
        n = len(self.e.called())
        (self.e.subs / "hang" / "labs" / LAB1 / "matmul.cu").write_text("fixed")
        again = self.e.run("--gpus", "0", "--timeout", "3")
        self.assertRan(again, 1)
        self.assertEqual(sorted(self.e.called()[n:]), ["crash", "hang", "segv"])
        self.assertEqual(float(self.e.gradebook()["hang"]["total"]), 200)

    def test_no_gpu_everywhere_exits_3_and_is_retried(self):
        make_sub(self.e.subs, "alice")
        proc = self.e.run("--gpus", "0", FAKE_GRADE_NO_GPU="1")
        self.assertRan(proc, 3)
        self.assertIn("batch: alice: built and checked, NOT GRADED ON A GPU", proc.stdout)
        again = self.e.run("--gpus", "0")
        self.assertRan(again)
        self.assertEqual(self.e.called(), ["alice", "alice"])

    def test_no_gpu_with_a_build_failure_exits_3_with_one_line_each_and_on_resume(self):
        # Issue 19, item 6: bob does not build (a final grade), alice builds but there is no
        # GPU: exit 3 (not 1), alice said once in plain words, not as a failure; the same on
        # the resume (bob skipped, alice tried again); then on a GPU both are done.
        make_sub(self.e.subs, "alice")
        make_sub(self.e.subs, "bob", matmul="BUILDFAIL", reduce="BUILDFAIL")
        make_sub(self.e.subs, "carol", reduce="BUILDFAIL")
        alice = ("batch: alice: built and checked, NOT GRADED ON A GPU (no CUDA GPU: no NVIDIA "
                 "driver on this machine (fake))")
        for run in ("first", "resume"):
            proc = self.e.run("--gpus", "0", FAKE_GRADE_NO_GPU="1")
            self.assertRan(proc, 3)
            lines = proc.stdout.splitlines()
            self.assertIn(alice, lines, run)
            self.assertRegex(proc.stdout, r"batch: no GPU alice: built and checked, NOT GRADED "
                                          r"ON A GPU \(no CUDA GPU: .*\) in \d+s \[")
            self.assertNotIn("FAILED", proc.stdout, run)
            self.assertNotIn("no CUDA GPU: no CUDA GPU", proc.stdout, run)
            # carol: one lab built, the other did not: said in the same line
            self.assertIn("batch: carol: built and checked, NOT GRADED ON A GPU (no CUDA GPU: "
                          "no NVIDIA driver on this machine (fake)); 05_reduction did not "
                          "build", lines)
            self.assertRegex(proc.stdout, r"batch: [01] graded, 0 failed, 2 not graded on a GPU, "
                                          r"[01] already done", run)
            self.assertIn("on a machine with a GPU", proc.stdout)
            summary = json.loads((self.e.out / "summary.json").read_text())
            self.assertEqual(summary["failed"], [], run)
            self.assertEqual([f["name"] for f in summary["no_gpu"]], ["alice", "carol"], run)
            self.assertEqual(self.e.gradebook()["bob"]["status"], "build_failed")
            self.assertEqual(self.e.gradebook()["alice"]["status"], "no_gpu")
        self.assertIn("1 of 3 submissions already graded (unchanged): skipped", proc.stdout)
        self.assertEqual(sorted(self.e.called()), ["alice", "alice", "bob", "carol", "carol"])
        merge = subprocess.run([sys.executable, "-m", "grader", "batch-merge", str(self.e.out)],
                               cwd=REPO, capture_output=True, text=True)
        self.assertRan(merge, 3)
        self.assertIn(alice.replace("batch:", "batch-merge:"), merge.stdout)
        self.assertNotIn("FAILED", merge.stdout)
        on_a_gpu = self.e.run("--gpus", "0")
        self.assertRan(on_a_gpu, 0)
        self.assertEqual(float(self.e.gradebook()["alice"]["total"]), 200)
        self.assertEqual(self.e.gradebook()["carol"]["status"], "build_failed")


class ProgressTest(BatchTestCase):
    def test_plain_lines_when_not_a_terminal(self):
        now = [100.0]
        out = io.StringIO()
        p = batch.Progress(total=5, skipped=1, stream=out, tty=False, clock=lambda: now[0])
        p.started("alice", "GPU 0")
        p.started("bob", "GPU 1")
        now[0] += 60
        p.finished("alice", True, "graded 90/100 in 1m00s")
        now[0] += 60
        p.finished("bob", False, "crashed: the grader exited 1")
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], "batch: start  alice (GPU 0) [1/5 done, 0 failed, "
                                   "1 running, ETA -]")
        self.assertEqual(lines[2], "batch: done   alice: graded 90/100 in 1m00s [2/5 done, "
                                   "0 failed, 1 running, ETA 3m00s]")
        self.assertEqual(lines[3], "batch: FAILED bob: crashed: the grader exited 1 [2/5 done, "
                                   "1 failed, 0 running, ETA 2m00s]")
        self.assertNotIn("\r", out.getvalue())
        self.assertNotIn("\033", out.getvalue())

    def test_a_name_cannot_act_on_the_terminal(self):
        # A submission's folder name is the student's: its escape sequences are shown, not run.
        out = io.StringIO()
        p = batch.Progress(total=1, skipped=0, stream=out, tty=True, clock=lambda: 0.0)
        p.started("eve\033[2J\033[8m", "GPU 0")
        p.finished("eve\033[2J\033[8m", True, "graded\r100/100")
        text = out.getvalue().replace("\r\033[K", "")
        self.assertNotIn("\033", text)
        self.assertNotIn("\r", text)
        self.assertIn("batch: done   eve\\x1b[2J\\x1b[8m: graded\\x0d100/100", text)

    def test_status_line_redrawn_on_a_terminal(self):
        out = io.StringIO()
        p = batch.Progress(total=2, skipped=0, stream=out, tty=True, clock=lambda: 0.0)
        p.started("alice", "GPU 0")
        self.assertIn("\r\033[K[0/2 done, 0 failed, 1 running, ETA -] grading: alice",
                      out.getvalue())
        p.finished("alice", True, "graded")
        p.close()
        text = out.getvalue()
        self.assertIn("\r\033[Kbatch: done   alice: graded", text)
        self.assertTrue(text.endswith("\r\033[K"), "the status line is cleared at the end")

    def test_cli_progress_in_a_log(self):
        make_sub(self.e.subs, "alice")
        make_sub(self.e.subs, "bob")
        proc = self.e.run("--gpus", "0")
        self.assertRan(proc)
        self.assertRegex(proc.stdout, r"batch: start  alice \(GPU 0\) \[0/2 done")
        # The two gradings run at once: either may finish last.
        for name in ("alice", "bob"):
            self.assertRegex(proc.stdout, rf"batch: done   {name}: graded 200/200 in \d+s \[[12]/2")
        self.assertRegex(proc.stdout, r"batch: done   (alice|bob): graded 200/200 in \d+s \[2/2 done, "
                                      r"0 failed, 0 running, ETA 0s\]")
        self.assertRegex(proc.stdout, r"1 graded|2 graded")
        self.assertIn("gradebook", proc.stdout)


class MergeTest(BatchTestCase):
    def test_shards_then_merge(self):
        names = [f"s{i}" for i in range(5)]
        for name in names:
            make_sub(self.e.subs, name)
        first = self.e.run("--gpus", "0", "--shard", "0/2")
        self.assertRan(first)
        self.assertFalse((self.e.out / "gradebook.csv").exists(), "a shard leaves the "
                                                                  "gradebook to the merge")
        merge = [sys.executable, "-m", "grader", "batch-merge", str(self.e.out),
                 "--submissions", str(self.e.subs)]
        partial = subprocess.run(merge, cwd=REPO, capture_output=True, text=True)
        self.assertRan(partial, 1)
        self.assertIn("NOT GRADED s1", partial.stdout)
        self.assertEqual(self.e.gradebook()["s1"]["status"], "not_graded")
        second = self.e.run("--gpus", "0", "--shard", "1/2")
        self.assertRan(second)
        self.assertEqual(sorted(self.e.called()), names, "each submission graded exactly once")
        full = subprocess.run(merge, cwd=REPO, capture_output=True, text=True)
        self.assertRan(full)
        book = self.e.gradebook()
        self.assertEqual(sorted(book), names)
        self.assertTrue(all(float(r["total"]) == 200 for r in book.values()))

    def test_class_page_in_process(self):
        # Rendered by the batch itself (grader/reports.py), named as in the gradebook; without
        # matplotlib it is left out, saying so, and the gradebook is written all the same.
        make_sub(self.e.subs, "alice")
        make_sub(self.e.subs, "bob", matmul="CRASH")
        self.assertRan(self.e.run("--gpus", "0"), 1)
        stream = io.StringIO()
        merged = batch.merge(batch.Layout(self.e.out), stream=stream)
        self.assertEqual(merged["rows"], 2)
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.assertIsNone(merged["class_page"])
            self.assertIn("the class page was not written: the HTML reports need matplotlib",
                          stream.getvalue())
            return
        page = (self.e.out / "class.html").read_text()
        self.assertEqual(merged["class_page"], str(self.e.out / "class.html"))
        self.assertIn("<td>alice</td><td>graded", page)
        self.assertNotIn("<td>bob</td>", page, "only submissions with results")


if __name__ == "__main__":
    unittest.main()
