// CHEAT (device code hidden from the policy), the same case as hidden_fatbin_section without
// any asm: a section attribute whose name carries the assembler's `unique,1` (GCC prints the
// name verbatim into `.section NAME,"a",@progbits`; the trailing # comments out the rest),
// so the object gets a second .nv_fatbin section, 8 zero bytes before nvcc's. Banning asm is
// no fix; the policy refuses a second section of that name.
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
__attribute__((used, aligned(8), section(".nv_fatbin,\"a\",@progbits,unique,1 #"))) static const unsigned long long pad = 0;
