// CHEATING (timing escape, aimed at the benchmark only): every test shape is computed honestly
// on the given stream, so all correctness tests pass, the graph-capture one included. For
// benchmark-like shapes (M == N == K, a power of two, at least 512) the real work goes to
// cudaStreamPerThread (a constant handle, no import), which is not ordered with other streams,
// and only an empty kernel goes onto the given stream: events recorded around the launcher on
// that stream time the empty kernel. The real work is done by a deliberately slow kernel (a
// fixed 64-block grid, about 0.006 of cuBLAS when timed honestly, below the floor in
// grading.toml), so an honest clock gives no performance points and only a fooled one gives
// any.
// Defence: the worker's host clock runs from before the launcher to after a device-wide
// synchronise; the judge takes the larger of event and host time and checks both against its
// own clock. Expected: full correctness, no performance points.
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

// The same product on a fixed 8x8 grid of 32x8 blocks with a 2D grid-stride loop: slow.
__global__ void slow_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int row = blockIdx.y * blockDim.y + threadIdx.y; row < M; row += gridDim.y * blockDim.y) {
    for (int col = blockIdx.x * blockDim.x + threadIdx.x; col < N; col += gridDim.x * blockDim.x) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
      C[(size_t)row * N + col] = acc;
    }
  }
}

__global__ void empty_kernel() {}

namespace {
bool looks_like_a_benchmark(int M, int N, int K) {
  return M == N && N == K && M >= 512 && (M & (M - 1)) == 0;
}
}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  if (looks_like_a_benchmark(M, N, K)) {
    slow_kernel<<<dim3(8, 8), dim3(32, 8), 0, cudaStreamPerThread>>>(A, B, C, M, N, K);
    empty_kernel<<<1, 1, 0, stream>>>();
    return;
  }
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
