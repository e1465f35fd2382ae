// Red team round 13 (a student release only): a file whose cuobjdump listing is longer than
// the policy's cap, so that a kernel in the cut middle escaped every device rule. Refused now:
// a listing is read whole or the file is refused.
// Variant of cap_overflow: the same cut also hides instructions the device rule refuses
// (isspacep.shared -> QSPC, a bank-0 read by register -> c[0x0][UR4+0x30] = %gridid), in a
// branch never taken (K >= 1 always).
// Red-team case: the register tile lives in local memory (PTX alloca + ld.local/st.local,
// STACK:0 because the frame is dynamic), and the kernel's machine code sits in the middle of
// 256+ MiB of `cuobjdump -sass -res-usage` output (TOOL_OUTPUT_CAP), between never-launched
// padding kernels, so its LDL/STL and its R1 writes are never read.
#include "matmul.h"

namespace { constexpr int V = 4; }

// Padding: never launched, honest (registers only), about 100k FFMA instructions each
// (about 21 MB of cuobjdump listing each). cuobjdump lists the kernels in the reverse order
// of their definition: the 11 defined after the tiled kernel come first in the listing
// (more than the 192 MiB tail the grader keeps), the 4 defined before it come last (more
// than the 64 MiB head); the grader's runner keeps only the first 64 MiB and the last
// 192 MiB of a 256 MiB-capped output, so the tiled kernel's machine code is cut out.
#define PAD_I "fma.rn.f32 %0, %0, %0, %1;\n\t"
#define PAD_R10(x) x x x x x x x x x x
#define PAD_R1K(x) PAD_R10(PAD_R10(PAD_R10(x)))
#define PAD_R10K(x) PAD_R10(PAD_R1K(x))
#define PAD_KERNEL(n)                                                                          \
  __global__ void pad_kernel_##n(float* __restrict__ p, float q) {                             \
    float s = p[n];                                                                            \
    asm volatile(PAD_R10K(PAD_I) PAD_R10K(PAD_I) PAD_R10K(PAD_I) PAD_R10K(PAD_I)               \
                 PAD_R10K(PAD_I) PAD_R10K(PAD_I) PAD_R10K(PAD_I) PAD_R10K(PAD_I)               \
                 PAD_R10K(PAD_I) PAD_R10K(PAD_I) : "+f"(s) : "f"(q));                          \
    p[n] = s;                                                                                  \
  }
PAD_KERNEL(0) PAD_KERNEL(1) PAD_KERNEL(2) PAD_KERNEL(3) PAD_KERNEL(4) PAD_KERNEL(5)
PAD_KERNEL(6) PAD_KERNEL(7) PAD_KERNEL(8) PAD_KERNEL(9) PAD_KERNEL(10)

// One local-memory word: 32-bit local address.
__device__ __forceinline__ float lld(unsigned addr) {
  float v; asm volatile("ld.local.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory"); return v;
}
__device__ __forceinline__ void lst(unsigned addr, float v) {
  asm volatile("st.local.f32 [%0], %1;" :: "r"(addr), "f"(v) : "memory");
}

__global__ void matmul_v2_register_tiled_kernel(const float* __restrict__ A,
                                                const float* __restrict__ B,
                                                float* __restrict__ C, int M, int N, int K) {
  const int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  const int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * V;
  // c[V*V], a[V], b[V] in a dynamically allocated local frame (run-time size: M >= 64).
  unsigned bytes = (unsigned)(V * V + 2 * V) * 4u + (M < 0 ? 16u : 0u);
  unsigned tile;
  asm volatile("alloca.u32 %0, %1, 16;" : "=r"(tile) : "r"(bytes) : "memory");
  const unsigned c = tile, a = tile + V * V * 4, b = a + V * 4;
#pragma unroll
  for (int t = 0; t < V * V; ++t) lst(c + 4 * t, 0.f);
  if (K < 0) {  // never: K >= 1
    unsigned r, g;
    asm volatile("{ .reg .pred q; isspacep.shared q, %1; selp.u32 %0, 1, 0, q; }" : "=r"(r) : "l"(A));
    asm volatile("ld.param.u32 %0, [_Z31matmul_v2_register_tiled_kernelPKfS0_Pfiii_param_0+-480];" : "=r"(g));
    C[0] = (float)(r + g);
  }
  for (int k = 0; k < K; ++k) {
#pragma unroll
    for (int i = 0; i < V; ++i) lst(a + 4 * i, A[(size_t)(row0 + i) * K + k]);
#pragma unroll
    for (int j = 0; j < V; ++j) lst(b + 4 * j, B[(size_t)k * N + col0 + j]);
#pragma unroll
    for (int i = 0; i < V; ++i)
#pragma unroll
      for (int j = 0; j < V; ++j)
        lst(c + 4 * (i * V + j), fmaf(lld(a + 4 * i), lld(b + 4 * j), lld(c + 4 * (i * V + j))));
  }
#pragma unroll
  for (int i = 0; i < V; ++i)
#pragma unroll
    for (int j = 0; j < V; ++j) C[(size_t)(row0 + i) * N + col0 + j] = lld(c + 4 * (i * V + j));
}

PAD_KERNEL(11) PAD_KERNEL(12) PAD_KERNEL(13) PAD_KERNEL(14)

void matmul_v2_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                              cudaStream_t stream) {
  dim3 block(64 / V, 64 / V);
  dim3 grid(N / 64, M / 64);
  matmul_v2_register_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
