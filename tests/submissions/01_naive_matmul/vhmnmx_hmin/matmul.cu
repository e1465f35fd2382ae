// Lab 01 red-team case: FP32 naive matmul that also tracks a running minimum in __half with
// cuda_fp16.h's __hmin (no inline PTX). ptxas fuses the two __hmin into one VHMNMX (SIMD FP16
// 3-input min), an opcode the device rule refuses since red team round 21 (it listed only H*2
// opcodes).
#include <cuda_fp16.h>
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  __half m = __ushort_as_half((unsigned short)0x7bffu);  // 65504
  for (int k = 0; k < K; ++k) {
    float a = A[(size_t)row * K + k], b = B[(size_t)k * N + col];
    acc += a * b;
    __half ha = __ushort_as_half((unsigned short)(__float_as_uint(a) >> 16));
    __half hb = __ushort_as_half((unsigned short)(__float_as_uint(b) >> 16));
    m = __hmin(__hmin(m, ha), hb);                       // FP16 math -> VHMNMX
  }
  // m is used (so ptxas keeps it) but cannot change C: 0 * finite.
  C[(size_t)row * N + col] = acc + 0.f * (float)(__half_as_ushort(m) & 1);
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(32, 8);
  dim3 grid((N + 31) / 32, (M + 7) / 8);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
