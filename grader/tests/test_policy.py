"""The submission policy (grader/policy/, entered through grader.policy).

First the rules on their own and on canned tool output (fast, no CUDA, no binutils needed):
the mangled-name reader, the import and definition verdicts, the source-text scan, the
compile-command handling, and whole objects read from saved nm/readelf/objdump output
(policy_fixtures/canned/). Then real compiles: every .cu in policy_fixtures/ and the lab 01
starter and solution are compiled with nvcc once (setUpClass), and each must pass or fail with
the expected rule. Those skip when nvcc is not installed.

The canned files were made from nvcc 13.0 / GCC 12 objects of the fixtures with
  nm --no-sort X.o; readelf -W -S -s -r X.o; objdump -dr --no-show-raw-insn -j SECTION X.o
and c++filt for the .cxxfilt.txt maps (mangled TAB demangled).
"""

import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

from grader import policy, runner
from grader.policy import (compile_commands, demangle, elf_object, object_rules, rules,
                           source_rules, tools)
from grader.errors import GraderError
from grader.policy import PolicyResult, PolicyRules, Violation

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "policy_fixtures"
CANNED = FIXTURES / "canned"
REPO = TESTS.parents[1]
LAB = REPO / "labs" / "01_naive_matmul"
HEADER = LAB / "matmul.h"
NVCC_FLAGS = ["-O3", "-lineinfo", "-arch=sm_90", "-std=c++17"]
O0 = ["-O0", "-Xcompiler", "-O0"]


def find_nvcc():
    found = shutil.which("nvcc")
    if found:
        return found
    default = Path("/usr/local/cuda/bin/nvcc")
    return str(default) if default.is_file() else None


NVCC = find_nvcc()


def sym(name, demangled=None, kind="U"):
    return elf_object.Sym(name=name, kind=kind, demangled=demangled or name)


# ---------------------------------------------------------------------------------------------
# Rule logic, no tools
# ---------------------------------------------------------------------------------------------

class OuterNameTest(unittest.TestCase):
    """The outermost name read from a mangled symbol decides the definition rule."""

    CASES = {
        "_Z15matmul_v1_naivePKfS0_PfiiiP11CUstream_st": "matmul_v1_naive",
        "_ZN6labkit3runEv": "labkit",
        "_ZN7testing8internal10AlwaysTrueEv": "testing",
        "_ZNKSt5ctypeIcE8do_widenEc": "std",
        "_ZSt3minIiERKT_S2_S2_": "std",               # a function template of std
        "_ZNSaIiEC2Ev": "std",                         # std::allocator<int> (abbreviation)
        "_ZN9__gnu_cxx17__normal_iteratorIPiSt6vectorIiSaIiEEEppEv": "__gnu_cxx",
        "_Znwm": "operator new",
        "_ZdlPvm": "operator delete",
        "_ZplRK6__halfS1_": "operator",                # a global operator+ (not the allocator)
        "_ZTISt9exception": "std",                     # typeinfo for std::exception
        "_ZTIPKc": "<built-in type>",                  # typeinfo for char const*
        "_ZTI3FooIiE": "Foo",
        "_ZThn8_N3Foo3barEv": "Foo",                   # non-virtual thunk
        "_ZTv0_n24_N3Foo3barEv": "Foo",                # virtual thunk
        "_ZTW1x": "x",                                 # TLS wrapper
        "_ZGVZ51__device_stub__Z22matmul_v1_naive_kernelPKfS0_PfiiiPKfS0_PfiiiE5__tmp":
            "__device_stub__Z22matmul_v1_naive_kernelPKfS0_Pfiii",
        "_ZZ12launch_tiledIdEvPKT_S2_PS0_RK5ShapeP11CUstream_stE10configured": "launch_tiled",
        "_ZNKUlvE_clEv": "",                           # a lambda at namespace scope
        "_ZN47_GLOBAL__N__e1e9f99a_14_ok_host_cxx_cu_ac8afba412naive_kernelEPKfS1_Pfiii":
            "_GLOBAL__N__e1e9f99a_14_ok_host_cxx_cu_ac8afba4",
        "_Z20cudaFuncSetAttributeIFvPKfS1_PfiiiEE9cudaErrorPT_20cudaFuncAttributei":
            "cudaFuncSetAttribute",
        "_ZL24__sti____cudaRegisterAllv": "__sti____cudaRegisterAll",
        "_Z3fooi.cold": "foo",
        "_Z3fooi@@VERS_1": "foo",
    }

    def test_cases(self):
        for mangled, outer in self.CASES.items():
            with self.subTest(mangled):
                self.assertEqual(policy.outer_name(mangled), outer)

    def test_unreadable_and_unmangled(self):
        for name in ("_Z", "_ZX", "_ZN!", "_Z9short", "write", ""):
            with self.subTest(name):
                self.assertIsNone(policy.outer_name(name))


class ImportVerdictTest(unittest.TestCase):
    def verdict(self, name, demangled=None, rules=PolicyRules()):
        return object_rules._import_verdict(sym(name, demangled), rules)

    def test_legitimate_imports(self):
        for name, demangled in [
                ("__cudaRegisterFatBinary", None), ("__cudaPushCallConfiguration", None),
                ("__cudaLaunchKernel", None), ("__cudaGetKernel", None),
                ("__cudaRegisterLinkedBinary_968a480e_10_x_cu_8a532bd4", None),
                ("cudaLaunchKernel", None), ("cudaMemsetAsync", None),
                ("cudaFuncSetAttribute", None), ("cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                                                 None),
                ("cudaGetDeviceProperties_v2", None), ("cudaStreamGetCaptureInfo_v3", None),
                ("__cxa_guard_acquire", None), ("_Unwind_Resume", None), ("atexit", None),
                ("_Znwm", "operator new(unsigned long)"),
                ("_ZdlPvm", "operator delete(void*, unsigned long)"),
                ("_ZSt20__throw_length_errorPKc", "std::__throw_length_error(char const*)"),
                ("memcpy@GLIBC_2.14", None), ("printf", None), ("__printf_chk", None),
                ("stderr", None), ("sqrtf", None), ("log2", None), ("fmaxf", None),
                ("_ZSt4cerr", "std::cerr"),
                ("_ZNSo3putEc", "std::basic_ostream<char, std::char_traits<char> >::put(char)"),
                ("_ZTVN10__cxxabiv117__class_type_infoE",
                 "vtable for __cxxabiv1::__class_type_info")]:
            with self.subTest(name):
                self.assertIsNone(self.verdict(name, demangled))

    def test_rejected_imports_name_their_reason(self):
        for name, demangled, reason in [
                ("cudaMemcpy", None, "copies"), ("cudaMemcpyAsync", None, "copies"),
                ("cudaMemcpyToSymbolAsync", None, "copies"),
                ("cudaMalloc", None, "allocate"),
                ("cudaLaunchHostFunc", None, "host callbacks"),
                ("cudaStreamAddCallback", None, "host callbacks"),
                ("cudaStreamCreateWithFlags", None, "stream it is given"),
                ("cudaEventRecord", None, "stream it is given"),
                ("cudaDeviceSynchronize", None, "without waiting"),
                ("cudaStreamSynchronize", None, "without waiting"),
                ("cublasSgemm_v2", None, "vendor"), ("cusparseSpMV", None, "vendor"),
                ("cudnnCreate", None, "vendor"),
                ("cuLaunchKernel", None, "driver API"), ("cuGetProcAddress_v2", None,
                                                         "driver API"),
                ("dlopen", None, "loading"), ("dlsym", None, "loading"),
                ("fopen64", None, "file"), ("open", None, "file"), ("openat", None, "file"),
                ("read", None, "file"), ("write", None, "file"), ("mmap", None, "file"),
                ("syscall", None, "system calls"), ("system", None, "process"),
                ("popen", None, "process"), ("fork", None, "process"), ("vfork", None, "process"),
                ("clone3", None, "process"), ("execve", None, "process"),
                ("posix_spawnp", None, "process"), ("kill", None, "process"),
                ("ptrace", None, "process"), ("prctl", None, "process"),
                ("socket", None, "network"), ("getenv", None, "environment"),
                ("setenv", None, "environment"), ("pthread_create", None, "threads"),
                ("_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
                 "std::thread::_M_start_thread(std::unique_ptr<std::thread::_State, "
                 "std::default_delete<std::thread::_State> >, void (*)())", "threads"),
                ("_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode",
                 "std::basic_ifstream<char, std::char_traits<char> >::basic_ifstream(char const*, "
                 "std::_Ios_Openmode)", "file"),
                ("_ZTVSt14basic_ofstreamIcSt11char_traitsIcEE",     # beats "vtable for std::*"
                 "vtable for std::basic_ofstream<char, std::char_traits<char> >", "file"),
                ("_ZNSt13basic_filebufIcSt11char_traitsIcEE4openEPKcSt13_Ios_Openmode",
                 "std::basic_filebuf<char, std::char_traits<char> >::open(char const*, "
                 "std::_Ios_Openmode)", "file"),
                ("clock_gettime", None, "clocks"), ("usleep", None, "sleeping"),
                ("some_unknown_function", None, "not on the list")]:
            with self.subTest(name):
                reason_text = self.verdict(name, demangled)
                self.assertIsNotNone(reason_text, f"{name} was allowed")
                self.assertIn(reason, reason_text)

    def test_lab_rules(self):
        forbid = PolicyRules(forbid_imports=("cudaMemsetAsync", "printf"))
        self.assertIsNotNone(self.verdict("cudaMemsetAsync", rules=forbid))
        self.assertIn("this lab does not allow", self.verdict("printf", rules=forbid))
        allow = PolicyRules(allow_imports=("cudaMemcpyAsync",))
        self.assertIsNone(self.verdict("cudaMemcpyAsync", rules=allow))
        self.assertIsNotNone(self.verdict("cudaMemcpy", rules=allow))
        # forbid beats allow; patterns match the demangled name too
        both = PolicyRules(allow_imports=("cudaMemcpy*",), forbid_imports=("cudaMemcpy",))
        self.assertIsNotNone(self.verdict("cudaMemcpy", rules=both))
        self.assertIsNone(self.verdict("cudaMemcpy2DAsync", rules=both))
        demangled = PolicyRules(forbid_imports=("std::__throw_*",))
        self.assertIsNotNone(self.verdict("_ZSt17__throw_bad_allocv",
                                          "std::__throw_bad_alloc()", rules=demangled))

    def test_message_names_the_symbol_and_why(self):
        elf = mock.Mock(symbols=[sym("cudaMemcpy"), sym("printf"), sym("x", kind="T")])
        (v,) = object_rules.check_imports(elf, PolicyRules())
        self.assertEqual((v.rule, v.symbol), ("import", "cudaMemcpy"))
        self.assertTrue(v.message.startswith("calls cudaMemcpy, which this lab does not allow: "
                                             "copies must not happen inside the launcher"),
                        v.message)


class DefinitionTest(unittest.TestCase):
    def problem(self, name, demangled=None, kind="T", elf_type="FUNC"):
        return object_rules._definition_problem(sym(name, demangled, kind), elf_type)

    def test_ordinary_definitions_pass(self):
        for name, kind, elf_type in [
                ("_Z15matmul_v1_naivePKfS0_PfiiiP11CUstream_st", "T", "FUNC"),
                ("_Z22matmul_v1_naive_kernelPKfS0_Pfiii", "T", "FUNC"),
                ("_Z51__device_stub__Z22matmul_v1_naive_kernelPKfS0_PfiiiPKfS0_Pfiii", "T",
                 "FUNC"),
                ("_Z12launch_tiledIdEvPKT_S2_PS0_RK5ShapeP11CUstream_st", "W", "FUNC"),
                ("_ZZ12launch_tiledIdEvPKT_S2_PS0_RK5ShapeP11CUstream_stE10configured", "u",
                 "OBJECT"),
                ("_ZN5Shape5tilesEv", "W", "FUNC"), ("_ZN4dim3C2Ejjj", "W", "FUNC"),
                ("_ZSt3minIiERKT_S2_S2_", "W", "FUNC"),            # std::min<int> at -O0
                ("_ZNKSt5ctypeIcE8do_widenEc", "W", "FUNC"),
                ("_ZN9__gnu_cxx17__normal_iteratorIPiSt6vectorIiSaIiEEEppEv", "W", "FUNC"),
                ("_Z20cudaFuncSetAttributeIFvPKfS1_PfiiiEE9cudaErrorPT_20cudaFuncAttributei",
                 "W", "FUNC"),                                      # a CUDA header template
                ("_ZN6__halfC2Ef", "W", "FUNC"),                    # __half's constructor
                ("_ZplRK6__halfS1_", "T", "FUNC"),                  # a global operator+
                ("_ZN47_GLOBAL__N__e1e9f99a_14_ok_host_cxx_cu_ac8afba412naive_kernelEPKfS1_Pfiii",
                 "T", "FUNC"),
                ("DW.ref.__gxx_personality_v0", "V", "OBJECT"),
                ("__fatbinwrap_968a480e_10_ok_rich_cu_8a532bd4", "D", "OBJECT"),
                ("hostRefKernelArrayExternalLinkage", "V", "OBJECT"),
                ("c_scale", "B", "OBJECT"), ("g_counter", "D", "OBJECT"),   # global variables
                ("nvals", "B", "OBJECT"), ("status", "B", "OBJECT")]:
            with self.subTest(name):
                self.assertIsNone(self.problem(name, kind=kind, elf_type=elf_type))

    def test_rejected_definitions(self):
        for name, demangled, kind, elf_type, expect in [
                ("cudaEventElapsedTime", None, "T", "FUNC", "CUDA runtime"),
                ("cuLaunchKernel", None, "T", "FUNC", "CUDA runtime"),
                ("__cudaRegisterFunction", None, "T", "FUNC", "CUDA runtime"),
                ("write", None, "T", "FUNC", "C library"),
                ("malloc", None, "W", "FUNC", "C library"),
                ("stdout", None, "D", "OBJECT", "C library"),
                ("environ", None, "B", "OBJECT", "C library"),
                ("main", None, "T", "FUNC", "C library"),
                ("my_helper", None, "T", "FUNC", "C-linkage function"),
                ("evil_absolute", None, "A", "NOTYPE", "C-linkage function"),
                ("__secret", None, "B", "OBJECT", "reserved"),
                ("_ZN6labkit13outputs_matchEPKfS1_l",
                 "labkit::outputs_match(float const*, float const*, long)", "T", "FUNC",
                 "grading harness"),
                ("_ZN6labkit3runEv", "labkit::run()", "W", "FUNC", "grading harness"),  # weak too
                ("_ZN7testing8internal10AlwaysTrueEv", "testing::internal::AlwaysTrue()", "T",
                 "FUNC", "grading harness"),
                ("_ZN9benchmark5State8PauseTimingEv", "benchmark::State::PauseTiming()", "T",
                 "FUNC", "grading harness"),
                ("_ZN6thrust4fillEv", "thrust::fill()", "W", "FUNC", "library this lab"),
                ("_ZN3cub6detail3fooEv", "cub::detail::foo()", "W", "FUNC", "library this lab"),
                ("_ZNSt6chrono3_V212steady_clock3nowEv",
                 "std::chrono::_V2::steady_clock::now()", "T", "FUNC", "C++ or CUDA library"),
                ("_ZN4cuda3std3fooEv", "cuda::std::foo()", "T", "FUNC", "C++ or CUDA library"),
                ("_Znwm", "operator new(unsigned long)", "T", "FUNC", "global allocator"),
                ("_ZdlPv", "operator delete(void*)", "W", "FUNC", "global allocator"),
                ("_ZTIPKc", "typeinfo for char const*", "V", "OBJECT", "C++ runtime"),
                ("_Z20cudaEventElapsedTimePfP10CUevent_stS1_",
                 "cudaEventElapsedTime(float*, CUevent_st*, CUevent_st*)", "T", "FUNC",
                 "reserved"),
                ("_Z7__evilv", "__evil()", "T", "FUNC", "reserved"),
                ("_ZX9garbage", None, "T", "FUNC", "cannot read")]:
            with self.subTest(name):
                text = self.problem(name, demangled, kind, elf_type)
                self.assertIsNotNone(text, f"{name} was allowed")
                self.assertIn(expect, text)

    def test_locals_and_imports_are_not_definitions(self):
        elf = mock.Mock(symbols=[sym("write", kind="t"), sym("write", kind="U"),
                                 sym("_ZN6labkit1xE", kind="b"), sym("resolver", kind="i")],
                        elf_symbols=[])
        self.assertEqual(object_rules.check_definitions(elf), [])


class SourceTextTest(unittest.TestCase):
    def scan(self, text):
        return [needle for needle, *_ in source_rules._scan_text(text)]

    def test_file_directives_are_found_however_spelt(self):
        for text in ['asm(".incbin \\"x\\"");',
                     'asm(".in" "cbin \\"x\\"");',                  # split literals
                     'asm(".in" /* gap */ "cbin \\"x\\"");',        # a comment in between
                     'asm(".in" // gap\n "cbin");',
                     'asm(".inc\\\nbin");',                         # a line splice
                     'asm(".\\x69ncbin x");',                       # a hex escape
                     'asm(".\\151ncbin x");',                       # an octal escape
                     'asm(".\\u0069ncbin x");',
                     'asm(R"(.INCBIN "x")");',                      # raw string, upper case
                     'asm(u8".inc" u8"bin");',                      # prefixed literals
                     '#  embed "x"', '%:embed "x"', "#em\\\nbed <x>"]:
            with self.subTest(text):
                self.assertTrue(set(self.scan(text)) & {"incbin", "#embed", "%:embed"},
                                self.scan(text))

    def test_assembler_file_and_macro_directives(self):
        self.assertIn(".include", self.scan('asm(".include \\"/etc/passwd\\"");'))
        self.assertIn(".include", self.scan('asm(".incl" "ude \\"x\\"");'))
        self.assertTrue(self.scan('asm(".macro m a\\n.\\\\a\\\\()bin x\\n.endm");'))
        self.assertTrue(self.scan('asm(".irpc c,x\\n.endr");'))

    def test_assembler_directives_that_skip_the_compilers_output(self):
        # a red team's file (round 18) skipped nvcc's whole fatbin: `.if 0` in a top-level asm,
        # `.endif` in a section name (05_reduction/asm_if_skips_fatbin)
        for text in ['asm(".section .nv_fatbin\\n.if 0\\n");',
                     'void f() __attribute__((section(".text.z\\n.endif\\n#")));',
                     'asm(".en" "dif");', 'asm(".\\151fdef x");', 'asm(".rept 0");',
                     'asm(".END");', 'asm(R"(.else)");', 'asm(".ifnc a,b");']:
            with self.subTest(text):
                self.assertTrue(self.scan(text), text)
        # C++ code and ordinary strings are not assembler text
        for text in ['int n = v.end() - v.begin(); if (x) y = 1; else y = 2;',
                     'const char* s = "x.else.y .elsewhere .endian .iffy .ends";',
                     '// .if 0 in a comment\nint k;']:
            with self.subTest(text):
                self.assertEqual(self.scan(text), [], text)

    def test_ordinary_code_is_clean(self):
        text = ('#include "matmul.h"\n#include <algorithm>\n'
                '// includes, binary, "include", #pragma unroll\n'
                'bool f(const Set& s) { return s.includes(3) && std::ranges::includes(a, b); }\n'
                'asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));\n'
                "char q = '\"'; const char* s = \"in\" \"bin\";\n")
        self.assertEqual(self.scan(text), [])

    def test_check_source_text_reports_once_per_directive(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "k.cu"
            src.write_text('asm(".incbin \\"a\\"");\nasm(".incbin \\"b\\"");\n#embed "c"\n')
            found = source_rules.check_source_text(src, None)
            self.assertEqual(sorted(v.symbol for v in found), ["#embed", "incbin"])
            self.assertTrue(all(v.rule == "source" and "k.cu contains" in v.message
                                for v in found))
            # the preprocessed text is scanned too
            src.write_text("ASM(X)\n")
            (v,) = source_rules.check_source_text(src, 'asm(".incbin \\"a\\"");')
            self.assertEqual(v.symbol, "incbin")

    def test_embed_without_compiling(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "k.cu"
            src.write_text('static const char data[] = {\n#embed "hidden_test.cpp"\n};\n')
            result = policy.check_submission([], [src], [], None, PolicyRules())
            self.assertFalse(result.ok)
            self.assertEqual([v.rule for v in result.violations], ["source"])


class CompileCommandTest(unittest.TestCase):
    def test_base_args_drop_outputs_and_dependency_options(self):
        cmd = ('/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -I/r/labs/01 '
               '-isystem=/usr/local/cuda/include -O3 -DNDEBUG '
               '"--generate-code=arch=compute_90,code=[compute_90,sm_90]" -lineinfo -std=c++17 '
               '-MD -MT labs/x.cu.o -MF labs/x.cu.o.d -x cu -c /s/matmul.cu -o labs/x.cu.o')
        entry = {"args": shlex.split(cmd), "directory": "/b", "file": "/s/matmul.cu"}
        self.assertEqual(compile_commands.base_args(entry), [
            "/usr/local/cuda/bin/nvcc", "-forward-unknown-to-host-compiler", "-I/r/labs/01",
            "-isystem=/usr/local/cuda/include", "-O3", "-DNDEBUG",
            "--generate-code=arch=compute_90,code=[compute_90,sm_90]", "-lineinfo",
            "-std=c++17", "-x", "cu", "/s/matmul.cu"])
        self.assertTrue(compile_commands.is_nvcc(entry))

    def test_find_entry(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "a.cu"
            src.write_text("")
            cc = Path(tmp) / "compile_commands.json"
            commands = [{"directory": tmp, "command": "nvcc -c other.cu", "file": "other.cu"},
                        {"directory": tmp, "arguments": ["nvcc", "-c", "a.cu"], "file": "a.cu"}]
            entry = compile_commands.find_entry(commands, src, cc)
            self.assertEqual(entry["args"], ["nvcc", "-c", "a.cu"])
            launched = [{"directory": tmp, "command": "ccache nvcc -c a.cu", "file": str(src)}]
            self.assertEqual(compile_commands.find_entry(launched, src, cc)["args"], ["nvcc", "-c", "a.cu"])
            with self.assertRaises(GraderError) as e:
                compile_commands.find_entry(commands[:1], src, cc)
            self.assertIn("no compile command", e.exception.message)
            cc.write_text("{not json")
            with self.assertRaises(GraderError):
                compile_commands.load(cc)

    def test_parse_deps(self):
        text = ("matmul.o : /s/matmul.cu \\\n    /usr/include/stdc-predef.h \\\n"
                "    /r/labs/01/matmul.h /path/with\\ space.h \\\n    /a$$b.h\n")
        self.assertEqual(compile_commands.parse_deps(text), [
            "/s/matmul.cu", "/usr/include/stdc-predef.h", "/r/labs/01/matmul.h",
            "/path/with space.h", "/a$b.h"])


@unittest.skipUnless(NVCC, "nvcc was not found (PATH, /usr/local/cuda/bin)")
class HostPreprocessTest(unittest.TestCase):
    """The source rule's preprocessed text is nvcc's host preprocessing step run alone (found in
    `nvcc --dryrun`), not the whole `nvcc -cuda`, which compiles the device code as well."""

    def test_the_host_step_alone_sees_every_function_with_cuda_arch_undefined(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "a.cu"
            src.write_text("#define CAT(a, b) a##b\n#ifdef __CUDA_ARCH__\nint CAT(device_, side);\n"
                           "#else\nint CAT(host_, side);\n#endif\n"
                           "__global__ void CAT(ker, nel)(float* p) { *p = 1.0f; }\n")
            entry = {"directory": tmp, "file": str(src),
                     "args": [NVCC, *NVCC_FLAGS, "-x", "cu", "-c", str(src), "-o", "a.o"]}
            step = compile_commands.nvcc_host_preprocess(entry, str(Path(tmp) / "out.ii"))
            self.assertIsNotNone(step, "nvcc --dryrun shows no host preprocessing step")
            self.assertIn("-E", step)
            self.assertEqual(step[step.index("-o") + 1], str(Path(tmp) / "out.ii"))
            with mock.patch.object(runner, "run", wraps=runner.run) as run:
                text = compile_commands.preprocess_host(entry)
            self.assertNotIn("-cuda", run.call_args_list[-1].args[0])   # the step, not -cuda
            self.assertIn("host_side", text)
            self.assertNotIn("device_side", text)
            self.assertIn("kernel", text)

    def test_without_a_usable_dry_run_the_whole_cuda_step_runs(self):
        entry = {"directory": "/", "file": "/x.cu", "args": [NVCC, "-c", "/x.cu"]}
        for out in ("#$ gcc -E -D__CUDACC__ $X -o a.cpp4.ii",       # needs a shell
                    "#$ gcc -E -x c++ -o a.cpp1.ii",                 # no host step
                    "#$ gcc -E -D__CUDACC__ -o a.cpp4.ii\n#$ gcc -E -D__CUDACC__ -o b.cpp4.ii"):
            with self.subTest(out=out), mock.patch.object(
                    runner, "run",
                    return_value=runner.ProcResult(returncode=0, timed_out=False,
                                                          seconds=0, stdout=out, stderr="")):
                self.assertIsNone(compile_commands.nvcc_host_preprocess(entry, "/o.ii"))


class RulesAndReportTest(unittest.TestCase):
    def test_from_toml(self):
        self.assertEqual(PolicyRules.from_toml({}, "w"), PolicyRules())
        rules = PolicyRules.from_toml({"allow_imports": ["cudaMemcpyAsync"],
                                       "forbid_imports": ["cudaMemcpy*", "cudaLaunchHostFunc"],
                                       "forbid_includes": ["cooperative_groups*"]}, "w")
        self.assertEqual(rules.forbid_imports, ("cudaMemcpy*", "cudaLaunchHostFunc"))
        self.assertEqual(rules.forbid_includes, ("cooperative_groups*",))
        for table, fragment in [({"allow": []}, "unknown key 'allow'"),
                                ({"allow_imports": "cudaMemcpy"}, "must be a list"),
                                ({"forbid_imports": [1]}, "must be a list"),
                                ({"forbid_includes": [""]}, "must be a list"),
                                ([], "must be a table")]:
            with self.subTest(table):
                with self.assertRaises(GraderError) as e:
                    PolicyRules.from_toml(table, "labs/x/grading.toml [policy]")
                self.assertIn("labs/x/grading.toml [policy]: ", e.exception.message)
                self.assertIn(fragment, e.exception.message)

    def test_report(self):
        self.assertIn("passed", PolicyResult(True, [], 0.5).report())
        many = [Violation("import", f"f{i}", f"calls f{i}, which ...") for i in range(13)]
        text = PolicyResult(False, many, 1.0).report()
        self.assertEqual(len(text.splitlines()), 1 + rules.REPORT_MAX + 1)
        self.assertIn("[import] calls f0", text)
        self.assertTrue(text.endswith("... and 3 more"), text)


class OddInputTest(unittest.TestCase):
    def test_missing_empty_and_non_elf_objects_raise(self):
        with tempfile.TemporaryDirectory() as tmp:
            empty = Path(tmp) / "empty.o"
            empty.write_bytes(b"")
            text = Path(tmp) / "text.o"
            text.write_text("not an object\n")
            for path, fragment in [(empty, "empty"), (text, "not an ELF"),
                                   (Path(tmp) / "none.o", "does not exist")]:
                with self.subTest(path.name):
                    with self.assertRaises(GraderError) as e:
                        policy.check_submission([path], [], [], None, PolicyRules())
                    self.assertIn(fragment, e.exception.message)

    def test_missing_tool_names_binutils(self):
        with mock.patch.object(tools.shutil, "which", return_value=None):
            with self.assertRaises(GraderError) as e:
                tools.tool("nm")
        self.assertIn("binutils", e.exception.message)

    def test_object_with_no_symbols(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bare.o"
            path.write_bytes(b"\x7fELF" + bytes(60))
            elf = canned_elf(path, nm="", readelf="", objdump="", names={})
            self.assertEqual(run_object_rules(elf), [])


# ---------------------------------------------------------------------------------------------
# Whole objects from canned tool output (policy_fixtures/canned/)
# ---------------------------------------------------------------------------------------------

def canned_elf(path, nm, readelf, objdump, names):
    outputs = {"nm": nm, "readelf": readelf, "objdump": objdump}
    headers = mock.Mock(sections=[], comdat_sections=lambda: set())
    with mock.patch.object(tools, "tool", side_effect=lambda name: name), \
            mock.patch.object(tools, "run_tool", side_effect=lambda args, what: outputs[args[0]]), \
            mock.patch.object(demangle, "names", side_effect=lambda n: names), \
            mock.patch.object(elf_object, "_elf_headers", return_value=headers):
        elf = elf_object.read_object(path)
    elf.comdat = None          # the canned readelf output has no section groups: not known
    return elf


def load_canned(name, tmp):
    path = Path(tmp) / f"{name}.o"
    path.write_bytes(b"\x7fELF" + bytes(60))
    read = lambda ext: (CANNED / f"{name}.{ext}.txt").read_text()
    names = dict(line.split("\t", 1) for line in read("cxxfilt").splitlines() if "\t" in line)
    return canned_elf(path, read("nm"), read("readelf"), read("objdump"), names)


def run_object_rules(elf, rules=PolicyRules()):
    return (object_rules.check_imports(elf, rules) + object_rules.check_definitions(elf)
            + object_rules.check_constructors(elf) + object_rules.check_syscalls(elf))


class CannedObjectTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def violations(self, name):
        return run_object_rules(load_canned(name, self.tmp.name))

    def test_registration_at_O0_calls_through_a_pointer_and_passes(self):
        # At -O0 nvcc's __sti____cudaRegisterAll calls its registration callback through a
        # function pointer; the walk follows the address it takes.
        elf = load_canned("registration_O0", self.tmp.name)
        self.assertIn("_ZL31__nv_cudaEntityRegisterCallbackPPv",
                      [s[2] for s in elf.functions[".text"]])
        self.assertEqual(run_object_rules(elf), [])

    def test_iostream_initialiser_passes(self):
        self.assertEqual(self.violations("iostream_init"), [])

    def test_constructor_attribute(self):
        (v,) = self.violations("ctor_attribute")
        self.assertEqual((v.rule, v.symbol), ("constructor", "before_main()"))
        self.assertTrue(v.message.startswith("runs code before main (a global constructor"))
        self.assertTrue(v.message.endswith("not allowed, the harness must start clean"))

    def test_dynamic_initialiser(self):
        (v,) = self.violations("dynamic_init")
        self.assertEqual(v.rule, "constructor")
        self.assertIn("dynamic initialisation", v.message)
        self.assertIn("probe()", v.message)

    def test_syscall_instruction(self):
        (v,) = self.violations("syscall")
        self.assertEqual(v.rule, "syscall")
        self.assertIn("'syscall'", v.message)

    def test_second_registration_entry_is_a_constructor(self):
        # Two init_array slots pointing at nvcc's registration: only one is nvcc's.
        elf = load_canned("ctor_attribute", self.tmp.name)
        sti = next(s for s in elf.elf_symbols if s.name == object_rules._NVCC_STARTUP)
        section = elf.section_of(sti)
        elf.sections[".init_array"].size = 16
        elf.relocs[".rela.init_array"] = [elf_object.Reloc(0, "R_X86_64_64", section, sti.value),
                                          elf_object.Reloc(8, "R_X86_64_64", section, sti.value)]
        found = object_rules.check_constructors(elf)
        self.assertEqual([v.rule for v in found], ["constructor"])

    def test_fini_array_and_preinit_are_rejected(self):
        elf = load_canned("registration_O0", self.tmp.name)
        for name, stype in [(".fini_array", "FINI_ARRAY"), (".preinit_array", "PREINIT_ARRAY"),
                            (".ctors", "PROGBITS"), (".init", "PROGBITS")]:
            with self.subTest(name):
                elf.sections[name] = elf_object.Section("99", name, stype, 8, "WA")
                found = object_rules.check_constructors(elf)
                self.assertTrue(any(v.symbol == name for v in found), found)
                del elf.sections[name]


# ---------------------------------------------------------------------------------------------
# Real compiles
# ---------------------------------------------------------------------------------------------

# name -> (source, extra nvcc flags, expected): None to pass, else [(rule, text in symbol)].
# The repository's own starter and solution, and the legitimate fixtures also at -O0 (GCC
# keeps template instantiations out of line and nvcc calls its registration through a pointer).
CASES = {
    "starter": (LAB / "matmul.cu", [], None),
    "starter_O0": (LAB / "matmul.cu", O0, None),
    "solution": (REPO / "solutions" / "01_naive_matmul" / "matmul.cu", [], None),
    "ok_rich": (FIXTURES / "ok_rich.cu", [], None),
    "ok_rich_O0": (FIXTURES / "ok_rich.cu", O0, None),
    "ok_host_cxx": (FIXTURES / "ok_host_cxx.cu", [], None),
    "ok_host_cxx_O0": (FIXTURES / "ok_host_cxx.cu", O0, None),
    "bad_import_memcpy": (None, [], [("import", "cudaMemcpy")]),
    "bad_import_hostfunc": (None, [], [("import", "cudaLaunchHostFunc")]),
    "bad_import_stream_create": (None, [], [("import", "cudaStreamCreateWithFlags")]),
    "bad_import_event_record": (None, [], [("import", "cudaEventRecord")]),
    "bad_import_device_sync": (None, [], [("import", "cudaDeviceSynchronize")]),
    "bad_import_cublas": (None, [], [("import", "cublasSgemm"), ("include", "cublas_v2.h")]),
    "bad_thrust": (None, [], [("include", "thrust/"), ("definition", "thrust::")]),
    "bad_import_fopen": (None, [], [("import", "fopen")]),
    "bad_import_fork": (None, [], [("import", "fork")]),
    "bad_import_dlsym": (None, [], [("import", "dlsym")]),
    "bad_def_interpose_runtime": (None, [], [("definition", "cudaEventElapsedTime")]),
    "bad_def_labkit": (None, [], [("definition", "labkit::outputs_match")]),
    "bad_def_testing": (None, [], [("definition", "testing::internal::AlwaysTrue")]),
    "bad_def_libc_write": (None, [], [("definition", "write")]),
    "bad_def_operator_new": (None, [], [("definition", "operator new")]),
    "bad_ctor_attribute": (None, [], [("constructor", "before_main")]),
    "bad_ctor_dynamic_init": (None, [], [("constructor", "_GLOBAL__sub_I")]),
    "bad_ctor_ifunc": (None, [], [("constructor", "chosen")]),
    "bad_syscall_asm": (None, [], [("syscall", "syscall")]),
    "bad_include_repo_file": (None, [], [("include", "fake_repo/solutions/matmul_reference.cuh")]),
    "bad_source_incbin": (None, [], [("source", "incbin")]),
    "bad_source_incbin_macro": (None, [], [("source", "incbin")]),
    "ok_library_users": (FIXTURES / "ok_library_users.cu", [], None),
    "ok_library_users_O0": (FIXTURES / "ok_library_users.cu", O0, None),
    "bad_def_weak_library": (None, [], [("definition", "std::chrono::_V2::steady_clock::now()"),
                                        ("definition", "std::labs_private_helper(int)")]),
    "bad_syscall_alloc_section": (None, [], [("syscall", "syscall in .stub")]),
    "bad_device_lowp": (None, [], [("device", "HMMA"), ("device", "F2FP"),
                                   ("device", "HFMA2")]),
    # every lab: no device heap; printf and assert pass (test_device_calls below)
    "bad_device_heap": (None, [], [("device", "malloc (device code)"),
                                   ("device", "free (device code)"),
                                   ("device", "__cuda_syscall_aligned_malloc (device code)")]),
    # every lab: no read of the grid's launch id, by its slot, by an index, or by the
    # parameters' address (test_launch_id below)
    "bad_device_launch_id": (None, [], [("device", "%gridid in launch_id_kernel"),
                                        ("device", "constant bank 0 by register in indexed_param"),
                                        ("device", "parameters' address in param_address"),
                                        ("device", "driver's launch state in envreg_kernel"),
                                        ("device", "driver's launch state in past_params")]),
    # every lab: no clock, timer or performance counter; __nanosleep passes (test_clocks below)
    "bad_device_clock": (None, [], [("device", "SR_CLOCKLO in clock_kernel"),
                                    ("device", "SR_CLOCKLO in clock64_kernel"),
                                    ("device", "SR_CLOCKHI in clock_hi_kernel"),
                                    ("device", "SR_GLOBALTIMERLO in globaltimer_kernel"),
                                    ("device", "SR_PM0 in pm_kernel")]),
    # checked as lab 02 checks (SHARED_RULES): each kernel named with what it uses
    "bad_device_smem": (None, [], [("device", "STS in k_static(float*)"),
                                   ("device", "SHARED:1280 in k_static(float*)"),
                                   ("device", "STS in k_dynamic(float*)"),
                                   ("device", "ATOMS.POPC.INC.32 in k_atomic(int*)"),
                                   ("device", "STS in k_ptx(float*)"),
                                   ("device", "S2R SR_SWINHI in k_generic(float*, int)"),
                                   ("device", "LDGSTS.E.BYPASS.128 in k_cp_async")]),
}
# The device rule (cuobjdump) runs on every compiled case when cuobjdump can be found, as the
# labs' grading.toml ask; otherwise the cases that need it skip, saying so.
CUOBJDUMP = policy.find_cuobjdump()
# Every lab's families (lab 01's); the cases in SHARED_CASES with lab 02's, shared memory too.
DEVICE_RULES = PolicyRules(forbid_device_instructions=("tensor_cores", "low_precision"))
SHARED_RULES = PolicyRules(forbid_device_instructions=policy.DEVICE_FAMILIES)
SHARED_CASES = {"bad_device_smem"}
NEEDS_CUOBJDUMP = {"bad_device_lowp", "bad_device_smem", "bad_device_heap",
                   "bad_device_launch_id", "bad_device_clock"}
# Checked from its source alone (objects=[]), as the grader may before building: the header is
# big and the include rule needs no object. Only when GoogleTest is installed.
GTEST_HEADER = next((p for p in (Path("/usr/include/gtest/gtest.h"),
                                 Path("/usr/local/include/gtest/gtest.h")) if p.is_file()), None)


@unittest.skipUnless(NVCC, "nvcc was not found (PATH, /usr/local/cuda/bin): the policy tests on "
                           "real compiles need the CUDA toolkit")
class CompiledFixturesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="policy-test-")
        tmp = Path(cls.tmp.name)
        cls.jobs = {}
        for name, (source, extra, _) in CASES.items():
            source = source or FIXTURES / f"{name}.cu"
            cmd = [NVCC, *NVCC_FLAGS, *extra, "-I", str(LAB), "-c", str(source),
                   "-o", str(tmp / f"{name}.o")]
            cls.jobs[name] = (source, cmd)
        # compile_commands.json as CMake writes it: one entry per compiled file.
        cls.compile_commands = tmp / "compile_commands.json"
        entries = [{"directory": str(tmp), "command": shlex.join(cmd), "file": str(src)}
                   for src, cmd in cls.jobs.values()]
        if GTEST_HEADER:
            src = FIXTURES / "bad_include_gtest.cu"
            entries.append({"directory": str(tmp), "file": str(src), "command": shlex.join(
                [NVCC, *NVCC_FLAGS, "-I", str(LAB), "-c", str(src), "-o", "gtest.o"])})
        cls.compile_commands.write_text(json.dumps(entries, indent=1))

        def compile_and_check(name):
            source, cmd = cls.jobs[name]
            if not source.is_file():
                return name, None, f"{source} does not exist"
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                return name, None, proc.stdout + proc.stderr
            rules = (SHARED_RULES if name in SHARED_CASES else DEVICE_RULES) if CUOBJDUMP \
                else PolicyRules()
            return name, cls.check([Path(cmd[-1])], source, rules=rules), ""

        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            done = list(pool.map(compile_and_check, cls.jobs))
        cls.results = {name: (result, error) for name, result, error in done}
        cls.seconds = time.monotonic() - start

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def check(cls, objects, source, headers=(HEADER,), rules=PolicyRules(), commands=True):
        return policy.check_submission(objects, [source], list(headers),
                                       cls.compile_commands if commands else None, rules)

    def result(self, name):
        result, error = self.results[name]
        if result is None:
            if name == "solution" and "does not exist" in error:
                self.skipTest(error)
            self.fail(f"{name} did not compile:\n{error[-3000:]}")
        return result

    def device_result(self, name):
        """result(name) for a fixture the device rule is about: skipped, saying why, without
        cuobjdump or where the student release emptied its kernels."""
        if not CUOBJDUMP:
            self.skipTest("cuobjdump was not found (scripts/install-deps installs it)")
        if "body left out of the student release" in (FIXTURES / f"{name}.cu").read_text(
                encoding="utf-8"):
            self.skipTest("the fixtures' kernels were emptied by the student release export")
        return self.result(name)

    def assert_case(self, name):
        if name in NEEDS_CUOBJDUMP and not CUOBJDUMP:
            self.skipTest("cuobjdump was not found (scripts/install-deps installs it): the "
                          "device rule cannot run")
        if name in NEEDS_CUOBJDUMP and "body left out of the student release" in (
                FIXTURES / f"{name}.cu").read_text(encoding="utf-8"):
            # A student release empties the fixtures' kernels (scripts/export-release), and with
            # them the instructions this case is about: nothing is left for the rule to see.
            self.skipTest(f"{name}'s kernels were emptied by the student release export")
        result = self.result(name)
        expected = CASES[name][2]
        if expected is None:
            self.assertTrue(result.ok, f"{name} must pass the policy:\n{result.report()}")
            return
        self.assertFalse(result.ok, f"{name} must fail the policy")
        for rule, text in expected:
            self.assertTrue(any(v.rule == rule and text in v.symbol for v in result.violations),
                            f"{name}: expected a '{rule}' violation about {text!r}, got:\n"
                            f"{result.report()}")
        for v in result.violations:
            self.assertTrue(v.message and v.symbol, v)

    def test_gtest_include_from_source_alone(self):
        if GTEST_HEADER is None:
            self.skipTest("GoogleTest is not installed")
        result = self.check([], FIXTURES / "bad_include_gtest.cu")
        self.assertFalse(result.ok)
        self.assertTrue(any(v.rule == "include" and "gtest/gtest.h" in v.symbol
                            for v in result.violations), result.report())

    def test_include_rule_follows_the_interface_header_list(self):
        # The same file with another lab's header list: its #include "matmul.h" is now a
        # file of the repository like any other.
        obj = Path(self.jobs["ok_rich"][1][-1])
        result = self.check([obj], FIXTURES / "ok_rich.cu",
                            headers=[FIXTURES / "fake_repo" / "labs" / "other.h"])
        self.assertEqual([(v.rule, v.symbol) for v in result.violations],
                         [("include", str(HEADER.resolve()))], result.report())
        self.assertIn("only the lab's header and system headers may be included",
                      result.violations[0].message)

    def test_source_rules_before_the_build(self):
        # objects=[]: only the include and source rules run, from the compile command.
        result = self.check([], FIXTURES / "bad_include_repo_file.cu")
        self.assertEqual({v.rule for v in result.violations}, {"include"})
        self.assertTrue(self.check([], LAB / "matmul.cu").ok)

    def test_lab_rules_from_grading_toml(self):
        obj = lambda name: [Path(self.jobs[name][1][-1])]
        rules = PolicyRules.from_toml({"forbid_imports": ["cudaMemsetAsync"],
                                       "forbid_includes": ["algorithm"]}, "grading.toml")
        result = self.check(obj("ok_rich"), FIXTURES / "ok_rich.cu", rules=rules)
        self.assertEqual(sorted((v.rule, v.symbol) for v in result.violations),
                         [("import", "cudaMemsetAsync"), ("include", "algorithm")])
        allow = PolicyRules(allow_imports=("cudaMemcpy",))
        self.assertTrue(self.check(obj("bad_import_memcpy"), FIXTURES / "bad_import_memcpy.cu",
                                   rules=allow).ok)

    def test_without_compile_commands_objects_are_still_checked(self):
        result = self.check([Path(self.jobs["bad_include_repo_file"][1][-1])],
                            FIXTURES / "bad_include_repo_file.cu", commands=False)
        self.assertTrue(result.ok, "no compile command: the include rule cannot run")
        result = self.check([Path(self.jobs["bad_import_memcpy"][1][-1])],
                            FIXTURES / "bad_import_memcpy.cu", commands=False)
        self.assertEqual([v.rule for v in result.violations], ["import"])

    def test_shared_memory_is_refused_only_where_a_lab_asks(self):
        if not CUOBJDUMP:
            self.skipTest("cuobjdump was not found (scripts/install-deps installs it)")
        if "body left out of the student release" in (FIXTURES / "bad_device_smem.cu").read_text(
                encoding="utf-8"):
            self.skipTest("the fixtures' kernels were emptied by the student release export")
        obj = lambda name: [Path(self.jobs[name][1][-1])]
        # bad_device_smem passes where shared memory is allowed (every lab but 02)...
        self.assertTrue(self.check(obj("bad_device_smem"), FIXTURES / "bad_device_smem.cu",
                                   rules=DEVICE_RULES).ok)
        # ...and ok_rich's dynamic shared memory is refused where it is not
        result = self.check(obj("ok_rich"), FIXTURES / "ok_rich.cu", rules=SHARED_RULES)
        self.assertFalse(result.ok)
        self.assertEqual({v.rule for v in result.violations}, {"device"}, result.report())
        self.assertTrue(all("tiled_kernel" in v.symbol for v in result.violations),
                        result.report())

    def test_device_calls_other_than_printf_and_assert_are_refused(self):
        result = self.device_result("bad_device_heap")
        refused = sorted(v.symbol for v in result.violations if v.rule == "device")
        self.assertEqual(refused, ["__cuda_syscall_aligned_malloc (device code)",
                                   "free (device code)", "malloc (device code)"],
                         result.report())
        self.assertTrue(all("device heap" in v.message for v in result.violations),
                        result.report())

    def test_the_grids_launch_id_is_refused_in_every_lab(self):
        result = self.device_result("bad_device_launch_id")
        refused = sorted(v.symbol.split(" in ")[0] for v in result.violations)
        self.assertEqual(refused, ["%gridid", "constant bank 0 by register", "driver's launch state",
                                   "driver's launch state", "parameters' address"],
                         result.report())
        # a parameter array indexed by constants is read at fixed offsets: no finding
        self.assertFalse(any("constant_index_kernel" in v.symbol for v in result.violations),
                         result.report())
        self.assertTrue(any("race check's replay" in v.message for v in result.violations),
                        result.report())

    def test_clocks_and_timers_are_refused_in_every_lab(self):
        result = self.device_result("bad_device_clock")
        kernels = sorted(v.symbol.split(" in ")[1] for v in result.violations)
        self.assertEqual(kernels, ["clock64_kernel(long long*)", "clock_hi_kernel(unsigned int*)",
                                   "clock_kernel(long long*)",
                                   "globaltimer_kernel(unsigned long long*)",
                                   "pm_kernel(unsigned int*)"], result.report())
        self.assertTrue(all("may not read clocks" in v.message for v in result.violations),
                        result.report())

    def test_every_fixture_has_a_case(self):
        named = {p.stem for p in FIXTURES.glob("*.cu")}
        self.assertEqual(named - set(CASES) - {"bad_include_gtest"}, set())


@unittest.skipUnless(NVCC, "nvcc was not found (PATH, /usr/local/cuda/bin): the policy tests on "
                           "real compiles need the CUDA toolkit")
class Lab02SharedMemoryTest(unittest.TestCase):
    """Lab 02 with its own policy (its grading.toml: no shared memory): its starter and reference
    solution pass; the corpus's shared-memory cases (lab 03's kernel pasted in, the same on
    extern __shared__, and on inline-PTX st.shared/ld.shared) are refused, each naming its
    kernel and instruction. A file this checkout does not hold (a student release has no
    solutions/ and no corpus, and may have no lab 02) skips."""

    LAB2 = REPO / "labs" / "02_register_tiling"
    CORPUS = REPO / "tests" / "submissions" / "02_register_tiling"
    SOURCES = {"starter": LAB2 / "matmul.cu",
               "solution": REPO / "solutions" / "02_register_tiling" / "matmul.cu",
               "smem_lab03_kernel": CORPUS / "smem_lab03_kernel" / "matmul.cu",
               "smem_dynamic_extern": CORPUS / "smem_dynamic_extern" / "matmul.cu",
               "smem_inline_ptx": CORPUS / "smem_inline_ptx" / "matmul.cu"}

    @classmethod
    def setUpClass(cls):
        from grader import config
        if not (cls.LAB2 / "grading.toml").is_file():
            raise unittest.SkipTest("lab 02 is not in this checkout (a release without it)")
        cls.rules = config.load_lab_config(REPO / "labs", "02_register_tiling").policy
        cls.tmp = tempfile.TemporaryDirectory(prefix="policy-lab02-")
        tmp = Path(cls.tmp.name)
        cls.cmds = {name: [NVCC, *NVCC_FLAGS, "-I", str(cls.LAB2), "-c", str(src),
                           "-o", str(tmp / f"{name}.o")]
                    for name, src in cls.SOURCES.items() if src.is_file()}
        cls.compile_commands = tmp / "compile_commands.json"
        cls.compile_commands.write_text(json.dumps(
            [{"directory": str(tmp), "command": shlex.join(cmd), "file": cmd[-3]}
             for cmd in cls.cmds.values()]))

        def build(name):
            proc = subprocess.run(cls.cmds[name], capture_output=True, text=True, timeout=300)
            return name, proc.stdout + proc.stderr if proc.returncode else ""

        with ThreadPoolExecutor(max_workers=2) as pool:
            cls.errors = dict(pool.map(build, cls.cmds))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, name):
        if name not in self.cmds:
            self.skipTest(f"{self.SOURCES[name]} is not in this checkout")
        if self.errors[name]:
            self.fail(f"{name} did not compile:\n{self.errors[name][-3000:]}")
        if not CUOBJDUMP:
            self.skipTest("cuobjdump was not found (scripts/install-deps installs it)")
        return policy.check_submission([Path(self.cmds[name][-1])], [self.SOURCES[name]],
                                       [self.LAB2 / "matmul.h"], self.compile_commands,
                                       self.rules)

    def test_lab_refuses_shared_memory(self):
        self.assertIn("shared_memory", self.rules.forbid_device_instructions)

    def test_starter_and_solution_pass(self):
        for name in ("starter", "solution"):
            with self.subTest(name):
                result = self.check(name)
                self.assertTrue(result.ok, f"{name} must pass lab 02's policy:\n"
                                           f"{result.report()}")

    def test_shared_memory_cases_are_refused(self):
        kernel = ("matmul_v2_register_tiled_kernel(float const*, float const*, float*, int, int, "
                  "int)")
        expected = {"smem_lab03_kernel": [f"STS in {kernel}", f"LDS.128 in {kernel}",
                                          f"SHARED:5120 in {kernel}"],
                    "smem_dynamic_extern": [f"STS in {kernel}", f"LDS.128 in {kernel}"],
                    "smem_inline_ptx": [f"STS in {kernel}", f"LDS.128 in {kernel}"]}
        for name, symbols in expected.items():
            with self.subTest(name):
                result = self.check(name)
                self.assertEqual([(v.rule, v.symbol) for v in result.violations],
                                 [("device", s) for s in symbols], result.report())
                self.assertIn("this lab does not allow shared memory",
                              result.violations[0].message)


def _case_test(name):
    def test(self):
        self.assert_case(name)
    test.__doc__ = f"{name}: {'passes' if CASES[name][2] is None else 'fails'} the policy"
    return test


for _name in CASES:
    setattr(CompiledFixturesTest, f"test_{_name}", _case_test(_name))


if __name__ == "__main__":
    unittest.main()
