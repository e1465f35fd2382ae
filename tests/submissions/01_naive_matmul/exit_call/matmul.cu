// WRONG (early exit): correct, but the launcher calls exit(0) when M == 1. In the worker that
// ends the process with status 0 before it replies; the judge must count those tests as
// failed (a worker that dies is never a pass) and the others still pass. exit() itself is not
// refused by the policy: it cannot forge anything from the worker (see correct_exit_on_error).
#include "matmul.h"
#include <cstdlib>

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  if (M == 1) std::exit(0);
  dim3 block(32, 8);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
