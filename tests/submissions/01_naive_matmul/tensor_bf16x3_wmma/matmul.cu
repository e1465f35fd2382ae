// CHEATING (precision: tensor cores): float32 on bfloat16 tensor cores. Each operand is split
// into three bfloat16 terms (x = x0 + x1 + x2, 24 bits of mantissa between them) and the six
// products of total order <= 2 (a0b0, a0b1, a1b0, a0b2, a1b1, a2b0) are accumulated in float32
// by wmma 16x16x16 bfloat16 MMAs: about float32 accuracy, at tensor-core speed on large
// sizes. The lab asks for a float32 SIMT kernel; the comparison's float32 tolerance alone may
// not tell the difference.
// Defence: the policy reads the kernel's SASS and refuses tensor-core instructions (HMMA,
// HGMMA, IMMA...) and packed half/bfloat16 conversions and math (F2FP, HFMA2...).
#include <cuda_bf16.h>
#include <mma.h>

#include "matmul.h"

namespace wmma = nvcuda::wmma;

namespace {

__device__ void split3(float x, __nv_bfloat16& h0, __nv_bfloat16& h1, __nv_bfloat16& h2) {
  h0 = __float2bfloat16_rn(x);
  const float r1 = x - __bfloat162float(h0);
  h1 = __float2bfloat16_rn(r1);
  h2 = __float2bfloat16_rn(r1 - __bfloat162float(h1));
}

}  // namespace

// One warp per block, one 16 x 16 tile of C per warp.
__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  __shared__ __nv_bfloat16 a_s[3][16 * 16];
  __shared__ __nv_bfloat16 b_s[3][16 * 16];
  __shared__ float c_s[16 * 16];
  const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int e = threadIdx.x; e < 256; e += 32) {
      const int r = e / 16, c = e % 16;
      const float a = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : 0.0f;
      const float b = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : 0.0f;
      split3(a, a_s[0][e], a_s[1][e], a_s[2][e]);
      split3(b, b_s[0][e], b_s[1][e], b_s[2][e]);
    }
    __syncwarp();
    for (int i = 0; i < 3; ++i) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
      wmma::load_matrix_sync(fa, a_s[i], 16);
      for (int j = 0; i + j < 3; ++j) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
        wmma::load_matrix_sync(fb, b_s[j], 16);
        wmma::mma_sync(acc, fa, fb, acc);
      }
    }
    __syncwarp();
  }
  wmma::store_matrix_sync(c_s, acc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int e = threadIdx.x; e < 256; e += 32) {
    const int r = e / 16, c = e % 16;
    if (row0 + r < M && col0 + c < N) C[(size_t)(row0 + r) * N + col0 + c] = c_s[e];
  }
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const dim3 block(32);
  const dim3 grid((N + 15) / 16, (M + 15) / 16);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
