"""scripts/starters.py: the starter of every student file is generated from its reference
solution (one source), the marker grammar, and the mark-up of an unmarked pair."""

import importlib.util
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("starters", REPO / "scripts" / "starters.py")
starters = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(starters)

MARKED = """#include "x.h"
void f(int* p) {
  //@ starter
  //|   // TODO(student): set *p
  //|
  //|   (void)p;
  //@ solution
  *p = 1;
  //@ end
}
//@ starter
//@ solution
int helper() { return 2; }
//@ end
"""


class SplitTest(unittest.TestCase):
    def test_a_marked_file_gives_both_files(self):
        starter, solution = starters.split(MARKED)
        self.assertEqual(starter, '#include "x.h"\nvoid f(int* p) {\n  // TODO(student): set *p\n'
                                  '\n  (void)p;\n}\n')
        self.assertEqual(solution, '#include "x.h"\nvoid f(int* p) {\n  *p = 1;\n}\n'
                                   'int helper() { return 2; }\n')

    def test_markers_out_of_order_and_bad_lines_name_the_line(self):
        cases = [("//@ solution\n", "1: '//@ solution' where '//@ starter'"),
                 ("//@ starter\n//@ end\n", "2: '//@ end' where '//@ solution'"),
                 ("//@ starter\nint x;\n//@ solution\n//@ end\n", "2: a starter line must"),
                 ("a\n//@ starter\n//| b\n//@ solution\n", "2: the block opened here has no")]
        for text, words in cases:
            with self.subTest(text=text), self.assertRaises(starters.MarkerError) as cm:
                starters.split(text, "f.cu")
            self.assertIn(f"f.cu:{words}", str(cm.exception))

    def test_merge_gives_back_the_pair(self):
        starter = "a\nb\n// TODO 1\nc\nd\ne\n// TODO 2\nf\n"
        solution = "a\nb\nx = 1;\ny = 2;\nc\nd\ne\nz = 3;\nf\nextra\n"
        merged = starters.merge(starter, solution)
        self.assertEqual(starters.split(merged), (starter, solution))
        # three shared lines keep two blocks apart; one ("f") is folded into the next block
        self.assertIn("//@ starter\n//| // TODO 1\n//@ solution\nx = 1;\ny = 2;\n//@ end\nc\n",
                      merged)
        self.assertIn("//@ starter\n//| // TODO 2\n//| f\n//@ solution\nz = 3;\nf\nextra\n"
                      "//@ end\n", merged)


class ThisCheckoutTest(unittest.TestCase):
    @unittest.skipUnless((REPO / "solutions").is_dir(), "a student release has no solutions/")
    def test_every_starter_is_what_its_solution_generates(self):
        pairs = starters.pairs(REPO / "labs", REPO / "solutions", [])
        self.assertGreaterEqual(len(pairs), 7)
        for solution, starter in pairs:
            with self.subTest(solution=str(solution.relative_to(REPO))):
                generated, _ = starters.split(solution.read_text(), str(solution))
                self.assertEqual(generated, starter.read_text())
                self.assertNotIn("//@", generated)


if __name__ == "__main__":
    unittest.main()
