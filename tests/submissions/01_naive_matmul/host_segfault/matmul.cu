// WRONG (host crash): correct kernel, but when M == 1 the launcher writes through a null host
// pointer: the process dies with SIGSEGV inside the launcher, before anything is reported.
// No library call is involved (unlike exit_call), so the policy has nothing to refuse.
// Expected: the worker dies in the M == 1 tests only (4 of 25); the judge records those as
// crashed and starts a fresh worker for the rest, which pass.
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  if (M == 1) {
    volatile int* nowhere = nullptr;
    *nowhere = 1;  // BUG: SIGSEGV
  }
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
