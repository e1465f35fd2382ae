"""The policy as data: what the rules allow and refuse by default (patterns, namespaces, header
names), a lab's additions to it (PolicyRules: its grading.toml's [policy] table), and what the
check finds (Violation, PolicyResult). The rules that apply them: object_rules.py,
source_rules.py, device.py."""

from __future__ import annotations

import dataclasses
import re

from grader.errors import GraderError

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
HARNESS_INCLUDES = ("gtest/*", "gmock/*", "benchmark/*", "labkit/*")

# The device rule's families (device.py): what a lab's forbid_device_instructions may name.
DEVICE_FAMILIES = ("tensor_cores", "low_precision", "half_arithmetic", "narrow_precision",
                   "shared_memory", "async_copy")


@dataclasses.dataclass(frozen=True)
class PolicyRules:
    """A lab's additions to the default policy: the [policy] table of its grading.toml."""
    allow_imports: tuple = ()     # added to the allowlist
    forbid_imports: tuple = ()    # rejected even when allowed (beats every allow pattern)
    forbid_includes: tuple = ()   # added to DEFAULT_FORBID_INCLUDES
    # Families of device instructions refused in the kernels' SASS (DEVICE_FAMILIES):
    # "tensor_cores", "low_precision", "half_arithmetic", "narrow_precision", "shared_memory",
    # "async_copy". Empty:
    # the device rule
    # does not run
    # (no cuobjdump).
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
    # The objects' kernels and their resources (device.kernel_resources), None when they were
    # not read (no object checked, or no cuobjdump where no rule needed it).
    kernels: list | None = None

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
