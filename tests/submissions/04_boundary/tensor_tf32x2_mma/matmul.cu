// CHEATING (precision: tensor cores): float32 on TF32 tensor cores, for both versions. Each
// operand is split into two TF32 terms (x = hi + lo, hi = x rounded to TF32, lo = the rest
// rounded to TF32) and three products (hi*hi + hi*lo + lo*hi: "3xTF32") are accumulated in
// float32 by mma.sync.m16n8k8 TF32 instructions (inline PTX): close to float32 accuracy, at
// tensor-core speed. The lab asks for float32 SIMT kernels; v5's speed would be the tensor
// cores'.
// Defence: the policy reads the kernel's SASS and refuses tensor-core instructions (HMMA ...).
#include <stdint.h>

#include "matmul.h"

namespace {

__device__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

__device__ void split(float x, uint32_t& hi, uint32_t& lo) {
  hi = to_tf32(x);
  lo = to_tf32(x - __uint_as_float(hi));
}

__device__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// One warp per block, one 16 x 8 tile of C. Fragment layout of m16n8k8 TF32 (g = lane / 4,
// t = lane % 4): A a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); B b0 (k = t,
// n = g), b1 (k = t + 4, n = g); C c0 (g, 2t), c1 (g, 2t + 1), c2 (g + 8, 2t), c3 (g + 8, 2t + 1).
__global__ void tf32x3_kernel(const float* __restrict__ A, const float* __restrict__ B,
                              float* __restrict__ C, int M, int N, int K) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 8;
  auto a_at = [&](int r, int k) {
    return (row0 + r < M && k < K) ? A[(size_t)(row0 + r) * K + k] : 0.0f;
  };
  auto b_at = [&](int k, int c) {
    return (k < K && col0 + c < N) ? B[(size_t)k * N + col0 + c] : 0.0f;
  };
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k0 = 0; k0 < K; k0 += 8) {
    const float av[4] = {a_at(g, k0 + t), a_at(g + 8, k0 + t), a_at(g, k0 + t + 4),
                         a_at(g + 8, k0 + t + 4)};
    const float bv[2] = {b_at(k0 + t, g), b_at(k0 + t + 4, g)};
    uint32_t ah[4], al[4], bh[2], bl[2];
    for (int i = 0; i < 4; ++i) split(av[i], ah[i], al[i]);
    for (int i = 0; i < 2; ++i) split(bv[i], bh[i], bl[i]);
    mma_tf32(d, al, bh);
    mma_tf32(d, ah, bl);
    mma_tf32(d, ah, bh);
  }
  const int rows[4] = {g, g, g + 8, g + 8};
  const int cols[4] = {2 * t, 2 * t + 1, 2 * t, 2 * t + 1};
  for (int i = 0; i < 4; ++i) {
    if (row0 + rows[i] < M && col0 + cols[i] < N) {
      C[(size_t)(row0 + rows[i]) * N + col0 + cols[i]] = d[i];
    }
  }
}

void launch(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  const dim3 grid((N + 7) / 8, (M + 15) / 16);
  tf32x3_kernel<<<grid, 32, 0, stream>>>(A, B, C, M, N, K);
}

}  // namespace

void matmul_v4_boundary(const float* A, const float* B, float* C, int M, int N, int K,
                        cudaStream_t stream) {
  launch(A, B, C, M, N, K, stream);
}

void matmul_v5_optimized(const float* A, const float* B, float* C, int M, int N, int K,
                         cudaStream_t stream) {
  launch(A, B, C, M, N, K, stream);
}
