// CORRECT, common student style: after the launch it checks cudaGetLastError() and prints the
// error with fprintf(stderr, ...) and cudaGetErrorString; on the first call it prints its
// launch configuration with printf. Nothing here is a cheat: the policy must let ordinary
// error checks and console output through. Expected: full marks.
#include <cstdio>

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
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  static bool shown = false;
  if (!shown) {
    shown = true;
    std::printf("matmul_v1_naive: %d x %d x %d, grid %u x %u, block %u x %u\n", M, N, K, grid.x,
                grid.y, block.x, block.y);
  }
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    std::fprintf(stderr, "matmul_v1_naive: launch failed: %s\n", cudaGetErrorString(err));
  }
}
