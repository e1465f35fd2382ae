"""The rules read from the compiled object: imports, definitions, code that runs before (or
after) main(), raw system calls (the module docstring of grader/policy/__init__.py says what
each refuses and why)."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil

from grader import runner
from grader.errors import EXIT_INTERNAL, EXIT_USAGE, GraderError
from grader.policy import tools
from grader.policy.branches import branch, syscall_instruction, targets, walk
from grader.policy.demangle import GLOBAL_OPERATORS, is_template_instance, outer_name
from grader.policy.elf_object import ElfObject, Sym
from grader.policy.rules import (DEFAULT_ALLOW_IMPORTS, HARNESS_NAMESPACES, IMPORT_FAMILIES,
                                 LIBC_DATA, NVCC_GLOBAL_DEFINITIONS, NVCC_OUTER_NAMES,
                                 NVCC_REGISTRATION, RESERVED_RE, STRICT_LIBRARY_NAMESPACES,
                                 WEAK_OK_NAMESPACES, PolicyRules, Violation)
from grader.policy.tools import TOOL_TIMEOUT_S, short

# ---------------------------------------------------------------------------------------------
# Rule: imports
# ---------------------------------------------------------------------------------------------

def _matches(sym: Sym, patterns) -> bool:
    names = {sym.name.split("@", 1)[0], sym.demangled.split("@", 1)[0]}
    return any(fnmatch.fnmatchcase(n, p) for n in names for p in patterns)


def _family(sym: Sym):
    return next((f for f in IMPORT_FAMILIES if _matches(sym, f.patterns)), None)


def _import_verdict(sym: Sym, rules: PolicyRules) -> str | None:
    """None when the import is allowed, else the reason it is not.

    Order: the lab's forbid_imports, the lab's allow_imports, the hard default families,
    the default allowlist; anything else is rejected."""
    family = _family(sym)
    if _matches(sym, rules.forbid_imports):
        return family.reason if family else "this lab does not allow it"
    if _matches(sym, rules.allow_imports):
        return None
    if family is not None and family.hard:
        return family.reason
    if _matches(sym, DEFAULT_ALLOW_IMPORTS):
        return None
    if family is not None:
        return family.reason
    return ("it is not on the list of functions a launcher may use (kernel launches, the CUDA "
            "runtime's queries, printing and host math)")


_DATA_IMPORTS = ("stdout", "stderr", "stdin", "environ", "__environ", "__dso_handle",
                 "std::cout", "std::cerr", "std::clog", "errno", "_GLOBAL_OFFSET_TABLE_")


def check_imports(elf: ElfObject, rules: PolicyRules) -> list:
    out = []
    for sym in elf.symbols:
        if not sym.undefined:
            continue
        reason = _import_verdict(sym, rules)
        if reason is None:
            continue
        data = sym.demangled in _DATA_IMPORTS or sym.demangled.startswith(
            ("typeinfo", "vtable", "VTT"))
        out.append(Violation("import", sym.demangled,
                             f"{'uses' if data else 'calls'} {short(sym.demangled)}, which this "
                             f"lab does not allow: {reason}"))
    return out


# ---------------------------------------------------------------------------------------------
# Rule: definitions
# ---------------------------------------------------------------------------------------------

# The placement forms of operator new/delete (<new>): inline, never replaceable, not exported
# by the library; GCC keeps them out of line (weak, in a COMDAT group) at -O0.
_PLACEMENT_FORMS = ("_ZnwmPv", "_ZnamPv", "_ZdlPvS_", "_ZdaPvS_", "_ZnwjPv", "_ZnajPv")


def _exact_names(patterns) -> set:
    return {p for p in patterns if not any(c in p for c in "*?[")}


# Exact names of C library and CUDA functions and data the rules know: a global definition of
# one of these, even a variable, would replace the library's own for the whole worker.
_KNOWN_C_NAMES = (_exact_names(DEFAULT_ALLOW_IMPORTS) | set(LIBC_DATA)
                  | {n for f in IMPORT_FAMILIES for n in _exact_names(f.patterns)})


def _known_c_function(name: str) -> bool:
    """A C function the rules know by name or pattern (clock_gettime, fopen64, ...)."""
    probe = Sym(name, "U", name)
    return name in _KNOWN_C_NAMES or _family(probe) is not None or _matches(
        probe, DEFAULT_ALLOW_IMPORTS)


# ---------------------------------------------------------------------------------------------
# What the system libraries the worker links export (libstdc++, libc, libm, libgcc_s): a
# definition in the student's object of one of these names would be preferred to the library's
# own by the dynamic linker, for the whole worker (the library's internal calls through its PLT
# included). Read once per process from their dynamic symbol tables.
# ---------------------------------------------------------------------------------------------

SYSTEM_LIBRARIES = ("libstdc++.so.6", "libc.so.6", "libm.so.6", "libgcc_s.so.1")
_REQUIRED_LIBRARIES = ("libstdc++.so.6", "libc.so.6")
_EXPORTS: dict = {}


def library_exports() -> dict:
    """Symbol name (no version) -> the system library that exports it, for the libraries of
    SYSTEM_LIBRARIES as the host compiler (g++) finds them. Cached per process. Raises
    GraderError when libstdc++ or libc cannot be found: without them the rule cannot run."""
    if _EXPORTS:
        return _EXPORTS
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        raise GraderError("'g++' was not found on PATH: the policy check reads the C++ library "
                          "it links (Debian/Ubuntu: apt-get install g++)", EXIT_USAGE)
    nm, found = tools.tool("nm"), {}
    for lib in SYSTEM_LIBRARIES:
        proc = runner.run([compiler, f"-print-file-name={lib}"], TOOL_TIMEOUT_S, cap=64 * 1024)
        path = proc.stdout.strip()
        if proc.returncode != 0 or not os.path.isabs(path) or not os.path.isfile(path):
            if lib in _REQUIRED_LIBRARIES:
                raise GraderError(f"policy check: {compiler} does not know where {lib} is "
                                  f"({path or proc.output.strip()[:200]})", EXIT_INTERNAL)
            continue
        listing = tools.run_tool([nm, "-D", "--defined-only", path], f"nm -D {lib}")
        for line in tools.lines(listing):
            parts = line.split()
            if len(parts) >= 3:
                found.setdefault(parts[-1].split("@", 1)[0], lib)
    _EXPORTS.update(found)
    return _EXPORTS


def _definition_problem(sym: Sym, elf_type: str, exports: dict | None = None,
                        in_comdat: bool | None = None) -> str | None:
    """Why a global definition is not allowed, or None. `exports`: library_exports() (None
    skips that check); `in_comdat`: whether its section is a member of a COMDAT section group
    (None: unknown, that check is skipped)."""
    name = sym.name.split("@", 1)[0]
    weak = sym.kind in "WVuv"
    shown = short(sym.demangled)
    library = (exports or {}).get(name)
    loose_weak = weak and in_comdat is False             # weak outside any COMDAT group
    if not name.startswith("_Z"):                        # C linkage, or a global variable
        if any(fnmatch.fnmatchcase(name, p) for p in NVCC_GLOBAL_DEFINITIONS):
            return None
        function = sym.kind in "TtA" or elf_type in ("FUNC", "IFUNC") or (
            sym.kind == "W" and elf_type == "NOTYPE")
        if re.match(r"^(?:cu|__cu|nv|__nv)", name) and RESERVED_RE.match(name):
            return (f"defines {name}, a name of the CUDA runtime or driver: a definition would "
                    f"replace the runtime's own (interposition), which is not allowed")
        if name in _KNOWN_C_NAMES or (function and _known_c_function(name)):
            return (f"defines {name}, a name of the C library: a definition would replace the "
                    f"library's own for the whole worker (interposition), which is not allowed")
        if function:
            return (f"defines the C-linkage function {name}: a global function with C linkage "
                    f"could replace a library function of the same name; drop extern \"C\", "
                    f"make it static, or put it in an anonymous namespace")
        if RESERVED_RE.match(name):
            return (f"defines the global variable {name}: names beginning with '_', 'cuda' or "
                    f"'cu' are reserved for the compiler, the C library and CUDA; rename it or "
                    f"make it static")
        if library:
            return (f"defines {name}, a name that the system library {library} exports: a "
                    f"global definition would replace the library's own for the whole worker "
                    f"(interposition); rename it or make it static")
        return None                                      # an ordinary global variable
    outer = outer_name(name)
    if outer is None:
        return (f"defines {shown}, a symbol name the grader cannot read: only ordinary C++ "
                f"definitions are allowed")
    if outer == "" or any(fnmatch.fnmatchcase(outer, p) for p in NVCC_OUTER_NAMES):
        return None
    if outer in HARNESS_NAMESPACES:
        return (f"defines {shown} in namespace {outer}::, which belongs to the grading "
                f"harness: only your own code may be defined in your file")
    if outer in STRICT_LIBRARY_NAMESPACES:
        return (f"defines {shown} in namespace {outer}::, which belongs to a library this lab "
                f"does not allow: write the code yourself")
    if outer in GLOBAL_OPERATORS.values():
        if name in _PLACEMENT_FORMS and weak and in_comdat:
            return None          # <new>'s inline placement new/delete, kept out of line at -O0
        return (f"defines {shown}, which would replace the global allocator for the whole "
                f"worker: not allowed")
    if outer == "<built-in type>":
        return f"defines {shown}, which belongs to the C++ runtime: not allowed"
    if library and not is_template_instance(sym.demangled):
        return (f"defines {shown}, which the system library {library} already exports: "
                f"{'a weak or strong' if weak else 'a'} definition would replace the library's "
                f"own for the whole worker (interposition), which is not allowed")
    if outer in WEAK_OK_NAMESPACES:
        if loose_weak:
            return (f"defines {shown} in namespace {outer}:: as a weak symbol outside a COMDAT "
                    f"group (__attribute__((weak)) or by hand): it could replace the library's "
                    f"own definition, which is not allowed")
        if weak:
            return None                                  # an instantiation of a library template
        return (f"defines {shown} in namespace {outer}::, which belongs to the C++ or CUDA "
                f"library: specialising or replacing library code is not allowed")
    if RESERVED_RE.match(outer):
        if loose_weak:
            return (f"defines {shown} as a weak symbol outside a COMDAT group "
                    f"(__attribute__((weak)) or by hand): names beginning with '_', 'cuda' or "
                    f"'cu' are reserved for the compiler, the C++ library and CUDA, and a weak "
                    f"definition could replace theirs; rename it")
        if not weak:
            return (f"defines {shown}: names beginning with '_', 'cuda' or 'cu' are reserved "
                    f"for the compiler, the C++ library and CUDA; rename it")
    return None


def check_definitions(elf: ElfObject, exports: dict | None = None) -> list:
    types, comdat = {}, {}
    for s in elf.elf_symbols:
        if s.bind != "LOCAL" and s.ndx != "UND":
            types.setdefault(s.name, s.type)
            # A name defined twice (weak in a group, again outside it): the worse one counts.
            if elf.comdat is not None:                   # None: not known (canned tests)
                comdat[s.name] = comdat.get(s.name, True) and s.ndx in elf.comdat
    out = []
    for sym in elf.symbols:
        if sym.undefined or sym.local or sym.kind == "i":   # ifuncs: the constructor rule
            continue
        problem = _definition_problem(sym, types.get(sym.name, ""), exports,
                                      None if elf.comdat is None else comdat.get(sym.name, False))
        if problem:
            out.append(Violation("definition", sym.demangled, problem))
    return out


# ---------------------------------------------------------------------------------------------
# Rule: code that runs before main() (or after it)
#
# nvcc registers a file's kernels from one static constructor, __sti____cudaRegisterAll, in
# .init_array. A student's __attribute__((constructor)) function or a namespace-scope variable
# with a dynamic initialiser (GCC's _GLOBAL__sub_I_<file>) adds another entry. So: at most one
# entry may point at __sti____cudaRegisterAll, and the code it reaches (calls, tail calls, and
# at -O0 the registration callback it calls through a pointer) may call nothing but nvcc's
# registration functions; every other entry must be the <iostream> initialiser of GCC 12 and
# older, exactly. Nothing may sit in .preinit_array, .ctors, .init, .fini_array, .dtors or
# .fini, and no symbol may be an ifunc (its resolver runs while the program is loaded).
# ---------------------------------------------------------------------------------------------

_NVCC_STARTUP = "_ZL24__sti____cudaRegisterAllv"
_NVCC_HELPER_PREFIXES = ("__sti__", "__nv", "____nv", "__cuda")
_NVCC_STARTUP_IMPORTS = NVCC_REGISTRATION + ("atexit", "__cxa_atexit")
# GCC 12 and older: a file that includes <iostream> gets a static std::ios_base::Init object,
# constructed before main and destroyed through __cxa_atexit. Harmless and common, so an
# initialiser that does exactly that and nothing else is accepted.
_IOSTREAM_CALLS = ("_ZNSt8ios_base4InitC1Ev", "__cxa_atexit")
_IOSTREAM_REFS = ("_ZNSt8ios_base4InitD1Ev", "__dso_handle", "_ZStL8__ioinit")
_GCC_INIT_HELPERS = ("_GLOBAL__sub_I_", "_Z41__static_initialization_and_destruction_0",
                     "__static_initialization_and_destruction_")

_BEFORE_MAIN = "runs code before main ({what}): not allowed, the harness must start clean"
_AFTER_MAIN = "runs code after main ({what}): not allowed, the harness must end clean"


def _helper_name(name: str) -> str:
    outer = outer_name(name)
    return outer if outer else re.split(r"[.@]", name, maxsplit=1)[0]


def _worst(problems: list) -> str:
    """The problem a student understands best: a call, else a named symbol it uses."""
    calls = [p for p in problems if "calls" in p]
    named = [p for p in problems if ".L" not in p and "?" not in p]
    return (calls or named or ["runs code of its own"])[0]


def check_constructors(elf: ElfObject) -> list:
    out = []

    def add(what: str, symbol: str, after: bool = False):
        out.append(Violation("constructor", symbol,
                             (_AFTER_MAIN if after else _BEFORE_MAIN).format(what=what)))

    for s in elf.elf_symbols:
        if s.type in ("IFUNC", "GNU_IFUNC") and s.ndx != "UND":
            add(f"an indirect function (ifunc), whose resolver runs while the program loads: "
                f"{elf.demangle(s.name)}", elf.demangle(s.name))
    nvcc_entries = 0
    for sec in elf.sections.values():
        name = sec.name
        if name.startswith(".rel"):
            continue
        if name in (".init", ".fini") or name.startswith((".init.", ".fini.")):
            add(f"code in the {name} section", name, after=name.startswith(".fini"))
            continue
        if name.startswith((".preinit_array", ".ctors")) or sec.type == "PREINIT_ARRAY":
            add(f"an entry in {name}", name)
            continue
        if name.startswith((".fini_array", ".dtors")) or sec.type == "FINI_ARRAY":
            add(f"a global destructor in {name}", name, after=True)
            continue
        if not (name.startswith(".init_array") or sec.type == "INIT_ARRAY"):
            continue
        relocs = {r.offset: r for r in elf.relocs.get(".rela" + name, [])
                  + elf.relocs.get(".rel" + name, [])}
        for slot in range(0, sec.size, 8):
            rel = relocs.get(slot)
            target = elf.resolve(rel, None) if rel else None
            span = None
            if target and target[0] == "local" and target[1] in elf.functions:
                span = elf.function_at(target[1], target[2])
                if span and span[0] != target[2]:
                    span = None
            if span is None:
                add("a global constructor that points outside any function",
                    f"{name}+{slot:#x}")
                continue
            fn, shown = span[2], elf.demangle(span[2])
            if fn == _NVCC_STARTUP and nvcc_entries == 0:
                nvcc_entries += 1
                problems = walk(elf, target[1], span, _NVCC_STARTUP_IMPORTS, (),
                                lambda n: _helper_name(n).startswith(_NVCC_HELPER_PREFIXES),
                                strict=False)
                if problems:
                    add(f"a global constructor: nvcc's kernel registration {problems[0]}", shown)
            elif fn.startswith("_GLOBAL__sub_I_"):
                problems = walk(elf, target[1], span, _IOSTREAM_CALLS, _IOSTREAM_REFS,
                                lambda n: n.startswith(_GCC_INIT_HELPERS), strict=True)
                if problems:
                    add(f"a global constructor: the dynamic initialisation of a namespace-scope "
                        f"variable, which {_worst(problems)}", shown)
            else:
                add(f"a global constructor: {shown}, registered with "
                    f"__attribute__((constructor)) or by hand", shown)
    return out


# ---------------------------------------------------------------------------------------------
# Rule: raw system calls
#
# A first filter, not the boundary: the real boundary is the seccomp filter of the worker
# process (common/src/worker.cpp), which refuses the system calls themselves however they are
# made. This rule tells a student early, and by name, that a hand-written `syscall` will not
# do. It reads every section the linker places into executable memory: the sections flagged
# executable, and those with a name the linker script puts into .text/.init/.fini/.plt whatever
# their flags (grader/elf.py: lands_in_code), disassembled by elf_object.read_object. It never
# scans raw bytes for patterns: data in honest nvcc output may hold any byte sequence.
# ---------------------------------------------------------------------------------------------

def check_syscalls(elf: ElfObject) -> list:
    out = []
    for section, insns in elf.insns.items():
        starts = {x.addr for x in insns}
        end = insns[-1].next_addr if insns else 0
        for insn in insns:
            what = syscall_instruction(insn.text)
            jump_inside = False
            if what is None:
                # A branch into the middle of another instruction could run a hidden one.
                kind, indirect = branch(insn.text)
                if not kind or indirect or insn.relocs:
                    continue
                jump_inside = any(t[0] == "local" and t[1] == section and t[2] not in starts
                                  and t[2] < end for t in targets(elf, insn))
                if not jump_inside:
                    continue
            fn = elf.function_at(section, insn.addr)
            where = short(elf.demangle(fn[2]) if fn else section)
            if jump_inside:
                out.append(Violation("syscall", f"a jump into an instruction in {where}",
                                     f"jumps into the middle of an instruction (in {where}): "
                                     f"hand-made machine code is not allowed"))
            else:
                out.append(Violation("syscall", f"{what} in {where}",
                                     f"contains the raw system call instruction '{what}' (in "
                                     f"{where}): system calls bypass the list of allowed "
                                     f"functions and are not allowed"))
    return out
