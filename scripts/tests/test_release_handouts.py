"""What the handouts (labs/*/README.md) and the README of a student release tell a student to run
or open, checked in such a release: on a machine without a GPU, the way a new student meets them.

  python3 -m unittest discover -s scripts/tests -v      (scripts/release-check runs it)
  python3 -m unittest scripts/tests/test_release_handouts.py -v    (this module alone)

One release for the module (setUpModule): every lab, written with scripts/export-release's own
functions (as test_export_release.py loads it), without its checks (scripts/release-check runs
the whole script), into a temporary folder; then `cmake --workflow --preset student` in it, as
a student's first command. Then, for the release's README.md and every labs/*/README.md:

- every line of a fenced `sh` or `bash` block is a command that a student can run there: what
  it names exists (programs, build targets, presets, paths), and it runs where that can be done
  without a GPU: a test program's --gtest_filter must select at least one test of the release's
  build, and the program must then say that there is no GPU and skip rather than fail; a
  benchmark must stop with its skip code and say why; a CMake command runs; `nvcc` compiles.
  Commands the machine lacks a tool for (cuobjdump, ncu) are checked for their paths only;
  `scripts/test` (the release's test workflow, a few minutes) is left to scripts/release-check,
  which runs it in every release it exports. `python3 -m grader grade ...` commands are parsed by
  the grader's own parser in the release and their labs resolved there; the first one runs for
  real (build, policy check, and without a GPU "NOT GRADED ON A GPU", exit 3): the others differ
  from it only in lab and seed, and each would build its lab again (a minute each on 2 cores);
- a command outside such a block (an indented code block or an unlabelled fence) fails the
  test: it would escape these checks;
- every path in inline code (`labs/<lab>/README.md`, `tests/cases.hpp`, `docs/grading.md`, a
  lecture-notes file name) exists in the release, from its root or from the handout's folder;
  `<lab>` stands for each lab; paths under build/student/ are checked after the student
  workflow, build/tools/ (made only where the distribution's CMake is too old) is not;
- none of them names what a release does not hold: solutions/, the corpus (tests/submissions),
  hidden/ folders, scripts/gpu-check, scripts/export-release, release-check, `--solutions`.

And the student workflow's last line, without a GPU, says how many tests did not run and why,
with CTest's own counts (cmake/test_summary.py).

Takes about as long as the student workflow (the build of every lab) plus a minute: measured
in the module's last line of output.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from test_export_release import REPO, er  # export-release, loaded as a module

# Placeholders a handout writes in a command, and what the test puts in their place.
PLACEHOLDERS = {"<seed>": "1234"}
# Commands that only a GPU machine (or a fuller toolkit) runs: their paths are checked, and they
# run when the tool is installed.
TOOLS = {"cuobjdump", "ncu", "ncu-ui", "compute-sanitizer", "nsys"}
# What a student release does not hold, and must not send a student to.
FORBIDDEN = [
    (re.compile(r"(?<![\w/.-])solutions/"), "solutions/ (not in a release)"),
    (re.compile(r"tests/submissions"), "the corpus, tests/submissions/ (not in a release)"),
    (re.compile(r"(?<![\w-])hidden/"), "a hidden/ folder (not in a release)"),
    (re.compile(r"gpu-check|gpu_check"), "scripts/gpu-check (not in a release)"),
    (re.compile(r"export-release"), "scripts/export-release (not in a release)"),
    (re.compile(r"release-check|corpus_policy_check"), "an instructor's script (not in a release)"),
    (re.compile(r"--solutions\b|--preset solutions\b"), "the solutions (not in a release)"),
    (re.compile(r"\.\./shared|lectures/"), "lecture files (not in the repository)"),
]
# A line that starts like one of these is a command.
COMMAND_START = re.compile(r"^(\$ )?(cmake|ctest|python3?|nvcc|cuobjdump|ncu|compute-sanitizer|"
                           r"scripts/|\./build/|build/|[A-Z_]+=\S* )")
# The first folder of a path worth checking (a release's top level, a lab's folders).
PATH_ROOTS = {"labs", "common", "cmake", "grader", "docs", "scripts", "build", "solutions",
              "tests", "hidden", "bench", ".ci", "..", "."}
# Bare file names worth checking (a lecture's notes, a lab's sources): found anywhere in DEST.
BARE_FILE = re.compile(r"^[\w.+-]+\.(md|cu|cuh|h|hpp|cpp|toml|py|cmake)$")
FENCE = re.compile(r"^ {0,3}(```+|~~~+)\s*([\w+-]*)")

DEST: Path | None = None
NAMES = set()    # the names of the release's files (build/ left out)
TMP: Path | None = None
GPU = False
STUDENT = {}     # rc, output, seconds of `cmake --workflow --preset student`
STARTED = 0.0
TIMINGS = []     # (what, seconds)


def run(cmd, cwd=None, env=None, timeout=600) -> tuple:
    """-> (exit status, stdout and stderr together, seconds)."""
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=cwd or DEST, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                              errors="replace")
        return proc.returncode, proc.stdout, time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out + f"\n(timed out after {timeout} s)", time.monotonic() - start
    except OSError as e:
        return 127, f"cannot run {cmd[0]}: {e.strerror}", time.monotonic() - start


def export(dest: Path) -> list:
    """Step 3 of scripts/export-release: the files of a release of every lab, written to DEST."""
    labs = er.discover_labs(REPO)
    checkout, _untracked = er.list_checkout(REPO)
    files, _left_out = er.select(checkout, labs, labs)
    adapt = er.grader_adaptations(REPO, files, labs, labs)
    files_of = {lab: er.student_files(REPO, lab) for lab in labs}
    dest.mkdir(parents=True)
    er.write_release(REPO, dest, files, labs, files_of, adapt)
    er.seed_fetched_tools(REPO, dest)  # what the release's scripts/install-deps would fetch
    return labs


def make_release():
    """The module's release, made once (by the first class that needs it)."""
    global DEST, TMP, GPU, STARTED
    if DEST is not None:
        return
    STARTED = time.monotonic()
    missing = [t for t in ("cmake", "ninja", "nvcc") if shutil.which(t) is None]
    if missing:
        raise unittest.SkipTest(f"{', '.join(missing)} not on PATH: the release cannot be built "
                                f"here (scripts/install-deps)")
    GPU = er.gpu_present()[0]
    TMP = Path(tempfile.mkdtemp(prefix="release-handouts-"))
    given = os.environ.get("LABS_RELEASE_DIR")
    if given:
        # scripts/release-check's own release of every lab, already exported and built by
        # scripts/export-release, which ran its student workflow too (LABS_RELEASE_LOGS)
        DEST = Path(given)
        if not (DEST / "CMakePresets.json").is_file():
            raise RuntimeError(f"LABS_RELEASE_DIR={given} is not a release (no CMakePresets.json)")
        TIMINGS.append(("export", 0.0))
    else:
        DEST = TMP / "release"
        start = time.monotonic()
        export(DEST)
        TIMINGS.append(("export", time.monotonic() - start))
    NAMES.update(p.name for p in DEST.rglob("*")
                 if p.relative_to(DEST).parts[0] not in ("build", ".git"))
    logs = os.environ.get("LABS_RELEASE_LOGS")
    if given and logs and (Path(logs) / "student.rc").is_file():
        # export-release ran the student workflow in that release: its log and exit status
        out = (Path(logs) / "student.log").read_text(encoding="utf-8", errors="replace")
        rc = int((Path(logs) / "student.rc").read_text().strip())
        STUDENT.update(rc=rc, output=out, seconds=0.0)
        TIMINGS.append(("cmake --workflow --preset student (export-release's)", 0.0))
        return
    rc, out, secs = run(["cmake", "--workflow", "--preset", "student"], timeout=1800)
    STUDENT.update(rc=rc, output=out, seconds=secs)
    TIMINGS.append(("cmake --workflow --preset student", secs))


def tearDownModule():
    if TMP is None:
        return
    shutil.rmtree(TMP, ignore_errors=True)
    total = time.monotonic() - STARTED
    print(f"\ntest_release_handouts: {total:.0f} s in all ("
          + ", ".join(f"{what} {secs:.0f} s" for what, secs in TIMINGS) + ")", file=sys.stderr)


# ============================================================================ Markdown
def documents() -> list:
    """The release's README.md and handouts, relative to DEST."""
    return ["README.md"] + sorted(p.relative_to(DEST).as_posix()
                                  for p in DEST.glob("labs/*/README.md"))


def code_blocks(text: str) -> list:
    """-> [(language, first line number, [lines])]: fenced blocks (language '' when none) and
    indented ones (language None)."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            fence, lang, start = m.group(1), m.group(2).lower(), i + 1
            i += 1
            body = []
            while i < len(lines) and not lines[i].lstrip().startswith(fence):
                body.append(lines[i])
                i += 1
            out.append((lang, start + 1, body))
            i += 1
            continue
        indented = lines[i].startswith("    ") and lines[i].strip()
        if indented and (i == 0 or not lines[i - 1].strip()):
            start, body = i + 1, []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                body.append(lines[i][4:])
                i += 1
            out.append((None, start, body))
            continue
        i += 1
    return out


def commands(body: list, first: int) -> list:
    """The commands of a shell block: [(line number, command)], continuation lines joined,
    comments and blank lines dropped."""
    out, pending, at = [], "", first
    for n, line in enumerate(body, first):
        if not pending:
            at = n
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        words = shlex.split(full, comments=True) if full else []
        if words:
            out.append((at, full))
    return out


def inline_code(text: str) -> list:
    """[(line number, code)] of the inline code spans outside code blocks."""
    spans, in_fence, fence = [], False, ""
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m and (not in_fence or line.lstrip().startswith(fence)):
            in_fence, fence = (not in_fence), m.group(1)
            continue
        if in_fence:
            continue
        spans += [(n, code) for code in re.findall(r"`([^`]+)`", line)]
    return spans


def path_candidates(code: str) -> list:
    """The words of a piece of code that name a file or folder of the repository."""
    out = []
    for word in code.split():
        word = word.strip("'\"(),;:")
        if "=" in word and not word.startswith("-"):
            word = word.split("=", 1)[1]            # NAME=value: the value
        if not word or word.startswith(("-", "/", "$", "<")) or "://" in word:
            continue
        if "/" in word:
            if word.split("/", 1)[0] in PATH_ROOTS:
                out.append(word)
        elif BARE_FILE.match(word):
            out.append(word)
    return out


def path_problem(word: str, doc: str, labs: list) -> str | None:
    """None when `word` exists in the release (from its root or from the document's folder; a
    bare file name anywhere), else why not."""
    if word.startswith("build/") or word.startswith("./build/"):
        rest = word.split("build/", 1)[1]
        if rest.startswith("tools/"):
            return None      # made only where the distribution's CMake is older than 3.25
        if rest.rstrip("/") != "student" and not rest.startswith("student/"):
            return f"{word}: only build/student/ is made by the student workflow here"
    words = [word.replace("<lab>", lab) for lab in labs] if "<lab>" in word else [word]
    for w in words:
        if re.search(r"<[^>]*>|\.\.\.", w):
            return None      # a placeholder: nothing to check
        if "/" not in w:
            if w not in NAMES and not (w.endswith(".h") and toolkit_header(w)):
                return f"{w}: no file of that name in the release"
            continue
        w = w[2:] if w.startswith("./") else w
        # From the root, the document's folder, or a lab's (the README's "`tests/` (public)").
        bases = [DEST, (DEST / doc).parent] + [DEST / "labs" / lab for lab in labs]
        if not any((base / w).exists() or any(base.glob(w)) for base in bases
                   if not w.startswith("../") or base == DEST):
            return f"{w}: not in the release"
    return None


def toolkit_header(name: str) -> bool:
    """A header of the CUDA toolkit (cusparse.h, cublas_v2.h): not the release's to hold."""
    nvcc = shutil.which("nvcc")
    return bool(nvcc) and (Path(nvcc).resolve().parent.parent / "include" / name).is_file()


# ============================================================================ commands
class Checker:
    """Checks and runs the commands, each distinct one once, in the documents' order."""

    def __init__(self, labs: list):
        self.labs = labs
        self.done = {}
        self.graded = False
        self.notes = []
        presets = json.loads((DEST / "CMakePresets.json").read_text())
        self.presets = {kind: {p["name"] for p in presets.get(kind, [])}
                        for kind in ("configurePresets", "buildPresets", "testPresets",
                                     "workflowPresets")}

    def check(self, line: str, doc: str) -> list:
        if line not in self.done:
            self.done[line] = self._check(line, doc)
        return self.done[line]

    def _check(self, line: str, doc: str) -> list:
        text = line
        for name, value in PLACEHOLDERS.items():
            text = text.replace(name, value)
        if re.search(r"<[a-z][^<>]*>", text):
            return [f"a placeholder this test does not know (PLACEHOLDERS): {line}"]
        text = text.replace("/tmp/", f"{TMP}/scratch/")
        (TMP / "scratch").mkdir(exist_ok=True)
        argv = shlex.split(text, comments=True)
        env = dict(os.environ)
        while argv and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", argv[0]):
            key, value = argv.pop(0).split("=", 1)
            env[key] = value
        if not argv:
            return [f"no command in: {line}"]
        problems = [p for w in path_candidates(" ".join(argv[1:]))
                    if (p := path_problem(w, doc, self.labs))]
        if problems:
            return problems
        prog = argv[0]
        if prog == "cmake":
            return self.cmake(argv, env)
        if prog in ("python3", "python") and argv[1:3] == ["-m", "grader"]:
            return self.grader(argv, env, text)
        if prog == "scripts/test":
            if not os.access(DEST / prog, os.X_OK):
                return [f"{prog} is not an executable file of the release"]
            self.notes.append(f"{prog}: exists; its run (the test workflow) is "
                              f"scripts/release-check's")
            return []
        if prog == "nvcc":
            rc, out, _ = run(argv, env=env, timeout=300)
            return [] if rc == 0 else [f"exit {rc}: {text}\n{out[-2000:]}"]
        if prog in TOOLS:
            if shutil.which(prog) is None:
                self.notes.append(f"{prog}: not installed here; its paths exist")
                return []
            rc, out, _ = run(argv, env=env, timeout=300)
            return [] if rc == 0 or not GPU else [f"exit {rc}: {text}\n{out[-2000:]}"]
        if prog.startswith(("./build/", "build/")):
            return self.program(argv, env, text)
        return [f"a command this test does not know how to check: {line}"]

    def cmake(self, argv: list, env: dict) -> list:
        if argv[1:3] == ["--workflow", "--preset"] and len(argv) == 4:
            if argv[3] not in self.presets["workflowPresets"]:
                return [f"no workflow preset {argv[3]!r} in CMakePresets.json"]
            if argv[3] != "student":
                return [f"`{' '.join(argv)}`: only the student workflow is run here"]
            return [] if STUDENT["rc"] == 0 or GPU else \
                [f"`cmake --workflow --preset student` exited {STUDENT['rc']}"]
        if len(argv) >= 3 and argv[1] == "--preset" \
                and argv[2] not in self.presets["configurePresets"]:
            return [f"no configure preset {argv[2]!r} in CMakePresets.json"]
        rc, out, secs = run(argv, env=env, timeout=900)
        TIMINGS.append((" ".join(argv)[:50], secs))
        return [] if rc == 0 else [f"exit {rc}: {' '.join(argv)}\n{out[-2000:]}"]

    def program(self, argv: list, env: dict, text: str) -> list:
        exe = DEST / argv[0]
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            return [f"{argv[0]}: no such program after the student workflow"]
        problems = []
        if exe.name.endswith("_test"):
            filters = [a for a in argv[1:] if a.startswith("--gtest_filter=")]
            rc, out, _ = run([str(exe), "--gtest_list_tests", *filters], env=env, timeout=120)
            listed = [line for line in out.splitlines() if line.startswith("  ")]
            if rc != 0 or not listed:
                return [f"{' '.join(filters) or 'no filter'}: selects no test of "
                        f"{argv[0]} (exit {rc})"]
        if GPU and exe.name.endswith("_bench"):
            self.notes.append(f"{argv[0]}: exists; not timed here")
            return problems
        rc, out, _ = run(argv, env=env, timeout=600)
        if GPU:
            if rc not in (0, 1):
                problems.append(f"exit {rc}: {text}\n{out[-2000:]}")
        elif exe.name.endswith("_bench"):
            if rc != 77 or "no CUDA GPU" not in out:
                problems.append(f"without a GPU, expected exit 77 and 'no CUDA GPU' from: {text} "
                                f"(exit {rc})\n{out[-2000:]}")
        elif exe.name.endswith("_test"):
            if rc != 0 or "no CUDA GPU" not in out or "[  SKIPPED ]" not in out:
                problems.append(f"without a GPU, expected skipped tests and exit 0 from: {text} "
                                f"(exit {rc})\n{out[-2000:]}")
        elif rc != 0:
            problems.append(f"exit {rc}: {text}\n{out[-2000:]}")
        return problems

    def grader(self, argv: list, env: dict, text: str) -> list:
        # Parse with the grader's own parser, resolve the labs, in the release.
        probe = ("import json, sys\nfrom grader import cli\n"
                 "from grader.config import resolve_labs\n"
                 "args = cli.parser().parse_args(sys.argv[1:])\n"
                 "labs = resolve_labs(cli.REPO / 'labs', args.labs) if args.command == 'grade' "
                 "else []\n"
                 "print('LABS ' + json.dumps(labs))\n")
        rc, out, _ = run([sys.executable, "-c", probe, *argv[3:]], env=env, timeout=60)
        m = re.search(r"^LABS (.*)$", out, re.MULTILINE)
        if rc != 0 or not m:
            return [f"the grader refuses `{text}` (exit {rc}):\n{out[-1500:]}"]
        if self.graded or len(json.loads(m.group(1))) != 1:
            return []       # one lab's grading, run for real, stands for the others
        self.graded = True
        rc, out, secs = run([sys.executable, *argv[1:]], env=env, timeout=1800)
        TIMINGS.append((text[:50], secs))
        if GPU:
            return [] if rc == 0 else [f"exit {rc}: {text}\n{out[-2000:]}"]
        if rc != 3 or "NOT GRADED ON A GPU" not in out:
            return [f"without a GPU, expected 'NOT GRADED ON A GPU' and exit 3 from `{text}` "
                    f"(exit {rc}):\n{out[-2000:]}"]
        return []


# ============================================================================ the tests
class ReleaseMarkdownTest(unittest.TestCase):
    """scripts/export-release's `<!-- release: ... -->` markers (no release needed)."""

    TEXT = ("# Title\n\nFor all.\n\n<!-- release: cut (why) -->\n## For instructors\n\n"
            "scripts/gpu-check\n<!-- release: end -->\n<!-- release: cut -->\nMain `--solutions`.\n"
            "<!-- release: instead\nStudent text.\n-->\n<!-- release: end -->\nEnd `<!-- release: "
            "cut -->` in prose.\n")

    def test_cut_and_instead(self):
        self.assertEqual(er.release_markdown(self.TEXT, "R.md"),
                         "# Title\n\nFor all.\n\nStudent text.\nEnd `<!-- release: cut -->` in "
                         "prose.\n")

    def test_markers_out_of_place(self):
        for bad in ("<!-- release: cut -->\nx\n", "x\n<!-- release: end -->\n",
                    "<!-- release: cut -->\n<!-- release: cut -->\n<!-- release: end -->\n",
                    "<!-- release: cut -->\n<!-- release: instead\nx\n<!-- release: end -->\n",
                    "<!-- release: instead\nx\n-->\n", "<!-- release: typo -->\n"):
            with self.subTest(bad=bad), self.assertRaises(er.ExportError):
                er.release_markdown(bad, "R.md")

    def test_the_readme_in_a_release(self):
        text = er.release_markdown((REPO / "README.md").read_text(), "README.md")
        self.assertNotIn("<!-- release", text)
        self.assertNotIn("## For instructors", text)
        self.assertIn("## Layout", text)
        self.assertIn("## For students", text)


class HandoutsTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        make_release()
        cls.labs = sorted(p.parent.name for p in DEST.glob("labs/*/grading.toml"))

    def test_every_lab_has_a_handout(self):
        self.assertEqual(len(documents()) - 1, len(self.labs), documents())

    def test_no_mention_of_what_a_release_lacks(self):
        found = []
        for doc in documents():
            for n, line in enumerate((DEST / doc).read_text().split("\n"), 1):
                found += [f"{doc}:{n}: {why}: {line.strip()}"
                          for pattern, why in FORBIDDEN if pattern.search(line)]
        self.assertEqual(found, [], "\n".join(found))

    def test_inline_paths_exist(self):
        found = []
        for doc in documents():
            for n, code in inline_code((DEST / doc).read_text()):
                found += [f"{doc}:{n}: {p}" for w in path_candidates(code)
                          if (p := path_problem(w, doc, self.labs))]
        self.assertEqual(found, [], "\n".join(found))

    def test_commands_are_in_shell_blocks(self):
        found = []
        for doc in documents():
            for lang, first, body in code_blocks((DEST / doc).read_text()):
                if lang in ("sh", "bash"):
                    continue
                found += [f"{doc}:{n}: {line.strip()}" for n, line in enumerate(body, first)
                          if COMMAND_START.match(line.strip())]
        self.assertEqual(found, [], "commands outside a ```sh block escape this test's "
                         "checks:\n" + "\n".join(found))

    def test_commands_exist_and_run(self):
        checker = Checker(self.labs)
        found, count = [], 0
        for doc in documents():
            for lang, first, body in code_blocks((DEST / doc).read_text()):
                if lang not in ("sh", "bash"):
                    continue
                for n, line in commands(body, first):
                    count += 1
                    found += [f"{doc}:{n}: {p}" for p in checker.check(line, doc)]
        for note in checker.notes:
            print(f"  note: {note}", file=sys.stderr)
        self.assertGreater(count, len(self.labs) * 2)
        self.assertTrue(checker.graded, "no grader command was run")
        self.assertEqual(found, [], "\n".join(found))


class StudentWorkflowSummaryTest(unittest.TestCase):
    """The student workflow's last word, without a GPU: how many tests did not run, and why."""

    @classmethod
    def setUpClass(cls):
        make_release()

    def test_the_last_line_says_how_many_did_not_run(self):
        out = STUDENT["output"]
        m = re.findall(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)", out)
        self.assertTrue(m, out[-3000:])
        total = int(m[-1][2])
        skipped = len(re.findall(r"\*\*\*Skipped", out))
        last = [line for line in out.splitlines() if line.strip()][-1]
        if GPU:
            self.assertFalse(last.startswith("NOTE") and "no CUDA GPU" in last, last)
            return
        self.assertEqual(STUDENT["rc"], 0, out[-3000:])
        self.assertGreater(skipped, 0)
        self.assertTrue(last.startswith(f"NOTE: {skipped} of {total} tests did not run: no CUDA "
                                        f"GPU on this machine ("), last)
        self.assertTrue(last.endswith("; they are not passed"), last)
        self.assertFalse((DEST / "build" / "student" / "ctest-results.xml").exists(),
                         "the results file is removed once read")


if __name__ == "__main__":
    unittest.main()
