"""The device rule: the kernels' machine code (SASS, read with cuobjdump -sass) must not use the
instruction families a lab refuses (tensor cores, 16-bit and 8-bit floating point); where
cuobjdump is found (find_cuobjdump); and the findings kept beside the object for a re-grading
of the same code."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from grader import runner
from grader.errors import EXIT_INTERNAL, EXIT_USAGE, GraderError
from grader.policy import demangle
from grader.policy.rules import Violation
from grader.policy.tools import (DEFAULT_CUDA_ROOT, TOOL_OUTPUT_CAP, TOOL_TIMEOUT_S, real,
                                 short)

# ---------------------------------------------------------------------------------------------
# Rule: device code (the kernels' SASS, read with cuobjdump -sass)
#
# The labs teach FP32 on CUDA cores. A lab's [policy] forbid_device_instructions names the
# families refused in its kernels' machine code:
#   tensor_cores   every matrix-multiply-accumulate opcode: HMMA (wmma and mma.sync on half,
#                  bf16 and tf32), IMMA, BMMA, DMMA, HGMMA/IGMMA/BGMMA/QGMMA (wgmma), OMMA,
#                  and any later *MMA opcode
#   low_precision  packed half/bfloat16 math (HADD2, HMUL2, HFMA2, HMNMX2, HSETP2, HSET2, their
#                  .F32/.BF16_V2/.MMA forms), conversions to or from 16- and 8-bit floats
#                  (F2FP.*, F2F/I2F/F2I with an F16, BF16, E4M3, E5M2... type), and any opcode
#                  with such a type
# What nvcc 13.0 emits for sm_90 (policy_fixtures/bad_device_*.cu): wmma on half ->
# HMMA.16816.F32; wmma tf32 -> HMMA.1684.F32.TF32; mma.sync tf32 -> HMMA.1688.F32.TF32; wmma
# s8 -> IMMA.16816.S8.S8; wmma double -> DMMA.8x8x4; __hfma2/__hadd2/__hmul2/__hmax2 ->
# HFMA2(.MMA), HADD2, HMUL2, HMNMX2; bf16 __hfma2 -> HFMA2.MMA.BF16_V2; __float2half ->
# F2FP.F16.F32.PACK_AB; __float2bfloat16 -> F2FP.BF16.F32.PACK_AB; __half2float ->
# HADD2.F32; __hlt -> HSETP2; __hle2 -> HSET2(.BF); __double2half -> F2F.F16.F64; int to half
# -> I2F.F16; half to int -> F2I.F16; fp8 -> F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C.
# One exception: ptxas moves constants into registers with `HFMA2.MMA Rd, -RZ, RZ, imm, imm`
# (zero times zero plus a constant) in plain FP32 code; that form computes nothing and passes.
# ---------------------------------------------------------------------------------------------


CUOBJDUMP_INSTALL = "scripts/install-deps"       # puts NVIDIA's wheel into build/tools/venv
TOOLS_VENV = Path(__file__).resolve().parents[2] / "build" / "tools" / "venv"

_SASS_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_SASS_INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:\{\s*)?(?:@!?U?P[0-9T]+\s+)?"
                        r"([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*([^;]*);?")
_LOW_TYPES = re.compile(r"^(?:B?F16(?:_V2)?|TF32|U?E\d+M\d+)$")
_HALF_OP = re.compile(r"^H[A-Z]+2$")                # HADD2 HMUL2 HFMA2 HMNMX2 HSETP2 HSET2
_NUMBER = re.compile(r"^-?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?|inf|nan|"
                     r"\+INF|-INF|\+QNAN|-QNAN|0x[0-9a-f]+)$", re.I)


def device_family(opcode: str, operands: str = "") -> str | None:
    """The family of DEVICE_FAMILIES a SASS instruction belongs to, or None.
    `opcode` with its modifiers (HFMA2.MMA.BF16_V2), `operands` as cuobjdump prints them."""
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    if base.endswith("MMA"):
        return "tensor_cores"
    if base == "HFMA2":
        ops = [o.strip() for o in operands.split(",")]
        if (len(ops) >= 4 and ops[1] in ("-RZ", "RZ") and ops[2] in ("-RZ", "RZ")
                and all(_NUMBER.match(o) for o in ops[3:])):
            return None                              # a constant moved into a register
    if _HALF_OP.match(base) or base == "F2FP" or any(_LOW_TYPES.match(m) for m in mods):
        return "low_precision"
    return None


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
    """cuobjdump -sass of an object; '' when it holds no device code."""
    tool = find_cuobjdump()
    if tool is None:
        raise _cuobjdump_missing("cuobjdump (the CUDA toolkit's, or NVIDIA's wheel "
                                 "nvidia-cuda-cuobjdump) was not found")
    bindir = os.path.dirname(tool)
    env = {"LC_ALL": "C", "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    proc = runner.run([tool, "-sass", str(path)], TOOL_TIMEOUT_S, cap=TOOL_OUTPUT_CAP, env=env)
    if proc.timed_out:
        raise GraderError(f"policy check: cuobjdump did not finish within {TOOL_TIMEOUT_S} s",
                          EXIT_INTERNAL)
    if proc.returncode != 0:
        if "does not contain device code" in proc.output:
            return ""
        if "nvdisasm" in proc.output:
            raise _cuobjdump_missing(f"{tool} cannot run without nvdisasm "
                                     f"({short(proc.output.strip(), 200)})")
        raise GraderError(f"policy check: cuobjdump -sass {path.name} failed: "
                          f"{short(proc.output.strip(), 500)}", EXIT_INTERNAL)
    return proc.stdout


_DEVICE_MESSAGES = {
    "tensor_cores": ("uses the tensor-core instruction {op} in kernel {kernel}: this lab is "
                     "about FP32 on CUDA cores, so tensor cores (wmma, mma.sync, wgmma) are not "
                     "allowed"),
    "low_precision": ("uses the 16-bit floating-point instruction {op} in kernel {kernel}: "
                      "this lab is about FP32 on CUDA cores, so half/bfloat16 (or 8-bit) math "
                      "and conversions to such types are not allowed"),
}


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


def check_device_code(path: Path, families) -> list:
    key = _device_cache_key(path, families)
    cache = Path(str(path) + DEVICE_CACHE_SUFFIX)
    if key is not None:
        try:
            if not cache.is_symlink():
                data = json.loads(cache.read_text())
                if isinstance(data, dict) and data.get("key") == key:
                    return [Violation(*v) for v in data["violations"]]
        except (OSError, ValueError, TypeError, KeyError):
            pass
    found = _read_device_code(path, families)
    if key is not None:
        try:
            fd, tmp = tempfile.mkstemp(prefix=cache.name + ".", dir=cache.parent)
            with os.fdopen(fd, "w") as f:
                json.dump({"key": key, "violations": [[v.rule, v.symbol, v.message]
                                                      for v in found]}, f)
            os.replace(tmp, cache)
        except OSError:
            pass        # only a missed reuse next time
    return found


def _read_device_code(path: Path, families) -> list:
    sass = _read_sass(path)
    hits, kernel = [], "?"
    for line in sass.splitlines():
        m = _SASS_FUNCTION.match(line)
        if m:
            kernel = m.group(1)
            continue
        m = _SASS_INSN.match(line)
        if not m:
            continue
        family = device_family(m.group(2), m.group(3))
        if family in families:
            hits.append((kernel, m.group(2), family))
    names = demangle.names([k for k, _, _ in hits])
    out, seen = [], set()
    for kernel, op, family in hits:
        if (kernel, op) in seen:
            continue
        seen.add((kernel, op))
        shown = short(names.get(kernel, kernel), 100)
        out.append(Violation("device", f"{op} in {shown}",
                             _DEVICE_MESSAGES[family].format(op=op, kernel=shown)))
    return out
