"""Every rule a lab's policy enforces is stated in its handout, and nothing the handout says is
refused goes through.

Each labs/<lab>/README.md has a section "## Rules the grader enforces" whose bullet list (lines
beginning "- " and their indented continuations) says what gets a file rejected. A rule is
stated by a stable phrase, checked here against the policy's data (grader/policy/rules.py) and
the lab's grading.toml [policy] table:

- the rules every lab runs (grader/policy/__init__.py): each phrase in ALWAYS;
- the device families the lab refuses (forbid_device_instructions): the family's phrase in
  DEVICE_PHRASES is in the bullets exactly when the lab refuses it (a lab that allows shared
  memory must not list it; lab 02, which refuses it, must);
- the lab's forbid_imports, forbid_includes and allow_imports: each named (IMPORT_PHRASES,
  INCLUDE_PHRASES; an allowed function by its name in backquotes);
- the other way round: every library in LIBRARIES the bullets name is refused as an include
  for that lab; every kind of call in CALLS they name is refused by the import rule for that
  lab (a representative function of each); every function in backquotes before the import
  bullet's ": no" is allowed, and every one after it refused.

No compiler or tool is needed: the handouts and grading.toml are read as text.
"""

from __future__ import annotations

import fnmatch
import re
import unittest
from pathlib import Path

from grader import config
from grader.policy import DEVICE_FAMILIES, PolicyRules, elf_object, object_rules
from grader.policy.rules import DEFAULT_FORBID_INCLUDES

REPO = Path(__file__).resolve().parents[2]
LABS = REPO / "labs"
RULES_HEADING = "## Rules the grader enforces"

# The rules every lab runs, each with the phrase that states it.
ALWAYS = {
    "import": "calls anything but kernel launches",
    "definition": "defines functions outside your own code's names",
    "constructor": "runs code before `main`",
    "syscall": "raw system call instruction",
    "executable_memory": "executable stack or memory both writable and executable",
    "include": "includes anything but",        # followed by the lab's header (checked below)
    "source": "copies a file into the program at compile time (`.incbin`, `#embed`",
    "asm_skip": "makes the assembler skip or repeat the compiler's own output (`.if`",
    "device_calls": "allocates memory in device code (`malloc`, `free`, `new` or `delete`",
    "launch_id": "reads the grid's launch id in device code (`%gridid`",
    "device_clock": "reads a clock or timer in device code (`clock()`, `clock64()`, `%globaltimer`",
    "indirect_call": "calls through a function pointer (a virtual function) in device code",
}
# forbid_device_instructions: each family's phrase.
DEVICE_PHRASES = {
    "tensor_cores": "uses tensor cores",
    "low_precision": "16-bit (or 8-bit) float math and conversions",
    "half_arithmetic": "computes in 16-bit floats",
    "narrow_precision": "multiplies in fewer than 16 bits",
    "shared_memory": "uses shared memory",
    "async_copy": "reads global memory other than by loads",
}
# Refused when the code runs, not by the policy: the executor refuses dynamic shared memory in a
# lab that refuses the shared_memory family (gtest.no_shared_memory).
LAUNCH_PHRASES = {"shared_memory": "dynamic shared memory at launch"}
# A lab's forbid_imports patterns and the phrase that names each.
IMPORT_PHRASES = {
    "cudaMemcpy*": "`cudaMemcpy*`",
    "cudaMalloc*": "`cudaMalloc*`",
    "cudaLaunchHostFunc": "host callbacks", "cudaLaunchHostFunc*": "host callbacks",
    "cudaStreamAddCallback": "host callbacks", "cudaStreamAddCallback*": "host callbacks",
    "cusparse*": "cuSPARSE",
}
# Libraries a handout may name, with the include pattern that refuses them.
LIBRARIES = {"cuBLAS": "cublas*", "CUB": "cub/*", "Thrust": "thrust/*", "cuDNN": "cudnn*",
             "cuSPARSE": "cusparse*", "GoogleTest": "gtest/*"}
INCLUDE_PHRASES = {pattern: name for name, pattern in LIBRARIES.items()}
# Kinds of call a handout may say are refused, with a function of each kind.
CALLS = {"streams": "cudaStreamCreate", "events": "cudaEventCreate",
         "host callbacks": "cudaLaunchHostFunc", "synchronization": "cudaDeviceSynchronize",
         "files": "fopen", "processes": "fork", "system calls": "syscall",
         "cuBLAS": "cublasSgemm_v2", "cuDNN": "cudnnConvolutionForward",
         "cuSPARSE": "cusparseSpMV", "CUB": "cub::DeviceReduce::Sum", "Thrust": "thrust::reduce"}


def rules_section(text: str) -> str:
    if RULES_HEADING not in text:
        return ""
    section = text.split(RULES_HEADING, 1)[1]
    return re.split(r"^## ", section, maxsplit=1, flags=re.M)[0]


def bullets(section: str) -> list:
    """The section's bullet items, each joined into one line."""
    items = []
    for line in section.splitlines():
        if line.startswith("- "):
            items.append(line[2:].strip())
        elif items and line.startswith("  ") and line.strip() and not line.lstrip().startswith("-"):
            items[-1] += " " + line.strip()
        elif not line.strip() and items:
            if items[-1] is not None:
                items.append(None)              # a blank line ends the list
    out = []
    for item in items:
        if item is None:
            break
        out.append(item)
    return out


def interface_headers(lab: str) -> list:
    """The lab's header(s): its CMakeLists.txt's INTERFACE argument."""
    text = (LABS / lab / "CMakeLists.txt").read_text()
    return re.findall(r"\bINTERFACE\s+(\S+)", text)


def allowed(name: str, rules: PolicyRules) -> bool:
    """Whether the import rule lets the object call `name` (as a C function or a C++ one)."""
    for demangled in (name, f"{name}(float const*)"):
        sym = elf_object.Sym(name=demangled, kind="U", demangled=demangled)
        if object_rules._import_verdict(sym, rules) is None:
            return True
    return False


def has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w`]){re.escape(word)}(?![\w])", text) is not None


class HandoutRulesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.labs = config.discover_labs(LABS)

    def lab(self, name):
        text = (LABS / name / "README.md").read_text(encoding="utf-8")
        items = bullets(rules_section(text))
        self.assertTrue(items, f"{name}: README.md has no bullet list under '{RULES_HEADING}'")
        return config.load_lab_config(LABS, name).policy, items, " ".join(items)

    def test_the_phrases_cover_every_family(self):
        self.assertEqual(set(DEVICE_PHRASES), set(DEVICE_FAMILIES),
                         "a new device family needs its phrase here and in the handouts")

    def test_every_rule_every_lab_runs_is_stated(self):
        for name in self.labs:
            with self.subTest(name):
                _, _, text = self.lab(name)
                for rule, phrase in ALWAYS.items():
                    self.assertIn(phrase, text, f"{name}: the {rule} rule is not stated")
                headers = interface_headers(name)
                self.assertTrue(headers, name)
                for header in headers:
                    self.assertIn(f"includes anything but `{header}`", text)

    def test_device_families_stated_exactly_when_refused(self):
        for name in self.labs:
            with self.subTest(name):
                policy, _, text = self.lab(name)
                for family, phrase in [*DEVICE_PHRASES.items(), *LAUNCH_PHRASES.items()]:
                    refused = family in policy.forbid_device_instructions
                    self.assertEqual(phrase in text, refused,
                                     f"{name}: the handout {'does not say' if refused else 'says'}"
                                     f" that {family} is refused, but grading.toml "
                                     f"{'refuses' if refused else 'allows'} it")

    def test_lab_imports_and_includes_are_named(self):
        for name in self.labs:
            with self.subTest(name):
                policy, _, text = self.lab(name)
                for pattern in policy.forbid_imports:
                    self.assertIn(pattern, IMPORT_PHRASES,
                                  f"{name}: forbid_imports {pattern!r} has no phrase here")
                    self.assertIn(IMPORT_PHRASES[pattern], text, f"{name}: {pattern!r}")
                for pattern in policy.forbid_includes:
                    self.assertIn(pattern, INCLUDE_PHRASES,
                                  f"{name}: forbid_includes {pattern!r} has no phrase here")
                    self.assertTrue(has_word(text, INCLUDE_PHRASES[pattern]),
                                    f"{name}: {pattern!r}")
                for pattern in policy.allow_imports:
                    function = re.split(r"[(*]", pattern, maxsplit=1)[0]
                    self.assertIn(f"`{function}`", text, f"{name}: allow_imports {pattern!r}")

    def test_named_libraries_are_refused(self):
        for name in self.labs:
            with self.subTest(name):
                policy, _, text = self.lab(name)
                forbidden = set(DEFAULT_FORBID_INCLUDES) | set(policy.forbid_includes)
                for library, pattern in LIBRARIES.items():
                    if has_word(text, library):
                        self.assertIn(pattern, forbidden, f"{name}: {library} is named but its "
                                                          f"headers are not refused")

    def test_named_calls_are_refused(self):
        for name in self.labs:
            with self.subTest(name):
                policy, items, _ = self.lab(name)
                calls = next(i for i in items if i.startswith(ALWAYS["import"]))
                self.assertIn(": no ", calls, f"{name}: the import bullet lists no refused calls")
                allowed_part, refused_part = calls.split(": no ", 1)
                for kind, function in CALLS.items():
                    if has_word(refused_part, kind):
                        self.assertFalse(allowed(function, policy),
                                         f"{name}: '{kind}' is said to be refused, but "
                                         f"{function} is allowed")
                for function in re.findall(r"`([A-Za-z_][\w:]*)\*?`", allowed_part):
                    self.assertTrue(allowed(function, policy),
                                    f"{name}: `{function}` is said to be allowed")
                for stem in re.findall(r"`([A-Za-z_]\w*)\*?`", refused_part):
                    self.assertFalse(allowed(stem, policy) or allowed(stem + "Async", policy),
                                     f"{name}: `{stem}` is said to be refused")

    def test_bullets_parser(self):
        section = ("\nIntro:\n\n- one\n  two;\n- three.\n\nAfter.\n\n- not a rule\n")
        self.assertEqual(bullets(section), ["one two;", "three."])


if __name__ == "__main__":
    unittest.main()
