"""The device rule: the kernels' machine code (SASS, read with cuobjdump -sass -res-usage) must not
use the instruction families a lab refuses (tensor cores, 16-bit and 8-bit floating point,
shared memory), and may call out of itself only into printf and assert (no device heap: the
ELF images' symbols, grader/policy/cubin.py); where cuobjdump is found (find_cuobjdump); and the findings kept beside the object
for a re-grading of the same code."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import tempfile
from pathlib import Path

from grader import elf, runner
from grader.buildbox import KEPT_FATBIN_SUFFIX
from grader.errors import EXIT_INTERNAL, EXIT_USAGE, GraderError
from grader.policy import cubin, demangle, tools
from grader.policy.rules import Violation
from grader.policy.tools import (DEFAULT_CUDA_ROOT, TOOL_OUTPUT_CAP, TOOL_TIMEOUT_S,
                                 ListingTooLarge, real, short)

# ---------------------------------------------------------------------------------------------
# Rule: device code (the kernels' SASS and resource usage, read with cuobjdump -sass -res-usage)
#
# A lab's [policy] forbid_device_instructions names the families refused in its kernels'
# machine code:
#   tensor_cores   every matrix-multiply-accumulate opcode: HMMA (wmma and mma.sync on half,
#                  bf16 and tf32), IMMA, BMMA, DMMA, HGMMA/IGMMA/BGMMA/QGMMA (wgmma), OMMA,
#                  and any later *MMA opcode
#   low_precision  packed half/bfloat16 math (HADD2, HMUL2, HFMA2, HMNMX2, HSETP2, HSET2, their
#                  .F32/.BF16_V2/.MMA forms; VHMNMX and MOVM), conversions to or from 16- and 8-bit floats
#                  (F2FP.*, F2F/I2F/F2I with an F16, BF16, E4M3, E5M2... type), and any opcode
#                  with such a type
#   half_arithmetic  arithmetic in 16-bit floats, where 16-bit inputs and outputs and the
#                  conversions between them and FP32 are allowed (lab 11: the tensor cores'
#                  inputs are 16-bit, every dot product, exponential and sum FP32): packed
#                  half/bfloat16 math (HFMA2, HADD2 but its .F32 form, the widening of a half
#                  that __half2float compiles to, HMUL2, HMNMX2, VHMNMX), the special-function
#                  unit on 16-bit values (MUFU.EX2.F16, ex2.approx.f16x2) and a tensor-core
#                  product accumulated in 16 bits (HMMA.16816.F16, HGMMA with an F16
#                  accumulator, a sparse one's too: HMMA.SP.16832.F16, round 33); comparisons
#                  (HSETP2, HSET2) and conversions (F2FP) stay allowed.
#                  A red team's lab 11 file, round 32, kept its points with a half-precision
#                  softmax and FP16 score sums within the bound, the latter only on inputs of
#                  unit scale, which it told apart from the large-score tests by their range
#   narrow_precision  products and conversions below 16-bit floats, where 16-bit tensor-core
#                  products are the lab's subject (labs 10 and 11: every product's inputs are
#                  FP16 or BF16): integer, binary and FP8 tensor-core products (IMMA, BMMA, QMMA,
#                  IGMMA, BGMMA, QGMMA, OMMA, any *MMA with an 8-bit or narrower type), dp4a and
#                  dp2a (IDP), and conversions to or from 8-bit or narrower types (F2FP, F2F, F2I,
#                  I2F, I2IP, F2IP with S8, U8, S4, U4, E4M3, E5M2...: what quantizes the inputs
#                  first; mma.sync on FP8 compiles to F2FP.F16.E4M3.UNPACK_B and an FP16 HMMA on
#                  sm_90). A red team's lab 11 file, round 36, took Q K^T on int8 tensor cores
#                  (per-row scales, inside the BF16 bound on unit-scale inputs)
#   shared_memory  any use of shared memory: the opcodes that read, write or update it (LDS,
#                  STS, LDSM, STSM, ATOMS, LDGSTS (cp.async), SYNCS and ARRIVES (mbarriers),
#                  UBLKCP/UBLKRED (cp.async.bulk), UTMALDG/UTMASTG/UTMAREDG (TMA), STAS and
#                  REDAS (st.async/red.async)); reading the shared window's base (S2R/S2UR/CS2R
#                  of SR_SWINHI, SR_SWINLO, SR_SWINSZ), which a generic pointer into shared
#                  memory needs (cvta.shared, map_shared_rank: the loads through it are plain LD
#                  and ST); asking what space an address is in (QSPC in every form:
#                  isspacep.shared, __isShared, and isspacep.global/.local, which find the window
#                  by search or by elimination); and static
#                  shared memory a kernel declares (cuobjdump -res-usage
#                  SHARED, less the 1 KiB that sm_90 and later reserve in every kernel of a
#                  file that uses shared memory, see _RESERVED_SMEM)
# What nvcc 13.0 emits for sm_90 (policy_fixtures/bad_device_*.cu): wmma on half ->
# HMMA.16816.F32; wmma tf32 -> HMMA.1684.F32.TF32; mma.sync tf32 -> HMMA.1688.F32.TF32; wmma
# s8 -> IMMA.16816.S8.S8; wmma double -> DMMA.8x8x4; __hfma2/__hadd2/__hmul2/__hmax2 ->
# HFMA2(.MMA), HADD2, HMUL2, HMNMX2; bf16 __hfma2 -> HFMA2.MMA.BF16_V2; __float2half ->
# F2FP.F16.F32.PACK_AB; __float2bfloat16 -> F2FP.BF16.F32.PACK_AB; __half2float ->
# HADD2.F32; __hlt -> HSETP2; __hle2 -> HSET2(.BF); __double2half -> F2F.F16.F64; int to half
# -> I2F.F16; half to int -> F2I.F16; fp8 -> F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C.
# Shared memory: __shared__ and extern __shared__ arrays -> STS, LDS(.64/.128); ld.shared /
# st.shared in inline PTX -> LDS, STS; atomicAdd/Max/CAS/Exch on shared -> ATOMS.*;
# ldmatrix/stmatrix -> LDSM/STSM.16.M88; __pipeline_memcpy_async -> LDGSTS.E.BYPASS.128;
# mbarrier.init/arrive -> SYNCS.EXCH.64, SYNCS.ARRIVE.TRANS64; cp.async.bulk -> UBLKCP;
# st.async -> STAS; a generic pointer from cvta.shared or cluster.map_shared_rank -> S2R
# SR_SWINHI, then LD.E/ST.E. Not shared memory: SR_CgaCtaId (read for cluster ranks too),
# __syncthreads (BAR.SYNC), warp shuffles (SHFL).
# Two exceptions: ptxas moves constants into registers with `HFMA2.MMA Rd, -RZ, RZ, imm, imm`
# (zero times zero plus a constant) in plain FP32 code; that form computes nothing and passes.
# And an instruction predicated on @!PT never runs (ptxas pads cp.async with `@!PT LDS RZ, [RZ]`):
# it passes.
# ---------------------------------------------------------------------------------------------


CUOBJDUMP_INSTALL = "scripts/install-deps"       # puts NVIDIA's wheel into build/tools/venv
TOOLS_VENV = Path(__file__).resolve().parents[2] / "build" / "tools" / "venv"

_SASS_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_SASS_TARGET = re.compile(r"^\s*code for sm_(\d+)")
_SASS_INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:\{\s*)?(?:(?P<pred>@!?U?P[0-9T]+)\s+)?"
                        r"(?P<op>[A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*(?P<operands>[^;]*);?")

def _instructions(sass: str):
    """(kernel, opcode, operands) of every instruction of a cuobjdump -sass listing that can run
    (a `@!PT` predicate never does), each with the name of the kernel it is in ('?' before
    any)."""
    for _, kernel, op, operands in _instructions_by_arch(sass):
        yield kernel, op, operands


# cuobjdump -res-usage: the architecture of each ELF, then per kernel "Function NAME:" and a line
# of its resources ("REG:48 STACK:0 SHARED:0 LOCAL:0 ...").
_RES_ARCH = re.compile(r"^\s*arch\s*=\s*sm_(\d+)")
_RES_FUNCTION = re.compile(r"^\s*Function\s+([^\s:]+)\s*:\s*$")
_RES_SHARED = re.compile(r"\bSHARED:(\d+)\b")
# sm_90 and later count 1 KiB of shared memory, reserved by the system, in SHARED of every kernel
# of a file that uses shared memory (a kernel with only extern __shared__, or none at all beside
# one that has some, shows SHARED:1024; __shared__ float s[64] shows 1280). Earlier GPUs do not.
_RESERVED_SMEM = 1024
_RESERVED_SMEM_FROM_SM = 90
# 16-bit and smaller types as SASS modifiers: F16, BF16, F16_V2, the packed vectors of the global
# atomics (REDG.E.ADD.F16x2.RN, ATOMG...BF16x4, REDG...F16x8: a red team's round 14), TF32, FP8
# (E4M3, UE8M0).
_LOW_TYPES = re.compile(r"^(?:B?F16(?:_V2|[xX]\d+)?|TF32|U?E\d+M\d+)$")
# A reduction whose element type is not in the instruction: the TMA's (cp.reduce.async.bulk.tensor
# -> UTMAREDG.1D.ADD) is a field of the tensor map, which may say F16 or BF16 (a red team's lab
# 05 file, round 15, filled one by hand). No lab needs it, so it counts as 16-bit everywhere.
_UNTYPED_REDUCTIONS = frozenset(("UTMAREDG",))
_HALF_OP = re.compile(r"^H[A-Z]+2$")                # HADD2 HMUL2 HFMA2 HMNMX2 HSETP2 HSET2
# 16-bit opcodes of other shapes: VHMNMX, Hopper's SIMD three-input half min/max (ptxas fuses two
# chained __hmin or __hmin2 into it, and its f16 form prints no type: a red team's, round 21), and
# any later VH* opcode; MOVM (movmatrix), which moves 16-bit matrix elements between a warp's
# registers in tensor-core fragment layouts. No FP32 kernel needs either.
_HALF_OTHER = re.compile(r"^(?:VH[A-Z0-9]+|MOVM)$")
_NUMBER = re.compile(r"^-?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?|inf|nan|"
                     r"\+INF|-INF|\+QNAN|-QNAN|0x[0-9a-f]+)$", re.I)
# Opcodes that address shared memory (the base opcode, before any modifier).
_SHARED_OPS = frozenset((
    "LDS", "STS", "LDSM", "STSM", "ATOMS", "REDS",   # loads, stores, matrices, atomics
    "LDGSTS", "LDGSTSBAR", "ARRIVES", "SYNCS",        # cp.async, mbarriers
    "UBLKCP", "UBLKRED", "UTMALDG", "UTMASTG", "UTMAREDG",  # bulk copies, TMA
    "STAS", "REDAS",                                  # st.async, red.async (cluster)
))
# Opcodes that read global memory other than by a load or an atomic: cp.async (LDGSTS), bulk
# copies (UBLKCP) and TMA loads (UTMALDG). The profile stage's sector counters see loads and
# atomics only, so a lab whose lesson reads them (lab 01: coalesced loads) refuses these: an
# uncoalesced matmul read all of its operands through cp.async beside one coalesced load (a red
# team's, round 28).
_ASYNC_COPY_OPS = frozenset(("LDGSTS", "UBLKCP", "UTMALDG"))
_SHARED_WINDOW = re.compile(r"\bSR_SWIN(?:HI|LO|SZ)\b")     # the shared window's base and size
_SPECIAL_READS = ("S2R", "S2UR", "CS2R")
# isspacep (QSPC): whether a generic address is in a space. .shared and .shared::cluster
# (QSPC.E.S, QSPC.E.D) let a kernel find the shared window by searching (a red team's lab 02 case
# scanned 4 GiB-aligned addresses with it, then tiled through the window with plain LD/ST); .global
# and .local (QSPC.E.G, QSPC.E.L) find it by elimination (round 8: an address that is neither,
# nor const or param, is shared). Every form is refused where shared memory is: no lab's kernel
# needs to ask.
_SPACE_QUERY = "QSPC"


def device_families(opcode: str, operands: str = "") -> tuple:
    """Every family of DEVICE_FAMILIES a SASS instruction belongs to, in that order (an empty
    tuple for none): a bulk copy-reduce of halves (UBLKRED.G.S.ADD.F16.RN) addresses shared
    memory AND computes in 16 bits, and a lab that allows the one must still refuse the other
    (a red team's lab 05 file, round 14, added halves through it where shared memory is allowed).
    `opcode` with its modifiers (HFMA2.MMA.BF16_V2), `operands` as cuobjdump prints them."""
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    found = []
    if base.endswith("MMA"):
        found.append("tensor_cores")
    if (base in _SHARED_OPS or base == _SPACE_QUERY
            or (base in _SPECIAL_READS and _SHARED_WINDOW.search(operands))):
        found.append("shared_memory")
    if base in _ASYNC_COPY_OPS:
        found.append("async_copy")
    if base == "HFMA2":
        ops = [o.strip() for o in operands.split(",")]
        if (len(ops) >= 4 and ops[1] in ("-RZ", "RZ") and ops[2] in ("-RZ", "RZ")
                and all(_NUMBER.match(o) for o in ops[3:])):
            return tuple(found)                      # a constant moved into a register
    if (_HALF_OP.match(base) or _HALF_OTHER.match(base) or base == "F2FP"
            or base in _UNTYPED_REDUCTIONS
            or any(_LOW_TYPES.match(m) for m in mods)):
        found.append("low_precision")
    if _half_arithmetic(base, mods):
        found.append("half_arithmetic")
    if (base in _NARROW_PRODUCTS or base == "IDP"
            or ((base.endswith("MMA") or base in _CONVERSIONS)
                and any(_NARROW_TYPES.match(m) for m in mods))):
        found.append("narrow_precision")
    return tuple(found)


# narrow_precision's opcodes: tensor-core products that only take integer, binary or 8-bit float
# inputs; the conversions; the types narrower than 16-bit floats (S8, U8, S4, U4, B1, E4M3,
# E5M2, E2M1, UE8M0...).
_NARROW_PRODUCTS = frozenset(("IMMA", "BMMA", "QMMA", "OMMA", "IGMMA", "BGMMA", "QGMMA"))
_CONVERSIONS = frozenset(("F2FP", "F2F", "F2I", "I2F", "I2FP", "F2IP", "I2IP", "I2I"))
_NARROW_TYPES = re.compile(r"^(?:[SU](?:8|4|2)|B1|U?E\d+M\d+)$")


# half_arithmetic's opcodes: packed 16-bit math but the widening HADD2.F32, the special-function
# unit on a 16-bit type, matrix products whose accumulator (the first type after the shape:
# HMMA.16816.F16, against HMMA.16816.F32 and HMMA.16816.F32.BF16) is 16-bit, and reductions
# and atomics that add 16-bit floats (atomicAdd on __half2, a bulk or TMA reduction).
_HALF_MATH = frozenset(("HFMA2", "HADD2", "HMUL2", "HMNMX2"))
_REDUCING = frozenset(("RED", "REDG", "REDAS", "ATOM", "ATOMG", "ATOMS", "UBLKRED"))


def _half_arithmetic(base: str, mods: list) -> bool:
    if base in _UNTYPED_REDUCTIONS:
        return True
    if base in _REDUCING:
        return any(_LOW_TYPES.match(m) for m in mods)
    if base in _HALF_MATH:
        return not (base == "HADD2" and "F32" in mods)
    if base.startswith("VH"):
        return True
    if base == "MUFU":
        return any(_LOW_TYPES.match(m) for m in mods)
    if base in ("HMMA", "HGMMA"):
        # the accumulator is the first type after the shape; a sparse product's SP comes first
        # (HMMA.SP.16832.F16: a red team's, round 33)
        dense = [m for m in mods if m != "SP"]
        return len(dense) >= 2 and dense[1] in ("F16", "BF16")
    return False


def device_family(opcode: str, operands: str = "") -> str | None:
    """The first of device_families, or None."""
    found = device_families(opcode, operands)
    return found[0] if found else None


def static_shared_bytes(shared: int, sm: int | None) -> int:
    """The static shared memory a kernel declares, from cuobjdump -res-usage's SHARED on GPU
    architecture sm (90 for sm_90a; None: not known), less what the system reserves."""
    if (sm is None or sm >= _RESERVED_SMEM_FROM_SM) and shared >= _RESERVED_SMEM:
        return shared - _RESERVED_SMEM
    return shared


def find_cuobjdump() -> str | None:
    """cuobjdump, in this order: PATH; the CUDA toolkit's bin/ beside the nvcc in use (PATH's,
    else /usr/local/cuda); NVIDIA's wheel (nvidia-cuda-cuobjdump, with nvidia-cuda-nvdisasm
    beside it) in the grader's tools venv (build/tools/venv, where scripts/install-deps puts
    it), then in this Python's environment. None when there is none."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    nvcc = shutil.which("nvcc") or os.path.join(DEFAULT_CUDA_ROOT, "bin", "nvcc")
    for bindir in dict.fromkeys([os.path.dirname(nvcc), os.path.dirname(real(nvcc))]):
        candidate = os.path.join(bindir, "cuobjdump")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    roots = [str(p) for p in sorted(TOOLS_VENV.glob("lib/python3*/site-packages"))]
    for root in dict.fromkeys(roots + _python_site_dirs()):
        for candidate in sorted(Path(root).glob("nvidia/cu*/bin/cuobjdump"), reverse=True):
            if os.access(candidate, os.X_OK) and (candidate.parent / "nvdisasm").is_file():
                return str(candidate)
    return None


def _python_site_dirs() -> list:
    """This Python's site-packages folders (where `pip install` puts a wheel)."""
    import site
    import sys
    dirs = list(getattr(site, "getsitepackages", lambda: [])())
    if hasattr(site, "getusersitepackages"):
        dirs.append(site.getusersitepackages())
    return dirs + [p for p in sys.path if p.endswith("site-packages")]


def _cuobjdump_missing(detail: str) -> GraderError:
    return GraderError(f"policy check: {detail}: this lab's device-code rule needs it (it reads "
                       f"your kernels' machine code); install it with: {CUOBJDUMP_INSTALL}",
                       EXIT_USAGE)


def _read_sass(path: Path) -> str:
    """cuobjdump -sass -res-usage of an object (each ELF's resource usage, then its SASS); ''
    when it holds no device code."""
    return _cuobjdump(path, "-sass", "-res-usage")


def _read_cubins(path: Path) -> list:
    """The object's ELF images, read from their bytes (cubin.read_cubins)."""
    tool = find_cuobjdump()
    if tool is None:
        raise _cuobjdump_missing("cuobjdump (the CUDA toolkit's, or NVIDIA's wheel "
                                 "nvidia-cuda-cuobjdump) was not found")
    return cubin.read_cubins(path, tool)


def _cuobjdump(path: Path, *flags: str) -> str:
    tool = find_cuobjdump()
    if tool is None:
        raise _cuobjdump_missing("cuobjdump (the CUDA toolkit's, or NVIDIA's wheel "
                                 "nvidia-cuda-cuobjdump) was not found")
    proc = runner.run([tool, *flags, str(path)], TOOL_TIMEOUT_S, cap=TOOL_OUTPUT_CAP,
                      env=tools.cuda_tool_env(tool))
    if proc.timed_out:
        raise GraderError(f"policy check: cuobjdump did not finish within {TOOL_TIMEOUT_S} s",
                          EXIT_INTERNAL)
    if proc.returncode != 0:
        if "does not contain device code" in proc.output:
            return ""
        if "nvdisasm" in proc.output:
            raise _cuobjdump_missing(f"{tool} cannot run without nvdisasm "
                                     f"({short(proc.output.strip(), 200)})")
        raise GraderError(f"policy check: cuobjdump {' '.join(flags)} {path.name} failed: "
                          f"{short(proc.output.strip(), 500)}", EXIT_INTERNAL)
    if proc.stdout_cut:
        raise ListingTooLarge(f"cuobjdump {' '.join(flags)}")
    return proc.stdout


_DEVICE_MESSAGES = {
    "tensor_cores": ("uses the tensor-core instruction {op} in kernel {kernel}: this lab is "
                     "about FP32 on CUDA cores, so tensor cores (wmma, mma.sync, wgmma) are not "
                     "allowed"),
    "low_precision": ("uses the 16-bit floating-point instruction {op} in kernel {kernel}: "
                      "this lab is about FP32 on CUDA cores, so half/bfloat16 (or 8-bit) math "
                      "and conversions to such types are not allowed"),
    "half_arithmetic": ("uses the 16-bit arithmetic instruction {op} in kernel {kernel}: in "
                        "this lab 16-bit floats are inputs, outputs and the tensor cores' "
                        "operands only; every dot product, exponential and sum is FP32 (convert "
                        "to float, or accumulate mma.sync in .f32)"),
    "narrow_precision": ("uses the narrow-precision instruction {op} in kernel {kernel}: in this "
                         "lab every product's inputs are 16-bit floats or wider, so integer, "
                         "binary and FP8 tensor-core products, dp4a and conversions to or from "
                         "8-bit types are not allowed"),
    "async_copy": ("uses the asynchronous copy instruction {op} in kernel {kernel}: this lab's "
                   "lesson is measured on your kernels' global loads (the profile stage counts "
                   "loads and atomics), so read global memory with loads, not cp.async, "
                   "cp.async.bulk or TMA"),
    "shared_memory": ("uses the shared-memory instruction {op} in kernel {kernel}: this lab "
                      "does not allow shared memory (no __shared__ or extern __shared__ arrays, "
                      "shared atomics, ld.shared/st.shared, ldmatrix, cp.async, mbarriers or "
                      "isspacep.shared)"),
}
_UNTYPED_REDUCTION_MESSAGE = (
    "uses the TMA reduction {op} in kernel {kernel}: its element type (16-bit floats among "
    "them) is in the tensor map, where the grader cannot read it, and this lab is about FP32 on "
    "CUDA cores, so it is not allowed; reduce with ordinary loads, stores and atomics")
_SHARED_WINDOW_MESSAGE = (
    "reads the shared-memory window ({op}) in kernel {kernel}: that makes a generic pointer "
    "into shared memory (cvta.shared, __cvta_shared_to_generic, map_shared_rank), and this lab "
    "does not allow shared memory")
_STATIC_SHARED_MESSAGE = (
    "declares {n} bytes of static shared memory (__shared__) in kernel {kernel} (cuobjdump "
    "-res-usage: SHARED:{total}): this lab does not allow shared memory")


# ---------------------------------------------------------------------------------------------
# Rule: what device code calls outside itself (every lab). Compiled as the labs compile it (whole
# program, no -rdc), device code can call out of itself only into what the driver links in at
# load time: the undefined functions of each ELF image's symbol table and the externs of its kernels'
# attributes, read from the image's bytes (grader/policy/cubin.py). printf
# (vprintf) and assert (__assertfail) are allowed. malloc, free and
# __cuda_syscall_aligned_malloc (malloc, free, new, delete and __nv_aligned_device_malloc in a
# kernel) are not: the device heap outlives a copy of the module, the one place where a kernel
# could keep data of its own from one graded call to the next (docs/threat-model.md), and no lab
# needs it. Any other such call is refused too: none has a place in these labs.
# What nvcc 13.0 emits for sm_90: printf -> vprintf; assert -> __assertfail; malloc and new ->
# malloc; free and delete -> free; __nv_aligned_device_malloc -> __cuda_syscall_aligned_malloc.
# ---------------------------------------------------------------------------------------------
DEVICE_CALLS_ALLOWED = ("vprintf", "__assertfail")
_HEAP_CALLS = ("malloc", "free", "__cuda_syscall_aligned_malloc")
_DEVICE_CALL_MESSAGE = "calls {name} in device code: {why}"
_HEAP_WHY = ("malloc, free, new and delete in a kernel allocate from the device heap, which "
             "outlives a call, so no lab allows them: use the buffers your launcher is given "
             "(a workspace where the lab has one), shared memory or registers")
_OTHER_WHY = ("device code in these labs may call only printf and assert outside itself")

# A call through an address held in a register that is not an outside function's (those are
# CALL.ABS, their target a relocation in bank 4 that the image's symbols name): a function pointer
# or a virtual call, CALL.REL with a register target. Its target is known only at run time, so it
# may be any code of the context, not only the file's own (a red team's lab 05 kernel, round 23,
# called an address it read from a buffer: policy ok, no symbol, no extern). No lab needs one.
_INDIRECT_CALL = re.compile(r"^U?R\d+\b")
_INDIRECT_CALL_MESSAGE = ("makes a call through a function pointer (or a virtual function), or "
                          "returns through an address kept in local memory (recursion, or a "
                          "__noinline__ function that calls another), in kernel {kernel} ({op} "
                          "{operands}): its target is known only at run time, so the policy "
                          "cannot read what it runs; call your device functions directly and "
                          "let them inline (templates or a switch choose among them)")


# And a return through an address that was kept in local memory: a non-inlined function that
# calls another (or itself) saves its return address (R20, R21) on the stack and reloads it with
# LDL right before its RET, and a run-time-indexed store into a local array can overwrite it, so
# that RET jumps to a value read from a buffer (a red team's recursive function, round 24: policy
# ok, no CALL through a register). Refused where, in the RET's own function (from the nearest
# CALL target or the kernel's start before it), the last instruction that writes the RET's
# register is an LDL. Nothing in the labs needs __noinline__ or recursion: nvcc inlines the rest.
_INSN_ADDRESS = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/")
_CALL_TARGET = re.compile(r"^(0x[0-9a-f]+)\b")
_DEST = re.compile(r"^(?:R(?P<n>\d+))\s*,")
_RET_TARGET = re.compile(r"^(R\d+)\b")


def _written(op: str, operands: str) -> set:
    """The registers an instruction writes, as far as its first operand says ("LDL.64 R20, ...":
    R20 and R21; "MOV R20, 0xe0": R20)."""
    m = _DEST.match(operands.strip())
    if not m:
        return set()
    parts = op.split(".")
    count = 4 if "128" in parts else 2 if ("64" in parts or "WIDE" in parts) else 1
    return {f"R{int(m.group('n')) + i}" for i in range(count)}


def _listings(sass: str) -> dict:
    """kernel -> [(address, op, operands)] of its instructions that can run, in listing order."""
    out, kernel = {}, "?"
    for line in tools.lines(sass):
        m = _SASS_FUNCTION.match(line)
        if m:
            kernel = m.group(1)
            continue
        m = _SASS_INSN.match(line)
        if m and m.group("pred") != "@!PT":
            out.setdefault(kernel, []).append((int(m.group(1), 16), m.group("op"),
                                               m.group("operands").strip()))
    return out


def _return_via_local(insns: list) -> tuple | None:
    """(op, operands) of the first RET whose register its own function last wrote with an LDL."""
    starts = {0}
    for _, op, operands in insns:
        if op.split(".")[0] == "CALL":
            m = _CALL_TARGET.match(operands)
            if m:
                starts.add(int(m.group(1), 16))
    for i, (address, op, operands) in enumerate(insns):
        m = _RET_TARGET.match(operands) if op.split(".")[0] == "RET" else None
        if not m:
            continue
        start = max(s for s in starts if s <= address)
        for prior_address, prior_op, prior_operands in reversed(insns[:i]):
            if prior_address < start:
                break
            if m.group(1) in _written(prior_op, prior_operands):
                if prior_op.split(".")[0] == "LDL":
                    return op, operands
                break
    return None


def _indirect_call_violations(sass: str) -> list:
    hits = {}
    for kernel, insns in _listings(sass).items():
        for _, op, operands in insns:
            parts = op.split(".")
            if parts[0] == "CALL" and "REL" in parts and _INDIRECT_CALL.match(operands):
                hits.setdefault(kernel, (op, operands))
        found = _return_via_local(insns)
        if found is not None:
            hits.setdefault(kernel, found)
    names = demangle.names(list(hits)) if hits else {}
    return [Violation("device", f"call through a pointer in {short(names.get(k, k), 100)}",
                      _INDIRECT_CALL_MESSAGE.format(kernel=short(names.get(k, k), 100), op=op,
                                                    operands=short(operands, 40)))
            for k, (op, operands) in hits.items()]


# ---------------------------------------------------------------------------------------------
# Rule (every lab): device code reads only the slots of constant bank 0 that honest code reads.
# The driver keeps its launch state in bank 0 beside the kernel's parameters (sm_90): among it
# %gridid, a 64-bit count of the grids launched in the context (c[0x0][0x30]), %envreg0..31
# (0x40-0xbc) and %current_graph_exec (0x190). A kernel that reads a slot whose value differs
# from one call to the next can tell a call that follows many others in the executor from the
# race check's replay, the first calls of a fresh process, and take a race-free path only there
# (a red team's lab 03 case, round 8, by %gridid). So the rule is an allow-list: what nvcc 13.0
# emits for honest sm_90 code, surveyed over every feature the labs, CUB, cooperative groups,
# clusters and the async copies use, and nothing else (docs/threat-model.md, "What a student can
# still do"). Two other ways reach any slot, so they are refused too: a read of bank 0 at an
# index held in a register (c[0x0][R4+0x30]: a parameter array indexed at run time, or a
# __grid_constant__ parameter's address moved back), and the parameters' generic address
# (c[0x0][0x198]: the address of a __grid_constant__ parameter that escapes, then a plain LD.E
# before it). These labs' launchers pass neither (pass such values in a buffer). (nvcc 13.0,
# sm_90: policy_fixtures/bad_device_launch_id.cu.)
# ---------------------------------------------------------------------------------------------
# A constant bank 0 operand: c[0x0][0x30], c[0x0][R4+0x30], c[0x0][RZ] (RZ and URZ read as 0:
# the offset alone says which slot, as ptxas writes blockDim.x's), c[0x0][-0x7e00] (offsets from
# 0x8000 are printed as signed 16-bit numbers: a parameter at 0x8200).
_BANK0 = re.compile(r"\bc\[0x0\]\[(?:(?P<reg>U?R(?:\d+|Z))\+?)?(?P<off>-?0x[0-9a-f]+)?\]")
# The bytes of bank 0 honest code reads, [start, end): blockDim and gridDim; the local window's
# base and the stack's top; the grid-sync workspace (%envreg1, %envreg2: this_grid().sync());
# cooperative groups' reserved shared memory slot; the __constant__ window's generic address;
# the cluster's geometry (this_cluster(), %clusterid, %nclusterid, %cluster_nctarank); the
# global memory descriptor and the parameters (0x210 to the largest parameter block's end).
_BANK0_ALLOWED = ((0x0, 0x18), (0x20, 0x2c), (0x44, 0x4c), (0x6c, 0x70), (0xd0, 0xd8),
                  (0x140, 0x168), (0x188, 0x18c), (0x208, 0x210))
# A kernel's parameters: from 0x210, as many bytes as its own (its image's .nv.info.<kernel>
# attributes, read from the bytes: cubin.param_sizes). A read past them (ld.param at a constant beyond the last
# parameter: what the driver left there from another launch) is refused. A kernel no image
# describes gets the largest parameter block (32764 bytes).
_PARAMS_AT = 0x210
_PARAMS_MOST = 0x8000 - 4
_LAUNCH_ID_SLOTS = range(0x30, 0x38)       # %gridid, 64 bits
_PARAM_ADDRESS_SLOTS = range(0x198, 0x1a0)  # the parameters' generic address
_LAUNCH_ID_MESSAGE = ("reads the grid's launch id (%gridid, c[0x0][0x30]) in {kernel}: it counts "
                      "the kernels launched before it, so a kernel could tell one graded call "
                      "from another (the race check's replay from a test) by it, and no lab "
                      "needs it")
_PARAM_ADDRESS_MESSAGE = ("takes the generic address of its parameters (a __grid_constant__ "
                          "parameter's address, c[0x0][0x198]) in {kernel}: the driver's values "
                          "beside them (the grid's launch id) can be read from it; use the "
                          "parameters by value")
_BANK0_INDEXED_MESSAGE = ("reads constant bank 0 at an index held in a register ({operand}) in "
                          "{kernel}: that can reach the driver's own values there (the grid's "
                          "launch id); index a kernel parameter array only with constants, or "
                          "pass the values in a buffer")
_BANK0_SLOT_MESSAGE = ("reads the driver's launch state ({operand}: a special register such as "
                       "%envreg, %current_graph_exec, %nsmid or %total_smem_size, or a "
                       "parameter slot past the kernel's own parameters) in {kernel}: a kernel "
                       "may read its parameters, its block and grid sizes and what CUDA's own "
                       "features read (cooperative groups, clusters), and nothing else the "
                       "driver keeps there, whose values can tell one graded call from another")


# Opcodes whose constant operand is a 64-bit value although no modifier says so: double math
# (DADD, DFMA, DMUL, DSETP, DMNMX...). ptxas 13.0 loads such constants with LDC.64 first, so none
# reads bank 0 directly today (red team rounds 17 and 22); counted as 8 bytes should a later
# ptxas fold them. (IMAD.WIDE's addend is 64-bit and its multiplier 32-bit: which one a constant
# is cannot be told from the opcode, so it stays 4, as ptxas 13.0 never folds either.)
_DOUBLE_OPS = re.compile(r"^D[A-Z]+$")


def _bank0_width(op: str) -> int:
    """Bytes an instruction reads from its constant operand: LDC.64 8, LDC.U8 1, DADD 8, LDC 4."""
    parts = op.split(".")
    for part, width in (("128", 16), ("64", 8), ("F64", 8), ("U16", 2), ("S16", 2), ("U8", 1),
                        ("S8", 1)):
        if part in parts:
            return width
    return 8 if _DOUBLE_OPS.match(parts[0]) else 4


_DESCRIBED_TWICE_MESSAGE = ("the device code describes the kernel {kernel} twice (two ELF images, "
                            "or two .nv.info sections, where nvcc makes one): its parameters "
                            "could not be read, so the object is refused")
_CUBIN_UNREAD_MESSAGE = ("the device code's ELF image could not be read ({why}), so what its "
                         "kernels call and the size of their parameters could not be checked")


def _described_twice_violations(cubins: list) -> list:
    kernels = cubin.described_twice(cubins)
    names = demangle.names(kernels) if kernels else {}
    return [Violation("device", f"listing of {short(names.get(k, k), 100)}",
                      _DESCRIBED_TWICE_MESSAGE.format(kernel=short(names.get(k, k), 100)))
            for k in kernels]


def _bank0_allowed(off: int, width: int, params: int) -> bool:
    if _PARAMS_AT <= off and off + width <= _PARAMS_AT + params:
        return True
    return any(start <= off and off + width <= end for start, end in _BANK0_ALLOWED)


# The architectures whose bank 0 layout the allow-list above was surveyed on (the course's
# H100 and H200). Elsewhere the driver's slots and the parameters sit at other offsets (the
# parameters from 0x160 on sm_75 to sm_89; the stack's top at 0x37c on sm_100 and sm_120), the
# list would refuse every honest kernel (a red team's, round 13: the reference of lab 02 on
# sm_75, 80, 89, 100 and 120), and only a read at an index held in a register is refused.
_BANK0_SURVEYED = (90,)


def _instructions_by_arch(sass: str):
    """(sm, kernel, opcode, operands) of every instruction that can run, as _instructions, with
    the architecture of the ELF it is in (None before any)."""
    sm, kernel = None, "?"
    for line in tools.lines(sass):
        m = _SASS_TARGET.match(line)
        if m:
            sm = int(m.group(1))
            continue
        m = _SASS_FUNCTION.match(line)
        if m:
            kernel = m.group(1)
            continue
        m = _SASS_INSN.match(line)
        if m and m.group("pred") != "@!PT":
            yield sm, kernel, m.group("op"), m.group("operands")


def _launch_id_violations(sass: str, params: dict | None = None) -> list:
    hits = []
    for sm, kernel, op, operands in _instructions_by_arch(sass):
        width = _bank0_width(op)
        own = (params or {}).get(kernel, _PARAMS_MOST)
        surveyed = sm is None or sm in _BANK0_SURVEYED
        for found in _BANK0.finditer(operands):
            reg = found.group("reg")
            off = int(found.group("off") or "0x0", 16) % 0x10000
            if reg is not None and reg not in ("RZ", "URZ"):
                hits.append((kernel, "indexed", found.group(0)))
            elif not surveyed or _bank0_allowed(off, width, own):
                continue
            elif off in _LAUNCH_ID_SLOTS:
                hits.append((kernel, "gridid", found.group(0)))
            elif off in _PARAM_ADDRESS_SLOTS:
                hits.append((kernel, "params", found.group(0)))
            else:
                hits.append((kernel, "slot", found.group(0)))
    names = demangle.names([k for k, _, _ in hits])
    out, seen = [], set()
    for kernel, kind, operand in hits:
        if (kernel, kind) in seen:
            continue
        seen.add((kernel, kind))
        shown = short(names.get(kernel, kernel), 100)
        if kind == "indexed":
            out.append(Violation("device", f"constant bank 0 by register in {shown}",
                                 _BANK0_INDEXED_MESSAGE.format(operand=operand, kernel=shown)))
        elif kind == "params":
            out.append(Violation("device", f"parameters' address in {shown}",
                                 _PARAM_ADDRESS_MESSAGE.format(kernel=shown)))
        elif kind == "slot":
            out.append(Violation("device", f"driver's launch state in {shown}",
                                 _BANK0_SLOT_MESSAGE.format(operand=operand, kernel=shown)))
        else:
            out.append(Violation("device", f"%gridid in {shown}",
                                 _LAUNCH_ID_MESSAGE.format(kernel=shown)))
    return out


# ---------------------------------------------------------------------------------------------
# Rule (every lab): device code reads no clock, timer or performance counter (%clock, %clock64,
# %clock_hi, %globaltimer and its halves, %pm0..7 and their 64-bit forms: S2R, S2UR or CS2R of
# SR_CLOCKLO/HI, SR_GLOBALTIMERLO/HI, SR_PM*). The race verdict comes from a replay under
# compute-sanitizer racecheck, which makes shared memory tens of times slower: a kernel that
# times its own accesses can tell the replay from graded calls and be racy only where nothing
# checks (05_reduction/race_sanitizer_by_device_clock kept its race points on an H200), and a
# kernel that reads a timer can tell ncu's replays (08_scan/lesson_profile_copy_by_timer). The
# harness does all timing, as the host rule already says for host code; no lab's kernel needs a
# clock (__nanosleep, which a look-back's back-off uses, reads none and stays allowed).
# (nvcc 13.0, sm_90: clock() and clock64() -> CS2R Rn, SR_CLOCKLO; %clock_hi -> S2UR SR_CLOCKHI;
# %globaltimer(_lo) -> CS2R/S2UR SR_GLOBALTIMERLO; %pm0 -> S2UR/CS2R SR_PM0.)
# ---------------------------------------------------------------------------------------------
_CLOCK_REGISTER = re.compile(r"\bSR_(?:CLOCK|GLOBALTIMER|PM)[A-Z0-9_]*\b")
_CLOCK_MESSAGE = ("reads the GPU's clock or timer ({operand}: clock(), clock64(), %globaltimer "
                  "or a performance counter) in kernel {kernel}: the harness does all timing, "
                  "and a kernel that times itself can tell a checked run (the race check's, "
                  "the profiler's) from a graded one, so device code may not read clocks "
                  "(__nanosleep is allowed)")


def _clock_violations(sass: str) -> list:
    hits = []
    for kernel, _, operands in _instructions(sass):
        found = _CLOCK_REGISTER.search(operands)
        if found:
            hits.append((kernel, found.group(0)))
    names = demangle.names([k for k, _ in hits]) if hits else {}
    out, seen = [], set()
    for kernel, operand in hits:
        if kernel in seen:
            continue                    # one finding per kernel: the first clock it reads
        seen.add(kernel)
        shown = short(names.get(kernel, kernel), 100)
        out.append(Violation("device", f"{operand} in {shown}",
                             _CLOCK_MESSAGE.format(operand=operand, kernel=shown)))
    return out


def _device_call_violations(cubins: list) -> list:
    out = []
    for name in cubin.external_calls(cubins):
        if name in DEVICE_CALLS_ALLOWED:
            continue
        why = _HEAP_WHY if name in _HEAP_CALLS else _OTHER_WHY
        out.append(Violation("device", f"{short(name, 100)} (device code)",
                             _DEVICE_CALL_MESSAGE.format(name=short(name, 100), why=why)))
    return out


# The device rule's findings for an object, kept beside it: reading the SASS is most of the
# policy check's time (seconds for a large kernel file), and a re-grading of unchanged code
# (the build reuses the object) need not repeat it. Keyed by everything the findings depend on:
# the object's bytes, the families refused, the policy check's code (every file of
# grader/policy/) and the cuobjdump used. The object and this file live in the grader's build
# folder, which the student's code never runs with access to (it is compiled, not run, there;
# the worker is sandboxed).
DEVICE_CACHE_SUFFIX = ".device-check.json"


def _device_cache_key(path: Path, families) -> str | None:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        h.update(repr(sorted(families)).encode())
        for code in sorted(Path(__file__).parent.glob("*.py")):
            h.update(code.read_bytes())
        tool = find_cuobjdump() or ""
        st = os.stat(tool) if tool else None
        h.update(f"{tool}:{st.st_size if st else 0}:{st.st_mtime_ns if st else 0}".encode())
        return h.hexdigest()
    except OSError:
        return None


# The one section of an object that holds its device code (grader/elf.py, FATBIN_SECTION).
# cuobjdump reads only the first section of that name in an object: a second one, a few zero bytes placed before nvcc's (`asm(
# ".section .nv_fatbin,...,unique,1")`, or a section attribute spelt the same), would leave the
# device rule and the kernels report nothing to read, while the linked worker holds nvcc's code
# after that padding, which the executor skips.
FATBIN_SECTION = elf.FATBIN_SECTION


# What nvcc puts there: one fatbin ({u32 magic, u16 version, u16 header size, u64 size of the
# rest}), from the section's first byte, where its label fatbinData is, to its end (up to 8 bytes
# of zeros). A top-level asm can add bytes to that same section ahead of nvcc's: a fatbin of the
# student's own that swallows nvcc's as the payload of one of its entries, which cuobjdump, the
# policy and the executor would all have read as the device code (a red team's, round 17, with
# hand-patched images that hid a malloc and a larger parameter block). So the section must be
# nvcc's alone.
_FATBIN_MAGIC = 0xBA55ED50
_FATBIN_LABEL = "fatbinData"
_FATBIN_NOT_NVCCS = ("the object's {section} section holds bytes other than nvcc's fatbin ({why}): "
                     "device code must be nvcc's own, whole, and nothing may be added to that "
                     "section (a section directive or attribute in the source)")


# And where the build sandbox kept the fatbin nvcc made of the same compile (grader/buildbox.py,
# --keep-fatbin: <object>.fatbin), the section must be that fatbin, byte for byte. The shape
# checks above then stop what the compare would, with a more precise reason; the compare stops
# what has nvcc's shape and is not nvcc's: nvcc's own fatbin asm skipped by assembler
# conditionals and another fatbin put under its label (red team round 18), or any trick not yet
# found that fills the section from the student's text. A second compile cannot stand in for
# the kept file: nvcc names internal device symbols after its process ID, so two compiles of one
# file differ.
_NOT_THE_KEPT_FATBIN = "they are not the fatbin nvcc compiled from your file"


def kept_fatbin(path: Path) -> Path:
    """Where the build sandbox kept nvcc's fatbin of the object at `path`."""
    return Path(str(path) + KEPT_FATBIN_SUFFIX)


def check_device_sections(path: Path, kept_required: bool = False) -> list:
    """A violation when the object has more than one section named .nv_fatbin, or one that
    holds anything but nvcc's fatbin (its label at the first byte, one fatbin to the end), or,
    with `kept_required` (a build in the sandbox), anything but the fatbin nvcc kept of the same
    compile (kept_fatbin); GraderError when that kept file is missing or unreadable (the build
    did not do what the grader expects: not a verdict on the student)."""
    try:
        image = elf.read(path)
        names = [s.name for s in image.sections]
    except elf.ElfError as e:
        return [Violation("device", FATBIN_SECTION, f"the object's sections could not be read "
                                                    f"({e}), so its device code was not checked")]
    count = names.count(FATBIN_SECTION)
    if count == 0:
        return []
    if count > 1:
        return [Violation("device", f"{count} {FATBIN_SECTION} sections",
                          f"the object has {count} sections named {FATBIN_SECTION} (a section "
                          f"directive or attribute of that name in the source): device code is "
                          f"compiled by nvcc into one, and the grader reads only that one")]
    section = image.sections[names.index(FATBIN_SECTION)]
    why = _fatbin_problem(image, section)
    if why is None and kept_required:
        why = _differs_from_kept(path, image.section_data(section))
    if why is None:
        return []
    return [Violation("device", FATBIN_SECTION,
                      _FATBIN_NOT_NVCCS.format(section=FATBIN_SECTION, why=why))]


def _fatbin_problem(image, section) -> str | None:
    try:
        labels = [value for name, _, shndx, value in image.symbol_table()
                  if name == _FATBIN_LABEL and shndx == section.index]
        data = image.section_data(section)
    except elf.ElfError as e:
        return f"it could not be read: {e}"
    if labels != [0]:
        return (f"nvcc's {_FATBIN_LABEL} is not at its first byte" if labels
                else f"no {_FATBIN_LABEL} label in it")
    if len(data) < 16:
        return "shorter than a fatbin's header"
    magic, _version, header, rest = struct.unpack_from("<IHHQ", data, 0)
    if magic != _FATBIN_MAGIC:
        return "no fatbin at its first byte"
    end = header + rest
    if end > len(data):
        return "the fatbin runs past the section's end"
    if len(data) - end >= 8 or any(data[end:]):
        return f"{len(data) - end} bytes after nvcc's fatbin"
    return None


def _differs_from_kept(path: Path, data: bytes) -> str | None:
    kept = kept_fatbin(path)
    try:
        fd = os.open(kept, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            want = f.read(len(data) + 1)
    except OSError as e:
        raise GraderError(f"the build did not keep nvcc's fatbin of {path.name} ({kept}: "
                          f"{e.strerror or e}), so its device code could not be checked: build "
                          f"again (a build folder from before the grader kept it?)",
                          EXIT_INTERNAL) from e
    # The section is the fatbin and up to 7 zero bytes (_fatbin_problem checked those).
    if not want or len(want) > len(data) or data[:len(want)] != want \
            or len(data) - len(want) >= 8 or any(data[len(want):]):
        return _NOT_THE_KEPT_FATBIN
    return None


def _harness_namespace_violations(sass: str) -> list:
    """Device functions in a namespace of the grading harness (labkit::, testing::,
    benchmark::), local ones included (a static or anonymous-namespace template kernel has no
    global symbol for the object rule to see): the profile stage reads the executor's own
    kernels by that name (labkit::) and leaves them out of the call's counters, so a kernel
    named so would do its work unseen. Every lab."""
    from grader.policy.rules import HARNESS_NAMESPACES
    functions = []
    for line in sass.splitlines():
        m = _SASS_FUNCTION.match(line)
        if m and m.group(1) not in functions:
            functions.append(m.group(1))
    names = demangle.names(functions) if functions else {}
    # Anywhere in the name, not only its outermost scope: a template kernel whose return type
    # is a harness type prints as 'labkit::Ret<float>::type k<float>(...)' (red team round 27).
    mention = re.compile(r"(?<![\w:])(" + "|".join(HARNESS_NAMESPACES) + r")::")
    # A name the demangler gives up on (c++filt stops at about 200 levels of template nesting;
    # ncu need not): the harness's names as source names in the mangled text (round 28).
    mangled = re.compile(r"(?<!\d)(" + "|".join(f"{len(n)}{n}" for n in HARNESS_NAMESPACES)
                         + r")(?=[A-Za-z_0-9])")
    out = []
    for f in functions:
        outer = demangle.outer_name(f)
        shown = short(names.get(f, f), 100)
        found = outer if outer in HARNESS_NAMESPACES else None
        if found is None:
            hit = mention.search(names.get(f, ""))
            found = hit.group(1) if hit else None
        if found is None and names.get(f, f) == f:        # not demangled
            hit = mangled.search(f)
            found = hit.group(1).lstrip("0123456789") if hit else None
        if found is not None:
            out.append(Violation("device", f"{shown} (namespace {found}::)",
                                 f"defines the device function {shown}, which names namespace "
                                 f"{found}::, the grading harness's: only your own code and "
                                 f"types may be defined and used in your kernels' names"))
    return out


def check_device_code(path: Path, families) -> list:
    """The device rule's violations in the object at `path` (families: the lab's
    forbid_device_instructions)."""
    return inspect_device_code(path, families)[0]


def inspect_device_code(path: Path, families) -> tuple:
    """(violations of the device rule, the kernels' resources) of the object at `path`, read
    once from cuobjdump -sass -res-usage and kept beside the object. Without device rules
    (`families` empty) and without cuobjdump: ([], None), the kernels not read."""
    if not families:
        # Only the report's table: never a reason to stop a grading.
        try:
            return _inspect(path, families) if find_cuobjdump() is not None else ([], None)
        except GraderError:
            return [], None
    return _inspect(path, families)


def _inspect(path: Path, families) -> tuple:
    key = _device_cache_key(path, families)
    cache = Path(str(path) + DEVICE_CACHE_SUFFIX)
    if key is not None:
        try:
            if not cache.is_symlink():
                data = json.loads(cache.read_text())
                if isinstance(data, dict) and data.get("key") == key \
                        and isinstance(data.get("kernels"), list):
                    return [Violation(*v) for v in data["violations"]], data["kernels"]
        except (OSError, ValueError, TypeError, KeyError):
            pass
    sass = _read_sass(path)
    found, kernels = _device_violations(sass, families), kernel_resources(sass)
    found += _indirect_call_violations(sass)
    found += _harness_namespace_violations(sass)
    found += _clock_violations(sass)
    if sass:
        try:
            cubins = _read_cubins(path)
        except cubin.CubinError as e:
            found.append(Violation("device", "device code image",
                                   _CUBIN_UNREAD_MESSAGE.format(why=short(str(e), 200))))
            found += _launch_id_violations(sass)
        else:
            found += _device_call_violations(cubins)
            found += _described_twice_violations(cubins)
            found += _launch_id_violations(sass, cubin.param_sizes(cubins))
    if key is not None:
        try:
            fd, tmp = tempfile.mkstemp(prefix=cache.name + ".", dir=cache.parent)
            with os.fdopen(fd, "w") as f:
                json.dump({"key": key, "violations": [[v.rule, v.symbol, v.message]
                                                      for v in found], "kernels": kernels}, f)
            os.replace(tmp, cache)
        except OSError:
            pass        # only a missed reuse next time
    return found, kernels


# ---------------------------------------------------------------------------------------------
# The kernels' resources, for every report (not a rule): per kernel and GPU architecture, the
# registers per thread, the static shared memory, the local memory per thread and the stack
# (cuobjdump -res-usage), and how many local loads and stores its machine code holds (LDL, STL:
# registers spilled by ptxas, or an array the kernel indexes at run time). What limits a
# kernel's occupancy and what every thread pays per access, the same on every machine that
# compiles for that architecture.
# ---------------------------------------------------------------------------------------------

_RES_FIELDS = re.compile(r"\b(REG|STACK|SHARED|LOCAL):(\d+)\b")
_LOCAL_OPS = {"LDL": "local_loads", "STL": "local_stores"}
MAX_KERNELS = 64        # per object, in a report: a file of hundreds of kernels is cut short
# Local memory reached without LDL/STL: the local window's base (c[0x0][0x20], c[0x0][0x24]),
# which makes a generic pointer into a thread's local memory (a local array whose address is
# taken, cvta.local, printf's argument buffer), and a write to the stack pointer R1 other than
# the entry's load of the stack's top from bank 0 (`LDC R1, c[0x0][0x28]`; 0x37c on sm_100
# and later): a frame made at run time (alloca). Both offsets are sm_90's: on sm_100 and later
# the window's base sits elsewhere (0x2f8), which this does not see. Honest kernels without
# local memory do neither; a red team's lab 02 kernels kept their tile in local memory through
# an alloca'd generic pointer and through cvta.local with STACK:0 and no LDL/STL (round 12).
_LOCAL_WINDOW = re.compile(r"\bc\[0x0\]\[0x2[04]\]")
_WRITES_R1 = re.compile(r"^R1\b")
_STACK_TOP = re.compile(r"^R1\s*,\s*c\[0x0\]\[0x[0-9a-f]+\]\s*$")   # 0x28; 0x37c on sm_100+


def kernel_resources(sass: str) -> list:
    """[{kernel, arch, registers, shared_bytes, local_bytes, stack_bytes, local_loads,
    local_stores, local_addressing, tensor_ops}] from cuobjdump -sass -res-usage output, in the
    order the kernels appear; `kernel` demangled, `shared_bytes` less what the system reserves
    (static_shared_bytes); `local_addressing`: instructions that reach local memory otherwise
    than by LDL/STL (_LOCAL_WINDOW, a write to R1 after the entry). At most MAX_KERNELS + 1
    rows: a row past MAX_KERNELS says the file has more kernels than a report lists."""
    rows, sm, res_kernel, sass_sm, sass_kernel = {}, None, None, None, None
    for line in tools.lines(sass):
        m = _RES_ARCH.match(line)
        if m:
            sm = int(m.group(1))
            continue
        m = _RES_FUNCTION.match(line)
        if m:
            res_kernel = m.group(1)
            continue
        if res_kernel is not None:
            fields = {k: int(v) for k, v in _RES_FIELDS.findall(line)}
            if "REG" in fields and (len(rows) <= MAX_KERNELS or (sm, res_kernel) in rows):
                row = rows.setdefault((sm, res_kernel), {"local_loads": 0, "local_stores": 0,
                                                         "local_addressing": 0, "tensor_ops": 0})
                row.update(registers=fields.get("REG", 0), local_bytes=fields.get("LOCAL", 0),
                           stack_bytes=fields.get("STACK", 0),
                           shared_bytes=static_shared_bytes(fields.get("SHARED", 0), sm))
            res_kernel = None
            continue
        m = _SASS_TARGET.match(line)
        if m:
            sass_sm = int(m.group(1))
            continue
        m = _SASS_FUNCTION.match(line)
        if m:
            sass_kernel = m.group(1)
            continue
        m = _SASS_INSN.match(line)
        if m and sass_kernel is not None and m.group("pred") != "@!PT":
            counter = _LOCAL_OPS.get(m.group("op").split(".")[0])
            row = rows.get((sass_sm, sass_kernel))
            operands = m.group("operands").strip()
            if counter is None and (_LOCAL_WINDOW.search(operands) or (
                    _WRITES_R1.match(operands) and not _STACK_TOP.match(operands))):
                counter = "local_addressing"
            if counter is None and "tensor_cores" in device_families(m.group("op"), operands):
                counter = "tensor_ops"
            if counter and row is not None:
                row[counter] += 1
    names = demangle.names([k for _, k in rows])
    out = []
    for (arch, kernel), row in rows.items():
        if "registers" not in row:
            continue                       # machine code without a resource line: not shown
        out.append({"kernel": short(names.get(kernel, kernel), 200),
                    "arch": f"sm_{arch}" if arch is not None else "?",
                    "registers": row["registers"], "shared_bytes": row["shared_bytes"],
                    "local_bytes": row["local_bytes"], "stack_bytes": row["stack_bytes"],
                    "local_loads": row["local_loads"], "local_stores": row["local_stores"],
                    "local_addressing": row["local_addressing"],
                    "tensor_ops": row["tensor_ops"]})
    return out


def _read_device_code(path: Path, families) -> list:
    return _device_violations(_read_sass(path), families)


def _device_violations(sass: str, families) -> list:
    hits, static, sm, res_kernel = [], [], None, None
    for line in tools.lines(sass):      # the resources' lines (cuobjdump -res-usage)
        m = _RES_ARCH.match(line)
        if m:
            sm = int(m.group(1))
            continue
        m = _RES_FUNCTION.match(line)
        if m:
            res_kernel = m.group(1)
            continue
        if res_kernel is not None:
            m = _RES_SHARED.search(line)
            total = int(m.group(1)) if m else 0
            if "shared_memory" in families and static_shared_bytes(total, sm) > 0:
                static.append((res_kernel, f"SHARED:{total}", "static_shared",
                               static_shared_bytes(total, sm)))
            res_kernel = None
    for kernel, op, operands in _instructions(sass):
        for family in device_families(op, operands):
            if family not in families:
                continue
            if family == "shared_memory":
                window = _SHARED_WINDOW.search(operands)
                if window:
                    hits.append((kernel, f"{op.split('.')[0]} {window.group(0)}",
                                 "shared_window", 0))
                    continue
            hits.append((kernel, op, family, 0))
    hits += static                      # after the instructions, which say more
    names = demangle.names([k for k, _, _, _ in hits])
    out, seen = [], set()
    for kernel, op, family, n in hits:
        # one finding per instruction and kernel; shared memory: per opcode (STS and STS.128
        # are one finding, the first shown)
        key = (kernel, op.split(".")[0] if family == "shared_memory" else op)
        if key in seen:
            continue
        seen.add(key)
        shown = short(names.get(kernel, kernel), 100)
        if family == "static_shared":
            message = _STATIC_SHARED_MESSAGE.format(n=n, total=op.split(":")[1], kernel=shown)
        elif family == "shared_window":
            message = _SHARED_WINDOW_MESSAGE.format(op=op, kernel=shown)
        elif family == "low_precision" and op.split(".")[0] in _UNTYPED_REDUCTIONS:
            message = _UNTYPED_REDUCTION_MESSAGE.format(op=op, kernel=shown)
        else:
            message = _DEVICE_MESSAGES[family].format(op=op, kernel=shown)
        out.append(Violation("device", f"{op} in {shown}", message))
    return out
