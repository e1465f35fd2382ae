"""labs-manifest.json: loading, validation, clear errors."""

import copy
import json
import tempfile
import unittest
from pathlib import Path

from grader import manifest
from grader.errors import GraderError

LAB = "01_naive_matmul"
GOOD = {
    "version": 1,
    "gpu_info": "/b/common/labkit_gpu_info",
    "compile_commands": "/b/compile_commands.json",
    "labs": {LAB: {
        "student_target": f"{LAB}_student",
        "student_sources": ["/b/submission/01_naive_matmul/matmul.cu"],
        "student_objects": ["/b/labs/01/matmul.cu.o"],
        "interface_headers": ["/repo/labs/01_naive_matmul/matmul.h"],
        "worker": {"target": f"{LAB}_worker", "path": "/b/labs/01/worker"},
        "test": {"target": f"{LAB}_test", "path": "/b/labs/01/test"},
        "bench": {"target": f"{LAB}_bench", "path": "/b/labs/01/bench"}}},
}


class ManifestTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def load(self, data):
        (self.dir / "labs-manifest.json").write_text(
            data if isinstance(data, str) else json.dumps(data))
        return manifest.load_manifest(self.dir)

    def rejected(self, data, *words):
        with self.assertRaises(GraderError) as cm:
            self.load(data)
        self.assertEqual(cm.exception.exit_code, 1)
        self.assertIn("configured by this repository's CMakeLists", cm.exception.message)
        for w in words:
            self.assertIn(w, cm.exception.message)

    def test_good(self):
        m = self.load(GOOD)
        self.assertEqual(m.gpu_info, Path("/b/common/labkit_gpu_info"))
        self.assertEqual(m.compile_commands, Path("/b/compile_commands.json"))
        lab = m.lab(LAB)
        self.assertEqual(lab.student_target, f"{LAB}_student")
        self.assertEqual(lab.student_objects, (Path("/b/labs/01/matmul.cu.o"),))
        self.assertEqual(lab.test, manifest.Target(f"{LAB}_test", Path("/b/labs/01/test")))
        self.assertEqual(lab.worker.path, Path("/b/labs/01/worker"))
        self.assertEqual(lab.bench.target, f"{LAB}_bench")

    def test_helper_worker(self):
        lab = self.load(GOOD).lab(LAB)
        self.assertIsNone(lab.helper_worker)
        self.assertEqual((lab.workers, lab.worker_routes), ((lab.worker,), {}))
        data = copy.deepcopy(GOOD)
        data["labs"][LAB]["helper_worker"] = {"target": f"{LAB}_helper_worker",
                                              "path": "/b/labs/01/helper", "variants": ["v1"]}
        lab = self.load(data).lab(LAB)
        helper = manifest.Target(f"{LAB}_helper_worker", Path("/b/labs/01/helper"))
        self.assertEqual(lab.workers, (lab.worker, helper))
        self.assertEqual(lab.worker_routes, {"v1": Path("/b/labs/01/helper")})
        for bad in ([], "v1", ["v1=x"], ["a b"], [""], None):
            data["labs"][LAB]["helper_worker"]["variants"] = bad
            self.rejected(data, "helper_worker.variants")

    def test_null_compile_commands(self):
        data = copy.deepcopy(GOOD)
        data["compile_commands"] = None
        self.assertIsNone(self.load(data).compile_commands)

    def test_missing(self):
        with self.assertRaises(GraderError) as cm:
            manifest.load_manifest(self.dir)
        self.assertIn("the build did not write labs-manifest.json: is this build directory "
                      "configured by this repository's CMakeLists?", cm.exception.message)
        self.assertEqual(cm.exception.exit_code, 1)

    def test_malformed(self):
        self.rejected("{not json", "not valid JSON")
        self.rejected("[]", "not a JSON object")
        self.rejected(dict(GOOD, version=2), "version 2")
        self.rejected(dict(GOOD, labs=[]), "'labs'")
        self.rejected(dict(GOOD, gpu_info="relative/path"), "gpu_info", "absolute")
        for key, value in (("student_objects", []), ("student_objects", "/x.o"),
                           ("student_sources", [3]), ("worker", "/b/w"),
                           ("test", {"target": "", "path": "/b/t"}),
                           ("bench", {"target": "b", "path": "b"}), ("student_target", None)):
            with self.subTest(key=key, value=value):
                data = copy.deepcopy(GOOD)
                data["labs"][LAB][key] = value
                self.rejected(data, key)

    def test_unknown_lab(self):
        with self.assertRaises(GraderError) as cm:
            self.load(GOOD).lab("02_tiled")
        self.assertIn("02_tiled", cm.exception.message)
        self.assertIn(LAB, cm.exception.message)


if __name__ == "__main__":
    unittest.main()
