// CORRECT, unusual: asks the runtime for a block size (cudaOccupancyMaxPotentialBlockSize, a
// header template over cudaGetDevice, cudaDeviceGetAttribute, cudaFuncGetAttributes and the
// occupancy calculator) once, then launches blocks of 32 x (size / 32) threads on the given
// stream. Only read-only device queries; no allocation, copy or synchronisation.
// Expected: full marks; the policy must allow these queries.
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
  static int threads = 0;
  if (threads == 0) {
    int min_grid = 0, best = 0;
    if (cudaOccupancyMaxPotentialBlockSize(&min_grid, &best, matmul_v1_naive_kernel) !=
            cudaSuccess ||
        best < 32) {
      best = 256;
    }
    threads = best;
  }
  const dim3 block(32, threads / 32);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
