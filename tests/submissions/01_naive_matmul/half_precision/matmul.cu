// WRONG (precision): converts A and B to __half and multiplies AND accumulates in half (__hfma).
// ~3 decimal digits; fails float32 tolerances (badly at large K, where sums also lose integers).
#include "matmul.h"
#include <cuda_fp16.h>

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  __half acc = __float2half(0.0f);
  for (int k = 0; k < K; ++k)
    acc = __hfma(__float2half(A[(size_t)row * K + k]), __float2half(B[(size_t)k * N + col]), acc);
  C[(size_t)row * N + col] = __half2float(acc);
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(32, 8);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
