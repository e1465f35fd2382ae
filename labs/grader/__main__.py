"""`python3 -m grader ...` typed in labs/ rather than at the repository root: runs the root's
grader with the same arguments, in this folder (so relative paths mean what the user meant)."""

import os
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if not os.path.isfile(os.path.join(root, "grader", "cli.py")):
    sys.exit(f"grader: not found at {os.path.join(root, 'grader')}: run python3 -m grader "
             f"from the repository root")
env = dict(os.environ)
env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
# -P: the current folder (this one) is not searched first, so `grader` is the root's.
os.execve(sys.executable, [sys.executable, "-P", "-m", "grader", *sys.argv[1:]], env)
