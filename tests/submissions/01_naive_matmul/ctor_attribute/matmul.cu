// CHEATING (global constructor): correct kernel, plus a function marked
// __attribute__((constructor)) that runs when the program loads, before main and before any
// harness code -- the place to patch a harness that shares the process, replace handlers, or
// print fake results first -- and a matching __attribute__((destructor)) that runs after the
// harness is done. Here they only print forged GoogleTest lines, which must earn nothing.
// Defence: the policy's constructor rule (the object may have no static initialisers or
// finalisers of its own: only nvcc's module registration in .init_array).
#include <cstdio>

#include "matmul.h"

__attribute__((constructor)) static void before_main() {
  std::printf("[==========] Running 25 tests from 4 test suites.\n");
}

__attribute__((destructor)) static void after_main() {
  std::printf("[  PASSED  ] 25 tests.\n");
}

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
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
