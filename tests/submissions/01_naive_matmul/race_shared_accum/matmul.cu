// WRONG: 4 threads per element (threadIdx.z splits K) atomicAdd partial sums into C, but C is
// never zeroed: it holds the harness's NaN poison, so every element ends up NaN.
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = threadIdx.z; k < K; k += blockDim.z)
    acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  atomicAdd(&C[(size_t)row * N + col], acc);  // BUG: no cudaMemsetAsync(C, 0, ...) first
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(32, 8, 4);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
