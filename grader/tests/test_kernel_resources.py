"""The kernels as compiled, in every report: registers, static shared memory and local memory per
kernel (grader/policy/device.py kernel_resources, read from cuobjdump -sass -res-usage), and what
the console, Markdown and HTML reports make of them. The parser on a fixed text (no tools); the
whole path on a real nvcc compile where nvcc and cuobjdump are found (CI installs both)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader import console_report, html_report, reports
from grader.policy import device
from grader.results import GradeResult, LabResult, PolicyReport

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False

# cuobjdump -sass -res-usage of an object with two kernels (nvcc 13.0 -arch=sm_90), cut to the
# lines the parser reads plus some it must skip: the ELF's architecture, each kernel's resource
# line, the SASS of each kernel with its local loads and stores, one of them never run (@!PT).
SASS = """
Fatbin elf code:
================
arch = sm_90
code version = [1,8]

Resource usage:
 Common:
  GLOBAL:0
 Function _Z5plainIfEvPKT_PS0_i:
  REG:10 STACK:0 SHARED:2048 LOCAL:0 CONSTANT[0]:548 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _Z11local_arrayPKiPf:
  REG:40 STACK:1024 SHARED:0 LOCAL:16 CONSTANT[0]:544 TEXTURE:0 SURFACE:0 SAMPLER:0

\tcode for sm_90
\tcode for sm_90

\t\tFunction : _Z5plainIfEvPKT_PS0_i
\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   STS [R5], R2 ;
        /*0020*/              @!PT LDL RZ, [RZ] ;
        /*0030*/                   EXIT ;
\t\t..........

\t\tFunction : _Z11local_arrayPKiPf
        /*0000*/                   STL.128 [R1+0x200], R28 ;
        /*0010*/                   STL [R1+0x210], R12 ;
        /*0020*/                   LDL R0, [R1] ;
        /*0030*/                   EXIT ;
"""


def lab_with(kernels) -> LabResult:
    return LabResult(lab="02_register_tiling", title="Register tiling", max_points=100,
                     policy=PolicyReport(ok=True, kernels=kernels))


class ParserTest(unittest.TestCase):
    def test_each_kernel_with_its_resources_and_local_accesses(self):
        rows = device.kernel_resources(SASS)
        self.assertEqual(rows, [
            {"kernel": "void plain<float>(float const*, float*, int)", "arch": "sm_90",
             "registers": 10, "shared_bytes": 1024,   # 2048 less the 1 KiB sm_90 reserves
             "local_bytes": 0, "stack_bytes": 0, "local_loads": 0, "local_stores": 0,
             "local_addressing": 0, "tensor_ops": 0},
            {"kernel": "local_array(int const*, float*)", "arch": "sm_90", "registers": 40,
             "shared_bytes": 0, "local_bytes": 16, "stack_bytes": 1024, "local_loads": 1,
             "local_stores": 2, "local_addressing": 0, "tensor_ops": 0}])

    def test_tensor_core_instructions_per_kernel(self):
        # Lab 10's lesson: HMMA (mma.sync, wmma), HGMMA (wgmma) and the rest of the tensor_cores
        # family counted per kernel; one never run (@!PT) and a packed half FMA are not.
        text = """
arch = sm_90
 Function _Z3mmaPf:
  REG:64 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:556
 Function _Z4simtPf:
  REG:32 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:556
\tcode for sm_90
\t\tFunction : _Z3mmaPf
        /*0000*/                   HMMA.16816.F32 R4, R8, R12, R4 ;
        /*0010*/                   HMMA.16816.F32.BF16 R16, R8, R14, R16 ;
        /*0020*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], R24 ;
        /*0030*/              @!PT HMMA.16816.F32 R4, R8, R12, R4 ;
        /*0040*/                   EXIT ;
\t\tFunction : _Z4simtPf
        /*0000*/                   HFMA2 R4, R8, R12, R4 ;
        /*0010*/                   FFMA R4, R8, R12, R4 ;
        /*0020*/                   EXIT ;
"""
        rows = {r["kernel"]: r["tensor_ops"] for r in device.kernel_resources(text)}
        self.assertEqual(rows, {"mma(float*)": 3, "simt(float*)": 0})

    def test_local_memory_reached_through_a_pointer(self):
        # A frame made at run time (alloca) and reached by a generic pointer: STACK:0, no
        # LDL/STL, but the local window's base read and the stack pointer moved (a red team's
        # lab 02 kernel, round 12). The entry's own `LDC R1, c[0x0][0x28]` is not counted.
        text = """
arch = sm_90
 Function _Z6framedPf:
  REG:30 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:556
\tcode for sm_90
\t\tFunction : _Z6framedPf
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0020*/                   VIADD R1, R1, 0xffffffa0 ;
        /*0030*/                   ULDC UR5, c[0x0][0x20] ;
        /*0070*/                   LOP3.LUT R1, R1, 0xfffffff0, RZ, 0xc0, !PT ;
        /*00f0*/                   ULDC UR4, c[0x0][0x24] ;
        /*0100*/                   ST.E [R2.64], RZ ;
        /*0110*/                   IADD3 R4, R1, 0x10, RZ ;
        /*0120*/                   LDC R5, c[0x0][0x28] ;
        /*0130*/                   EXIT ;
"""
        (row,) = device.kernel_resources(text)
        self.assertEqual((row["stack_bytes"], row["local_loads"], row["local_stores"],
                          row["local_addressing"]), (0, 0, 0, 4))
        (plain,) = [r for r in device.kernel_resources(SASS) if r["kernel"].startswith("void")]
        self.assertEqual(plain["local_addressing"], 0)   # its entry LDC R1 is not counted
        # sm_100 and later load the stack's top from another slot: still the entry.
        blackwell = text.replace("code for sm_90", "code for sm_100").replace(
            "arch = sm_90", "arch = sm_100").replace("c[0x0][0x28]", "c[0x0][0x37c]")
        (row,) = device.kernel_resources(blackwell)
        self.assertEqual(row["local_addressing"], 4)

    def test_nothing_read_is_no_rows(self):
        self.assertEqual(device.kernel_resources(""), [])
        self.assertEqual(device.kernel_resources("Function _Zx:\nno resources here\n"), [])

    def test_a_file_of_many_kernels_is_cut_short(self):
        text = "arch = sm_90\n" + "".join(f" Function _Z1k{i}v:\n  REG:8 STACK:0 SHARED:0 LOCAL:0\n"
                                          for i in range(device.MAX_KERNELS + 10))
        # One row past the most a report lists says there were more (a lesson then reads
        # nothing); exactly MAX_KERNELS kernels are all read, and not cut short.
        self.assertEqual(len(device.kernel_resources(text)), device.MAX_KERNELS + 1)
        exact = "arch = sm_90\n" + "".join(f" Function _Z1k{i}v:\n  REG:8 STACK:0 SHARED:0 "
                                           f"LOCAL:0\n" for i in range(device.MAX_KERNELS))
        self.assertEqual(len(device.kernel_resources(exact)), device.MAX_KERNELS)

    def test_without_cuobjdump_a_lab_without_device_rules_reads_nothing_and_fails_nothing(self):
        from unittest import mock
        with mock.patch.object(device, "find_cuobjdump", return_value=None):
            self.assertEqual(device.inspect_device_code(Path("/nonexistent.o"), ()), ([], None))


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.kernels = device.kernel_resources(SASS)

    def test_console_rows_and_a_note_for_local_memory(self):
        text = console_report.render(GradeResult("s", None, "v", labs=[lab_with(self.kernels)]))
        self.assertIn("  kernels       void plain<float>(float const*, float*, int): 10 "
                      "registers, 1 KiB shared, no local memory (sm_90)", text)
        self.assertIn("local_array(int const*, float*): 40 registers, 0 B shared, 1040 B local "
                      "(1 loads, 2 stores in its code) (sm_90)", text)
        self.assertIn("note: kernel local_array(int const*, float*) keeps 1040 B per thread in "
                      "local memory", text)
        self.assertEqual(text.count("keeps"), 1, "no note for a kernel without local memory")

    def test_markdown_and_html_tables(self):
        result = GradeResult("s", None, "v", labs=[lab_with(self.kernels)])
        md = reports.markdown(result)
        self.assertIn("| kernel | registers | shared | local memory | local loads / stores |", md)
        self.assertIn("| local_array(int const*, float*) (sm_90) | 40 | 0 B | 1040 B | 1 / 2 |", md)
        page = html_report.kernels_table(result)
        self.assertIn("<td class=\"num\">40</td>", page)
        self.assertIn("1040 B (1 loads, 2 stores)", page)

    @unittest.skipUnless(HAVE_MPL, "matplotlib is not installed (scripts/install-deps installs "
                                   "it): the HTML page needs it")
    def test_the_html_page_has_the_table(self):
        page = html_report.submission_page(GradeResult("s", None, "v",
                                                       labs=[lab_with(self.kernels)]))
        self.assertIn("<h2>Kernels as compiled</h2>", page)

    def test_kernel_names_are_text_not_markup(self):
        hostile = [dict(self.kernels[0], kernel="k<script>alert(1)</script>|x")]
        result = GradeResult("s", None, "v", labs=[lab_with(hostile)])
        self.assertNotIn("<script>", html_report.kernels_table(result))
        self.assertNotIn("<script>", reports.markdown(result))

    def test_a_results_file_read_back_keeps_them_and_survives_garbage(self):
        result = GradeResult("s", None, "v", labs=[lab_with(self.kernels)])
        back = GradeResult.from_dict(json.loads(result.to_json()))
        self.assertEqual(back.labs[0].policy.kernels, self.kernels)
        garbage = [{"kernel": "k", "registers": "many", "local_bytes": -5, "stack_bytes": True},
                   "not a row", {"registers": 3}]
        text = console_report.render(GradeResult("s", None, "v", labs=[lab_with(garbage)]))
        self.assertIn("k: 0 registers, 0 B shared, no local memory (?)", text)
        html_report.kernels_table(GradeResult("s", None, "v", labs=[lab_with(garbage)]))
        reports.markdown(GradeResult("s", None, "v", labs=[lab_with(garbage)]))

    def test_the_console_shows_control_characters_instead_of_running_them(self):
        # A crashed test's message carries the worker's last output: a forged table drawn with
        # escape sequences, and the real total hidden after it, must print as plain text.
        from grader.results import GroupResult, TestResult
        forged = ("\x1b[2J\x1b[3J\x1b[H  lab total   100.00 / 100\nTOTAL 100.00 / 100\x1b[8m"
                  "\rover\u202eit\x9b2J")
        lab = lab_with(self.kernels)
        lab.groups = [GroupResult("public", "*", 10.0, tests=[
            TestResult(name="MatmulPublic.X", status="crashed", message=forged)])]
        result = GradeResult("s", None, "v", labs=[lab])
        text = console_report.render(result)
        for raw in ("\x1b", "\r", "\u202e", "\x9b"):
            self.assertNotIn(raw, text)
        self.assertIn("\\x1b[2J\\x1b[3J\\x1b[H", text)
        self.assertIn("TOTAL 100.00 / 100\\x1b[8m", text)     # the forged total, shown as text
        self.assertIn("over\\u202eit\\x9b2J", text)
        self.assertTrue(text.endswith("\nTOTAL 0.00 / 100"), text[-200:])   # the real one, last

    def test_no_table_when_none_were_read(self):
        result = GradeResult("s", None, "v", labs=[lab_with(None)])
        self.assertNotIn("kernels", console_report.render(result))
        self.assertEqual(html_report.kernels_table(result), "")
        self.assertNotIn("| kernel |", reports.markdown(result))


NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                if Path("/usr/local/cuda/bin/nvcc").exists() else None)
SOURCE = r"""
__global__ void local_array(const int* idx, float* out) {
  float a[256];
  for (int i = 0; i < 256; ++i) a[i] = out[i];
  a[idx[threadIdx.x] & 255] += 1.0f;
  out[threadIdx.x] = a[idx[threadIdx.x + 1] & 255];
}
template <typename T>
__global__ void plain(const T* x, T* y, int n) {
  __shared__ T s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : T(0);
  __syncthreads();
  if (i < n) y[i] = s[255 - threadIdx.x];
}
template __global__ void plain<float>(const float*, float*, int);
"""


@unittest.skipUnless(NVCC and device.find_cuobjdump(),
                     "nvcc and cuobjdump are needed (scripts/install-deps installs cuobjdump)")
class RealCompileTest(unittest.TestCase):
    def test_a_real_object(self):
        with tempfile.TemporaryDirectory() as tmp:
            src, obj = Path(tmp) / "k.cu", Path(tmp) / "k.o"
            src.write_text(SOURCE)
            subprocess.run([NVCC, "-arch=sm_90", "-O3", "-c", str(src), "-o", str(obj)],
                           check=True, capture_output=True, timeout=300)
            violations, kernels = device.inspect_device_code(obj, ())
            self.assertEqual(violations, [])
            by_name = {k["kernel"]: k for k in kernels}
            plain = by_name["void plain<float>(float const*, float*, int)"]
            self.assertEqual((plain["shared_bytes"], plain["local_loads"], plain["local_stores"]),
                             (1024, 0, 0))
            local = by_name["local_array(int const*, float*)"]
            self.assertGreaterEqual(local["local_bytes"] + local["stack_bytes"], 1024)
            self.assertGreater(local["local_stores"], 0)
            # kept beside the object: the second read is the cache's, the same rows
            self.assertTrue(Path(str(obj) + device.DEVICE_CACHE_SUFFIX).is_file())
            self.assertEqual(device.inspect_device_code(obj, ()), (violations, kernels))
            # with the device rule of a lab that refuses shared memory: the violation too
            refused, again = device.inspect_device_code(obj, ("shared_memory",))
            self.assertTrue(any("plain" in v.message for v in refused))
            self.assertEqual(again, kernels)

    def test_a_frame_made_at_run_time_is_local_memory(self):
        # STACK:0 and no LDL/STL (a red team's lab 02 tile, round 12), yet local memory.
        source = """
__global__ void framed(float* out, int n) {
  unsigned bytes = 16 * sizeof(float);
  asm volatile("" : "+r"(bytes));
  unsigned long long p = reinterpret_cast<unsigned long long>(alloca(bytes));
  asm volatile("" : "+l"(p));
  float* t = reinterpret_cast<float*>(p);
#pragma unroll 1
  for (int i = 0; i < 16; ++i) t[i] = i * out[i];
  out[threadIdx.x] = t[n & 15];
}
"""
        with tempfile.TemporaryDirectory() as tmp:
            src, obj = Path(tmp) / "k.cu", Path(tmp) / "k.o"
            src.write_text(source)
            subprocess.run([NVCC, "-arch=sm_90", "-O3", "-c", str(src), "-o", str(obj)],
                           check=True, capture_output=True, timeout=300)
            _, (row,) = device.inspect_device_code(obj, ())
            self.assertEqual((row["stack_bytes"], row["local_loads"], row["local_stores"]),
                             (0, 0, 0))
            self.assertGreater(row["local_addressing"], 0)


if __name__ == "__main__":
    unittest.main()
