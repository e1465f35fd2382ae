"""Machine code read as control flow (x86-64 as objdump prints it; the aarch64 mnemonics too):
which instruction calls or jumps, where to (branch, targets), the raw system call
instructions, and the walk through the code a function reaches (walk), which the constructor
rule (object_rules.py) runs from every entry of .init_array."""

from __future__ import annotations

import bisect
import fnmatch
import re

from grader.policy.elf_object import ElfObject, Insn

PREFIXES = ("bnd", "notrack", "rex", "rex.W", "data16", "cs", "ds", "addr32", "lock", "rep",
            "repz", "repnz")


def branch(text: str) -> tuple:
    """(kind, indirect) of an instruction: kind is 'call', 'jump' or None."""
    words = text.split()
    while words and words[0] in PREFIXES:
        words = words[1:]
    if not words:
        return None, False
    op, rest = words[0], " ".join(words[1:])
    if op in ("call", "callq"):
        return "call", rest.startswith("*")
    if op in ("bl", "blr"):                                # aarch64
        return "call", op == "blr"
    if op.startswith("j") or op.startswith("loop"):
        return "jump", rest.startswith("*")
    if op in ("b", "br", "cbz", "cbnz", "tbz", "tbnz") or op.startswith("b."):
        return "jump", op == "br"
    return None, False


_BRANCH_TARGET = re.compile(r"(?:^|,\s*)([0-9a-f]+)(?:\s+<[^>]*>)?\s*$")


def targets(elf: ElfObject, insn: Insn) -> list:
    """What an instruction refers to: ("import", name) or ("local", section, offset)."""
    if insn.relocs:
        return [elf.resolve(r, insn) for r in insn.relocs]
    out = []
    kind, indirect = branch(insn.text)
    if kind and not indirect:
        m = _BRANCH_TARGET.search(insn.text.split(None, 1)[-1])
        if m:
            out.append(("local", insn.section, int(m.group(1), 16)))
    if insn.comment_addr is not None:                     # a rip-relative address (lea)
        out.append(("local", insn.section, insn.comment_addr))
    return out


def _function_insns(elf: ElfObject, section: str, span) -> list:
    lst = elf.insns.get(section, [])
    i = bisect.bisect_left([x.addr for x in lst], span[0])
    return [x for x in lst[i:] if x.addr < span[1]]


def _allowed(name: str, patterns) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def walk(elf: ElfObject, section: str, start, imports: tuple, refs: tuple, follow,
         strict: bool) -> list:
    """Problems (short phrases) in the code reachable from the function `start` of `section`.

    Calls and jumps are followed into functions that `follow(name)` accepts, and must otherwise
    reach an import in `imports`. An indirect call can only reach what the caller takes the
    address of, so then those functions are followed (or refused) too. With `strict`, every
    other reference (data, addresses) must be one of `refs` and indirect calls are refused."""
    problems, seen, todo = [], set(), [(section, start)]
    while todo:
        section, span = todo.pop()
        if (section, span) in seen:
            continue
        seen.add((section, span))
        indirect, taken = False, []
        for insn in _function_insns(elf, section, span):
            kind, is_indirect = branch(insn.text)
            if kind and is_indirect:
                indirect = True
                continue
            for t in targets(elf, insn):
                if t[0] == "import":
                    if kind:
                        if not _allowed(t[1], imports):
                            problems.append(f"calls {elf.demangle(t[1])}")
                    elif strict and t[1] not in refs:
                        problems.append(f"uses {elf.demangle(t[1])}")
                    elif not strict:
                        taken.append(t)
                    continue
                tsection, offset = t[1], t[2]
                target = elf.function_at(tsection, offset) if tsection in elf.functions else None
                if target is None:                        # data
                    if strict:
                        data = elf.symbol_at(tsection, offset) if tsection else None
                        if data not in refs:
                            problems.append(f"uses {elf.demangle(data or tsection or '?')}")
                    continue
                if (tsection, target) == (section, span):
                    continue                              # a branch within the function
                if kind and follow(target[2]):
                    todo.append((tsection, target))
                elif kind:
                    problems.append(f"calls {elf.demangle(target[2])}")
                elif strict:
                    problems.append(f"takes the address of {elf.demangle(target[2])}")
                else:
                    taken.append(("local", tsection, target))
        if indirect:
            if strict:
                problems.append("makes an indirect call")
            for t in taken:
                if t[0] == "import":
                    if not _allowed(t[1], imports):
                        problems.append(f"may call {elf.demangle(t[1])}")
                elif follow(t[2][2]):
                    todo.append((t[1], t[2]))
                else:
                    problems.append(f"may call {elf.demangle(t[2][2])}")
    return problems


def syscall_instruction(text: str) -> str | None:
    words = text.split()
    while words and words[0] in PREFIXES:
        words = words[1:]
    if not words:
        return None
    if words[0] in ("syscall", "sysenter", "svc"):        # x86-64, x86, aarch64
        return words[0]
    if words[0] == "int" and len(words) > 1 and words[1] in ("$0x80", "0x80"):
        return "int $0x80"
    return None
