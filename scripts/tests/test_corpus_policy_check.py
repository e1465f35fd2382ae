"""scripts/corpus_policy_check.py: how the corpus is shared out among graders side by side."""

import sys
import unittest
from collections import namedtuple
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import corpus_policy_check as cpc  # noqa: E402

Case = namedtuple("Case", "lab name id")


def corpus(sizes: dict) -> list:
    """Cases in corpus order: sizes[lab] cases of each lab, labs in name order."""
    return [Case(lab, f"c{i}", f"{lab}/c{i}") for lab in sorted(sizes) for i in range(sizes[lab])]


class ShareLabsTest(unittest.TestCase):
    def test_every_case_once_a_lab_in_one_share_in_corpus_order(self):
        cases = corpus({"01": 107, "02": 21, "03": 24, "04": 26, "05": 37, "06": 27, "07": 21,
                        "08": 10})
        shares = cpc.share_labs(cases, 2)
        self.assertEqual(len(shares), 2)
        self.assertEqual(sorted(c.id for s in shares for c in s), sorted(c.id for c in cases))
        for share in shares:
            labs = {c.lab for c in share}
            for other in shares:
                if other is not share:
                    self.assertFalse(labs & {c.lab for c in other}, "a lab split across shares")
            order = [cases.index(c) for c in share]
            self.assertEqual(order, sorted(order))
        # Balanced by cases: the largest lab alone against the rest, within one lab's size.
        self.assertLessEqual(abs(len(shares[0]) - len(shares[1])), 10)

    def test_never_more_shares_than_labs_nor_an_empty_one(self):
        cases = corpus({"01": 3, "02": 1})
        self.assertEqual([len(s) for s in cpc.share_labs(cases, 8)], [3, 1])
        self.assertEqual([len(s) for s in cpc.share_labs(cases, 1)], [4])


if __name__ == "__main__":
    unittest.main()
