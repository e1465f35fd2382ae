"""The parts of an ELF file the grader reads itself, with the standard library only: section
headers (names, flags, COMDAT section groups), program headers (what the loader maps and
how), and a linked program's symbol tables and the libraries it needs. The policy (grader/policy/) reads symbols, relocations and instructions with binutils;
what is here is what those tools print ambiguously or not at all (a section name with spaces,
which sections a COMDAT group holds, the permissions of a linked program's segments).

Every read checks its bounds: a truncated or malformed file raises ElfError, never a wrong
answer."""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

# Section types and flags (ELF gABI).
SHT_SYMTAB, SHT_STRTAB, SHT_DYNAMIC, SHT_NOBITS, SHT_DYNSYM, SHT_GROUP = 2, 3, 6, 8, 11, 17
DT_NULL, DT_NEEDED = 0, 1
SHN_UNDEF = 0
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
GRP_COMDAT = 0x1
# Program header types and flags.
PT_LOAD = 1
PT_GNU_STACK = 0x6474E551
PF_X, PF_W, PF_R = 0x1, 0x2, 0x4

MAX_HEADERS = 1 << 20      # more section or program headers than this: not a file we made


class ElfError(Exception):
    """Not an ELF file, or one whose headers do not fit in it."""


@dataclasses.dataclass(frozen=True)
class Section:
    index: int
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int = 0      # sh_link: a symbol table's or dynamic section's string table

    @property
    def alloc(self) -> bool:
        return bool(self.flags & SHF_ALLOC)

    @property
    def execinstr(self) -> bool:
        return bool(self.flags & SHF_EXECINSTR)


@dataclasses.dataclass(frozen=True)
class Segment:
    type: int
    flags: int

    def perms(self) -> str:
        return "".join(c if self.flags & bit else "-"
                       for c, bit in (("R", PF_R), ("W", PF_W), ("X", PF_X)))


class ElfFile:
    """Headers of one ELF file, read once."""

    def __init__(self, data: bytes, where: str = "ELF file"):
        self.where = where
        if len(data) < 16 or data[:4] != b"\x7fELF":
            raise ElfError(f"{where}: not an ELF file")
        klass, endian = data[4], data[5]
        if klass not in (1, 2) or endian not in (1, 2):
            raise ElfError(f"{where}: unknown ELF class or byte order")
        self._data = data
        self._e = "<" if endian == 1 else ">"
        self.is64 = klass == 2
        if self.is64:
            fields = self._unpack("HHIQQQIHHHHHH", 16)
        else:
            fields = self._unpack("HHIIIIIHHHHHH", 16)
        (self.e_type, self.machine, _version, _entry, phoff, shoff, _flags, _ehsize,
         phentsize, phnum, shentsize, shnum, shstrndx) = fields
        self.sections = self._read_sections(shoff, shentsize, shnum, shstrndx)
        self.segments = self._read_segments(phoff, phentsize, phnum)

    # -- raw reads ----------------------------------------------------------------------------

    def _unpack(self, fmt: str, offset: int) -> tuple:
        fmt = self._e + fmt
        size = struct.calcsize(fmt)
        if offset < 0 or offset + size > len(self._data):
            raise ElfError(f"{self.where}: truncated (a header at {offset:#x} runs past the end)")
        return struct.unpack_from(fmt, self._data, offset)

    def _bytes(self, offset: int, size: int) -> bytes:
        if offset < 0 or size < 0 or offset + size > len(self._data):
            raise ElfError(f"{self.where}: truncated (data at {offset:#x}+{size:#x} runs past "
                           f"the end)")
        return self._data[offset:offset + size]

    def _read_sections(self, shoff: int, shentsize: int, shnum: int, shstrndx: int) -> list:
        if shoff == 0:
            return []
        want = 64 if self.is64 else 40
        if shentsize < want:
            raise ElfError(f"{self.where}: section header entries of {shentsize} bytes")
        fmt = "IIQQQQIIQQ" if self.is64 else "IIIIIIIIII"
        if shnum == 0:                       # more than 0xff00 sections: count in entry 0
            shnum = self._unpack(fmt, shoff)[5]
        if shstrndx == 0xFFFF:               # SHN_XINDEX: index in entry 0's sh_link
            shstrndx = self._unpack(fmt, shoff)[6]
        if shnum > MAX_HEADERS:
            raise ElfError(f"{self.where}: {shnum} section headers")
        raw = [self._unpack(fmt, shoff + i * shentsize) for i in range(shnum)]
        if not 0 <= shstrndx < shnum:
            raise ElfError(f"{self.where}: no section name table")
        strtab = raw[shstrndx]
        names = self._bytes(strtab[4], strtab[5]) if strtab[1] != 8 else b""   # 8: NOBITS
        out = []
        for i, (name, stype, flags, _addr, offset, size, *_rest) in enumerate(raw):
            if name >= len(names) and name != 0:
                raise ElfError(f"{self.where}: section {i}'s name is outside the name table")
            end = names.find(b"\0", name)
            text = names[name:end if end >= 0 else len(names)].decode("utf-8", "replace")
            out.append(Section(i, text, stype, flags, offset, size, _rest[0]))
        return out

    def _read_segments(self, phoff: int, phentsize: int, phnum: int) -> list:
        if phoff == 0 or phnum == 0:
            return []
        want = 56 if self.is64 else 32
        if phentsize < want:
            raise ElfError(f"{self.where}: program header entries of {phentsize} bytes")
        if phnum > MAX_HEADERS:
            raise ElfError(f"{self.where}: {phnum} program headers")
        out = []
        for i in range(phnum):
            if self.is64:
                ptype, pflags = self._unpack("II", phoff + i * phentsize)
            else:
                ptype, _o, _v, _p, _fs, _ms, pflags = self._unpack("IIIIIII",
                                                                    phoff + i * phentsize)
            out.append(Segment(ptype, pflags))
        return out

    # -- what the grader asks -------------------------------------------------------------------

    def comdat_sections(self) -> set:
        """Indices of the sections that are members of a COMDAT section group."""
        members = set()
        for s in self.sections:
            if s.type != SHT_GROUP:
                continue
            if s.size % 4 or s.size < 4:
                raise ElfError(f"{self.where}: section group {s.name!r} of {s.size} bytes")
            words = struct.unpack(f"{self._e}{s.size // 4}I", self._bytes(s.offset, s.size))
            if words[0] & GRP_COMDAT:
                members.update(w for w in words[1:])
        return members


    def _strings(self, index: int) -> bytes:
        if not 0 <= index < len(self.sections) or self.sections[index].type != SHT_STRTAB:
            raise ElfError(f"{self.where}: section {index} is not a string table")
        t = self.sections[index]
        return self._bytes(t.offset, t.size)

    def _string(self, table: bytes, at: int) -> str:
        if at >= len(table) and at != 0:
            raise ElfError(f"{self.where}: a name at {at} is outside its string table")
        end = table.find(b"\0", at)
        return table[at:end if end >= 0 else len(table)].decode("utf-8", "replace")

    def needed_libraries(self) -> list:
        """The DT_NEEDED entries of the dynamic section (the libraries the loader loads with
        it), in order; empty for a static program or an object."""
        out = []
        for sec in self.sections:
            if sec.type != SHT_DYNAMIC:
                continue
            names = self._strings(sec.link)
            fmt, size = ("qQ", 16) if self.is64 else ("iI", 8)
            for at in range(sec.offset, sec.offset + sec.size - size + 1, size):
                tag, value = self._unpack(fmt, at)
                if tag == DT_NULL:
                    break
                if tag == DT_NEEDED:
                    out.append(self._string(names, value))
        return out

    def symbols(self) -> list:
        """(name, defined) of every named entry of .symtab and .dynsym."""
        out = []
        for sec in self.sections:
            if sec.type not in (SHT_SYMTAB, SHT_DYNSYM):
                continue
            names = self._strings(sec.link)
            fmt, size = ("IBBHQQ", 24) if self.is64 else ("IIIBBH", 16)
            for at in range(sec.offset, sec.offset + sec.size - size + 1, size):
                fields = self._unpack(fmt, at)
                name, shndx = fields[0], (fields[3] if self.is64 else fields[5])
                if name:
                    out.append((self._string(names, name), shndx != SHN_UNDEF))
        return out

    def symbol_table(self) -> list:
        """[(name, info, shndx, value)] of every entry of the .symtab sections, in index order
        (the null entry 0 included): where other sections refer to symbols by number (a cubin's
        attributes). info = bind << 4 | type."""
        out = []
        for sec in self.sections:
            if sec.type != SHT_SYMTAB:
                continue
            names = self._strings(sec.link)
            fmt, size = ("IBBHQQ", 24) if self.is64 else ("IIIBBH", 16)
            if sec.size % size:
                raise ElfError(f"{self.where}: a symbol table of {sec.size} bytes")
            for at in range(sec.offset, sec.offset + sec.size, size):
                fields = self._unpack(fmt, at)
                if self.is64:
                    name, info, shndx, value = fields[0], fields[1], fields[3], fields[4]
                else:
                    name, info, shndx, value = fields[0], fields[3], fields[5], fields[1]
                out.append((self._string(names, name), info, shndx, value))
        return out

    def section_data(self, section: Section) -> bytes:
        """The bytes of `section` (empty for SHT_NOBITS)."""
        return b"" if section.type == SHT_NOBITS else self._bytes(section.offset, section.size)

    def imports(self) -> set:
        """The names the program takes from its libraries: undefined in .dynsym."""
        out = set()
        for sec in self.sections:
            if sec.type != SHT_DYNSYM:
                continue
            names = self._strings(sec.link)
            size = 24 if self.is64 else 16
            for at in range(sec.offset, sec.offset + sec.size - size + 1, size):
                fields = self._unpack("IBBHQQ" if self.is64 else "IIIBBH", at)
                name, shndx = fields[0], (fields[3] if self.is64 else fields[5])
                if name and shndx == SHN_UNDEF:
                    out.add(self._string(names, name))
        return out


# The section that holds an object's device code (nvcc's fatbin), as the linker merges it and
# the executor loads it (common/src/executor.cpp, extract_fatbin).
FATBIN_SECTION = ".nv_fatbin"


def section_bytes(path: Path, name: str) -> list:
    """The contents of every section named `name` in the ELF file at `path`, in header order
    (SHT_NOBITS sections: empty). ElfError when the file or a section does not fit."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ElfError(f"{path}: cannot be read ({e.strerror})") from None
    headers = ElfFile(data, str(path))
    out = []
    for s in headers.sections:
        if s.name != name:
            continue
        if s.type == SHT_NOBITS:
            out.append(b"")
            continue
        if s.offset < 0 or s.size < 0 or s.offset + s.size > len(data):
            raise ElfError(f"{path}: section {name} does not fit in the file")
        out.append(data[s.offset:s.offset + s.size])
    return out


def read(path: Path) -> ElfFile:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ElfError(f"{path}: cannot be read ({e.strerror})") from None
    return ElfFile(data, str(path))


# What GNU ld's default linker script (ld --verbose) puts into the executable output sections
# .init, .plt, .text and .fini: a section of one of these names lands in code that can run,
# whatever flags its object gave it (a `.section .text.foo,"a"` is placed in .text).
LINKER_CODE_NAMES = (".init", ".fini", ".plt", ".iplt", ".plt.got", ".plt.sec", ".text",
                     ".stub", ".gnu.warning")
LINKER_CODE_PREFIXES = (".text.", ".gnu.linkonce.t.", ".init.", ".fini.")


def lands_in_code(section: Section) -> bool:
    """True when the linker would place this section of an object into executable memory:
    flagged SHF_EXECINSTR, or allocated with a name the linker script puts into code."""
    if section.execinstr:
        return True
    return section.alloc and (section.name in LINKER_CODE_NAMES
                              or section.name.startswith(LINKER_CODE_PREFIXES))


def executable_memory_problems(path: Path) -> list:
    """What in a linked program asks for memory that is both writable and executable: an
    executable stack (PT_GNU_STACK with PF_X, or no PT_GNU_STACK at all, which the loader
    takes as an executable stack) and PT_LOAD segments mapped writable and executable.
    One sentence per problem; empty when there is none."""
    f = read(path)
    out = []
    stacks = [s for s in f.segments if s.type == PT_GNU_STACK]
    if not stacks:
        out.append("it has no PT_GNU_STACK program header, so the loader gives it an "
                   "executable stack")
    elif any(s.flags & PF_X for s in stacks):
        out.append("its PT_GNU_STACK program header asks for an executable stack (an object "
                   "with an executable .note.GNU-stack section, or none, does that)")
    for i, s in enumerate(f.segments):
        if s.type == PT_LOAD and s.flags & PF_W and s.flags & PF_X:
            out.append(f"its program header {i} (PT_LOAD) maps memory both writable and "
                       f"executable ({s.perms()})")
    return out
