"""Seeds derived from the graded content: deterministic, content-bound, secret-dependent."""

import hashlib
import unittest

from grader import seeds

A = hashlib.sha256(b"__global__ void k() {}\n").hexdigest()
B = hashlib.sha256(b"// helper\n").hexdigest()


class DeriveSeedTest(unittest.TestCase):
    def test_the_documented_formula(self):
        raw = b"".join(sorted([bytes.fromhex(A), bytes.fromhex(B)]))
        digest = hashlib.sha256(b"cuda-labs-seed/1\0" + b"s3cret" + b"\0" + b"01_naive_matmul"
                                + b"\0" + raw).digest()
        expected = int.from_bytes(digest[:8], "big") & (2**63 - 1)
        self.assertEqual(seeds.derive_seed(b"s3cret", "01_naive_matmul", [A, B]), expected)

    def test_deterministic_and_order_free(self):
        s1 = seeds.derive_seed(b"", "01_naive_matmul", [A, B])
        self.assertEqual(s1, seeds.derive_seed(b"", "01_naive_matmul", [B, A]))
        self.assertEqual(s1, seeds.derive_seed(b"", "01_naive_matmul",
                                               [bytes.fromhex(A), bytes.fromhex(B)]))
        self.assertTrue(0 <= s1 <= 2**63 - 1)

    def test_content_bound(self):
        other = hashlib.sha256(b"__global__ void k() { /* answers */ }\n").hexdigest()
        self.assertNotEqual(seeds.derive_seed(b"", "01_naive_matmul", [A]),
                            seeds.derive_seed(b"", "01_naive_matmul", [other]))

    def test_lab_bound(self):
        self.assertNotEqual(seeds.derive_seed(b"", "01_naive_matmul", [A]),
                            seeds.derive_seed(b"", "02_tiled_matmul", [A]))

    def test_secret_dependent(self):
        values = {seeds.derive_seed(s, "01_naive_matmul", [A]) for s in (b"", b"a", b"b", b"a\0")}
        self.assertEqual(len(values), 4)

    def test_secret_from_env(self):
        self.assertEqual(seeds.secret_from_env({"LABS_GRADER_SECRET": "k3y"}), b"k3y")
        self.assertEqual(seeds.secret_from_env({}), b"")
        self.assertEqual(seeds.secret_from_env({"LABS_GRADER_SECRET": ""}), b"")


if __name__ == "__main__":
    unittest.main()
