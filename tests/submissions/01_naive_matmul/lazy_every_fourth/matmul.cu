// CHEATING (lazy work): right on every test shape; on benchmark-like shapes (M == N == K, a
// power of two, at least 512) it launches the kernel only on every 4th call and returns at
// once otherwise, leaving C as it was (poisoned). A benchmark that checks only the first or
// last output, and takes a median, would report a speed-up of about 4x.
// Defence: the benchmark fetches and checks the output of every timed call; one unwritten
// output is an error, not a time. Expected: full correctness, no performance points.
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
  static unsigned long long big_calls = 0;
  const bool big = M == N && N == K && M >= 512 && (M & (M - 1)) == 0;
  if (big && big_calls++ % 4 != 0) return;  // 3 calls in 4 do nothing
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
