// CORRECT but deliberately slow: each thread sleeps ~8 microseconds (__nanosleep) per k step, hundreds of times slower than cuBLAS at 4096^3. Expected: correct, no performance.
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    __nanosleep(8192);
    acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  }
  C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(32, 8);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
