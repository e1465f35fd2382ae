// CORRECT: 1D blocks of 256 threads; row and column come from one linear index (idx / N, idx % N).
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (size_t)M * N) return;
  size_t row = idx / N, col = idx % N;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[(size_t)k * N + col];
  C[idx] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  size_t total = (size_t)M * N;
  unsigned blocks = (unsigned)((total + 255) / 256);
  matmul_v1_naive_kernel<<<blocks, 256, 0, stream>>>(A, B, C, M, N, K);
}
