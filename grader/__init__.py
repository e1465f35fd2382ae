"""The lab suite's grader: stage and build a submission, check it against the lab's policy, run
its tests and benchmarks in judge processes that start the student's code in a worker of its
own (docs/architecture.md), score.

Standard library only. Run from the repository root:  python3 -m grader grade [LAB ...]
"""

__version__ = "0.2.0"
