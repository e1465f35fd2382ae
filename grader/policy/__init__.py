"""Checks a student's compiled submission against the lab's policy before any of it runs.

Runs with no GPU, on the student's object file(s), source file(s) and the build's
compile_commands.json. Students may be hostile: they try to earn points without doing the
work, for instance by copying a cached answer inside the launcher, by replacing a function of
the harness or of the CUDA runtime with their own (interposition), by running code before the
worker's main() drops its privileges, or by pulling the hidden tests or the reference solution
into their file at compile time. Seven rules, each a `Violation.rule`:

  import       every undefined symbol of the object (what it calls or uses) must be on an
               allowlist: nvcc's launch machinery, the C++ runtime, printing, host math and a
               side-effect-free subset of the CUDA runtime (see rules.DEFAULT_ALLOW_IMPORTS).
  definition   no global definition that could replace or intercept something else in the
               worker: C-linkage functions, names reserved for the compiler, the C and C++
               libraries and CUDA, the harness's namespaces, the global operator new/delete;
               no definition, weak or strong, of a symbol the system libraries the worker
               links export (libstdc++, libc, libm, libgcc_s) unless it is a template
               instantiation; no weak definition in a namespace the student does not own
               outside a COMDAT section group.
  constructor  nothing runs before main() (or after it) except nvcc's own registration
               of the kernels and, for <iostream> with GCC 12 and older, std::ios_base::Init.
  syscall      no raw system call instruction in host code (it would bypass the import rule),
               in every section the linker places into executable memory.
  device       (per lab, [policy] forbid_device_instructions) no tensor-core instruction and
               no 16-bit (or 8-bit) floating-point math or conversion in the kernels' SASS
               (cuobjdump -sass): the labs teach FP32 on CUDA cores; where a lab asks
               (shared_memory), no shared memory either: no instruction that addresses it,
               no read of the shared window's base, no static __shared__ (-res-usage).
               In every lab: no call through a function pointer or virtual function (CALL.REL
               with a register target), no return through an address its function reloaded
               from local memory (recursion, a __noinline__ function that calls another);
               device code calls out of itself only into printf and assert
               (the undefined functions of its ELF images, cubin.py): no malloc, free, new or delete in a
               kernel (the device heap outlives a call).
  include      every file the source pulls in is the source itself, one of the lab's
               interface headers, or a system/toolkit header that is not a vendor or harness
               library header (see rules.DEFAULT_FORBID_INCLUDES).
  source       no directive that copies a file into the program at compile time (.incbin,
               #embed, the assembler's .include, or assembler macros that could spell them),
               and none that makes the assembler skip or repeat the compiler's own output
               (.if, .else, .endif, .rept, .end in a string: asm text, section names).

The import, definition, constructor and syscall rules read the objects (binutils: nm, readelf,
objdump, c++filt; section headers and groups with grader/elf.py); the device rule reads the
kernels' machine code with the CUDA toolkit's cuobjdump (see find_cuobjdump: when it is needed
and missing, the check cannot run and nothing is run). The include and source rules read the sources and run the compiler's
preprocessor with the exact compile command from compile_commands.json; they need no object,
so the grader may call check_submission(objects=[], ...) BEFORE building, so that a build
log can never show a student the lines of a file they should not have included.

Where each part lives (grader.policy is the entry: check_submission and the names below):
  rules.py             the policy as data (the default allow and forbid lists), PolicyRules (a
                       lab's [policy] table), Violation, PolicyResult
  object_rules.py      the import, definition, constructor and syscall rules
  source_rules.py      the include and source rules
  device.py            the device rule, and where cuobjdump is found
  cubin.py             the device code's ELF images read from their bytes: symbols, attributes
  elf_object.py        an object read with nm, readelf and objdump (and grader/elf.py)
  demangle.py          c++filt, and the outermost name read from a mangled symbol
  branches.py          machine code as control flow: branches, their targets, the walk from a
                       function through the code it reaches (the constructor rule)
  compile_commands.py  the student's compile command and the preprocessor runs made from it
  tools.py             running binutils: time limits, whole output

Odd input: a missing, empty or non-ELF object raises GraderError (the build produced
something the grader did not expect: not a verdict on the student); an ELF object with no
symbols is simply checked. A compile_commands of None skips the compiler-based parts of the
include and source rules (the source text itself is still checked). Every rule runs even
when an earlier one failed, so that a student sees every problem at once.
"""

from __future__ import annotations

import time
from pathlib import Path

from grader.policy.compile_commands import find_entry, preprocess_host
from grader.policy.compile_commands import load as load_compile_commands
from grader.policy.demangle import is_template_instance, outer_name
from grader.policy.device import (DEVICE_CACHE_SUFFIX, check_device_code, check_device_sections,
                                  device_family, find_cuobjdump, inspect_device_code,
                                  kernel_resources)
from grader.policy.elf_object import read_object
from grader.policy.object_rules import (check_constructors, check_definitions, check_imports,
                                        check_syscalls, library_exports)
from grader.policy.rules import DEVICE_FAMILIES, PolicyResult, PolicyRules, Violation
from grader.policy.source_rules import check_includes, check_source_text
from grader.policy.tools import TOOL_OUTPUT_CAP, ListingTooLarge, real

__all__ = ["DEVICE_CACHE_SUFFIX", "DEVICE_FAMILIES", "PolicyResult", "PolicyRules", "Violation",
           "check_submission", "device_family", "find_cuobjdump", "inspect_device_code",
           "is_template_instance", "kernel_resources", "library_exports", "outer_name"]

_RULE_ORDER = ("source", "include", "import", "definition", "constructor", "syscall",
               "device")


def check_submission(objects: list, sources: list, interface_headers: list,
                     compile_commands: Path | None, rules: PolicyRules,
                     sandbox: tuple = ()) -> PolicyResult:
    """Checks every rule on every object and source; see the module docstring. `sandbox`: the
    build sandbox's command prefix (the manifest's build_sandbox), through which every
    compiler run on a source goes, as its compile does."""
    start = time.monotonic()
    found, kernels = [], None
    allowed_headers = {real(h) for h in interface_headers}
    commands = load_compile_commands(compile_commands) if compile_commands else None
    for source in sources:
        source = Path(source)
        preprocessed = None
        if commands is not None:
            entry = find_entry(commands, source, compile_commands)
            entry["sandbox"] = list(sandbox)
            found += check_includes(source, entry, allowed_headers, rules)
            preprocessed = preprocess_host(entry)
        found += check_source_text(source, preprocessed)
    for obj in objects:
        try:
            elf = read_object(Path(obj))
            found += check_imports(elf, rules)
            found += check_definitions(elf, library_exports())
            found += check_constructors(elf)
            found += check_syscalls(elf)
            sections = check_device_sections(Path(obj), kept_required=bool(sandbox))
            found += sections
            # Device code that is not nvcc's alone is not read (cuobjdump may not parse it)
            device_found, device_kernels = (([], None) if sections else inspect_device_code(
                Path(obj), rules.forbid_device_instructions))
        except ListingTooLarge as e:
            # What is not read cannot be checked: a listing cut short is a refusal.
            found.append(Violation("device", Path(obj).name,
                                   f"{e.what} printed more than {TOOL_OUTPUT_CAP >> 20} MiB for "
                                   f"your compiled file, more than the policy check reads, so "
                                   f"not all of its code could be checked: make the file "
                                   f"smaller (fewer or smaller kernels, fewer unrolled copies)"))
            continue
        found += device_found
        if device_kernels is not None:
            kernels = (kernels or []) + device_kernels
    violations, seen = [], set()
    for v in sorted(found, key=lambda v: _RULE_ORDER.index(v.rule)):  # stable: keeps file order
        if (v.rule, v.symbol, v.message) not in seen:   # the same import in two objects: once
            seen.add((v.rule, v.symbol, v.message))
            violations.append(v)
    return PolicyResult(ok=not violations, violations=violations,
                        seconds=time.monotonic() - start, kernels=kernels)
