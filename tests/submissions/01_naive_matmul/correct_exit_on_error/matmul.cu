// CORRECT, common student style (CUDA samples, llm.c): checks its arguments with assert() and,
// if the launch fails, prints the error and calls exit(EXIT_FAILURE). Neither path is taken on
// a working GPU. A process that exits is no threat in the worker (the judge counts a worker
// that dies as a failed test), so the policy must not refuse exit/assert; compare exit_call,
// which really exits. Expected: full marks.
#include <cassert>
#include <cstdio>
#include <cstdlib>

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
  assert(M > 0 && N > 0 && K > 0);
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    std::fprintf(stderr, "matmul_v1_naive: %s\n", cudaGetErrorString(err));
    std::exit(EXIT_FAILURE);
  }
}
