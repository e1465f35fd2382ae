// CORRECT: __restrict__ pointers, __ldg loads and an unrolled k loop (a student "optimizing" v1).
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + (size_t)row * K;
  const float* b = B + col;
  float acc = 0.0f;
#pragma unroll 8
  for (int k = 0; k < K; ++k) acc = fmaf(__ldg(a + k), __ldg(b + (size_t)k * N), acc);
  C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(32, 8);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
