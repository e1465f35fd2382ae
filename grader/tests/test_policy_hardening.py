"""The policy's newer rules, on their own (fast: no nvcc; g++/gcc and binutils for a few).

Library exports and weak definitions (definition rule), the device rule's instruction families
and its cuobjdump lookup, and executable sections the linker places into code (syscall rule).
The same rules on real nvcc compiles are in test_policy.py (CASES)."""

import json
import os
import shutil
import stat
import struct
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader import elf, policy
from grader.policy import cubin, demangle, device, elf_object, object_rules, tools
from grader.errors import GraderError
from grader.policy import PolicyRules

CANNED = Path(__file__).resolve().parent / "policy_fixtures" / "canned"

GXX = shutil.which("g++")


def record(fmt: int, attr: int, value) -> bytes:
    """One attribute record of a cubin's .nv.info section: EIFMT_SVAL (4) carries bytes, the
    other formats a 16-bit value."""
    if fmt == 4:
        return struct.pack("<BBH", fmt, attr, len(value)) + value
    return struct.pack("<BBH", fmt, attr, value)


def make_cubin(symbols: list, infos: list) -> bytes:
    """A minimal ELF64 image as ptxas lays one out for what the device rule reads: a symbol
    table (the null entry, then (name, info, shndx) of `symbols`) and attribute sections
    (name, [record, ...])."""
    shstr, strtab = bytearray(b"\0"), bytearray(b"\0")

    def name_in(table, text):
        at = len(table)
        table.extend(text.encode() + b"\0")
        return at
    symtab = bytearray(24)
    for name, info, shndx in symbols:
        symtab += struct.pack("<IBBHQQ", name_in(strtab, name), info, 0, shndx, 0, 0)
    sections = [(".strtab", 3, bytes(strtab), 0), (".symtab", 2, bytes(symtab), 1)]
    sections += [(name, 0x70000000, b"".join(recs), 0) for name, recs in infos]
    names = [name_in(shstr, n) for n, _, _, _ in sections]
    shstr_at = name_in(shstr, ".shstrtab")
    body, offsets = bytearray(), []
    for _, _, data, _ in sections + [(".shstrtab", 3, bytes(shstr), 0)]:
        offsets.append(64 + len(body))
        body += data
    shoff = 64 + len(body)
    headers = bytearray(64)          # the null section
    for i, (n, stype, data, link) in enumerate(sections):
        headers += struct.pack("<IIQQQQIIQQ", names[i], stype, 0, 0, offsets[i], len(data), link,
                               0, 1, 24 if stype == 2 else 0)
    # link: section indices count the null one (.strtab is 1)
    headers += struct.pack("<IIQQQQIIQQ", shstr_at, 3, 0, 0, offsets[-1], len(shstr), 0, 0, 1, 0)
    count = len(sections) + 2
    head = (b"\x7fELF\x02\x01\x01" + bytes(9)
            + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0, 64, 0, 0, 64, count,
                          count - 1))
    return bytes(head + body + headers)


def sym(name, demangled=None, kind="T"):
    return elf_object.Sym(name=name, kind=kind, demangled=demangled or name)


class TemplateInstanceTest(unittest.TestCase):
    def test_template_instances(self):
        for text in ["std::vector<int, std::allocator<int> >::push_back(int const&)",
                     "std::ctype<char>::do_widen(char) const",
                     "int const& std::min<int>(int const&, int const&)",
                     "std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
                     "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> "
                     ">&, char const*)",
                     "guard variable for std::locale::id std::numpunct<char>::id",
                     "vtable for std::__cxx11::basic_ostringstream<char, std::char_traits<char>, "
                     "std::allocator<char> >"]:
            with self.subTest(text):
                self.assertTrue(policy.is_template_instance(text))

    def test_not_template_instances(self):
        for text in ["std::chrono::_V2::steady_clock::now()",
                     "std::foo(std::vector<int, std::allocator<int> >)",   # only in parameters
                     "std::locale::operator<(std::locale const&) const",
                     "std::ios_base::operator<<(int)", "std::type_info::operator()() const",
                     "std::__cxx11::to_string[abi:cxx11](int)", "std::cout",
                     "vtable for std::exception", "std::thing::operator std::vector<int>()"]:
            with self.subTest(text):
                self.assertFalse(policy.is_template_instance(text))


class LibraryDefinitionTest(unittest.TestCase):
    EXPORTS = {"_ZNSt6chrono3_V212steady_clock3nowEv": "libstdc++.so.6",
               "_ZNKSt5ctypeIcE8do_widenEc": "libstdc++.so.6", "y1": "libm.so.6"}

    def problem(self, name, demangled, kind="W", in_comdat=True, elf_type="FUNC"):
        return object_rules._definition_problem(sym(name, demangled, kind), elf_type, self.EXPORTS,
                                          in_comdat)

    def test_exported_non_template_is_refused_weak_or_strong_comdat_or_not(self):
        for kind in "WT":
            for comdat in (True, False):
                with self.subTest(kind=kind, comdat=comdat):
                    text = self.problem("_ZNSt6chrono3_V212steady_clock3nowEv",
                                        "std::chrono::_V2::steady_clock::now()", kind, comdat)
                    self.assertIn("std::chrono::_V2::steady_clock::now(), which the system "
                                  "library libstdc++.so.6 already exports", text)

    def test_exported_template_instance_in_comdat_passes(self):
        self.assertIsNone(self.problem("_ZNKSt5ctypeIcE8do_widenEc",
                                       "std::ctype<char>::do_widen(char) const"))

    def test_weak_outside_comdat_in_reserved_namespaces(self):
        for name, demangled, expect in [
                ("_ZSt3foov", "std::foo()", "namespace std:: as a weak symbol outside a COMDAT"),
                ("_ZN9__gnu_cxx3fooEv", "__gnu_cxx::foo()", "namespace __gnu_cxx::"),
                ("_ZN4cuda3fooEv", "cuda::foo()", "namespace cuda::"),
                ("_Z7__evilv", "__evil()", "weak symbol outside a COMDAT group"),
                ("_Z12cudaSomethingv", "cudaSomething()", "reserved")]:
            with self.subTest(name):
                self.assertIn(expect, self.problem(name, demangled, "W", in_comdat=False))
                self.assertIsNone(self.problem(name, demangled, "W", in_comdat=True))

    def test_placement_new_only_as_an_inline_copy(self):
        name, shown = "_ZnwmPv", "operator new(unsigned long, void*)"
        self.assertIsNone(self.problem(name, shown, "W", in_comdat=True))
        self.assertIn("global allocator", self.problem(name, shown, "W", in_comdat=False))
        self.assertIn("global allocator", self.problem(name, shown, "T", in_comdat=True))
        self.assertIn("global allocator", self.problem("_Znwm", "operator new(unsigned long)",
                                                       "W", in_comdat=True))

    def test_student_namespace_weak_outside_comdat_passes(self):
        self.assertIsNone(self.problem("_ZN4mine3fooEv", "mine::foo()", "W", in_comdat=False))

    def test_global_variable_named_like_a_library_export(self):
        text = self.problem("y1", "y1", "B", in_comdat=False, elf_type="OBJECT")
        self.assertIn("a name that the system library libm.so.6 exports", text)
        self.assertIsNone(self.problem("my_y1", "my_y1", "B", in_comdat=False,
                                       elf_type="OBJECT"))

    @unittest.skipUnless(GXX and shutil.which("nm"), "g++ and nm are needed")
    def test_library_exports_are_read_from_the_system_libraries(self):
        exports = policy.library_exports()
        self.assertEqual(exports.get("_ZNSt6chrono3_V212steady_clock3nowEv"), "libstdc++.so.6")
        self.assertEqual(exports.get("clock_gettime"), "libc.so.6")

    @unittest.skipUnless(GXX and shutil.which("nm") and shutil.which("readelf"),
                         "g++ and binutils are needed")
    def test_comdat_membership_from_a_real_object(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "x.cpp"
            src.write_text("namespace std { __attribute__((weak)) int loose(int x) "
                           "{ return x; } }\ninline int tied(int x) { return x + 1; }\n"
                           "int use(int x) { return tied(x) + std::loose(x); }\n")
            subprocess.run([GXX, "-O0", "-c", str(src), "-o", f"{tmp}/x.o"], check=True)
            found = object_rules.check_definitions(elf_object.read_object(Path(tmp) / "x.o"),
                                              policy.library_exports())
        self.assertEqual([v.symbol for v in found], ["std::loose(int)"])
        self.assertIn("outside a COMDAT group", found[0].message)


class DeviceFamilyTest(unittest.TestCase):
    def test_tensor_core_opcodes(self):
        for op in ["HMMA.16816.F32", "HMMA.1684.F32.TF32", "IMMA.16816.S8.S8", "DMMA.8x8x4",
                   "HGMMA.64x128x16.F32", "IGMMA.64x8x32.S8", "BMMA.88128.AND.POPC",
                   "QGMMA.64x64x32.F32.E4M3.E4M3", "OMMA.SP", "UTCHMMA"]:
            with self.subTest(op):
                self.assertEqual(policy.device_family(op, "R0, R1, R2, R3"), "tensor_cores")

    def test_low_precision_opcodes(self):
        for op, operands in [("HFMA2", "R0, R3.H0_H0, R4.H0_H0, R0.H0_H0"),
                             ("HFMA2.MMA", "R0, R2, R5, R0"), ("HFMA2.MMA.BF16_V2", "R9, R2, R5, R0"),
                             ("HADD2", "R0, R1, R2"), ("HADD2.F32", "R4, -RZ, R4.H0_H0"),
                             ("HMUL2", "R0, R1, R2"), ("HMNMX2", "R0, R1, R2, !PT"),
                             ("HSETP2.GEU.AND", "P0, PT, R5.H0_H0, R12.H0_H0, PT"),
                             ("HSET2.BF.LE.AND", "R13, R10, R13, PT"),
                             ("F2FP.F16.F32.PACK_AB", "R6, RZ, R6"),
                             ("F2FP.BF16.F32.PACK_AB", "R8, RZ, R8"),
                             ("F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C", "R15, RZ, R8, RZ"),
                             ("F2F.F16.F64", "R7, R2"), ("F2F.BF16.F32", "R7, R2"),
                             ("I2F.F16", "R11, R0"), ("F2I.F16.NTZ", "R13, R10"),
                             # packed global atomics (red team round 14: red/atom.global f16x2..)
                             ("REDG.E.ADD.F16x2.RN.STRONG.GPU", "desc[UR4][R2.64], R5"),
                             ("ATOMG.E.ADD.F16x2.RN.STRONG.GPU", "PT, R0, desc[UR4][R2.64], R5"),
                             ("REDG.E.ADD.F16x8.RN.STRONG.GPU", "desc[UR4][R2.64], R4"),
                             ("REDG.E.MAX.BF16x4.RN.STRONG.GPU", "desc[UR4][R2.64], R4"),
                             # Hopper's three-input half min/max: two chained __hmin (red team
                             # round 21); its f16 form prints no type
                             ("VHMNMX", "R5, R0, R5, R4, PT"),
                             ("VHMNMX.NAN", "R24, R19.H0_H0, R24.H0_H0, R27.H0_H0, PT"),
                             ("MOVM.16.MT88", "R4, R4")]:
            with self.subTest(op):
                self.assertEqual(policy.device_family(op, operands), "low_precision")
        # integer SIMD min/max and adds are FP32 labs' own (index arithmetic)
        for op in ("VIMNMX", "VIMNMX.U32", "VIADD", "IMNMX"):
            with self.subTest(op):
                self.assertIsNone(policy.device_family(op, "R0, R1, R2, PT"))

    def test_half_arithmetic_is_16_bit_math_not_conversions(self):
        # lab 11's family (red team round 32: a half-precision softmax, FP16 score sums): what
        # computes in 16 bits is refused, what converts or compares is not
        for op, operands in (("HFMA2", "R0, R1, R2, R3"), ("HFMA2.MMA.BF16_V2", "R0, R1, R2, -RZ"),
                             ("HADD2", "R0, R1, R2"), ("HMUL2", "R0, R1, R2"),
                             ("HMNMX2", "R0, R1, R2, !PT"), ("VHMNMX", "R0, R1, R2, R3"),
                             ("MUFU.EX2.F16", "R0, R1"), ("HMMA.16816.F16", "R0, R4, R8, R0"),
                             ("HGMMA.64x128x16.F16", "R0, gdesc[UR4], R0"),
                             ("HMMA.SP.16832.F16", "R4, R4, R12, R10, R0, 0x0"),
                             ("HGMMA.SP.64x64x32.F16", "R0, gdesc[UR4], R0"),
                             ("MUFU.TANH.BF16_V2", "R0, R1"),
                             ("RED.E.ADD.F16x2.FTZ.RN.STRONG.GPU", "[R2.64], R5"),
                             ("UBLKRED.G.S.ADD.F16.RN", "[UR4], [UR6], UR8"),
                             ("UTMAREDG.1D.ADD", "[UR4], [UR6]")):
            with self.subTest(op):
                self.assertIn("half_arithmetic", device.device_families(op, operands))
        for op, operands in (("HADD2.F32", "R0, -RZ, R2.H0_H0"),
                             ("F2FP.F16.F32.PACK_AB", "R0, R1, R2"),
                             ("F2FP.BF16.F32.PACK_AB", "R0, R1, R2"), ("HSETP2.GT.AND", "P0, PT, R1"),
                             ("MUFU.EX2", "R0, R1"), ("HMMA.16816.F32", "R0, R4, R8, R0"),
                             ("HMMA.16816.F32.BF16", "R0, R4, R8, R0"),
                             ("HMMA.SP.16832.F32", "R4, R4, R12, R10, R0, 0x0"),
                             ("HFMA2.MMA", "R3, -RZ, RZ, 0, 0"), ("FFMA", "R0, R1, R2, R3"),
                             ("RED.E.ADD.F32.FTZ.RN.STRONG.GPU", "[R2.64], R5")):
            with self.subTest(op):
                self.assertNotIn("half_arithmetic", device.device_families(op, operands))

    def test_narrow_precision_is_products_and_conversions_below_16_bits(self):
        # labs 10 and 11 (red team round 36: Q K^T on int8 tensor cores in lab 11); what nvcc
        # 13.0 emits for sm_90: mma.sync s8 and s4 -> IMMA.16832.S8.S8, b1 -> BMMA.168256,
        # e4m3 -> F2FP.F16.E4M3.UNPACK_B and an FP16 HMMA
        for op, operands in (("IMMA.16832.S8.S8", "R8, R8.ROW, R6.COL, RZ"),
                             ("BMMA.168256.AND.POPC", "R8, R8.ROW, R6.COL, RZ"),
                             ("QGMMA.64x128x32.F32.E4M3.E4M3", "R0, gdesc[UR4], R0"),
                             ("IGMMA.64x128x32.S32.S8.S8", "R0, gdesc[UR4], R0"),
                             ("HMMA.16832.F32.E4M3.E4M3", "R4, R4, R16, RZ"),
                             ("F2FP.F16.E4M3.UNPACK_B", "R16, R14"),
                             ("F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C", "R0, R1, R2, RZ"),
                             ("IDP.4A.S8.S8", "R0, R1, R2, R3"), ("I2IP.S8.S32.SAT", "R0, R1, RZ, RZ"),
                             ("F2I.S8.TRUNC", "R0, R1"), ("I2F.S8", "R0, R1")):
            with self.subTest(op):
                self.assertIn("narrow_precision", device.device_families(op, operands))
        for op, operands in (("HMMA.16816.F32", "R0, R4, R8, R0"),
                             ("HMMA.16816.F32.BF16", "R0, R4, R8, R0"),
                             ("HGMMA.64x128x16.F32.BF16", "R0, gdesc[UR4], R0"),
                             ("F2FP.F16.F32.PACK_AB", "R0, R1, R2"),
                             ("F2FP.BF16.F32.PACK_AB", "R0, R1, R2"), ("HADD2.F32", "R0, -RZ, R2"),
                             ("F2I.S32.TRUNC", "R0, R1"), ("I2F.S32", "R0, R1"),
                             ("I2F.U32.RP", "R0, R1"), ("F2I.U64.TRUNC", "R0, R1"),
                             ("DMMA.8x8x4", "R0, R4, R8, R0"), ("IMAD", "R0, R1, R2, R3")):
            with self.subTest(op):
                self.assertNotIn("narrow_precision", device.device_families(op, operands))

    def test_an_instruction_of_two_families_is_both(self):
        # a bulk copy-reduce of halves addresses shared memory and adds in 16 bits: a lab that
        # allows shared memory (05) still refuses it (red team round 14)
        self.assertEqual(device.device_families("UBLKRED.G.S.ADD.F16.RN", "[UR4], [UR6], UR8"),
                         ("shared_memory", "low_precision", "half_arithmetic"))
        self.assertEqual(device.device_families("UBLKRED.G.S.ADD.F32.RN", "[UR4], [UR6], UR8"),
                         ("shared_memory",))
        self.assertEqual(device.device_families("HMMA.16816.F32.BF16", "R0, R4, R8, R0"),
                         ("tensor_cores", "low_precision"))
        self.assertEqual(device.device_families("FFMA", "R0, R1, R2, R3"), ())
        # a TMA reduction's element type is in its tensor map: 16-bit wherever it is (round 15)
        self.assertEqual(device.device_families("UTMAREDG.1D.ADD", "[UR4], [UR6]"),
                         ("shared_memory", "low_precision", "half_arithmetic"))
        sass = ("\t\tFunction : _Z1kPf\n"
                "        /*0100*/                   UBLKRED.G.S.ADD.F16.RN [UR4], [UR6], UR8 ;\n")
        with mock.patch.object(device, "_read_sass", return_value=sass), \
                mock.patch.object(device, "_read_cubins", return_value=[]), \
                mock.patch.object(demangle, "names", return_value={}):
            found = device.check_device_code(Path("x.o"), ("low_precision", "tensor_cores"))
        self.assertEqual([v.symbol for v in found], ["UBLKRED.G.S.ADD.F16.RN in _Z1kPf"])

    def test_fp32_and_constant_moves_pass(self):
        for op, operands in [("FFMA", "R0, R1, R2, R3"), ("FADD.FTZ", "R0, R1, R2"),
                             ("F2F.F64.F32", "R2, R0"), ("F2F.F32.F64", "R0, R2"),
                             ("I2FP.F32.S32", "R0, R1"), ("LDG.E.U16", "R0, desc[UR4][R2.64]"),
                             ("MUFU.EX2", "R0, R0"), ("HFMA2.MMA", "R5, -RZ, RZ, 0, 0"),
                             ("HFMA2.MMA", "R9, -RZ, RZ, 0, 0.00048828125"),
                             ("HFMA2", "R3, -RZ, RZ, 1.875, -6.103515625e-05"),
                             ("IMAD.MOV.U32", "R1, RZ, RZ, c[0x0][0x28]")]:
            with self.subTest(op):
                self.assertIsNone(policy.device_family(op, operands))
        # the idiom with a register addend is half arithmetic
        self.assertEqual(policy.device_family("HFMA2", "R5, -RZ, RZ, R3"), "low_precision")

    SASS = """
	code for sm_90
		Function : _Z11half_kernelPK7__half2S1_PS_i
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
        /*0070*/                   HFMA2.MMA R5, -RZ, RZ, 0, 0 ;          /* 0x000fe20000000800 */
        /*0120*/               @P0 HFMA2.MMA R0, R2, R5, R0 ;              /* 0x000fe20000000800 */
        /*0130*/                   HFMA2.MMA R0, R2, R5, R0 ;              /* 0x000fe20000000800 */
		Function : _Z4gemmPKfS0_Pf
        /*0160*/                   HMMA.16816.F32 R16, R4.reuse, R12, RZ ; /* 0x000fe20000000800 */
"""

    def test_check_device_code_names_instruction_and_kernel(self):
        with mock.patch.object(device, "_read_sass", return_value=self.SASS), \
                mock.patch.object(device, "_read_cubins", return_value=[]), \
                mock.patch.object(demangle, "names", side_effect=lambda names: {
                    "_Z11half_kernelPK7__half2S1_PS_i":
                        "half_kernel(__half2 const*, __half2 const*, __half2*, int)",
                    "_Z4gemmPKfS0_Pf": "gemm(float const*, float const*, float*)"}):
            found = device.check_device_code(Path("x.o"), policy.DEVICE_FAMILIES)
            only_tc = device.check_device_code(Path("x.o"), ("tensor_cores",))
        self.assertEqual([v.symbol for v in found],
                         ["HFMA2.MMA in half_kernel(__half2 const*, __half2 const*, __half2*, int)",
                          "HMMA.16816.F32 in gemm(float const*, float const*, float*)"])
        self.assertEqual(found[0].message,
                         "uses the 16-bit floating-point instruction HFMA2.MMA in kernel "
                         "half_kernel(__half2 const*, __half2 const*, __half2*, int): this lab "
                         "is about FP32 on CUDA cores, so half/bfloat16 (or 8-bit) math and "
                         "conversions to such types are not allowed")
        self.assertIn("tensor-core instruction HMMA.16816.F32 in kernel gemm(", found[1].message)
        self.assertEqual([v.rule for v in only_tc], ["device"])

    def test_findings_are_kept_beside_the_object_for_the_same_bytes_only(self):
        with tempfile.TemporaryDirectory() as tmp:
            obj = Path(tmp) / "student.o"
            obj.write_bytes(b"object one")
            cache = Path(str(obj) + policy.DEVICE_CACHE_SUFFIX)
            with mock.patch.object(device, "_read_sass", return_value=self.SASS) as read, \
                    mock.patch.object(device, "_read_cubins", return_value=[]), \
                    mock.patch.object(demangle, "names", return_value={}), \
                    mock.patch.object(device, "find_cuobjdump", return_value=None):
                first = device.check_device_code(obj, policy.DEVICE_FAMILIES)
                self.assertEqual(read.call_count, 1)
                self.assertTrue(cache.is_file())
                self.assertEqual(device.check_device_code(obj, policy.DEVICE_FAMILIES), first)
                self.assertEqual(read.call_count, 1)                   # reused
                device.check_device_code(obj, ("tensor_cores",))     # other families
                self.assertEqual(read.call_count, 2)
                obj.write_bytes(b"object two")                          # other bytes
                device.check_device_code(obj, ("tensor_cores",))
                self.assertEqual(read.call_count, 3)
                # a cache that claims a clean object for other bytes is not believed
                cache.write_text(json.dumps({"key": "0" * 64, "violations": []}))
                self.assertEqual(len(device.check_device_code(obj, ("tensor_cores",))), 1)
                self.assertEqual(read.call_count, 4)
                # nor one put there as a link
                cache.unlink()
                fake = Path(tmp) / "fake.json"
                fake.write_text(json.dumps({"key": device._device_cache_key(
                    obj, ("tensor_cores",)), "violations": []}))
                cache.symlink_to(fake)
                self.assertEqual(len(device.check_device_code(obj, ("tensor_cores",))), 1)
                self.assertEqual(read.call_count, 5)

    def test_device_calls_from_the_images_bytes(self):
        # a kernel that calls malloc, free, printf and assert (nvcc 13.0, sm_90): undefined FUNC
        # symbols (section 0), and the kernel's externs attribute (symbol indices)
        symbols = [(".text._Z1kPf", 0x03, 5), ("_ZN1g5tableE", 0x11, 0), ("_Z1kPf", 0x12, 5),
                   ("malloc", 0x12, 0), ("free", 0x12, 0), ("vprintf", 0x12, 0),
                   ("__assertfail", 0x12, 0)]
        image = cubin.read_cubin(make_cubin(symbols, [(".nv.info._Z1kPf", [
            record(4, cubin.EIATTR_EXTERNS, struct.pack("<3I", 4, 5, 6))])]))
        self.assertEqual(cubin.external_calls([image]),
                         ["_ZN1g5tableE", "malloc", "free", "vprintf", "__assertfail"])
        # every undefined symbol, whatever its type (a red team's image declared malloc with no
        # type and renumbered its externs record, round 17), but the driver's shared-memory
        # offset that ptxas declares in honest images
        image = cubin.read_cubin(make_cubin([(".nv.reservedSmem.offset0", 0x21, 0),
                                             ("malloc", 0x10, 0)], []))
        self.assertEqual(cubin.external_calls([image]), ["malloc"])
        # the externs attribute alone names them too
        image = cubin.read_cubin(make_cubin([(".nv.reservedSmem.offset0", 0x21, 0),
                                             ("malloc", 0x12, 3)], [
            (".nv.info._Z1kPf", [record(4, cubin.EIATTR_EXTERNS, struct.pack("<I", 2))])]))
        self.assertEqual(cubin.external_calls([image]), ["malloc"])
        # an extern past the symbol table, or of an odd size: refused, not read as nothing
        for value in (struct.pack("<I", 9), b"\x01\x00"):
            image = cubin.read_cubin(make_cubin([("malloc", 0x12, 0)], [
                (".nv.info._Z1kPf", [record(4, cubin.EIATTR_EXTERNS, value)])]))
            with self.assertRaises(cubin.CubinError):
                cubin.external_calls([image])
        real = [cubin.read_cubin(make_cubin(symbols, []))]
        with mock.patch.object(device, "_read_sass", return_value=self.SASS), \
                mock.patch.object(device, "_read_cubins", return_value=real), \
                mock.patch.object(demangle, "names", return_value={}):
            found = device.check_device_code(Path("x.o"), ("tensor_cores",))
        self.assertEqual([v.symbol for v in found if v.symbol.endswith("(device code)")],
                         ["_ZN1g5tableE (device code)", "malloc (device code)",
                          "free (device code)"])
        self.assertIn("device heap, which outlives a call", found[-1].message)
        # an image that does not parse refuses the object
        with mock.patch.object(device, "_read_sass", return_value=self.SASS), \
                mock.patch.object(device, "_read_cubins",
                                  side_effect=cubin.CubinError("a record runs past the end")), \
                mock.patch.object(demangle, "names", return_value={}):
            found = device.check_device_code(Path("x.o"), ("tensor_cores",))
        self.assertIn("device code image", [v.symbol for v in found])
        # no device code: nothing to read
        with mock.patch.object(device, "_read_sass", return_value=""), \
                mock.patch.object(device, "_read_cubins", side_effect=AssertionError("read")):
            self.assertEqual(device.check_device_code(Path("y.o"), ("tensor_cores",)), [])

    def test_attribute_records_parse_whole_or_refuse(self):
        data = (record(4, 0x37, b"\x82\x00\x00\x00")
                + record(3, cubin.EIATTR_CBANK_PARAM_SIZE, 0x18)
                + record(1, 0x04, 0) + record(2, 0x10, 7))
        self.assertEqual(cubin.attributes(data),
                         [(4, 0x37, b"\x82\x00\x00\x00"), (3, 0x19, 0x18), (1, 0x04, 0),
                          (2, 0x10, 7)])
        for bad in (data[:-2], record(4, 0x17, b"x" * 12)[:-1], b"\x09\x17\x00\x00"):
            with self.subTest(bad=bad), self.assertRaises(cubin.CubinError):
                cubin.attributes(bad)
        with self.assertRaises(cubin.CubinError):
            cubin.read_cubin(b"\x7fELF not really")

    def test_setting_in_grading_toml(self):
        rules = PolicyRules.from_toml({"forbid_device_instructions": ["tensor_cores"]}, "w")
        self.assertEqual(rules.forbid_device_instructions, ("tensor_cores",))
        with self.assertRaises(GraderError) as e:
            PolicyRules.from_toml({"forbid_device_instructions": ["fp64"]}, "w [policy]")
        self.assertIn("unknown family 'fp64'", e.exception.message)

    def test_every_lab_forbids_both_families(self):
        # Every lab but labs 10 and 11 is FP32 on CUDA cores; lab 02 (registers only) also
        # refuses shared memory; lab 01, whose lesson counts loads, refuses asynchronous copies
        # from global memory. Lab 10 teaches tensor cores on 16-bit inputs: it refuses only inputs
        # narrowed below 16 bits; lab 11 (attention in 16-bit types, v3 on tensor cores) refuses
        # those and 16-bit arithmetic.
        from grader import config
        labs = Path(__file__).resolve().parents[2] / "labs"
        extra = {"02_register_tiling": {"shared_memory"}, "01_naive_matmul": {"async_copy"}}
        for name in config.discover_labs(labs):
            with self.subTest(name):
                want = ({"narrow_precision"} if name == "10_tensor_core_gemm"
                        else {"half_arithmetic", "narrow_precision"} if name == "11_attention"
                        else {"tensor_cores", "low_precision"} | extra.get(name, set()))
                self.assertEqual(set(config.load_lab_config(labs, name).policy
                                     .forbid_device_instructions), want)


class SharedMemoryRuleTest(unittest.TestCase):
    """The shared_memory family on instructions alone, and on canned `cuobjdump -sass -res-usage`
    output: policy_fixtures/canned/shared_memory.cuobjdump.txt is that of
    policy_fixtures/bad_device_smem.cu (nvcc 13.0 -O3 -lineinfo -arch=sm_90, cuobjdump 13.5; the
    instructions' encoding comments left out). No nvcc or cuobjdump needed."""

    def test_shared_memory_opcodes(self):
        for op, operands in [("LDS", "R7, [R4]"), ("LDS.64", "R4, [UR4]"),
                             ("LDS.128", "R8, [R2+0x10]"), ("STS", "[R5], R0"),
                             ("STS.128", "[R3], R4"), ("LDSM.16.M88", "R5, [R4]"),
                             ("LDSM.16.MT88.4", "R4, [R2]"), ("STSM.16.M88", "[R4], R7"),
                             ("ATOMS.POPC.INC.32", "RZ, [R0+UR4]"),
                             ("ATOMS.CAS", "RZ, [R8+0x4], R10, R11"),
                             ("ATOMS.EXCH", "RZ, [UR4+0x8], R6"), ("ATOMS.ADD", "RZ, [R2], R3"),
                             ("LDGSTS.E.BYPASS.128", "[R7], desc[UR6][R2.64]"),
                             ("SYNCS.EXCH.64", "URZ, [UR6], UR4"),
                             ("SYNCS.ARRIVE.TRANS64.A1T0", "R2, [UR6], RZ"),
                             ("UBLKCP.S.G", "[UR4], [UR6], UR8"), ("STAS", "[R6.64], R0"),
                             ("UTMALDG.2D", "[UR8], [UR4]"),
                             ("S2R", "R0, SR_SWINHI"), ("S2UR", "UR6, SR_SWINHI"),
                             ("CS2R", "R2, SR_SWINLO"),
                             # isspacep.shared, isspacep.shared::cluster (nvcc 13.0, sm_90)
                             ("QSPC.E.S", "P0, RZ, [R2]"), ("QSPC.E.D", "P3, RZ, [RZ.U32+UR4]"),
                             # isspacep.global, isspacep.local: the window by elimination (a red
                             # team's, round 8)
                             ("QSPC.E.G", "P0, RZ, [RZ.U32+UR4]"),
                             ("QSPC.E.L", "P5, RZ, [RZ.U32+UR4]")]:
            with self.subTest(op):
                self.assertEqual(policy.device_family(op, operands), "shared_memory")

    def test_not_shared_memory(self):
        for op, operands in [("LD.E", "R3, desc[UR4][R2.64]"), ("ST.E", "desc[UR4][R2.64], R9"),
                             ("LDG.E.128", "R4, desc[UR4][R2.64]"),
                             ("STG.E", "desc[UR4][R2.64], R5"), ("LDL", "R0, [R1]"),
                             ("STL.64", "[R1], R2"), ("ATOMG.E.ADD", "RZ, desc[UR4][R2.64], R5"),
                             ("RED.E.ADD.F32.FTZ.RN.STRONG.GPU", "desc[UR4][R2.64], R5"),
                             ("BAR.SYNC.DEFER_BLOCKING", "0x0"),
                             ("SHFL.BFLY", "PT, R0, R1, 0x1, 0x1f"),
                             ("S2R", "R5, SR_TID.X"), ("S2UR", "UR5, SR_CgaCtaId"),
                             ("S2R", "R0, SR_LANEID"), ("LDC", "R1, c[0x0][0x28]"),
                             ("REDUX.MAX.S32", "UR6, R7")]:
            with self.subTest(op):
                self.assertIsNone(policy.device_family(op, operands))

    def test_the_launch_id_slot_by_any_operand(self):
        # what ptxas writes for honest code passes: blockDim.x as c[0x0][RZ] or c[0x0][URZ+0x4],
        # the stack's top, the parameters; the launch id's slot is refused however it is
        # written (RZ reads as 0), and so is any bank 0 read at a register index
        def kinds(*operands):
            sass = "\t\tFunction : _Z1kPf\n" + "".join(
                f"        /*{i:04x}*/                   LDC R0, {o} ;\n"
                for i, o in enumerate(operands))
            return [v.symbol.split(" in ")[0] for v in device._launch_id_violations(sass)]
        self.assertEqual(kinds("c[0x0][RZ]", "c[0x0][URZ+0x4]", "c[0x0][0x28]",
                               "c[0x0][0x210]", "c[0x0][0x44]"), [])
        self.assertEqual(kinds("c[0x0][0x34]"), ["%gridid"])
        self.assertEqual(kinds("c[0x0][RZ+0x30]"), ["%gridid"])
        self.assertEqual(kinds("c[0x0][0x19c]"), ["parameters' address"])
        self.assertEqual(kinds("c[0x0][R4+0x30]"), ["constant bank 0 by register"])
        self.assertEqual(kinds("c[0x0][UR6]"), ["constant bank 0 by register"])
        # one finding per kernel and kind
        self.assertEqual(kinds("c[0x0][0x30]", "c[0x0][0x34]"), ["%gridid"])

    def test_constant_bank_0_is_an_allow_list(self):
        # what honest sm_90 code reads passes (nvcc 13.0: blockDim, gridDim, the local window
        # and stack, the grid-sync workspace, cooperative groups' slot, the constant window,
        # the cluster's geometry, the memory descriptor, parameters up to the largest block,
        # whose offsets from 0x8000 print as negative numbers); every other slot is refused
        def kinds(*insns):
            sass = "\t\tFunction : _Z1kPf\n" + "".join(
                f"        /*{i:04x}*/                   {op} R0, {o} ;\n"
                for i, (op, o) in enumerate(insns))
            return [v.symbol.split(" in ")[0] for v in device._launch_id_violations(sass)]
        honest = [("LDC", "c[0x0][0x14]"), ("LDC", "c[0x0][0x20]"), ("LDC", "c[0x0][0x24]"),
                  ("LDC.64", "c[0x0][0x44]"), ("LDC", "c[0x0][0x6c]"), ("LDC.64", "c[0x0][0xd0]"),
                  ("LDC", "c[0x0][0x140]"), ("LDC", "c[0x0][0x164]"), ("LDC", "c[0x0][0x188]"),
                  ("ULDC.64", "c[0x0][0x208]"), ("LDC.U8", "c[0x0][0x213]"),
                  ("LDC", "c[0x0][-0x7e00]"), ("LDC", "c[0x0][-0x7df8]")]
        self.assertEqual(kinds(*honest), [])
        for op, operand in [("LDC", "c[0x0][0x40]"), ("LDC", "c[0x0][0x4c]"),      # %envreg0, 3
                            ("LDC", "c[0x0][0xbc]"), ("LDC.64", "c[0x0][0x190]"),  # graph exec
                            ("LDC", "c[0x0][0x2c]"), ("LDC", "c[0x0][0x10c]"),     # smem, %nsmid
                            ("LDC", "c[0x0][0x114]"), ("LDC", "c[0x0][0x18]"),
                            ("LDC.64", "c[0x0][0x48]"),     # 8 bytes from 0x48: past 0x4c
                            ("LDC", "c[0x0][-0x7df4]")]:   # 0x820c: past the largest block
            with self.subTest(operand=operand, op=op):
                self.assertEqual(kinds((op, operand)), ["driver's launch state"])

    def test_each_kernel_reads_only_its_own_parameters(self):
        # the parameters' bytes from each kernel's .nv.info section, read from the image's bytes
        # (the end of its last parameter, or EIATTR_CBANK_PARAM_SIZE, which ptxas leaves out of
        # some kernels); a read past them is refused, a kernel no image describes gets the
        # largest block. A listing is not read: a PTX comment printed in cuobjdump -elf's listing
        # forged a larger block there (red team rounds 14 and 15), and reaches no image's bytes.
        def kparam(offset, size):
            return record(4, cubin.EIATTR_KPARAM_INFO,
                          struct.pack("<IHHI", 0, 0, offset, (size << 18) | 0x1f000))
        images = [cubin.read_cubin(make_cubin([], [
            (".nv.info._Z1kPfi", [kparam(8, 4), record(3, cubin.EIATTR_CBANK_PARAM_SIZE, 12),
                                  record(4, cubin.EIATTR_PARAM_CBANK,
                                         struct.pack("<IHH", 3, 0x210, 12))]),
            (".nv.info._Z1gPf", [kparam(0, 8)]),
            (".nv.info._Z1hv", [record(3, 0x1b, 0xff)]),
            (".nv.info", [record(4, 0x2f, struct.pack("<II", 1, 4))])]))]
        self.assertEqual(cubin.param_sizes(images), {"_Z1kPfi": 12, "_Z1gPf": 8, "_Z1hv": 0})
        # ptxas states the same size wherever it states one (odd sizes too: (double, char) is
        # 9 bytes in all three); an image whose sizes disagree is not nvcc's (a red team's
        # stated a CBANK_PARAM_SIZE of 0x1000 over 24 bytes of parameters, round 17): refused
        for forged in ([kparam(0, 24), record(3, cubin.EIATTR_CBANK_PARAM_SIZE, 0x1000)],
                       [kparam(0, 24), record(4, cubin.EIATTR_PARAM_CBANK,
                                              struct.pack("<IHH", 3, 0x210, 0x1000))]):
            image = cubin.read_cubin(make_cubin([], [(".nv.info._Z1kPf", forged)]))
            with self.assertRaisesRegex(cubin.CubinError, "state 2 sizes of its parameters"):
                cubin.param_sizes([image])
        self.assertEqual(tools.lines("a\x0bb\x0cc\u2028d\ne\n"), ["a\x0bb\x0cc\u2028d", "e"])
        # a kernel described in two images (or twice in one) refuses the object
        self.assertEqual(cubin.described_twice(images), [])
        twice = images + [cubin.read_cubin(
            make_cubin([], [(".nv.info._Z1gPf", [kparam(0, 0x3ff0)])]))]
        self.assertEqual(cubin.described_twice(twice), ["_Z1gPf"])
        with mock.patch.object(device, "_read_sass", return_value="\t\tFunction : _Z1gPf\n"), \
                mock.patch.object(device, "_read_cubins", return_value=twice), \
                mock.patch.object(demangle, "names", return_value={}):
            found = device.check_device_code(Path("x.o"), ("tensor_cores",))
        self.assertEqual([v.symbol for v in found], ["listing of _Z1gPf"])
        self.assertIn("describes the kernel _Z1gPf twice", found[0].message)
        listing = images

        def kinds(kernel, *operands):
            sass = f"\t\tFunction : {kernel}\n" + "".join(
                f"        /*{i:04x}*/                   LDC R0, {o} ;\n"
                for i, o in enumerate(operands))
            return [v.symbol.split(" in ")[0]
                    for v in device._launch_id_violations(sass, cubin.param_sizes(listing))]
        self.assertEqual(kinds("_Z1kPfi", "c[0x0][0x210]", "c[0x0][0x218]"), [])
        self.assertEqual(kinds("_Z1kPfi", "c[0x0][0x21c]"), ["driver's launch state"])
        self.assertEqual(kinds("_Z1gPf", "c[0x0][0x218]"), ["driver's launch state"])
        self.assertEqual(kinds("_Z1hv", "c[0x0][0x210]"), ["driver's launch state"])
        self.assertEqual(kinds("_Z9undescribed", "c[0x0][0x610]"), [])

    def test_static_shared_bytes_less_the_reserved_kilobyte(self):
        self.assertEqual(device.static_shared_bytes(0, 90), 0)
        self.assertEqual(device.static_shared_bytes(1024, 90), 0)   # reserved only
        self.assertEqual(device.static_shared_bytes(1028, 90), 4)
        self.assertEqual(device.static_shared_bytes(1280, 100), 256)
        self.assertEqual(device.static_shared_bytes(4, 80), 4)      # nothing reserved before sm_90
        self.assertEqual(device.static_shared_bytes(1024, 80), 1024)
        self.assertEqual(device.static_shared_bytes(1028, None), 4)

    def canned(self, name):
        return (CANNED / f"{name}.cuobjdump.txt").read_text()

    def findings(self, name, families=("shared_memory",)):
        names = {"_Z8k_staticPf": "k_static(float*)", "_Z9k_dynamicPf": "k_dynamic(float*)",
                 "_Z10k_cp_asyncPKfPf": "k_cp_async(float const*, float*)",
                 "_Z7k_plainPf": "k_plain(float*)", "_Z5k_ptxPf": "k_ptx(float*)",
                 "_Z8k_atomicPi": "k_atomic(int*)", "_Z9k_genericPfi": "k_generic(float*, int)"}
        with mock.patch.object(device, "_read_sass", return_value=self.canned(name)), \
                mock.patch.object(demangle, "names", side_effect=lambda ks: {
                    k: names[k] for k in ks if k in names}):
            return device._read_device_code(Path("x.o"), families)

    def test_canned_kernels_each_named_with_its_instruction(self):
        found = self.findings("shared_memory")
        self.assertEqual([v.symbol for v in found], [
            "LDGSTS.E.BYPASS.128 in k_cp_async(float const*, float*)",
            "LDS in k_cp_async(float const*, float*)",
            "S2R SR_SWINHI in k_generic(float*, int)",
            "STS in k_ptx(float*)", "LDS in k_ptx(float*)",
            "ATOMS.POPC.INC.32 in k_atomic(int*)", "LDS in k_atomic(int*)",
            "STS in k_dynamic(float*)", "LDS in k_dynamic(float*)",
            "STS in k_static(float*)", "LDS in k_static(float*)",
            "SHARED:2048 in k_cp_async(float const*, float*)",
            "SHARED:1280 in k_static(float*)"])
        self.assertTrue(all(v.rule == "device" for v in found))
        by_symbol = {v.symbol: v.message for v in found}
        self.assertEqual(by_symbol["STS in k_ptx(float*)"],
                         "uses the shared-memory instruction STS in kernel k_ptx(float*): this "
                         "lab does not allow shared memory (no __shared__ or extern __shared__ "
                         "arrays, shared atomics, ld.shared/st.shared, ldmatrix, cp.async, "
                         "mbarriers or isspacep.shared)")
        self.assertIn("reads the shared-memory window (S2R SR_SWINHI) in kernel "
                      "k_generic(float*, int): that makes a generic pointer into shared memory",
                      by_symbol["S2R SR_SWINHI in k_generic(float*, int)"])
        self.assertEqual(by_symbol["SHARED:1280 in k_static(float*)"],
                         "declares 256 bytes of static shared memory (__shared__) in kernel "
                         "k_static(float*) (cuobjdump -res-usage: SHARED:1280): this lab does "
                         "not allow shared memory")
        # k_plain shows SHARED:1024 beside them (the reserved kilobyte) and uses none: no finding
        self.assertFalse(any("k_plain" in v.symbol for v in found))

    def test_canned_padding_that_never_runs_passes(self):
        # cp.async comes with `@!PT LDS RZ, [RZ]` padding before it; the LDS found is the real
        # one after it (at 0x150), and a kernel with only the padding would pass
        text = self.canned("shared_memory")
        self.assertIn("@!PT LDS RZ, [RZ]", text)
        with mock.patch.object(device, "_read_sass", return_value=(
                "\t\tFunction : _Z3padv\n"
                "        /*00d0*/              @!PT LDS RZ, [RZ] ;\n"
                "        /*00e0*/                   EXIT ;\n")), \
                mock.patch.object(demangle, "names", return_value={}):
            self.assertEqual(device._read_device_code(Path("x.o"), ("shared_memory",)), [])

    def test_canned_without_the_family_nothing_is_found(self):
        self.assertEqual(self.findings("shared_memory", ("tensor_cores", "low_precision")), [])


@unittest.skipUnless(GXX, "g++ is needed")
class FatbinSectionTest(unittest.TestCase):
    """A second section named .nv_fatbin (zero bytes before nvcc's): cuobjdump reads only the
    first, the linker merges both and the executor skips the padding, so the device rule would
    read nothing of code that runs (a red team's case, 02/hidden_fatbin_section). Refused."""

    def sections_object(self, asm: str) -> list:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "x.cpp"
            src.write_text(f'asm("{asm}");\nint f(int x) {{ return x; }}\n')
            subprocess.run([GXX, "-c", str(src), "-o", f"{tmp}/x.o"], check=True)
            return device.check_device_sections(Path(tmp) / "x.o")

    def test_two_sections_of_that_name_are_refused(self):
        found = self.sections_object(
            '.section .nv_fatbin,\\"a\\",@progbits,unique,1\\n.zero 8\\n.previous\\n'
            '.section .nv_fatbin,\\"a\\",@progbits\\n.zero 16\\n.previous')
        self.assertEqual(len(found), 1)
        self.assertEqual(found[0].rule, "device")
        self.assertIn("2 sections named .nv_fatbin", found[0].message)

    # nvcc's shape: its label at the first byte, one fatbin (magic, version 1, a 16-byte header,
    # 0x10 bytes of entries) to the section's end
    NVCC = ('.section .nv_fatbin,\\"a\\",@progbits\\n.balign 8\\nfatbinData:\\n'
            '.quad 0x00100001ba55ed50\\n.quad 0x10\\n.quad 0\\n.quad 0\\n.previous')

    def test_one_section_passes(self):
        self.assertEqual(self.sections_object(self.NVCC), [])
        self.assertEqual(self.sections_object('.text'), [])

    def test_the_section_holds_nvccs_fatbin_alone(self):
        # a red team's fatbin of its own ahead of nvcc's swallowed nvcc's as an entry's
        # payload (round 17): cuobjdump, the policy and the executor read its image instead
        cases = {
            "no fatbinData label": '.section .nv_fatbin,\\"a\\",@progbits\\n.zero 16\\n.previous',
            "is not at its first byte": ('.section .nv_fatbin,\\"a\\",@progbits\\n'
                                         '.quad 0x00100001ba55ed50\\n.quad 0x18\\n.previous\\n'
                                         + self.NVCC),
            "16 bytes after nvcc's fatbin": (self.NVCC + '\\n.section .nv_fatbin,\\"a\\",'
                                             '@progbits\\n.quad 1\\n.quad 2\\n.previous'),
            "runs past the section's end": self.NVCC.replace(".quad 0x10", ".quad 0x40"),
            "no fatbin at its first byte": self.NVCC.replace("ba55ed50", "ba55ed51"),
        }
        for why, asm in cases.items():
            with self.subTest(why):
                found = self.sections_object(asm)
                self.assertEqual([v.rule for v in found], ["device"])
                self.assertIn(why, found[0].message)
                self.assertIn("bytes other than nvcc's fatbin", found[0].message)

    def test_the_section_is_the_fatbin_the_build_kept(self):
        # round 18: nvcc's fatbin asm skipped by assembler conditionals and another fatbin put
        # under its label has nvcc's shape; it is not the fatbin nvcc kept of that compile
        with tempfile.TemporaryDirectory() as t:
            obj = self.elf_with(Path(t), "x", self.NVCC)
            kept = device.kept_fatbin(obj)
            (section,) = elf.section_bytes(obj, elf.FATBIN_SECTION)
            with self.assertRaises(GraderError) as e:    # the build did not keep it
                device.check_device_sections(obj, kept_required=True)
            self.assertIn("did not keep nvcc's fatbin", e.exception.message)
            self.assertEqual(device.check_device_sections(obj), [])   # not asked: shape only
            kept.write_bytes(section[:32])
            self.assertEqual(device.check_device_sections(obj, kept_required=True), [])
            for other in (section[:31] + b"\x01", section[:24], section[:32] + bytes(8), b""):
                with self.subTest(kept=other):
                    kept.write_bytes(other)
                    (v,) = device.check_device_sections(obj, kept_required=True)
                    self.assertIn("not the fatbin nvcc compiled from your file", v.message)
                    self.assertIn("bytes other than nvcc's fatbin", v.message)
            kept.unlink()
            kept.symlink_to(Path(t) / "elsewhere")
            with self.assertRaises(GraderError):
                device.check_device_sections(obj, kept_required=True)

    def elf_with(self, tmp: Path, name: str, asm: str) -> Path:
        src = tmp / f"{name}.cpp"
        src.write_text(f'asm("{asm}");\nint {name}(int x) {{ return x; }}\n')
        subprocess.run([GXX, "-c", str(src), "-o", str(tmp / f"{name}.o")], check=True)
        return tmp / f"{name}.o"

    def test_the_linked_worker_must_hold_what_the_policy_read(self):
        from grader import build
        one = '.section .nv_fatbin,\\"a\\",@progbits\\n.ascii \\"FATBIN-A\\"\\n.previous'
        other = '.section .nv_fatbin,\\"a\\",@progbits\\n.ascii \\"FATBIN-B\\"\\n.previous'
        padded = one.replace('.previous', '.zero 8\\n.previous')
        two = ('.section .nv_fatbin,\\"a\\",@progbits,unique,1\\n.zero 8\\n.previous\\n'
               + one)
        none = '.text'
        with tempfile.TemporaryDirectory() as t:
            tmp = Path(t)
            obj = self.elf_with(tmp, "obj", one)
            # the same bytes (with alignment zeros at the end): what the policy read runs
            self.assertIsNone(build.linked_device_code_problem(self.elf_with(tmp, "w1", one), [obj]))
            self.assertIsNone(build.linked_device_code_problem(self.elf_with(tmp, "w2", padded),
                                                               [obj]))
            # other device code, or device code where the object had none: refused
            self.assertIn("is not your object's",
                          build.linked_device_code_problem(self.elf_with(tmp, "w3", other), [obj]))
            self.assertIn("is not your object's", build.linked_device_code_problem(
                self.elf_with(tmp, "w4", one), [self.elf_with(tmp, "o2", none)]))
            # an object with a second section before nvcc's: the policy read its zeros only
            hidden = self.elf_with(tmp, "o3", two)
            self.assertIn("is not your object's", build.linked_device_code_problem(
                self.elf_with(tmp, "w5", '.section .nv_fatbin,\\"a\\",@progbits\\n.zero 8\\n'
                              '.ascii \\"FATBIN-A\\"\\n.previous'), [hidden]))
            # neither has device code: nothing to compare
            self.assertIsNone(build.linked_device_code_problem(self.elf_with(tmp, "w6", none),
                                                               [self.elf_with(tmp, "o4", none)]))

    def test_not_an_object_is_a_violation_not_a_pass(self):
        with tempfile.TemporaryDirectory() as tmp:
            junk = Path(tmp) / "x.o"
            junk.write_bytes(b"not an ELF file")
            (v,) = device.check_device_sections(junk)
        self.assertIn("could not be read", v.message)


class IndirectCallTest(unittest.TestCase):
    """A call through a register that is not an outside function's (CALL.REL with a register
    target: a function pointer, a virtual call) is refused in every lab (red team round 23);
    printf's and assert's CALL.ABS through bank 4, and direct calls, are not."""

    SASS = ("\t\tFunction : _Z1kPy\n"
            "        /*0030*/                   LDG.E.64 R2, desc[UR36][R2.64] ;\n"
            "        /*0080*/                   CALL.REL.NOINC R2 0x0 ;\n"
            "\t\tFunction : _Z7kprintfi\n"
            "        /*0080*/                   LDC.64 R2, c[0x4][R0] ;\n"
            "        /*00e0*/                   CALL.ABS.NOINC R2 ;\n"
            "        /*0100*/                   CALL.REL.NOINC 0x200 ;\n")

    def test_only_the_call_through_a_pointer(self):
        with mock.patch.object(demangle, "names", return_value={"_Z1kPy": "k(unsigned long*)"}):
            (v,) = device._indirect_call_violations(self.SASS)
        self.assertEqual(v.rule, "device")
        self.assertIn("function pointer", v.message)
        self.assertIn("k(unsigned long*)", v.message)
        self.assertIn("CALL.REL.NOINC R2", v.message)
        with mock.patch.object(demangle, "names", return_value={}):
            self.assertEqual(device._indirect_call_violations(
                self.SASS.replace("CALL.REL.NOINC R2 0x0", "CALL.REL.NOINC 0x400")), [])


class AsyncCopyFamilyTest(unittest.TestCase):
    """Asynchronous copies from global memory form a family a lab may refuse (lab 01: its
    lesson counts loads and atomics; a red team read an uncoalesced matmul's operands through
    cp.async, round 28); they stay shared-memory instructions too."""

    def test_the_copies_and_nothing_else(self):
        for op in ("LDGSTS.E.BYPASS.LTC128B.128", "UBLKCP.S.G", "UTMALDG.2D"):
            self.assertIn("async_copy", device.device_families(op))
        self.assertEqual(device.device_families("LDGSTS.E.BYPASS.128"),
                         ("shared_memory", "async_copy"))
        for op in ("LDG.E.128", "LDGDEPBAR", "LDS.128", "ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU"):
            self.assertNotIn("async_copy", device.device_families(op))


class HarnessNamespaceDeviceTest(unittest.TestCase):
    """A device function in a namespace of the grading harness is refused, local ones included:
    the profile stage leaves the executor's labkit:: kernels out of a call's counters, and a
    static template kernel in namespace labkit (a local symbol the object rule skips) hid a
    reduce-then-scan's passes from lab 08's lesson (red team round 26)."""

    SASS = ("\t\tFunction : _ZN6labkitL10tile_sumsIjEEvPKT_mPS1_\n"
            "        /*0030*/                   LDG.E R2, desc[UR36][R2.64] ;\n"
            "\t\tFunction : _ZN6labkit12_GLOBAL__N_14stepEPf\n"
            "        /*0030*/                   EXIT ;\n"
            "\t\tFunction : _ZN7testing1kEPf\n"
            "        /*0030*/                   EXIT ;\n"
            "\t\tFunction : _ZN4mine12labkit_likeEPf\n"
            "        /*0030*/                   EXIT ;\n"
            "\t\tFunction : _Z6kernelPf\n"
            "        /*0030*/                   EXIT ;\n")

    def test_every_function_in_a_harness_namespace(self):
        found = device._harness_namespace_violations(self.SASS)
        self.assertEqual(len(found), 3)
        self.assertTrue(all(v.rule == "device" for v in found))
        self.assertIn("namespace labkit::", found[0].message)
        self.assertIn("tile_sums", found[0].message)
        self.assertIn("namespace testing::", found[2].symbol)
        self.assertEqual(device._harness_namespace_violations(
            "\t\tFunction : _Z6kernelPf\n        /*0030*/   EXIT ;\n"), [])

    def test_a_harness_type_anywhere_in_the_name(self):
        # A template kernel whose return type is a harness type: its outermost name is k, but
        # it prints 'labkit::Ret<float>::type k<float>(float*)' (red team round 27).
        (v,) = device._harness_namespace_violations(
            "\t\tFunction : _Z1kIfEN6labkit3RetIT_E4typeEPS2_\n        /*0030*/   EXIT ;\n")
        self.assertIn("labkit::Ret<float>::type k<float>", v.message)
        self.assertIn("namespace labkit::", v.symbol)
        # A name the demangler gives up on (nested 256 templates deep): read in the mangled
        # text (red team round 28).
        deep = "_Z17tile_total_kernelIj" + "1DI" * 300 + "i" + "E" * 300 + \
            "EN6labkit3RetIT_E4typeEPKS0_mPS0_"
        with mock.patch.object(demangle, "names", return_value={}):
            (v,) = device._harness_namespace_violations(
                f"\t\tFunction : {deep}\n        /*0030*/   EXIT ;\n")
            self.assertIn("namespace labkit::", v.symbol)
            # a longer identifier that merely ends in the digits and letters is not one
            self.assertEqual(device._harness_namespace_violations(
                "\t\tFunction : _Z16labkitfoobarbazqPf\n        /*0030*/   EXIT ;\n"), [])
        # A namespace of the student's own that ends in such a word is not the harness's.
        self.assertEqual(device._harness_namespace_violations(
            "\t\tFunction : _ZN4mine7testing1kEPf\n        /*0030*/   EXIT ;\n"), [])


class ReturnAddressTest(unittest.TestCase):
    """A RET through a register that was reloaded from local memory: the return address of a
    recursive function, which a run-time-indexed local store can overwrite (red team round 24).
    A RET through a register no LDL wrote (every non-recursive function's) is not refused."""

    SASS = ("\t\tFunction : _Z4krecPii\n"
            "        /*0110*/                   STL [R1+0x10], R20 ;\n"
            "        /*0400*/                   STL [R6], R5 ;\n"
            "        /*0480*/                   LDL R20, [R1+0x10] ;\n"
            "        /*0490*/                   LDL R21, [R1+0x14] ;\n"
            "        /*04e0*/                   RET.REL.NODEC R20 0x0 ;\n"
            "\t\tFunction : _Z6kplainPi\n"
            "        /*0050*/                   LDL R3, [R1] ;\n"
            "        /*00d0*/                   RET.REL.NODEC R2 0x0 ;\n")

    def test_only_the_return_through_a_reloaded_address(self):
        with mock.patch.object(demangle, "names", return_value={}):
            (v,) = device._indirect_call_violations(self.SASS)
            self.assertIn("_Z4krecPii", v.message)
            self.assertIn("recursion", v.message)
            # a 64-bit reload covers both halves
            wide = self.SASS.replace("LDL R20, [R1+0x10]", "LDL.64 R20, [R1+0x10]").replace(
                "        /*0490*/                   LDL R21, [R1+0x14] ;\n", "").replace("RET.REL.NODEC R20", "RET.REL.NODEC R21")
            self.assertEqual(len(device._indirect_call_violations(wide)), 1)
            plain = self.SASS.replace("LDL R20, [R1+0x10]", "LDL R9, [R1+0x10]")
            self.assertEqual(device._indirect_call_violations(plain), [])
            # a local load in the caller is not the callee's return address (red team round
            # 25: a kernel's local array read into R2, and a leaf callee returning through R2)
            caller = ("\t\tFunction : _Z1kPi\n"
                      "        /*0040*/                   LDL R2, [R1+0x4] ;\n"
                      "        /*0050*/                   MOV R2, 0x70 ;\n"
                      "        /*0060*/                   CALL.REL.NOINC 0x100 ;\n"
                      "        /*0070*/                   LDL R2, [R1+0x8] ;\n"
                      "        /*0080*/                   EXIT ;\n"
                      "        /*0100*/                   FADD R0, R0, 1 ;\n"
                      "        /*0110*/                   RET.REL.NODEC R2 0x0 ;\n")
            self.assertEqual(device._indirect_call_violations(caller), [])
            # ... but the callee's own reload, after a call of its own, is
            nested = caller.replace("FADD R0, R0, 1", "LDL R2, [R1+0x10]")
            self.assertEqual(len(device._indirect_call_violations(nested)), 1)


class Bank0WidthTest(unittest.TestCase):
    """How many bytes of bank 0 an instruction's constant operand reads: a double's is 8 even
    where no modifier says so (red team round 22: counted as 4, a DADD of the last 4-byte
    parameter would read 4 bytes past the block; ptxas 13.0 never folds one today)."""

    def test_widths(self):
        for op, width in (("LDC", 4), ("LDC.64", 8), ("ULDC.64", 8), ("LDC.U8", 1),
                          ("LDC.S16", 2), ("FFMA", 4), ("DADD", 8),
                          ("DFMA", 8), ("DSETP.GT.AND", 8), ("F2F.F64.F32", 8)):
            with self.subTest(op):
                self.assertEqual(device._bank0_width(op), width)


class Bank0ArchitectureTest(unittest.TestCase):
    """The bank 0 allow-list is sm_90's layout; on other architectures only a read at an index
    held in a register is refused (a red team's, round 13: every honest kernel compiled for
    sm_75 to sm_89 or sm_100 and later read a slot the sm_90 list refuses)."""

    @staticmethod
    def listing(sm: int, operand: str) -> str:
        return (f"\tcode for sm_{sm}\n\t\tFunction : _Z1kPf\n"
                f"        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
                f"        /*0010*/                   LDC R2, {operand} ;\n")

    def test_the_allow_list_holds_on_sm_90_only(self):
        slot = "c[0x0][0x180]"   # sm_80: a parameter; sm_90: the driver's launch state
        self.assertEqual(len(device._launch_id_violations(self.listing(90, slot))), 1)
        for sm in (75, 80, 89, 100, 120):
            self.assertEqual(device._launch_id_violations(self.listing(sm, slot)), [], sm)
            (v,) = device._launch_id_violations(self.listing(sm, "c[0x0][R3+0x30]"))
            self.assertIn("constant bank 0 by register", v.symbol)


class ListingTooLargeTest(unittest.TestCase):
    """A listing longer than the tools' cap is a refusal, never a partial read: a red team's
    lab 02 file (round 13) padded its machine code so that cuobjdump printed 318 MB, and the
    instructions in the cut middle escaped every device rule."""

    def test_a_cut_cuobjdump_listing_refuses_the_object(self):
        from grader import runner
        cut = runner.ProcResult(returncode=0, timed_out=False, seconds=0.1, stdout="x",
                                stderr="", stdout_cut=True)
        with tempfile.TemporaryDirectory() as tmp:
            obj = Path(tmp) / "k.o"
            obj.write_bytes(b"not read")
            with mock.patch.object(device, "find_cuobjdump", return_value="/bin/true"), \
                    mock.patch.object(device.runner, "run", return_value=cut):
                with self.assertRaises(device.ListingTooLarge):
                    device._read_sass(obj)
                with self.assertRaises(device.ListingTooLarge):
                    device.inspect_device_code(obj, ())   # even for the report's table alone

    def test_check_submission_makes_it_a_violation(self):
        with tempfile.TemporaryDirectory() as tmp:
            obj = Path(tmp) / "k.o"
            obj.write_bytes(b"")
            with mock.patch.object(policy, "read_object",
                                   side_effect=device.ListingTooLarge("objdump -dr k.o")):
                result = policy.check_submission([obj], [], [], None, PolicyRules())
        self.assertFalse(result.ok)
        (v,) = result.violations
        self.assertEqual((v.rule, v.symbol), ("device", "k.o"))
        self.assertIn("objdump -dr k.o printed more than 256 MiB", v.message)


class CuobjdumpLookupTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)

    def tool(self, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o755)
        return path

    def test_missing_fails_closed_naming_the_install_command(self):
        with mock.patch.object(device, "find_cuobjdump", return_value=None):
            with self.assertRaises(GraderError) as e:
                device.check_device_code(Path("x.o"), ("tensor_cores",))
        self.assertIn("cuobjdump", e.exception.message)
        self.assertIn("install it with: scripts/install-deps", e.exception.message)

    def test_order_path_then_toolkit_then_wheels(self):
        nvcc = self.tool(self.tmp / "cuda" / "bin" / "nvcc")
        toolkit = self.tool(self.tmp / "cuda" / "bin" / "cuobjdump")
        venv = self.tmp / "venv"
        wheel = self.tool(venv / "lib" / "python3.11" / "site-packages" / "nvidia" / "cu13" /
                          "bin" / "cuobjdump")
        which = {"cuobjdump": "/opt/on/path/cuobjdump", "nvcc": str(nvcc)}
        with mock.patch.object(device.shutil, "which", side_effect=which.get), \
                mock.patch.object(device, "TOOLS_VENV", venv), \
                mock.patch.object(device, "_python_site_dirs", return_value=[]):
            self.assertEqual(policy.find_cuobjdump(), "/opt/on/path/cuobjdump")
            del which["cuobjdump"]
            self.assertEqual(policy.find_cuobjdump(), str(toolkit))
            toolkit.unlink()
            self.assertIsNone(policy.find_cuobjdump(), "a wheel without nvdisasm is no use")
            self.tool(wheel.parent / "nvdisasm")
            self.assertEqual(policy.find_cuobjdump(), str(wheel))


@unittest.skipUnless(shutil.which("gcc") and shutil.which("objdump"), "gcc and binutils")
class LinkerCodeSectionTest(unittest.TestCase):
    def test_syscall_in_an_alloc_only_section_the_linker_puts_in_text(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in (".stub", ".gnu.linkonce.t.x", ".rodata.fine"):
                with self.subTest(name):
                    src = Path(tmp) / "x.c"
                    src.write_text(f'__asm__(".pushsection {name},\\"a\\",@progbits\\n'
                                   f'syscall\\n.popsection");\nint f(void) {{ return 0; }}\n')
                    subprocess.run(["gcc", "-c", str(src), "-o", f"{tmp}/x.o"], check=True)
                    found = object_rules.check_syscalls(elf_object.read_object(Path(tmp) / "x.o"))
                    if name == ".rodata.fine":    # read-only data: never executable
                        self.assertEqual(found, [])
                    else:
                        self.assertEqual([v.symbol for v in found], [f"syscall in {name}"])


if __name__ == "__main__":
    unittest.main()
