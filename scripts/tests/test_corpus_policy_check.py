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


class LabQueueTest(unittest.TestCase):
    def test_every_case_once_a_lab_whole_in_corpus_order_the_largest_first(self):
        cases = corpus({"01": 107, "02": 21, "03": 24, "04": 26, "05": 37, "06": 27, "07": 21,
                        "08": 10})
        queue = cpc.lab_queue(cases)
        self.assertEqual(sorted(c.id for lab in queue for c in lab), sorted(c.id for c in cases))
        for lab in queue:
            self.assertEqual(len({c.lab for c in lab}), 1, "a lab split")
            order = [cases.index(c) for c in lab]
            self.assertEqual(order, sorted(order))
        self.assertEqual([lab[0].lab for lab in queue],
                         ["01", "05", "06", "04", "03", "02", "07", "08"])

    def test_one_lab_one_entry(self):
        self.assertEqual([len(lab) for lab in cpc.lab_queue(corpus({"02": 1, "01": 3}))], [3, 1])


if __name__ == "__main__":
    unittest.main()
