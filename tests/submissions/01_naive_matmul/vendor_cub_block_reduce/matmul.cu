// CHEATING (vendor library): one block of 128 threads per element of C; the threads split the
// K loop and combine their partial sums with cub::BlockReduce. Right, but built on a library
// primitive the lab does not allow (and far from the one-thread-per-element design it teaches).
// Defence: the policy's include rule (no CUB, Thrust or other vendor library headers).
#include <cub/block/block_reduce.cuh>

#include "matmul.h"

constexpr int kThreads = 128;

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const int col = blockIdx.x;
  const int row = blockIdx.y;
  float partial = 0.0f;
  for (int k = threadIdx.x; k < K; k += kThreads) {
    partial += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  }
  const float sum = Reduce(temp).Sum(partial);
  if (threadIdx.x == 0) C[(size_t)row * N + col] = sum;
  (void)M;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  // gridDim.y is limited to 65535: rows beyond it are covered by further launches.
  for (int row0 = 0; row0 < M; row0 += 65535) {
    const int rows = M - row0 < 65535 ? M - row0 : 65535;
    matmul_v1_naive_kernel<<<dim3(N, rows), kThreads, 0, stream>>>(A + (size_t)row0 * K, B,
                                                                   C + (size_t)row0 * N, rows, N, K);
  }
}
