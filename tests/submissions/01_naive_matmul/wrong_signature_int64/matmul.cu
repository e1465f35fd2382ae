// WRONG (link): the launcher takes int64_t sizes, so it is a different overload; the harness's
// matmul_v1_naive(..., int, int, int, cudaStream_t) is an undefined reference.
#include "matmul.h"

#include <cstdint>

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K,
                     cudaStream_t stream) {
  dim3 block(32, 8);
  dim3 grid((unsigned)((N + 31) / 32), (unsigned)((M + 7) / 8));
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, (int)M, (int)N, (int)K);
}
