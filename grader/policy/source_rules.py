"""The rules read from the student's source: what it includes (as the compiler lists it) and
directives that copy a file into the program at compile time (in the source as written, and as
the host compiler sees it after the preprocessor)."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from grader import runner
from grader.errors import EXIT_INTERNAL, GraderError
from grader.policy import compile_commands
from grader.policy.rules import DEFAULT_FORBID_INCLUDES, HARNESS_INCLUDES, PolicyRules, Violation
from grader.policy.tools import COMPILER_TIMEOUT_S, TOOL_OUTPUT_CAP, real, short

# ---------------------------------------------------------------------------------------------
# Rule: includes (what the compiler read for the student's file)
# ---------------------------------------------------------------------------------------------

def check_includes(source: Path, entry: dict, allowed_headers: set, rules: PolicyRules) -> list:
    args = compile_commands.base_args(entry) + ["-M"]
    proc = runner.run(compile_commands.boxed(entry, args), COMPILER_TIMEOUT_S,
                      cwd=entry["directory"], cap=TOOL_OUTPUT_CAP)
    if proc.timed_out or proc.returncode != 0:
        why = "it timed out" if proc.timed_out else compile_commands.first_error(proc.output)
        return [Violation("include", source.name,
                          f"the compiler could not list the files your source includes "
                          f"({short(why, 300)}): fix that first")]
    if proc.stdout_cut:   # a list cut short could hide the one include that matters
        return [Violation("include", source.name,
                          f"the list of files your source includes is longer than "
                          f"{TOOL_OUTPUT_CAP >> 20} MiB, more than the policy check reads")]
    roots = compile_commands.system_roots(entry) + compile_commands.toolkit_roots(entry)
    own = real(os.path.join(entry["directory"], entry["file"]))
    patterns = DEFAULT_FORBID_INCLUDES + tuple(rules.forbid_includes)
    out, reported = [], set()
    for dep in compile_commands.parse_deps(proc.stdout):
        path = real(os.path.join(entry["directory"], dep))
        if path == own or path in allowed_headers:
            continue
        root = next((r for r in roots if compile_commands.under(path, r)), None)
        if root is None:
            out.append(Violation("include", path,
                                 f"includes {path}: only the lab's header and system headers "
                                 f"may be included"))
            continue
        parts = Path(os.path.relpath(path, root)).parts
        tails = ["/".join(parts[i:]) for i in range(len(parts))]
        hit = next(((p, t) for p in patterns for t in tails if fnmatch.fnmatchcase(t, p)), None)
        if hit is None or hit[0] in reported:
            continue
        pattern, shown = hit
        reported.add(pattern)   # one violation per pattern: thrust pulls in hundreds of headers
        kind = "the grading harness's" if pattern in HARNESS_INCLUDES else "vendor library"
        out.append(Violation("include", shown,
                             f"includes <{shown}>: {kind} headers are not allowed in this lab "
                             f"(they match '{pattern}')"))
    return out


# ---------------------------------------------------------------------------------------------
# Rule: source text (files copied into the program at compile time)
# ---------------------------------------------------------------------------------------------

_TOKENS = re.compile(
    r"//[^\n]*"                                                   # line comment
    r"|/\*.*?(?:\*/|\Z)"                                          # block comment
    r'|(?:u8|[uUL])?R"([^()\\\s"]{0,16})\((.*?)\)\1"'             # raw string literal
    r'|(?:u8|[uUL])?"((?:\\.|[^"\\\n])*)"?'                       # string literal
    r"|'(?:\\.|[^'\\\n])*'?", re.S)                               # character literal
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]+|[0-7]{1,3}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f", "a": "\a", "b": "\b"}


def _unescape(body: str) -> str:
    def one(m):
        e = m.group(1)
        try:
            if e[0] == "x":
                return chr(int(e[1:], 16) % 0x110000)
            if e[0] in "uU" and len(e) > 1:
                return chr(int(e[1:], 16) % 0x110000)
            if e[0].isdigit():
                return chr(int(e, 8))
        except ValueError:
            return ""
        return _SIMPLE_ESCAPES.get(e, e)
    return _ESCAPE.sub(one, body)


_OPEN, _CLOSE = "\ue000", "\ue001"      # marks around a string literal's value


def _decoded_text(text: str) -> str:
    """C/C++ text with lines spliced, comments removed and every string literal replaced by
    its value, adjacent literals joined as the compiler joins them (".inc" "bin": .incbin)."""
    return _marked_text(text).replace(_OPEN, " ").replace(_CLOSE, " ")


def _marked_text(text: str) -> str:
    """_decoded_text with each (joined) string literal's value between _OPEN and _CLOSE."""
    text = re.sub(r"\\\r?\n", "", text)

    def token(m):
        whole = m.group(0)
        if whole.startswith(("//", "/*")):
            return " "
        if m.group(2) is not None:                    # raw string: taken as written
            value = m.group(2)
        elif m.group(3) is not None:
            value = _unescape(m.group(3))
        else:
            return whole                              # a character literal
        return _OPEN + value.replace(_OPEN, "?").replace(_CLOSE, "?") + _CLOSE
    marked = _TOKENS.sub(token, text)
    return re.sub(_CLOSE + r"\s*" + _OPEN, "", marked)


# (needle searched in the text with all whitespace removed, what it is)
_FILE_DIRECTIVES = (
    ("incbin", "'.incbin', an assembler directive that copies a file into the program"),
    ("#embed", "'#embed', which copies a file into the program"),
    ("%:embed", "'#embed' (spelt %:embed), which copies a file into the program"),
)
# (regex searched in the text with whitespace runs collapsed, what it is)
_ASM_DIRECTIVES = (
    (re.compile(r"\.include\b"), "'.include', an assembler directive that reads a file"),
    (re.compile(r"\.(?:macro|irpc?|altmacro)\b"),
     "an assembler macro directive, which could spell a file-reading directive"),
)
# (regex, what) for directives that make the assembler skip or repeat the compiler's own output:
# a red team's file (round 18) opened `.if 0` in a top-level asm and closed it with `.endif` in a
# section name, so that nvcc's whole fatbin was never assembled and a fatbin of its own, from
# another source, stood in its place under nvcc's label. `.end` stops the assembler too.
_ASM_SKIPS = (
    (re.compile(r"\.(?:if(?:n?def|n?b|n?c|eqs?|nes?|ge|gt|le|lt)?|elseif|else|endif|rept|endr"
                r"|end)(?![\w.$])"),
     "an assembler conditional, repetition or end directive (.if, .else, .endif, .rept, .end)"),
)


def _scan_text(text: str) -> list:
    """(needle, description, why) for every forbidden directive in C/C++ text."""
    decoded = _decoded_text(text).lower()
    squeezed = re.sub(r"\s+", "", decoded).replace('"', "")
    spaced = re.sub(r"\s+", " ", decoded)
    # The normalisation of the text as written, comments included: whitespace and double
    # quotes removed, so that ".inc" "bin" is caught even if the tokenising above went wrong.
    literal = re.sub(r"[\s\"]+", "", text).lower()
    reads = "reading files at compile time is not allowed"
    hits = [(n, what, reads) for n, what in _FILE_DIRECTIVES if n in squeezed or n in literal]
    for rx, what in _ASM_DIRECTIVES:
        m = rx.search(spaced)
        if m:
            hits.append((m.group(0), what, reads))
    for rx, what in _ASM_SKIPS:
        m = rx.search(_string_values(text).lower())
        if m:
            hits.append((m.group(0), what, "it can make the assembler leave out the compiler's "
                                           "own output (the device code), so it is not allowed"))
    return hits


def _string_values(text: str) -> str:
    """The values of the text's string literals, joined as the compiler joins adjacent ones,
    one per line: where assembler text can be (asm statements, section and label names)."""
    marked = _marked_text(text.replace(_OPEN, "?").replace(_CLOSE, "?"))
    return "\n".join(re.findall(_OPEN + "(.*?)" + _CLOSE, marked, re.S))


def check_source_text(source: Path, preprocessed: str | None) -> list:
    try:
        raw = source.read_bytes().decode("utf-8", errors="replace")
    except OSError as e:
        raise GraderError(f"policy check: cannot read {source}: {e}", EXIT_INTERNAL)
    # The source as written, then (when available) as the compiler saw it after the
    # preprocessor, which undoes macro tricks such as pasting 'inc' and 'bin' together.
    hits = _scan_text(raw)
    if preprocessed is not None:
        hits += _scan_text(preprocessed)
    out, seen = [], set()
    for needle, what, why in hits:
        if what in seen:
            continue
        seen.add(what)
        out.append(Violation("source", needle, f"{source.name} contains {what}: {why}"))
    return out
