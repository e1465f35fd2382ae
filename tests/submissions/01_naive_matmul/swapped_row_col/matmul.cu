// WRONG: M and N swapped in the grid and the guard (rows checked against N, columns against M).
// Right only when M == N (1x1x1, 64^3, square 1024s); other shapes leave NaN or go out of bounds.
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= N || col >= M) return;  // BUG: should be row < M, col < N
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(32, 8);
  dim3 grid((M + block.x - 1) / block.x, (N + block.y - 1) / block.y);  // BUG: M and N swapped
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
