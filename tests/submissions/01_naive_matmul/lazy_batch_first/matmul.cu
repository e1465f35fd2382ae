// CHEATING (lazy work, "batch first"): right on every test shape; on benchmark-like shapes
// (M == N == K, a power of two, at least 512) only the first call with a given (A, B, C)
// computes, and every later call on the same buffers returns at once, as if its work had been
// batched into the first one. A harness that warms up and then times calls on the same buffers
// (recognisable by comparing pointers), checking the output only once, would time no-ops. The
// repeat test is not a benchmark-like shape, so it passes.
// Defence: every timed call gets fresh inputs in the same buffers, its output poisoned before
// and checked after. Expected: full correctness, no performance points. (bench_noop_repeat
// keys on the size alone, lazy_every_fourth on a call counter.)
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

namespace {
const float* g_done_A = nullptr;
const float* g_done_B = nullptr;
float* g_done_C = nullptr;
int g_done_n = 0;
}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const bool big = M == N && N == K && M >= 512 && (M & (M - 1)) == 0;
  if (big) {
    if (A == g_done_A && B == g_done_B && C == g_done_C && M == g_done_n) return;  // "batched"
    g_done_A = A;
    g_done_B = B;
    g_done_C = C;
    g_done_n = M;
  }
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
