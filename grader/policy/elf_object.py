"""One object file read as the object rules need it: its symbols (nm), sections, symbol table
and relocations (readelf), every instruction of the sections that become code (objdump), and
its section headers and groups (grader/elf.py)."""

from __future__ import annotations

import bisect
import dataclasses
import re
from pathlib import Path

from grader import elf as elfheaders
from grader.errors import EXIT_INTERNAL, GraderError
from grader.policy import demangle, tools

@dataclasses.dataclass
class Sym:
    name: str
    kind: str         # nm's letter: U undefined, T text, W weak, u unique, t local text ...
    demangled: str

    @property
    def undefined(self) -> bool:
        return self.kind in "Uwv"

    @property
    def local(self) -> bool:
        # nm: lowercase is local, except u (unique global), w/v (weak undefined), i (ifunc).
        return self.kind.islower() and self.kind not in "uwvi"


@dataclasses.dataclass
class ElfSym:
    name: str
    value: int
    size: int
    type: str         # FUNC, OBJECT, NOTYPE, SECTION, IFUNC, ...
    bind: str         # LOCAL, GLOBAL, WEAK, UNIQUE
    ndx: str          # section index as text, or UND / ABS / COM


@dataclasses.dataclass
class Reloc:
    offset: int
    type: str
    symbol: str
    addend: int


@dataclasses.dataclass
class Insn:
    section: str
    addr: int
    text: str                  # mnemonic and operands, objdump's comment removed
    comment_addr: int | None   # the address objdump resolved (branch target, rip-relative)
    relocs: list
    next_addr: int = 0


@dataclasses.dataclass
class Section:
    index: str
    name: str
    type: str         # PROGBITS, INIT_ARRAY, RELA, ...
    size: int
    flags: str        # readelf's letters: A alloc, X exec, W write ...

    @property
    def executable(self) -> bool:
        return "X" in self.flags


class ElfObject:
    """One object file as the rules need it, read once with nm, readelf and objdump."""

    def __init__(self, path: Path, symbols: list, sections: list, elf_symbols: list,
                 relocs: dict, insns: dict, comdat: frozenset = frozenset()):
        self.path = path
        self.comdat = comdat                            # section indices (text) in COMDAT groups
        self.symbols = symbols                          # [Sym] from nm
        self.sections = {s.name: s for s in sections}   # name -> Section
        self.section_by_index = {s.index: s.name for s in sections}
        self.elf_symbols = elf_symbols                  # [ElfSym] from readelf
        self.relocs = relocs                            # ".rela.init_array" -> [Reloc]
        self.insns = insns                              # section -> [Insn] by address
        self._demangled = {s.name: s.demangled for s in symbols}
        self._by_name = {}
        for s in elf_symbols:
            self._by_name.setdefault(s.name, s)
        # Code symbols of each section as (start, end, name) sorted by start; a symbol with no
        # size (an assembler label) runs to the next symbol.
        self.functions = {}
        by_section = {}
        for s in elf_symbols:
            section = self.section_of(s)
            if section and s.name and s.type in ("FUNC", "IFUNC", "NOTYPE") \
                    and self.sections[section].executable and not s.name.startswith(".L"):
                by_section.setdefault(section, []).append(s)
        for section, syms in by_section.items():
            syms.sort(key=lambda s: (s.value, s.type != "FUNC"))
            spans = []
            for i, s in enumerate(syms):
                end = s.value + s.size if s.size else next(
                    (t.value for t in syms[i + 1:] if t.value > s.value),
                    self.sections[section].size)
                spans.append((s.value, end, s.name))
            self.functions[section] = spans
        self._starts = {k: [span[0] for span in v] for k, v in self.functions.items()}

    def demangle(self, name: str) -> str:
        return self._demangled.get(name, name)

    def section_of(self, sym: ElfSym) -> str | None:
        name = self.section_by_index.get(sym.ndx)
        return name if name in self.sections else None

    def function_at(self, section: str, addr: int):
        """(start, end, name) of the function holding section+addr, or None."""
        spans = self.functions.get(section, [])
        i = bisect.bisect_right(self._starts.get(section, []), addr) - 1
        while i >= 0:
            if spans[i][0] <= addr < spans[i][1]:
                return spans[i]
            i -= 1
        return None

    def symbol_at(self, section: str, addr: int) -> str | None:
        """The name of the (data or code) symbol covering section+addr, or None."""
        for s in self.elf_symbols:
            if s.name and s.type != "SECTION" and self.section_of(s) == section \
                    and s.value <= addr < s.value + max(s.size, 1):
                return s.name
        return None

    def resolve(self, rel: Reloc, insn: Insn | None):
        """Where a relocation points: ("import", name) or ("local", section, offset).

        PC-relative relocations (x86-64) are relative to the end of the displacement, which
        the addend compensates for: the target is S + A + (next instruction - field)."""
        pc_relative = rel.type.startswith(("R_X86_64_PC", "R_X86_64_PLT", "R_X86_64_GOTPC"))
        adjust = insn.next_addr - rel.offset if (insn is not None and pc_relative) else 0
        if rel.symbol in self.sections:                 # a section symbol: .text+0x40
            return ("local", rel.symbol, rel.addend + adjust)
        sym = self._by_name.get(rel.symbol)
        if sym is None or sym.ndx == "UND":
            return ("import", rel.symbol)
        section = self.section_of(sym)
        if section is None:                             # absolute or common: not code
            return ("local", "", 0)
        return ("local", section, sym.value + rel.addend + adjust)


_NM_LINE = re.compile(r"^([0-9a-fA-F]*)\s+(\S)\s(.*)$")
_SECTION_LINE = re.compile(r"^\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+[0-9a-f]+\s+"
                           r"([0-9a-f]+)\s+[0-9a-f]+\s+([A-Za-z]*)\s+\d+\s+\d+\s+\d+\s*$")
_SYMTAB_LINE = re.compile(r"^\s*\d+:\s+([0-9a-f]+)\s+(\d+|0x[0-9a-f]+)\s+(\S+)\s+(\S+)\s+\S+\s+"
                          r"(\S+)\s?(.*)$")
_RELOC_HEADER = re.compile(r"^Relocation section '(.*)' at offset")
_RELOC_LINE = re.compile(r"^([0-9a-f]+)\s+[0-9a-f]+\s+(\S+)\s+[0-9a-f]+\s+(.*?)\s+([+-])\s+"
                         r"([0-9a-f]+)$")
_OBJDUMP_SECTION = re.compile(r"^Disassembly of section (.*):$")
_OBJDUMP_INSN = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
_OBJDUMP_RELOC = re.compile(r"^\s+([0-9a-f]+): (R_\S+)\s+(.*?)(?:([+-])0x([0-9a-f]+))?$")
_COMMENT_ADDR = re.compile(r"^\s*(?:0x)?([0-9a-f]+)\b")


def read_object(path: Path) -> ElfObject:
    if not path.is_file():
        raise GraderError(f"policy check: the object {path} does not exist (the build should "
                          f"have made it)", EXIT_INTERNAL)
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"\x7fELF":
        raise GraderError(f"policy check: {path} is not an ELF object file "
                          f"({'it is empty' if not magic else 'unknown format'})", EXIT_INTERNAL)
    nm, readelf, objdump = tools.tool("nm"), tools.tool("readelf"), tools.tool("objdump")
    headers = _elf_headers(path)

    # nm: what the object defines and uses, with the letters the rules speak in.
    symbols = []
    for line in tools.lines(tools.run_tool([nm, "--no-sort", str(path)], f"nm {path.name}")):
        m = _NM_LINE.match(line)
        if m:
            symbols.append(Sym(name=m.group(3), kind=m.group(2), demangled=m.group(3)))
    names = demangle.names([s.name for s in symbols])
    for s in symbols:
        s.demangled = names.get(s.name, s.name)

    # readelf: sections, the full symbol table (sections, sizes, types) and relocations.
    sections, elf_symbols, relocs, current = [], [], {}, None
    text = tools.run_tool([readelf, "-W", "-S", "-s", "-r", str(path)], f"readelf {path.name}")
    for line in tools.lines(text):
        m = _SECTION_LINE.match(line)
        if m:
            index, name, stype, size, flags = m.groups()
            sections.append(Section(index, name, stype, int(size, 16), flags))
            continue
        m = _RELOC_HEADER.match(line)
        if m:
            current = relocs.setdefault(m.group(1), [])
            continue
        if line.startswith("Symbol table"):
            current = None
            continue
        m = _SYMTAB_LINE.match(line)
        if m and current is None:
            value, size, stype, bind, ndx, name = m.groups()
            elf_symbols.append(ElfSym(name=name, value=int(value, 16),
                                      size=int(size, 16) if size.startswith("0x") else int(size),
                                      type=stype, bind=bind, ndx=ndx))
            continue
        m = _RELOC_LINE.match(line)
        if m and current is not None:
            offset, rtype, sym, sign, addend = m.groups()
            a = int(addend, 16)
            current.append(Reloc(int(offset, 16), rtype, sym, -a if sign == "-" else a))

    # objdump: every instruction of the executable sections, with its relocations; then the
    # sections that are not flagged executable but that the linker places into code all the
    # same (a `.section .text.foo,"a"` lands in .text), disassembled whatever their flags.
    insns = {}
    _parse_objdump(tools.run_tool([objdump, "-dr", "--no-show-raw-insn", str(path)],
                                  f"objdump {path.name}"), insns)
    for name in sorted({s.name for s in headers.sections
                        if elfheaders.lands_in_code(s) and not s.execinstr and s.size
                        and s.type != 8}):                  # 8: SHT_NOBITS, nothing to run
        _parse_objdump(tools.run_tool([objdump, "-Dr", "--no-show-raw-insn", "-j", name, str(path)],
                                      f"objdump -j {name} {path.name}"), insns)
    sizes = {s.name: s.size for s in sections}
    for section, lst in insns.items():
        for a, b in zip(lst, lst[1:]):
            a.next_addr = b.addr
        if lst:
            lst[-1].next_addr = max(sizes.get(section, 0), lst[-1].addr + 1)
    comdat = frozenset(str(i) for i in headers.comdat_sections())
    return ElfObject(path, symbols, sections, elf_symbols, relocs, insns, comdat)


def _elf_headers(path: Path):
    """The object's section headers and groups, read by grader/elf.py."""
    try:
        return elfheaders.read(path)
    except elfheaders.ElfError as e:
        raise GraderError(f"policy check: {e}", EXIT_INTERNAL) from None


def _parse_objdump(out: str, insns: dict) -> None:
    """objdump -d/-D output into insns (section -> [Insn])."""
    section, last = None, None
    for line in tools.lines(out):
        m = _OBJDUMP_SECTION.match(line)
        if m:
            section, last = m.group(1), None
            insns.setdefault(section, [])
            continue
        if section is None:
            continue
        m = _OBJDUMP_RELOC.match(line)
        if m and last is not None:
            offset, rtype, sym, sign, addend = m.groups()
            a = int(addend, 16) if addend else 0
            last.relocs.append(Reloc(int(offset, 16), rtype, sym, -a if sign == "-" else a))
            continue
        m = _OBJDUMP_INSN.match(line)
        if m:
            body, _, comment = m.group(2).partition("#")
            cm = _COMMENT_ADDR.match(comment) if comment else None
            last = Insn(section, int(m.group(1), 16), body.strip(),
                        int(cm.group(1), 16) if cm else None, [])
            insns[section].append(last)
