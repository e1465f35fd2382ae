// CHEAT (device code hidden from the policy), written by a red team holding only the student
// release. The policy must refuse a second section named .nv_fatbin.
//
// What it does: a shared-memory tiled matmul (64x64 block tile, 16-deep k tiles in __shared__
// memory, 4x4 register tile per thread), which lab 02's [policy] forbids
// (forbid_device_instructions = [..., "shared_memory"]); the same trick hides tensor-core
// (HMMA) and 16-bit instructions in every lab.
//
// Which defence it beats: the device rule of the policy check (grader/policy/device.py,
// _read_sass / inspect_device_code) and the "kernels as compiled" report. The one line of
// top-level asm at the bottom of this file adds a SECOND section named .nv_fatbin to the
// object (`unique,1`), 8 zero bytes, which the assembler places before nvcc's own .nv_fatbin.
//   * cuobjdump -sass -res-usage on the object reads only the first .nv_fatbin section it
//     finds: the 8 zero bytes. It prints nothing and exits 0, so _read_sass returns "" and the
//     device rule finds no kernel at all (no LDS/STS, no HMMA; kernels = []).
//   * The linker merges both input sections into the worker's single .nv_fatbin output section:
//     [8 zero bytes][nvcc's fatbin]. The executor's extract_fatbin
//     (common/src/executor.cpp:91-151) skips the zero word as "alignment padding between
//     fatbins" (line 132), finds exactly one fatbin (nvcc's, with this file's real SASS for
//     sm_90), check_fatbin_entries passes, and cudaLibraryLoadData runs the shared-memory code.
// Nothing else changes: the kernels are ordinary nvcc output, results are exact FP32.
#include "matmul.h"

namespace {

constexpr int BM = 64, BN = 64, BK = 16;   // block tile
constexpr int TM = 4, TN = 4;              // thread tile: 16 x 16 threads

}  // namespace

__global__ void __launch_bounds__(256)
matmul_v2_register_tiled_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[BK][BM];   // A tile, transposed: As[k][m]
  __shared__ float Bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float c[TM][TN] = {};
  (void)M;
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int l = 0; l < 4; ++l) {
      const int idx = tid + l * 256;
      const int am = idx / BK, ak = idx % BK;
      As[ak][am] = (k0 + ak < K) ? A[size_t(row0 + am) * K + k0 + ak] : 0.0f;
      const int bk = idx / BN, bn = idx % BN;
      Bs[bk][bn] = (k0 + bk < K) ? B[size_t(k0 + bk) * N + col0 + bn] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) c[i][j] = fmaf(a[i], b[j], c[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) C[size_t(row0 + ty + 16 * i) * N + col0 + tx + 16 * j] = c[i][j];
}

void matmul_v2_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                              cudaStream_t stream) {
  dim3 block(16, 16);
  dim3 grid(N / BN, M / BM);
  matmul_v2_register_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}

// The whole trick: an empty (zero-filled) first .nv_fatbin section, ahead of nvcc's.
asm(".section .nv_fatbin,\"a\",@progbits,unique,1\n.balign 8\n.zero 8\n.previous");
