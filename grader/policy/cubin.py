"""The device code's ELF images (cubins), read from their bytes: the symbols each one takes from
outside itself and each kernel's attributes (.nv.info.<kernel>), which the device rule needs.

cuobjdump only extracts the images (`-xelf all`, the same in every version); nothing here reads
its listings. Two versions print the symbol table in two layouts (the GPU machines' cuobjdump
13.0 numerically, 13.5 by name), and a listing interleaves the object's PTX text, comments
included, with the attributes: a rule that reads the bytes depends on neither.

A cubin's attribute sections hold records of a 4-byte header (format, attribute, a 16-bit
field) and, for the format EIFMT_SVAL, as many bytes of value as that field says; for the
others the field is the value. The attributes read here, as cuobjdump names them:
  EIATTR_EXTERNS (0x0f)           u32 symbol indices: the functions the kernel calls outside the
                                  image (malloc, vprintf)
  EIATTR_KPARAM_INFO (0x17)       one per parameter: u32 index, u16 ordinal, u16 offset, u32
                                  flags whose bits 18-31 hold the parameter's size
  EIATTR_CBANK_PARAM_SIZE (0x19)  the parameters' size in constant bank 0 (a 16-bit value)
  EIATTR_PARAM_CBANK (0x0a)       u32 section symbol, u16 offset, u16 size: the same size
A section that does not parse whole refuses the object (CubinError): a rule must never read
"nothing" where it could not read.
"""

from __future__ import annotations

import dataclasses
import struct
import tempfile
from pathlib import Path

from grader import elf, runner
from grader.errors import GraderError, EXIT_INTERNAL
from grader.policy import tools

EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4
EIATTR_PARAM_CBANK = 0x0A
EIATTR_EXTERNS = 0x0F
EIATTR_KPARAM_INFO = 0x17
EIATTR_CBANK_PARAM_SIZE = 0x19
STT_OBJECT = 1
# Undefined data ptxas declares in honest images: the reserved shared memory's offset.
DRIVER_OBJECTS = (".nv.reservedSmem.",)
INFO_PREFIX = ".nv.info."
MAX_CUBINS = 64              # images in one object: nvcc makes one per architecture
MAX_CUBIN_BYTES = 64 << 20


class CubinError(Exception):
    """An image, or an attribute section of one, that could not be read whole."""


@dataclasses.dataclass(frozen=True)
class Cubin:
    name: str                # the file cuobjdump extracted it to (its architecture in the name)
    symbols: tuple           # (name, info, shndx, value) by index
    attributes: tuple        # (section name, ((format, attribute, value), ...)) of each
    #                          .nv.info and .nv.info.<kernel> section, in header order


def attributes(data: bytes, where: str = "attributes") -> list:
    """[(format, attribute, value)] of one attribute section: value is the bytes of an
    EIFMT_SVAL record and the 16-bit field's number for the others."""
    out, at = [], 0
    while at < len(data):
        if at + 4 > len(data):
            raise CubinError(f"{where}: a record's header runs past the section's end")
        fmt, attr, field = struct.unpack_from("<BBH", data, at)
        at += 4
        if fmt == EIFMT_SVAL:
            if at + field > len(data):
                raise CubinError(f"{where}: attribute {attr:#x}'s value runs past the "
                                 f"section's end")
            out.append((fmt, attr, data[at:at + field]))
            at += field
        elif fmt in (EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL):
            out.append((fmt, attr, field))
        else:
            raise CubinError(f"{where}: a record of unknown format {fmt:#x}")
    return out


def read_cubin(data: bytes, name: str = "cubin") -> Cubin:
    """The symbols and attribute sections of one image. CubinError when it is not an ELF file
    or a part the rules read does not parse."""
    try:
        image = elf.ElfFile(data, name)
        symbols = tuple(image.symbol_table())
        sections = [(s.name, attributes(image.section_data(s), f"{name}: {s.name}"))
                    for s in image.sections
                    if s.name == ".nv.info" or s.name.startswith(INFO_PREFIX)]
    except elf.ElfError as e:
        raise CubinError(str(e)) from None
    return Cubin(name, symbols, tuple((n, tuple(a)) for n, a in sections))


def extract(path: Path, tool: str) -> list:
    """[(file name, bytes)] of every ELF image in the object at `path` (cuobjdump -xelf all, in
    a private folder), in name order; [] when it holds no device code."""
    with tempfile.TemporaryDirectory(prefix="labs-cubins-") as name:   # 0700: this user's
        folder = Path(name)
        proc = runner.run([tool, "-xelf", "all", str(Path(path).resolve())], tools.TOOL_TIMEOUT_S,
                          cwd=str(folder), env=tools.cuda_tool_env(tool))
        if proc.timed_out:
            raise GraderError(f"policy check: cuobjdump -xelf did not finish within "
                              f"{tools.TOOL_TIMEOUT_S} s", EXIT_INTERNAL)
        if proc.returncode != 0:
            if "does not contain device code" in proc.output:
                return []
            raise GraderError(f"policy check: cuobjdump -xelf all {Path(path).name} failed: "
                              f"{tools.short(proc.output.strip(), 500)}", EXIT_INTERNAL)
        files = sorted(folder.iterdir())
        if len(files) > MAX_CUBINS:
            raise CubinError(f"{len(files)} device code images in one object")
        out = []
        for f in files:
            if f.is_symlink() or not f.is_file():
                raise CubinError(f"cuobjdump left {f.name}, not a file")
            if f.stat().st_size > MAX_CUBIN_BYTES:
                raise CubinError(f"the device code image {f.name} is larger than "
                                 f"{MAX_CUBIN_BYTES >> 20} MiB")
            out.append((f.name, f.read_bytes()))
        return out


def read_cubins(path: Path, tool: str) -> list:
    """Every image of the object at `path`, read (extract, read_cubin)."""
    return [read_cubin(data, name) for name, data in extract(path, tool)]


def external_calls(cubins: list) -> list:
    """The functions the device code calls outside itself, each once, in the order found: each
    image's undefined FUNC symbols, and the symbols its kernels' EIATTR_EXTERNS name."""
    names = []
    for c in cubins:
        for name, info, shndx, _ in c.symbols:
            # Every undefined symbol, whatever its type (a red team's image, round 17, declared
            # malloc with no type), but the driver's shared-memory offset that ptxas declares
            if (name and shndx == elf.SHN_UNDEF and name not in names
                    and not (info & 0xF == STT_OBJECT and name.startswith(DRIVER_OBJECTS))):
                names.append(name)
        for section, attrs in c.attributes:
            for fmt, attr, value in attrs:
                if attr != EIATTR_EXTERNS or fmt != EIFMT_SVAL:
                    continue
                if len(value) % 4:
                    raise CubinError(f"{c.name}: {section}: externs of {len(value)} bytes")
                for (index,) in struct.iter_unpack("<I", value):
                    if index >= len(c.symbols):
                        raise CubinError(f"{c.name}: {section}: an extern names symbol "
                                         f"{index}, past the symbol table")
                    name = c.symbols[index][0]
                    if name not in names:
                        names.append(name)
    return names


def param_sizes(cubins: list) -> dict:
    """{kernel: bytes of its parameters}: the end of its last parameter (EIATTR_KPARAM_INFO's
    offset and size), EIATTR_CBANK_PARAM_SIZE and EIATTR_PARAM_CBANK's size, which ptxas
    states alike (each where it states it; it leaves some out of some kernels); 0 for a
    kernel described with none. CubinError when they differ: an image whose sizes disagree is
    not nvcc's (a red team's, round 17, stated a larger CBANK_PARAM_SIZE than its parameters to
    read bank 0 past them)."""
    sizes = {}
    for c in cubins:
        for section, attrs in c.attributes:
            if not section.startswith(INFO_PREFIX):
                continue
            kernel = section[len(INFO_PREFIX):]
            stated, end = set(), None
            for fmt, attr, value in attrs:
                if attr == EIATTR_KPARAM_INFO and fmt == EIFMT_SVAL:
                    if len(value) < 12:
                        raise CubinError(f"{c.name}: {section}: a parameter's record of "
                                         f"{len(value)} bytes")
                    _index, _ordinal, offset, flags = struct.unpack_from("<IHHI", value)
                    end = max(end or 0, offset + (flags >> 18))
                elif attr == EIATTR_CBANK_PARAM_SIZE and fmt == EIFMT_HVAL:
                    stated.add(value)
                elif attr == EIATTR_PARAM_CBANK and fmt == EIFMT_SVAL:
                    if len(value) < 8:
                        raise CubinError(f"{c.name}: {section}: a parameter bank record of "
                                         f"{len(value)} bytes")
                    stated.add(struct.unpack_from("<IHH", value)[2])
            if end is not None:
                stated.add(end)
            if len(stated) > 1:
                raise CubinError(f"{c.name}: the kernel {kernel}'s attributes state "
                                 f"{len(stated)} sizes of its parameters "
                                 f"({', '.join(str(n) for n in sorted(stated))} bytes)")
            sizes[kernel] = max(sizes.get(kernel, 0), *stated, 0)
    return sizes


def described_twice(cubins: list) -> list:
    """The kernels with more than one .nv.info.<kernel> section among the images: the grader
    builds one image (one architecture), where each kernel has one; a second is an image the
    student's code added."""
    seen, twice = set(), []
    for c in cubins:
        for section, _ in c.attributes:
            if section.startswith(INFO_PREFIX):
                kernel = section[len(INFO_PREFIX):]
                if kernel in seen and kernel not in twice:
                    twice.append(kernel)
                seen.add(kernel)
    return twice
