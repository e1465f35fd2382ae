"""The lab suite's grader: build a submission, run its tests in their own processes, score.

Standard library only. Run from the repository root:  python3 -m grader grade [LAB ...]
"""

__version__ = "0.1.0"
