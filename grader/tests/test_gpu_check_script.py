"""scripts/gpu-check on a machine without a GPU: it stops at once, says why and exits 3 (the
grader's "no usable GPU"), before the build and the corpus (a new instructor's trial, round 36:
13.5 minutes of building and grading that all ended "no GPU"). No GPU needed: nvidia-smi is a
fake that finds none."""

import os
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class GpuCheckWithoutAGpuTest(unittest.TestCase):
    def test_stops_at_once_with_exit_3(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = Path(tmp) / "bin" / "nvidia-smi"
            fake.parent.mkdir()
            fake.write_text("#!/bin/sh\necho 'No devices were found' >&2\nexit 6\n")
            fake.chmod(0o755)
            env = dict(os.environ, PATH=f"{fake.parent}:{os.environ.get('PATH', '')}",
                       OUT=str(Path(tmp) / "out"))
            t0 = time.monotonic()
            proc = subprocess.run([str(REPO / "scripts" / "gpu-check"), "--labs", "05"],
                                  cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
            self.assertIn("needs a CUDA GPU", proc.stderr)
            self.assertNotIn("== scripts/test", proc.stdout)
            self.assertLess(time.monotonic() - t0, 30)


if __name__ == "__main__":
    unittest.main()
