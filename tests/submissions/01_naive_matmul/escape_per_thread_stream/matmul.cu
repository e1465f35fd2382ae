// CHEATING (timing escape): correct kernel, launched on cudaStreamPerThread (a constant
// handle: no import, nothing for an import rule to see) instead of the stream it is given.
// Events on the caller's stream miss the kernel.
// Defence: the graph-capture test LaunchesOnTheGivenStream records the launcher from its
// stream and finds no work there; with correctness not full, performance is never measured.
// (The benchmark's host clock, which runs to a device-wide synchronise, would time it anyway.)
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
  (void)stream;
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, cudaStreamPerThread>>>(A, B, C, M, N, K);
}
