"""Checks a student's compiled submission against the lab's policy before any of it runs.

Runs with no GPU, on the student's object file(s), source file(s) and the build's
compile_commands.json. Students may be hostile: they try to earn points without doing the
work, for instance by copying a cached answer inside the launcher, by replacing a function of
the harness or of the CUDA runtime with their own (interposition), by running code before the
worker's main() drops its privileges, or by pulling the hidden tests or the reference solution
into their file at compile time. Seven rules, each a `Violation.rule`:

  import       every undefined symbol of the object (what it calls or uses) must be on an
               allowlist: nvcc's launch machinery, the C++ runtime, printing, host math and a
               side-effect-free subset of the CUDA runtime (see DEFAULT_ALLOW_IMPORTS).
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
               (cuobjdump -sass): the labs teach FP32 on CUDA cores.
  include      every file the source pulls in is the source itself, one of the lab's
               interface headers, or a system/toolkit header that is not a vendor or harness
               library header (see DEFAULT_FORBID_INCLUDES).
  source       no directive that copies a file into the program at compile time (.incbin,
               #embed, the assembler's .include, or assembler macros that could spell them).

The import, definition, constructor and syscall rules read the objects (binutils: nm, readelf,
objdump, c++filt; section headers and groups with grader/elf.py); the device rule reads the
kernels' machine code with the CUDA toolkit's cuobjdump (see find_cuobjdump: when it is needed
and missing, the check cannot run and nothing is run). The include and source rules read the sources and run the compiler's
preprocessor with the exact compile command from compile_commands.json; they need no object,
so the grader may call check_submission(objects=[], ...) BEFORE building, so that a build
log can never show a student the lines of a file they should not have included.

Odd input: a missing, empty or non-ELF object raises GraderError (the build produced
something the grader did not expect: not a verdict on the student); an ELF object with no
symbols is simply checked. A compile_commands of None skips the compiler-based parts of the
include and source rules (the source text itself is still checked). Every rule runs even
when an earlier one failed, so that a student sees every problem at once.
"""

from __future__ import annotations

import bisect
import dataclasses
import fnmatch
import hashlib
import json
import os
import re
import shlex
import shutil
import tempfile
import time
from pathlib import Path

from grader import elf as elfheaders
from grader import runner
from grader.errors import EXIT_INTERNAL, EXIT_USAGE, GraderError

TOOL_TIMEOUT_S = 120        # one nm / readelf / objdump / c++filt call
COMPILER_TIMEOUT_S = 300    # one preprocessor run of the student's file (nvcc -M, nvcc -cuda)
TOOL_OUTPUT_CAP = 256 * 1024 * 1024  # keep all of a tool's output: a cut listing could hide a name
REPORT_MAX = 10             # violations listed by PolicyResult.report()

# ---------------------------------------------------------------------------------------------
# The rules as data. Patterns are fnmatch patterns (case-sensitive), matched against both the
# raw and the demangled symbol name; a symbol version suffix (memcpy@GLIBC_2.14) is ignored.
# ---------------------------------------------------------------------------------------------

# What nvcc's generated code calls: kernel registration at start-up (the fat binary, each
# kernel and __device__/__constant__/__managed__ variable), the <<<>>> launch sequence, and the
# unregistration at exit. The *_ptsz forms come with --default-stream per-thread,
# __cudaRegisterLinkedBinary_* with -rdc=true.
NVCC_REGISTRATION = (
    "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary",
    "__cudaRegisterFunction", "__cudaRegisterVar", "__cudaRegisterManagedVar",
    "__cudaRegisterTexture", "__cudaRegisterSurface", "__cudaInitModule",
    "__cudaRegisterLinkedBinary_*",
)
NVCC_LAUNCH = (
    "__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaLaunchKernel",
    "__cudaLaunchKernel_ptsz", "__cudaGetKernel", "cudaLaunchKernel", "cudaLaunchKernel_ptsz",
)

DEFAULT_ALLOW_IMPORTS = (
    # nvcc's own machinery: every CUDA file needs it. atexit: nvcc unregisters the fat binary.
    *NVCC_REGISTRATION, *NVCC_LAUNCH, "atexit",
    # The C++ runtime: static-local guards, exceptions and unwinding, RTTI, operator new/delete,
    # the library's out-of-line throw helpers. Nothing here touches files or processes.
    "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort", "__cxa_atexit",
    "__gxx_personality_v0", "_Unwind_Resume", "__cxa_begin_catch", "__cxa_end_catch",
    "__cxa_rethrow", "__cxa_allocate_exception", "__cxa_free_exception", "__cxa_throw",
    "__cxa_pure_virtual", "__cxa_deleted_virtual", "__cxa_bad_cast", "__cxa_bad_typeid",
    "__cxa_call_terminate", "__cxa_throw_bad_array_new_length", "__dynamic_cast",
    "__dso_handle", "_GLOBAL_OFFSET_TABLE_", "__stack_chk_fail", "__assert_fail",
    "__errno_location", "operator new*", "operator delete*",
    "std::__throw_*", "std::terminate()", "std::__glibcxx_assert_fail*", "std::nothrow",
    "vtable for __cxxabiv1::*", "typeinfo for std::*", "typeinfo name for std::*",
    "vtable for std::*", "VTT for std::*",
    "std::exception::*", "std::bad_alloc::*", "std::bad_cast::*", "std::logic_error::*",
    "std::runtime_error::*", "std::invalid_argument::*", "std::out_of_range::*",
    "std::length_error::*", "std::domain_error::*", "std::range_error::*",
    "std::overflow_error::*", "std::underflow_error::*",
    # Containers and strings: the out-of-line parts the library exports.
    "std::_Rb_tree_*", "std::_Hash_bytes*", "std::__detail::_Prime_rehash_policy::*",
    "std::allocator<char>::allocator()", "std::allocator<char>::~allocator()",
    "__libc_single_threaded",        # read by shared_ptr's reference counting (GCC 12+)
    "std::__detail::_List_node_base::*", "std::__cxx11::basic_string<*",
    "*std::__cxx11::basic_string<*>::_M_*",
    # The heap: the same as operator new.
    "malloc", "calloc", "realloc", "free", "aligned_alloc",
    # Memory and string helpers, with their _FORTIFY_SOURCE forms.
    "memcpy", "memset", "memmove", "memcmp", "memchr", "strlen", "strnlen", "strcmp",
    "strncmp", "strchr", "strrchr", "strstr", "strcpy", "strncpy", "strcat", "strncat",
    "__memcpy_chk", "__memset_chk", "__memmove_chk", "__strcpy_chk", "__strncpy_chk",
    "__strcat_chk", "__strncat_chk",
    # Printing is harmless: only stdout and stderr can be reached (fopen/fdopen are not allowed).
    "printf", "puts", "putchar", "fprintf", "fputs", "fputc", "putc", "_IO_putc", "fwrite",
    "fflush", "vprintf", "vfprintf", "perror", "snprintf", "sprintf", "vsnprintf", "vsprintf",
    "__printf_chk", "__fprintf_chk", "__vprintf_chk", "__vfprintf_chk", "__snprintf_chk",
    "__sprintf_chk", "__vsnprintf_chk", "__vsprintf_chk", "stdout", "stderr",
    "std::cout", "std::cerr", "std::clog", "std::ios_base::Init::*", "std::ios_base::*",
    "std::ios_base_library_init()",  # GCC 13+: <iostream> asks the library to set up cout
    "std::basic_ios<*", "std::ostream::*", "*std::ostream::_M_insert<*",
    "std::basic_ostream<char, std::char_traits<char> >::*",
    "*std::basic_ostream<char, std::char_traits<char> >::_M_insert<*",
    "*std::__ostream_insert<*", "*std::endl<*", "*std::flush<*", "*std::operator<< <*",
    "std::ctype<char>::_M_widen_init() const", "std::locale::*",
    "std::__cxx11::basic_ostringstream<*", "std::__cxx11::basic_stringbuf<*",
    "std::basic_streambuf<*",
    # Ending the worker early: the harness sees it and fails that test.
    "abort", "exit",
    # The CUDA runtime, side-effect-free part: error queries, kernel attributes and occupancy,
    # device queries, launches (triple chevrons, cudaLaunchKernelEx, cooperative launches)
    # and cudaMemsetAsync, all on the stream the launcher is given.
    "cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName",
    "cudaFuncSetAttribute", "cudaFuncGetAttributes", "cudaFuncSetCacheConfig",
    "cudaFuncSetSharedMemConfig", "cudaOccupancy*", "cudaGetDevice", "cudaGetDeviceCount",
    "cudaDeviceGetAttribute", "cudaGetDeviceProperties*", "cudaDriverGetVersion",
    "cudaRuntimeGetVersion", "cudaDeviceGetLimit", "cudaDeviceGetStreamPriorityRange",
    "cudaGetSymbolAddress", "cudaGetSymbolSize",
    "cudaMemsetAsync", "cudaMemsetAsync_ptsz", "cudaMemset2DAsync*", "cudaMemset3DAsync*",
    "cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz", "cudaLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernel_ptsz",
    # Capture queries: read-only, and they let a launcher stay correct under graph capture
    # (the harness captures the launcher's stream in some tests). Knowing whether it is being
    # captured gains a student nothing: captured and plain runs are checked alike.
    "cudaStreamIsCapturing*", "cudaStreamGetCaptureInfo*",
)


def _math_names() -> tuple:
    """Host libm functions, each with its float and long double forms (sqrtf, sqrtl)."""
    base = ("sqrt cbrt hypot exp exp2 expm1 log log2 log10 log1p pow sin cos tan asin acos atan "
            "atan2 sinh cosh tanh asinh acosh atanh erf erfc tgamma lgamma ceil floor trunc round "
            "lround llround rint lrint llrint nearbyint fabs fmod remainder remquo fmin fmax fdim "
            "fma frexp ldexp scalbn scalbln ilogb logb modf copysign nextafter nexttoward nan "
            "sincos").split()
    return tuple(n + s for n in base for s in ("", "f", "l")) + (
        "abs", "labs", "llabs", "__isnan*", "__isinf*", "__finite*", "__fpclassify*",
        "__signbit*", "__*_finite")


DEFAULT_ALLOW_IMPORTS += _math_names()

# Families of symbols that are rejected, each with the reason a student reads. The first family
# that matches gives the reason. Families marked hard=True are rejected even when a (broad)
# default allow pattern matches them (e.g. "vtable for std::*" and the file stream classes);
# a lab's own allow_imports still wins over them.
@dataclasses.dataclass(frozen=True)
class _Family:
    patterns: tuple
    reason: str
    hard: bool = False


IMPORT_FAMILIES = (
    _Family(("cudaMemcpy*", "cudaMemcpy2D*", "cudaMemcpy3D*", "cudaMemcpyToSymbol*",
             "cudaMemcpyFromSymbol*", "cudaMemcpyPeer*", "cudaMemPrefetch*", "cudaMemAdvise*",
             "cuMemcpy*"),
            "copies must not happen inside the launcher (the harness moves all data)"),
    _Family(("cudaMalloc*", "cudaFree*", "cudaHostAlloc", "cudaHostRegister*",
             "cudaHostUnregister", "cudaMemPool*", "cudaMallocAsync*", "cudaFreeAsync*",
             "cuMemAlloc*", "cuMemFree*"),
            "the launcher must not allocate or free device memory (the harness owns all buffers)"),
    _Family(("cudaLaunchHostFunc*", "cudaStreamAddCallback*", "cuLaunchHostFunc*"),
            "host callbacks run your code from the stream, outside the launcher"),
    _Family(("cudaDeviceSynchronize", "cudaStreamSynchronize*", "cudaEventSynchronize",
             "cudaStreamQuery*", "cudaEventQuery", "cudaStreamWaitEvent*", "cudaThreadSynchronize"),
            "the launcher must return without waiting (the harness synchronises and times)"),
    _Family(("cudaStream*", "cudaEvent*"),
            "the launcher must only enqueue work on the stream it is given (no streams or "
            "events of its own)"),
    _Family(("cudaGraph*", "cudaStreamBeginCapture*", "cudaStreamEndCapture*",
             "cudaUserObject*"),
            "graphs and stream capture belong to the harness"),
    _Family(("cudaSetDevice*", "cudaDeviceReset", "cudaDeviceSet*", "cudaSetDeviceFlags",
             "cudaDeviceEnablePeerAccess", "cudaDeviceDisablePeerAccess", "cudaIpc*",
             "cudaProfiler*", "cudaCtx*", "cudaThreadSet*", "cudaThreadExit",
             "cudaInitDevice"),
            "the launcher must not change device-wide state"),
    _Family(("cu[A-Z]*", "cudaGetDriverEntryPoint*", "cudaGetExportTable", "cudaGetFuncBySymbol",
             "cudaGetKernel", "cudaLibrary*", "cudaKernel*"),
            "the driver API is not available to the launcher"),
    _Family(("cublas*", "cusparse*", "cudnn*", "cufft*", "curand*", "cusolver*", "nccl*",
             "nvshmem*", "cutensor*", "npp*", "nvjpeg*", "thrust::*", "cub::*"),
            "vendor libraries are not allowed: the lab is about writing the kernel yourself"),
    _Family(("dlopen", "dlmopen", "dlsym", "dlvsym", "dladdr*", "dlinfo", "dl_iterate_phdr"),
            "loading or looking up code at run time is not allowed"),
    _Family(("*std::basic_ifstream*", "*std::basic_ofstream*", "*std::basic_fstream*",
             "*std::basic_filebuf*", "*std::__basic_file*", "*std::filesystem::*",
             "*std::__cxx11::basic_ifstream*", "*std::__cxx11::basic_ofstream*"),
            "file access is not allowed", hard=True),
    _Family(("fopen*", "freopen*", "fdopen", "fmemopen", "tmpfile*", "open", "open64", "openat*",
             "__open*", "creat*", "read", "readv", "pread*", "__read_chk", "write", "writev",
             "pwrite*", "close", "fclose", "fread", "fgets", "fgetc", "getc", "getchar", "gets",
             "fscanf", "scanf", "__isoc99_*scanf", "getline", "getdelim", "mmap*", "munmap",
             "mprotect", "madvise", "stat*", "fstat*", "lstat*", "__xstat*", "__fxstat*",
             "__lxstat*", "statx", "access", "faccessat*", "opendir", "fdopendir", "readdir*",
             "scandir*", "unlink*", "remove", "rename*", "mkdir*", "rmdir", "symlink*", "link*",
             "readlink*", "chmod", "fchmod*", "chown", "chdir", "fchdir", "getcwd", "realpath",
             "truncate*", "ftruncate*", "memfd_create", "dup", "dup2", "dup3", "pipe*", "ioctl",
             "fcntl*", "sendfile*", "splice", "tee", "copy_file_range", "stdin"),
            "file and descriptor access is not allowed"),
    _Family(("fork", "vfork", "clone*", "__clone*", "exec*", "fexecve", "posix_spawn*",
             "system", "popen", "pclose", "kill", "tgkill", "tkill", "raise", "ptrace", "prctl",
             "wait*", "setuid", "setgid", "seteuid", "setegid", "setres*", "setgroups", "chroot",
             "unshare", "setns", "seccomp", "signal", "sigaction", "__sysv_signal", "alarm",
             "setrlimit*", "prlimit*", "getpid", "getppid", "_exit", "_Exit", "quick_exit",
             "on_exit", "at_quick_exit"),
            "process control is not allowed"),
    _Family(("socket*", "connect", "bind", "listen", "accept*", "send*", "recv*",
             "getaddrinfo", "gethostbyname*"),
            "network access is not allowed"),
    _Family(("getenv", "secure_getenv", "__secure_getenv", "setenv", "unsetenv", "putenv",
             "clearenv", "environ", "__environ"),
            "the environment (where the seed lives) is not available to the launcher"),
    _Family(("pthread_*", "std::thread*", "*std::thread::*", "thrd_*", "std::__future_base*",
             "*std::async*"),
            "starting threads is not allowed", hard=True),
    _Family(("clock_gettime*", "gettimeofday", "time", "clock", "times", "timespec_get",
             "std::chrono::*", "*::now()", "sleep", "usleep", "nanosleep", "clock_nanosleep",
             "sched_yield", "std::this_thread::*"),
            "reading clocks or sleeping is not allowed (the harness does all timing)"),
    _Family(("syscall", "__syscall*"),
            "raw system calls are not allowed"),
    _Family(("*std::random_device*", "getrandom", "getentropy", "rand", "srand", "random",
             "srandom", "*rand48*"),
            "random numbers on the host are not needed by a kernel launcher", hard=True),
)

# The harness's namespaces and strict library namespaces: nothing in them may be defined.
HARNESS_NAMESPACES = ("labkit", "testing", "benchmark")
# Libraries the student must not use at all (their includes are forbidden too); and runtime
# internals no legitimate file instantiates.
STRICT_LIBRARY_NAMESPACES = ("thrust", "cub", "cudart", "__cxxabiv1", "__cxxabiv2")
# Library namespaces whose templates a legitimate file instantiates (std::min at -O0,
# std::vector<int> members, cuda::std, nvcuda::wmma, cooperative_groups on the host side).
# Such instantiations are WEAK definitions: they can never override a strong definition
# elsewhere, and the worker links the harness before the student's object, so for inline
# functions the harness's own copy is the one kept. A STRONG definition there can only come
# from a deliberate specialisation or replacement and is rejected.
WEAK_OK_NAMESPACES = ("std", "__gnu_cxx", "cuda", "nvcuda", "cooperative_groups")
# Names reserved for the compiler, the libraries and CUDA, when they are the outermost name of a
# definition (a global function, variable, class or namespace): a leading underscore (reserved
# by the C and C++ standards), cuda*, cu[A-Z]* and the vendor libraries' prefixes, and the names
# NVIDIA uses beginning with nv (nv::, nvcuda::, nvtx, nvrtc...) but not every name beginning
# with nv (a variable called nvals is fine). Weak definitions with such names are template
# instantiations or inline functions of CUDA headers (cudaLaunchKernel<T> at -O0, __half's
# members) and are allowed; strong ones are rejected.
RESERVED_RE = re.compile(r"^(?:_|cuda|cu[A-Z]|cublas|cusparse|cufft|curand|cusolver|cudnn"
                         r"|cutensor|nccl|nvcuda|nvtx|nvrtc|nvshmem|nvjpeg|nvJitLink|NV_|nv$)")
# Unmangled names nvcc itself defines with global binding: the DWARF personality reference,
# and with -rdc=true the fat-binary wrapper and the host-reference tables.
NVCC_GLOBAL_DEFINITIONS = ("DW.ref.*", "__fatbinwrap_*", "hostRef*Array*Linkage")
# Outermost names of nvcc's mangled definitions: the kernels' launch stubs, and the
# file-unique namespace nvcc gives an anonymous namespace (_GLOBAL__N__<hash>_<file>).
NVCC_OUTER_NAMES = ("__device_stub__*", "_GLOBAL__N*")
# C library data objects: a definition of one of these would replace the library's.
LIBC_DATA = ("stdin", "stdout", "stderr", "environ", "errno", "h_errno", "optarg", "optind",
             "opterr", "optopt", "program_invocation_name", "program_invocation_short_name",
             "timezone", "daylight", "tzname", "signgam", "sys_errlist", "sys_nerr",
             "sys_siglist", "getdate_err", "re_syntax_options", "obstack_alloc_failed_handler",
             "obstack_exit_failure", "in6addr_any", "in6addr_loopback", "main")

# Headers that are rejected even from a system or toolkit directory: vendor libraries (the lab
# is about writing the kernel) and the harness's own libraries. Matched against every trailing
# part of the header's path below its include directory ("thrust/fill.h" for
# .../include/cccl/thrust/fill.h) and its basename. curand_kernel.h is NOT here: it is the
# header-only device-side random number generator; the host cuRAND library is an import and
# rejected by the import rule.
DEFAULT_FORBID_INCLUDES = ("cub/*", "thrust/*", "cublas*", "cusparse*", "cudnn*", "cufft*",
                           "cusolver*", "nccl*", "nvshmem*", "cutensor*", "npp*", "nvjpeg*",
                           "gtest/*", "gmock/*", "benchmark/*", "labkit/*")
_HARNESS_INCLUDES = ("gtest/*", "gmock/*", "benchmark/*", "labkit/*")
# System include directories (besides the CUDA toolkit's, found from the compiler's path).
# /usr/local/include is NOT here: what lives there was installed by hand (GoogleTest and
# Google Benchmark built from source, say), and nothing in it is needed by a kernel file.
SYSTEM_INCLUDE_DIRS = ("/usr/include", "/usr/lib/gcc", "/usr/lib/llvm-*/lib/clang",
                       "/usr/lib/clang")
DEFAULT_CUDA_ROOT = "/usr/local/cuda"

# Compiler options dropped from the compile command before running the preprocessor.
_DROP_WITH_VALUE = ("-o", "--output-file", "-MT", "-MF", "-MQ", "--dependency-output",
                    "--dependency-target-name", "--output-directory", "-odir")
_DROP = ("-c", "--compile", "-MD", "-MMD", "-MP", "-M", "-MM", "-E", "--preprocess",
         "--generate-dependencies", "--generate-nonsystem-dependencies",
         "--generate-dependencies-with-compile",
         "--generate-nonsystem-dependencies-with-compile", "-cuda", "--cuda")

_COMPILER_LAUNCHERS = ("ccache", "sccache", "distcc", "icecc")

_RULE_ORDER = ("source", "include", "import", "definition", "constructor", "syscall",
               "device")


# ---------------------------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class PolicyRules:
    """A lab's additions to the default policy: the [policy] table of its grading.toml."""
    allow_imports: tuple = ()     # added to the allowlist
    forbid_imports: tuple = ()    # rejected even when allowed (beats every allow pattern)
    forbid_includes: tuple = ()   # added to DEFAULT_FORBID_INCLUDES
    # Families of device instructions refused in the kernels' SASS (DEVICE_FAMILIES):
    # "tensor_cores", "low_precision". Empty: the device rule does not run (no cuobjdump).
    forbid_device_instructions: tuple = ()

    @staticmethod
    def from_toml(table: dict, where: str) -> "PolicyRules":
        if not isinstance(table, dict):
            raise GraderError(f"{where}: must be a table, got {table!r}")
        known = [f.name for f in dataclasses.fields(PolicyRules)]
        unknown = sorted(set(table) - set(known))
        if unknown:
            raise GraderError(f"{where}: unknown key '{unknown[0]}' (known: {', '.join(known)})")
        values = {}
        for key in known:
            value = table.get(key, [])
            if not isinstance(value, list) or not all(
                    isinstance(p, str) and p.strip() and "\n" not in p for p in value):
                raise GraderError(f"{where}: '{key}' must be a list of non-empty patterns "
                                  f"(strings), got {value!r}")
            values[key] = tuple(value)
        unknown = [f for f in values["forbid_device_instructions"] if f not in DEVICE_FAMILIES]
        if unknown:
            raise GraderError(f"{where}: 'forbid_device_instructions' names an unknown family "
                              f"'{unknown[0]}' (known: {', '.join(DEVICE_FAMILIES)})")
        return PolicyRules(**values)


@dataclasses.dataclass
class Violation:
    rule: str        # "import" | "definition" | "constructor" | "syscall" | "device" |
                     # "include" | "source"
    symbol: str      # the offending symbol (demangled), path or text
    message: str     # one sentence a student can act on


@dataclasses.dataclass
class PolicyResult:
    ok: bool
    violations: list
    seconds: float

    def report(self) -> str:
        if self.ok:
            return f"policy: passed ({self.seconds:.1f} s)"
        n = len(self.violations)
        lines = [f"policy: {n} problem{'s' if n != 1 else ''} found: the submission was not run"]
        for v in self.violations[:REPORT_MAX]:
            lines.append(f"  - [{v.rule}] {v.message}")
        if n > REPORT_MAX:
            lines.append(f"  ... and {n - REPORT_MAX} more")
        return "\n".join(lines)


def check_submission(objects: list, sources: list, interface_headers: list,
                     compile_commands: Path | None, rules: PolicyRules) -> PolicyResult:
    """Checks every rule on every object and source; see the module docstring."""
    start = time.monotonic()
    found = []
    allowed_headers = {_real(h) for h in interface_headers}
    commands = _load_compile_commands(compile_commands) if compile_commands else None
    for source in sources:
        source = Path(source)
        preprocessed = None
        if commands is not None:
            entry = _find_entry(commands, source, compile_commands)
            found += _check_includes(source, entry, allowed_headers, rules)
            preprocessed = _preprocess_host(entry)
        found += _check_source_text(source, preprocessed)
    for obj in objects:
        elf = _read_object(Path(obj))
        found += _check_imports(elf, rules)
        found += _check_definitions(elf, library_exports())
        found += _check_constructors(elf)
        found += _check_syscalls(elf)
        if rules.forbid_device_instructions:
            found += _check_device_code(Path(obj), rules.forbid_device_instructions)
    violations, seen = [], set()
    for v in sorted(found, key=lambda v: _RULE_ORDER.index(v.rule)):  # stable: keeps file order
        if (v.rule, v.symbol, v.message) not in seen:   # the same import in two objects: once
            seen.add((v.rule, v.symbol, v.message))
            violations.append(v)
    return PolicyResult(ok=not violations, violations=violations,
                        seconds=time.monotonic() - start)


# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------

def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise GraderError(f"'{name}' was not found on PATH: the policy check needs GNU binutils "
                          f"(Debian/Ubuntu: apt-get install binutils)", EXIT_USAGE)
    return path


def _run_tool(args: list, what: str) -> str:
    proc = runner.run(args, TOOL_TIMEOUT_S, cap=TOOL_OUTPUT_CAP, env={"LC_ALL": "C"})
    if proc.timed_out:
        raise GraderError(f"policy check: {what} did not finish within {TOOL_TIMEOUT_S} s",
                          EXIT_INTERNAL)
    if proc.returncode != 0:
        raise GraderError(f"policy check: {what} failed: {proc.stderr.strip()[:500]}",
                          EXIT_INTERNAL)
    return proc.stdout


def _demangle(names: list) -> dict:
    """Mangled name -> demangled, with as few c++filt calls as the command line allows."""
    mangled = sorted({n for n in names if n.startswith("_Z") and "\n" not in n})
    out = {}
    i = 0
    while i < len(mangled):
        batch, size = [], 0
        while i < len(mangled) and (not batch or size + len(mangled[i]) < 100_000):
            batch.append(mangled[i])
            size += len(mangled[i]) + 1
            i += 1
        lines = _run_tool([_tool("c++filt"), "--", *batch], "c++filt").splitlines()
        if len(lines) == len(batch):
            out.update(zip(batch, lines))
    return out


def _real(path) -> str:
    return os.path.realpath(os.fspath(path))


# ---------------------------------------------------------------------------------------------
# What the object holds: symbols (nm), sections, symbol table and relocations (readelf),
# instructions (objdump).
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass
class _Sym:
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
class _ElfSym:
    name: str
    value: int
    size: int
    type: str         # FUNC, OBJECT, NOTYPE, SECTION, IFUNC, ...
    bind: str         # LOCAL, GLOBAL, WEAK, UNIQUE
    ndx: str          # section index as text, or UND / ABS / COM


@dataclasses.dataclass
class _Reloc:
    offset: int
    type: str
    symbol: str
    addend: int


@dataclasses.dataclass
class _Insn:
    section: str
    addr: int
    text: str                  # mnemonic and operands, objdump's comment removed
    comment_addr: int | None   # the address objdump resolved (branch target, rip-relative)
    relocs: list
    next_addr: int = 0


@dataclasses.dataclass
class _Section:
    index: str
    name: str
    type: str         # PROGBITS, INIT_ARRAY, RELA, ...
    size: int
    flags: str        # readelf's letters: A alloc, X exec, W write ...

    @property
    def executable(self) -> bool:
        return "X" in self.flags


class _Elf:
    """One object file as the rules need it, read once with nm, readelf and objdump."""

    def __init__(self, path: Path, symbols: list, sections: list, elf_symbols: list,
                 relocs: dict, insns: dict, comdat: frozenset = frozenset()):
        self.path = path
        self.comdat = comdat                            # section indices (text) in COMDAT groups
        self.symbols = symbols                          # [_Sym] from nm
        self.sections = {s.name: s for s in sections}   # name -> _Section
        self.section_by_index = {s.index: s.name for s in sections}
        self.elf_symbols = elf_symbols                  # [_ElfSym] from readelf
        self.relocs = relocs                            # ".rela.init_array" -> [_Reloc]
        self.insns = insns                              # section -> [_Insn] by address
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

    def section_of(self, sym: _ElfSym) -> str | None:
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

    def resolve(self, rel: _Reloc, insn: _Insn | None):
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


def _read_object(path: Path) -> _Elf:
    if not path.is_file():
        raise GraderError(f"policy check: the object {path} does not exist (the build should "
                          f"have made it)", EXIT_INTERNAL)
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"\x7fELF":
        raise GraderError(f"policy check: {path} is not an ELF object file "
                          f"({'it is empty' if not magic else 'unknown format'})", EXIT_INTERNAL)
    nm, readelf, objdump = _tool("nm"), _tool("readelf"), _tool("objdump")
    headers = _elf_headers(path)

    # nm: what the object defines and uses, with the letters the rules speak in.
    symbols = []
    for line in _run_tool([nm, "--no-sort", str(path)], f"nm {path.name}").splitlines():
        m = _NM_LINE.match(line)
        if m:
            symbols.append(_Sym(name=m.group(3), kind=m.group(2), demangled=m.group(3)))
    names = _demangle([s.name for s in symbols])
    for s in symbols:
        s.demangled = names.get(s.name, s.name)

    # readelf: sections, the full symbol table (sections, sizes, types) and relocations.
    sections, elf_symbols, relocs, current = [], [], {}, None
    text = _run_tool([readelf, "-W", "-S", "-s", "-r", str(path)], f"readelf {path.name}")
    for line in text.splitlines():
        m = _SECTION_LINE.match(line)
        if m:
            index, name, stype, size, flags = m.groups()
            sections.append(_Section(index, name, stype, int(size, 16), flags))
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
            elf_symbols.append(_ElfSym(name=name, value=int(value, 16),
                                       size=int(size, 16) if size.startswith("0x") else int(size),
                                       type=stype, bind=bind, ndx=ndx))
            continue
        m = _RELOC_LINE.match(line)
        if m and current is not None:
            offset, rtype, sym, sign, addend = m.groups()
            a = int(addend, 16)
            current.append(_Reloc(int(offset, 16), rtype, sym, -a if sign == "-" else a))

    # objdump: every instruction of the executable sections, with its relocations; then the
    # sections that are not flagged executable but that the linker places into code all the
    # same (a `.section .text.foo,"a"` lands in .text), disassembled whatever their flags.
    insns = {}
    _parse_objdump(_run_tool([objdump, "-dr", "--no-show-raw-insn", str(path)],
                             f"objdump {path.name}"), insns)
    for name in sorted({s.name for s in headers.sections
                        if elfheaders.lands_in_code(s) and not s.execinstr and s.size
                        and s.type != 8}):                  # 8: SHT_NOBITS, nothing to run
        _parse_objdump(_run_tool([objdump, "-Dr", "--no-show-raw-insn", "-j", name, str(path)],
                                 f"objdump -j {name} {path.name}"), insns)
    sizes = {s.name: s.size for s in sections}
    for section, lst in insns.items():
        for a, b in zip(lst, lst[1:]):
            a.next_addr = b.addr
        if lst:
            lst[-1].next_addr = max(sizes.get(section, 0), lst[-1].addr + 1)
    comdat = frozenset(str(i) for i in headers.comdat_sections())
    return _Elf(path, symbols, sections, elf_symbols, relocs, insns, comdat)


def _elf_headers(path: Path):
    """The object's section headers and groups, read by grader/elf.py."""
    try:
        return elfheaders.read(path)
    except elfheaders.ElfError as e:
        raise GraderError(f"policy check: {e}", EXIT_INTERNAL) from None


def _parse_objdump(out: str, insns: dict) -> None:
    """objdump -d/-D output into insns (section -> [_Insn])."""
    section, last = None, None
    for line in out.splitlines():
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
            last.relocs.append(_Reloc(int(offset, 16), rtype, sym, -a if sign == "-" else a))
            continue
        m = _OBJDUMP_INSN.match(line)
        if m:
            body, _, comment = m.group(2).partition("#")
            cm = _COMMENT_ADDR.match(comment) if comment else None
            last = _Insn(section, int(m.group(1), 16), body.strip(),
                         int(cm.group(1), 16) if cm else None, [])
            insns[section].append(last)


# ---------------------------------------------------------------------------------------------
# Rule: imports
# ---------------------------------------------------------------------------------------------

def _matches(sym: _Sym, patterns) -> bool:
    names = {sym.name.split("@", 1)[0], sym.demangled.split("@", 1)[0]}
    return any(fnmatch.fnmatchcase(n, p) for n in names for p in patterns)


def _family(sym: _Sym):
    return next((f for f in IMPORT_FAMILIES if _matches(sym, f.patterns)), None)


def _import_verdict(sym: _Sym, rules: PolicyRules) -> str | None:
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


def _check_imports(elf: _Elf, rules: PolicyRules) -> list:
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
                             f"{'uses' if data else 'calls'} {_short(sym.demangled)}, which this "
                             f"lab does not allow: {reason}"))
    return out


def _short(text: str, limit: int = 140) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# Rule: definitions. The outermost name of a mangled C++ symbol is read straight from the
# mangling (Itanium C++ ABI), which is exact where the demangled text is ambiguous (return
# types, template arguments, operators).
# ---------------------------------------------------------------------------------------------

_STD_ABBREVIATIONS = ("Sa", "Sb", "Ss", "Si", "So", "Sd")   # std::allocator, string, streams
_GLOBAL_OPERATORS = {"nw": "operator new", "na": "operator new[]", "dl": "operator delete",
                     "da": "operator delete[]"}


class _Unreadable(Exception):
    pass


class _Mangled:
    """Reads just enough of a mangled name (after its _Z) to find its outermost name."""

    def __init__(self, text: str):
        self.s, self.i = text, 0

    def peek(self, n: int = 1) -> str:
        return self.s[self.i:self.i + n]

    def take(self, prefix: str) -> bool:
        if self.s.startswith(prefix, self.i):
            self.i += len(prefix)
            return True
        return False

    def number(self) -> int:
        self.take("n")                                     # negative
        start = self.i
        while self.i < len(self.s) and self.s[self.i].isdigit():
            self.i += 1
        if start == self.i:
            raise _Unreadable
        return int(self.s[start:self.i])

    def call_offset(self) -> None:
        if self.take("h"):
            self.number()
        elif self.take("v"):
            self.number()
            if not self.take("_"):
                raise _Unreadable
            self.number()
        else:
            raise _Unreadable
        if not self.take("_"):
            raise _Unreadable

    def encoding(self) -> str:
        for special in ("TV", "TT", "TI", "TS", "TC"):    # vtable, VTT, typeinfo (name), ctor vt
            if self.take(special):
                return self.type_outer()
        if self.take("Th") or self.take("Tv"):             # thunks: back up over h/v
            self.i -= 1
            self.call_offset()
            return self.encoding()
        if self.take("Tc"):                                # covariant thunk
            self.call_offset()
            self.call_offset()
            return self.encoding()
        for special in ("GTt", "GTn", "GA"):               # transaction clones, hidden alias
            if self.take(special):
                return self.encoding()
        for special in ("TH", "TW", "GV", "GR"):           # TLS init/wrapper, guard, temporary
            if self.take(special):
                return self.name()
        if self.peek() in ("T", "G"):
            raise _Unreadable
        return self.name()

    def name(self) -> str:
        if self.take("N"):                                 # nested: N [CV] [ref] prefix... E
            while self.peek() and self.peek() in "rVK":
                self.i += 1
            if self.peek() and self.peek() in "RO":
                self.i += 1
            return self.prefix()
        if self.take("Z"):                                 # local entity: its function's scope
            return self.encoding()
        return self.prefix()

    def prefix(self) -> str:
        """The first component of a (possibly nested) name."""
        if self.take("St") or self.peek(2) in _STD_ABBREVIATIONS:
            return "std"
        if self.take("Z"):
            return self.encoding()
        if self.peek() and self.peek() in "TD" and self.peek(2) != "DC":
            return ""                                      # template parameter, decltype
        self.take("L")                                     # internal linkage marker
        if self.peek().isdigit():
            n = self.number()
            name = self.s[self.i:self.i + n]
            if len(name) != n:
                raise _Unreadable
            return name
        if self.peek(2) in ("Ut", "Ul", "DC"):             # unnamed type, lambda, binding
            return ""
        code = self.peek(2)
        if code in _GLOBAL_OPERATORS:
            return _GLOBAL_OPERATORS[code]
        if len(code) == 2 and code.isalpha() and code.islower():
            return "operator"                              # any other global operator
        raise _Unreadable

    def type_outer(self) -> str:
        """The outermost name of a type (vtable, typeinfo of a class); built-in types and
        types made from them (int*, function types) have their RTTI in the C++ runtime."""
        while self.peek() and self.peek() in "PROKVr":     # pointer, reference, qualifiers
            self.i += 1
        if self.take("St") or self.peek(2) in _STD_ABBREVIATIONS:
            return "std"
        if self.peek() and (self.peek() in "NZL" or self.peek().isdigit()):
            return self.name()
        return "<built-in type>"


def outer_name(symbol: str) -> str | None:
    """The outermost name of a mangled C++ symbol: 'std' for std::vector<int>::push_back,
    'labkit' for labkit::run(), 'round_up' for round_up(int, int), 'operator new' for the
    global operator new, '' where there is none of its own (a lambda, a template parameter),
    '<built-in type>' for the RTTI of int*. None when it is not a mangled name we can read."""
    if not symbol.startswith("_Z"):
        return None
    base = re.split(r"[.@]", symbol[2:], maxsplit=1)[0]   # drop .cold, .constprop.0, @VERSION
    try:
        return _Mangled(base).encoding()
    except (_Unreadable, IndexError, ValueError, RecursionError):
        return None


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
    probe = _Sym(name, "U", name)
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
    nm, found = _tool("nm"), {}
    for lib in SYSTEM_LIBRARIES:
        proc = runner.run([compiler, f"-print-file-name={lib}"], TOOL_TIMEOUT_S, cap=64 * 1024)
        path = proc.stdout.strip()
        if proc.returncode != 0 or not os.path.isabs(path) or not os.path.isfile(path):
            if lib in _REQUIRED_LIBRARIES:
                raise GraderError(f"policy check: {compiler} does not know where {lib} is "
                                  f"({path or proc.output.strip()[:200]})", EXIT_INTERNAL)
            continue
        listing = _run_tool([nm, "-D", "--defined-only", path], f"nm -D {lib}")
        for line in listing.splitlines():
            parts = line.split()
            if len(parts) >= 3:
                found.setdefault(parts[-1].split("@", 1)[0], lib)
    _EXPORTS.update(found)
    return _EXPORTS


_OPERATOR_TOKENS = re.compile(r"operator(?:<<=|>>=|<=>|<<|>>|<=|>=|->\*|->|<|>|\(\))")
_DEMANGLED_PREFIXES = re.compile(
    r"^(?:(?:vtable|VTT|typeinfo|typeinfo name|construction vtable|guard variable|"
    r"TLS init function|TLS wrapper function|transaction clone|reference temporary #\d+|"
    r"non-virtual thunk|virtual thunk|covariant return thunk) (?:for|to) )+")


def is_template_instance(demangled: str) -> bool:
    """True when a demangled name is (a member of) a template instantiation: a template
    argument list in its qualified name, not only in its parameter list
    ('std::vector<int>::push_back(int const&)', 'std::ctype<char>::do_widen(char) const',
    'int std::min<int>(...)'; not 'std::chrono::_V2::steady_clock::now()' nor
    'std::foo(std::vector<int>)'). Non-template functions have no return type in their
    mangling, so the name starts the text."""
    text = _DEMANGLED_PREFIXES.sub("", demangled)
    text = _OPERATOR_TOKENS.sub("operator@", text)
    text = re.sub(r"\boperator [^(]*", "operator@", text)    # conversion operators
    depth = 0
    for c in text:
        if c == "<":
            return True
        if c == "(" and depth == 0:
            return False                                     # the parameter list starts
        depth += c == "["
        depth -= c == "]"                                    # [abi:cxx11] tags
    return False


def _definition_problem(sym: _Sym, elf_type: str, exports: dict | None = None,
                        in_comdat: bool | None = None) -> str | None:
    """Why a global definition is not allowed, or None. `exports`: library_exports() (None
    skips that check); `in_comdat`: whether its section is a member of a COMDAT section group
    (None: unknown, that check is skipped)."""
    name = sym.name.split("@", 1)[0]
    weak = sym.kind in "WVuv"
    shown = _short(sym.demangled)
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
    if outer in _GLOBAL_OPERATORS.values():
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


def _check_definitions(elf: _Elf, exports: dict | None = None) -> list:
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
_PREFIXES = ("bnd", "notrack", "rex", "rex.W", "data16", "cs", "ds", "addr32", "lock", "rep",
             "repz", "repnz")


def _branch(text: str) -> tuple:
    """(kind, indirect) of an instruction: kind is 'call', 'jump' or None."""
    words = text.split()
    while words and words[0] in _PREFIXES:
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


def _targets(elf: _Elf, insn: _Insn) -> list:
    """What an instruction refers to: ("import", name) or ("local", section, offset)."""
    if insn.relocs:
        return [elf.resolve(r, insn) for r in insn.relocs]
    out = []
    kind, indirect = _branch(insn.text)
    if kind and not indirect:
        m = _BRANCH_TARGET.search(insn.text.split(None, 1)[-1])
        if m:
            out.append(("local", insn.section, int(m.group(1), 16)))
    if insn.comment_addr is not None:                     # a rip-relative address (lea)
        out.append(("local", insn.section, insn.comment_addr))
    return out


def _function_insns(elf: _Elf, section: str, span) -> list:
    lst = elf.insns.get(section, [])
    i = bisect.bisect_left([x.addr for x in lst], span[0])
    return [x for x in lst[i:] if x.addr < span[1]]


def _helper_name(name: str) -> str:
    outer = outer_name(name)
    return outer if outer else re.split(r"[.@]", name, maxsplit=1)[0]


def _allowed(name: str, patterns) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _walk(elf: _Elf, section: str, start, imports: tuple, refs: tuple, follow,
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
            kind, is_indirect = _branch(insn.text)
            if kind and is_indirect:
                indirect = True
                continue
            for t in _targets(elf, insn):
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


def _worst(problems: list) -> str:
    """The problem a student understands best: a call, else a named symbol it uses."""
    calls = [p for p in problems if "calls" in p]
    named = [p for p in problems if ".L" not in p and "?" not in p]
    return (calls or named or ["runs code of its own"])[0]


def _check_constructors(elf: _Elf) -> list:
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
                problems = _walk(elf, target[1], span, _NVCC_STARTUP_IMPORTS, (),
                                 lambda n: _helper_name(n).startswith(_NVCC_HELPER_PREFIXES),
                                 strict=False)
                if problems:
                    add(f"a global constructor: nvcc's kernel registration {problems[0]}", shown)
            elif fn.startswith("_GLOBAL__sub_I_"):
                problems = _walk(elf, target[1], span, _IOSTREAM_CALLS, _IOSTREAM_REFS,
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
# their flags (grader/elf.py: lands_in_code), disassembled by _read_object. It never scans raw
# bytes for patterns: data in honest nvcc output may hold any byte sequence.
# ---------------------------------------------------------------------------------------------

def _syscall_instruction(text: str) -> str | None:
    words = text.split()
    while words and words[0] in _PREFIXES:
        words = words[1:]
    if not words:
        return None
    if words[0] in ("syscall", "sysenter", "svc"):        # x86-64, x86, aarch64
        return words[0]
    if words[0] == "int" and len(words) > 1 and words[1] in ("$0x80", "0x80"):
        return "int $0x80"
    return None


def _check_syscalls(elf: _Elf) -> list:
    out = []
    for section, insns in elf.insns.items():
        starts = {x.addr for x in insns}
        end = insns[-1].next_addr if insns else 0
        for insn in insns:
            what = _syscall_instruction(insn.text)
            jump_inside = False
            if what is None:
                # A branch into the middle of another instruction could run a hidden one.
                kind, indirect = _branch(insn.text)
                if not kind or indirect or insn.relocs:
                    continue
                jump_inside = any(t[0] == "local" and t[1] == section and t[2] not in starts
                                  and t[2] < end for t in _targets(elf, insn))
                if not jump_inside:
                    continue
            fn = elf.function_at(section, insn.addr)
            where = _short(elf.demangle(fn[2]) if fn else section)
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


# ---------------------------------------------------------------------------------------------
# Rule: includes (what the compiler read for the student's file)
# ---------------------------------------------------------------------------------------------

def _load_compile_commands(path: Path) -> list:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise GraderError(f"policy check: cannot read {path}: {e}", EXIT_INTERNAL)
    if not isinstance(data, list):
        raise GraderError(f"policy check: {path} is not a compile_commands.json (a list)",
                          EXIT_INTERNAL)
    return data


def _find_entry(commands: list, source: Path, where: Path) -> dict:
    want = _real(source)
    for e in commands:
        if not isinstance(e, dict) or not isinstance(e.get("file"), str) \
                or not isinstance(e.get("directory", "."), str):
            continue
        directory = e.get("directory", ".")
        if _real(os.path.join(directory, e["file"])) != want:
            continue
        try:
            args = e.get("arguments") or shlex.split(str(e.get("command", "")))
        except ValueError as err:
            raise GraderError(f"policy check: {where}: the compile command of {source} cannot "
                              f"be read ({err})", EXIT_INTERNAL) from None
        if not args or not isinstance(args, list):
            break
        args = [str(a) for a in args]
        while len(args) > 1 and os.path.basename(args[0]) in _COMPILER_LAUNCHERS:
            args = args[1:]                               # ccache nvcc ...: run nvcc itself
        return {"directory": directory, "args": args, "file": e["file"]}
    raise GraderError(f"policy check: {where} has no compile command for {source}",
                      EXIT_INTERNAL)


def _base_args(entry: dict) -> list:
    """The compile command without its output, compile-only and dependency options."""
    args, out, skip = entry["args"], [], False
    for i, a in enumerate(args):
        if i == 0:
            out.append(a)
            continue
        if skip:
            skip = False
            continue
        if a in _DROP_WITH_VALUE:
            skip = True
            continue
        if a in _DROP or any(a.startswith(o + "=") for o in _DROP_WITH_VALUE):
            continue
        out.append(a)
    return out


def _is_nvcc(entry: dict) -> bool:
    return "nvcc" in os.path.basename(entry["args"][0])


def _parse_deps(text: str) -> list:
    """The prerequisites of a make rule as the compiler writes it (-M)."""
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    deps = []
    for line in text.splitlines():
        _, sep, rest = line.partition(": ")
        if not sep:
            _, sep, rest = line.partition(":")
            if not sep:
                continue
        for token in re.findall(r"(?:\\.|[^\s\\])+", rest):
            deps.append(re.sub(r"\\(.)", r"\1", token).replace("$$", "$"))
    return deps


def _toolkit_roots(entry: dict) -> list:
    """The CUDA toolkit's include directories, found from the compiler's own path."""
    compiler = entry["args"][0]
    if not os.path.isabs(compiler):
        compiler = shutil.which(compiler) or compiler
    roots = []
    if _is_nvcc(entry):
        roots.append(os.path.dirname(os.path.dirname(_real(compiler))))
    roots.append(_real(DEFAULT_CUDA_ROOT))
    dirs = []
    for root in roots:
        dirs.append(os.path.join(root, "include"))
        dirs += [str(p) for p in Path(root).glob("targets/*/include")]
    return sorted({_real(d) for d in dirs if os.path.isdir(d)})


def _host_compiler(entry: dict) -> str:
    """The C++ compiler behind the compile command: nvcc's -ccbin, else the g++ nvcc would
    find on PATH; for a C++ command, the compiler itself."""
    args = entry["args"]
    if not _is_nvcc(entry):
        return args[0]
    for i, a in enumerate(args):
        for flag in ("-ccbin", "--compiler-bindir"):
            if a == flag and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(flag + "="):
                return a.split("=", 1)[1]
    return "g++"


_COMPILER_DIRS: dict = {}


def _compiler_include_dirs(compiler: str) -> list:
    """The compiler's own system include directories (`-E -v`: "#include <...> search starts
    here:"), e.g. /opt/gcc/include/c++/13 for a GCC installed outside /usr. /usr/local/include
    is left out, as in SYSTEM_INCLUDE_DIRS."""
    if compiler in _COMPILER_DIRS:
        return _COMPILER_DIRS[compiler]
    if os.path.isdir(compiler):  # -ccbin may name a folder
        compiler = os.path.join(compiler, "g++")
    found = []
    try:
        proc = runner.run([compiler, "-E", "-x", "c++", "-v", "/dev/null"], COMPILER_TIMEOUT_S,
                          cap=TOOL_OUTPUT_CAP)
        listing, inside = proc.output.splitlines(), False
        for line in listing:
            if line.startswith("#include <...> search starts here"):
                inside = True
            elif line.startswith("End of search list"):
                inside = False
            elif inside and line.startswith(" "):
                d = _real(line.strip())
                if os.path.isdir(d) and not _under(d, "/usr/local/include"):
                    found.append(d)
    except OSError:
        found = []
    _COMPILER_DIRS[compiler] = found
    return found


def _system_roots(entry: dict | None = None) -> list:
    dirs = []
    for pattern in SYSTEM_INCLUDE_DIRS:
        dirs += [str(p) for p in Path("/").glob(pattern.lstrip("/"))] if "*" in pattern \
            else [pattern]
    roots = {_real(d) for d in dirs if os.path.isdir(d)}
    if entry is not None:
        roots.update(_compiler_include_dirs(_host_compiler(entry)))
    return sorted(roots)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _first_error(output: str) -> str:
    for line in output.splitlines():
        if "error" in line.lower() or "fatal" in line.lower():
            return line.strip()
    return (output.strip().splitlines() or ["(no message)"])[0]


def _check_includes(source: Path, entry: dict, allowed_headers: set, rules: PolicyRules) -> list:
    args = _base_args(entry) + ["-M"]
    proc = runner.run(args, COMPILER_TIMEOUT_S, cwd=entry["directory"], cap=TOOL_OUTPUT_CAP)
    if proc.timed_out or proc.returncode != 0:
        why = "it timed out" if proc.timed_out else _first_error(proc.output)
        return [Violation("include", source.name,
                          f"the compiler could not list the files your source includes "
                          f"({_short(why, 300)}): fix that first")]
    roots = _system_roots(entry) + _toolkit_roots(entry)
    own = _real(os.path.join(entry["directory"], entry["file"]))
    patterns = DEFAULT_FORBID_INCLUDES + tuple(rules.forbid_includes)
    out, reported = [], set()
    for dep in _parse_deps(proc.stdout):
        path = _real(os.path.join(entry["directory"], dep))
        if path == own or path in allowed_headers:
            continue
        root = next((r for r in roots if _under(path, r)), None)
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
        kind = "the grading harness's" if pattern in _HARNESS_INCLUDES else "vendor library"
        out.append(Violation("include", shown,
                             f"includes <{shown}>: {kind} headers are not allowed in this lab "
                             f"(they match '{pattern}')"))
    return out


def _preprocess_host(entry: dict) -> str | None:
    """The student's file as the host compiler sees it: macros expanded, comments gone, every
    function (device ones too) present, with __CUDA_ARCH__ undefined.

    For nvcc that is the host preprocessing step of `nvcc -cuda` (its "cpp4.ii"), run alone: the
    rest of -cuda compiles the device code (cicc, ptxas), as long as the build itself, and then
    hands on only cudafe's host stubs. The step is read from `nvcc --dryrun`; where it cannot
    be found there, the whole `nvcc -cuda` runs instead.
    None when it cannot be made: then the build fails too (same command), so nothing runs."""
    with tempfile.TemporaryDirectory(prefix="policy-") as tmp:
        out_file = os.path.join(tmp, "host.ii")
        if _is_nvcc(entry):
            cmd = _nvcc_host_preprocess(entry, out_file) or \
                _base_args(entry) + ["-cuda", "-o", out_file]
        else:
            cmd = _base_args(entry) + ["-E", "-o", out_file]
        proc = runner.run(cmd, COMPILER_TIMEOUT_S, cwd=entry["directory"], cap=64 * 1024)
        if proc.timed_out or proc.returncode != 0 or not os.path.isfile(out_file):
            return None
        return Path(out_file).read_text(errors="replace")


def _nvcc_host_preprocess(entry: dict, out_file: str) -> list | None:
    """The host compiler's preprocessing command that `nvcc -cuda` would run for this entry,
    writing to out_file; None when nvcc's dry run does not show exactly one such step in a form
    that needs no shell (no variables, no substitutions)."""
    proc = runner.run(_base_args(entry) + ["-cuda", "--dryrun", "-o", out_file], 60,
                      cwd=entry["directory"], cap=256 * 1024)
    if proc.timed_out or proc.returncode != 0:
        return None
    found = []
    for line in (proc.stdout + proc.stderr).splitlines():
        if not line.startswith("#$ ") or "$" in line[3:] or "`" in line:
            continue
        try:
            argv = shlex.split(line[3:])
        except ValueError:
            continue
        if ("-E" in argv and "-D__CUDACC__" in argv and "-o" in argv[:-1]
                and not any(a.startswith("-D__CUDA_ARCH__") for a in argv)
                and argv[argv.index("-o") + 1].endswith(".cpp4.ii")):
            argv[argv.index("-o") + 1] = out_file
            found.append(argv)
    return found[0] if len(found) == 1 else None


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
    marked = re.sub(_CLOSE + r"\s*" + _OPEN, "", marked)
    return marked.replace(_OPEN, " ").replace(_CLOSE, " ")


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


def _scan_text(text: str) -> list:
    """(needle, description) for every forbidden directive in C/C++ text."""
    decoded = _decoded_text(text).lower()
    squeezed = re.sub(r"\s+", "", decoded).replace('"', "")
    spaced = re.sub(r"\s+", " ", decoded)
    # The normalisation of the text as written, comments included: whitespace and double
    # quotes removed, so that ".inc" "bin" is caught even if the tokenising above went wrong.
    literal = re.sub(r"[\s\"]+", "", text).lower()
    hits = [(n, what) for n, what in _FILE_DIRECTIVES if n in squeezed or n in literal]
    for rx, what in _ASM_DIRECTIVES:
        m = rx.search(spaced)
        if m:
            hits.append((m.group(0), what))
    return hits


def _check_source_text(source: Path, preprocessed: str | None) -> list:
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
    for needle, what in hits:
        if what in seen:
            continue
        seen.add(what)
        out.append(Violation("source", needle,
                             f"{source.name} contains {what}: reading files at compile time is "
                             f"not allowed"))
    return out


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

DEVICE_FAMILIES = ("tensor_cores", "low_precision")
CUOBJDUMP_INSTALL = "scripts/install-deps"       # puts NVIDIA's wheel into build/tools/venv
TOOLS_VENV = Path(__file__).resolve().parents[1] / "build" / "tools" / "venv"

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
    for bindir in dict.fromkeys([os.path.dirname(nvcc), os.path.dirname(_real(nvcc))]):
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
                                     f"({_short(proc.output.strip(), 200)})")
        raise GraderError(f"policy check: cuobjdump -sass {path.name} failed: "
                          f"{_short(proc.output.strip(), 500)}", EXIT_INTERNAL)
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
# the object's bytes, the families refused, this module's code and the cuobjdump used. The
# object and this file live in the grader's build folder, which the student's code never runs
# with access to (it is compiled, not run, there; the worker is sandboxed).
DEVICE_CACHE_SUFFIX = ".device-check.json"


def _device_cache_key(path: Path, families) -> str | None:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        h.update(repr(sorted(families)).encode())
        h.update(Path(__file__).read_bytes())
        tool = find_cuobjdump() or ""
        st = os.stat(tool) if tool else None
        h.update(f"{tool}:{st.st_size if st else 0}:{st.st_mtime_ns if st else 0}".encode())
        return h.hexdigest()
    except OSError:
        return None


def _check_device_code(path: Path, families) -> list:
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
    names = _demangle([k for k, _, _ in hits])
    out, seen = [], set()
    for kernel, op, family in hits:
        if (kernel, op) in seen:
            continue
        seen.add((kernel, op))
        shown = _short(names.get(kernel, kernel), 100)
        out.append(Violation("device", f"{op} in {shown}",
                             _DEVICE_MESSAGES[family].format(op=op, kernel=shown)))
    return out
