"""The Slurm recipe (scripts/slurm/): `submit` sends a job array whose tasks each grade a shard
(`python3 -m grader batch --shard I/N`) and a merge job after it; the merge writes one
gradebook. The grader is the fake one (grader/tests/fake_grade.py): no GPU is needed, the
recipe's plumbing is what is proven.

Two ways, both run where they can:
  - on a real one-node Slurm (Debian's slurm-wlm: munged, slurmctld, slurmd on localhost,
    started by scripts/slurm/local-cluster): when running as root with slurm-wlm and munge
    installed (.ci/run installs them), or on the cluster named by $LABS_TEST_SLURM_CONF;
    otherwise skipped, saying why;
  - always, with a fake `sbatch` on PATH (grader/tests/slurm_fake/sbatch) that runs the array's
    tasks here, at once, with the variables Slurm sets.
"""

import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from grader import batch
from grader.tests.test_batch import FAKE, make_sub

REPO = Path(__file__).resolve().parents[2]
SUBMIT = REPO / "scripts" / "slurm" / "submit"
LOCAL_CLUSTER = REPO / "scripts" / "slurm" / "local-cluster"
NAMES = [f"student{i:02d}" for i in range(7)]


def free_port() -> int:
    """Two free consecutive ports (slurmctld's and slurmd's)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 65000:
            try:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port + 1))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port")


def can_run_slurm() -> str | None:
    """None when a local Slurm can be started here, else why not."""
    if os.environ.get("LABS_TEST_SLURM_CONF"):
        return None
    if os.geteuid() != 0:
        return "not root (slurmd must run jobs as their user)"
    missing = [p for p in ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo")
               if not shutil.which(p, path=os.environ.get("PATH", "") + ":/usr/sbin")]
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install slurm-wlm munge)"
    return None


class RecipeTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="slurm-test-")
        self.tmp = Path(self._tmp.name)
        self.subs = self.tmp / "subs"
        self.out = self.tmp / "out"
        for i, name in enumerate(NAMES):
            make_sub(self.subs, name, matmul=f"POINTS={i * 10}",
                     reduce="CRASH" if name == "student03" else "ok")
        self.calls = self.tmp / "calls.jsonl"

    def tearDown(self):
        self._tmp.cleanup()

    def env(self, **extra) -> dict:
        env = dict(os.environ)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        env.update({batch.GRADER_ENV: f"{sys.executable} {FAKE}",
                    "FAKE_GRADE_CALLS": str(self.calls),
                    "LABS_BATCH_LOCAL": str(self.tmp / "node-local"),
                    "PYTHONPATH": str(REPO), "BATCH_JOBS": "2"})
        env.update(extra)
        return env

    def submit(self, env: dict, tasks: int = 3) -> subprocess.CompletedProcess:
        return subprocess.run([str(SUBMIT), str(self.subs), str(self.out), "--tasks", str(tasks),
                               "--gpus-per-task", "none", "--labs", "01", "05",
                               "--", "--cpus-per-task=1"],
                              cwd=self.tmp, capture_output=True, text=True, env=env, timeout=300)

    def check_gradebook(self) -> None:
        rows = {r["submission"]: r for r in
                csv.DictReader((self.out / "gradebook.csv").read_text().splitlines())}
        self.assertEqual(sorted(rows), NAMES, "one row per submission")
        for i, name in enumerate(NAMES):
            if name == "student03":
                self.assertEqual(rows[name]["status"], "crashed")
            else:
                self.assertEqual(float(rows[name]["01_naive_matmul"]), i * 10, name)
                self.assertEqual(float(rows[name]["total"]), i * 10 + 100, name)
        graded = [json.loads(line)["sub"] for line in self.calls.read_text().splitlines()]
        self.assertEqual(sorted(graded), NAMES, "every submission graded by exactly one task")

    def test_without_slurm_it_says_so_and_creates_nothing(self):
        bare = self.tmp / "bare-bin"
        bare.mkdir()
        for tool in ("bash", "dirname", "sed", "python3"):
            found = shutil.which(tool)
            if found:
                (bare / tool).symlink_to(found)
        out = self.tmp / "never-made"
        proc = subprocess.run([str(SUBMIT), str(self.subs), str(out)], cwd=REPO,
                              env=self.env(PATH=str(bare)), capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("no sbatch on PATH", proc.stderr)
        self.assertIn("python3 -m grader batch", proc.stderr)
        self.assertFalse(out.exists())

    def test_with_a_fake_sbatch(self):
        log = self.tmp / "sbatch.jsonl"
        env = self.env(PATH=f"{REPO / 'grader' / 'tests' / 'slurm_fake'}:{os.environ['PATH']}",
                       FAKE_SBATCH_LOG=str(log))
        proc = self.submit(env)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        jobs = [json.loads(line) for line in log.read_text().splitlines()]
        self.assertEqual(len(jobs), 2)
        array, merge = jobs
        self.assertEqual(array["opts"]["--array"], "0-2")
        self.assertNotIn("--gres", array["opts"])
        self.assertEqual(array["rcs"], [0, 0, 0], "a crashed submission does not fail its task")
        self.assertEqual(merge["opts"]["--dependency"], f"afterany:{array['id']}")
        self.assertEqual(merge["rcs"], [1], "the merge lists the crashed submission: exit 1")
        self.assertIn(f"job array {array['id']} (3 tasks)", proc.stdout)
        self.check_gradebook()
        merge_out = (self.out / "slurm" / f"merge-{merge['id']}.out").read_text()
        self.assertIn("FAILED student03: crashed", merge_out)
        for t in range(3):
            task_out = (self.out / "slurm" / f"grade-{array['id']}_{t}.out").read_text()
            self.assertIn(f"shard {t}/3 of 7", task_out)

    def test_a_refused_submission_does_not_fail_its_task(self):
        # exit 2 from the batch after its summary (a submission refused: a symbolic link) is
        # left to the merge, like a failure; the merge lists it
        (self.subs / "zlinked").mkdir()
        (self.subs / "zlinked" / "labs").symlink_to(self.subs / "student01" / "labs")
        log = self.tmp / "sbatch.jsonl"
        env = self.env(PATH=f"{REPO / 'grader' / 'tests' / 'slurm_fake'}:{os.environ['PATH']}",
                       FAKE_SBATCH_LOG=str(log))
        proc = self.submit(env)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        array, merge = [json.loads(line) for line in log.read_text().splitlines()]
        self.assertEqual(array["rcs"], [0, 0, 0])
        merge_out = (self.out / "slurm" / f"merge-{merge['id']}.out").read_text()
        self.assertIn("REFUSED zlinked: its labs folder", merge_out)
        graded = [json.loads(line)["sub"] for line in self.calls.read_text().splitlines()]
        self.assertNotIn("zlinked", graded)

    def test_on_a_one_node_slurm(self):
        why = can_run_slurm()
        if why and os.environ.get("LABS_REQUIRE_SLURM") == "1":
            self.fail(f"LABS_REQUIRE_SLURM=1 (CI), but no local Slurm: {why}")
        if why:
            self.skipTest(f"no local Slurm: {why}; the fake-sbatch test covers the recipe")
        env = self.env()
        env["PATH"] = env["PATH"] + ":/usr/sbin"
        cluster = None
        if os.environ.get("LABS_TEST_SLURM_CONF"):
            env["SLURM_CONF"] = os.environ["LABS_TEST_SLURM_CONF"]
        else:
            cluster = self.tmp / "cluster"
            started = subprocess.run([str(LOCAL_CLUSTER), "start", str(cluster)],
                                     capture_output=True, text=True, timeout=120,
                                     env={**env, "SLURM_TEST_PORT": str(free_port())})
            if started.returncode != 0:
                subprocess.run([str(LOCAL_CLUSTER), "stop", str(cluster)], timeout=60)
                self.fail(f"the local Slurm did not start:\n{started.stdout}{started.stderr}")
            env["SLURM_CONF"] = str(cluster / "slurm.conf")
        try:
            proc = self.submit(env)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            merge_id = proc.stdout.split("merge: job ")[1].split()[0]
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                q = subprocess.run(["squeue", "-h", "-o", "%i %T"], capture_output=True,
                                   text=True, env=env)
                if q.returncode == 0 and not q.stdout.strip():
                    break
                time.sleep(0.5)
            else:
                why = subprocess.run(["squeue", "-h", "-o", "%i %T %r"], capture_output=True,
                                     text=True, env=env).stdout
                subprocess.run(["scancel", "--user=root"], env=env)
                self.fail(f"Slurm jobs still queued after 120 s:\n{why}")
            merge_out = self.out / "slurm" / f"merge-{merge_id}.out"
            self.assertTrue(merge_out.is_file(), "the merge job did not run")
            self.assertIn("FAILED student03: crashed", merge_out.read_text())
            self.check_gradebook()
            tasks = sorted((self.out / "slurm").glob("grade-*_*.out"))
            self.assertEqual(len(tasks), 3)
            self.assertTrue(all("shard" in t.read_text() for t in tasks))
        finally:
            if cluster is not None:
                subprocess.run([str(LOCAL_CLUSTER), "stop", str(cluster)], timeout=60)


if __name__ == "__main__":
    unittest.main()
