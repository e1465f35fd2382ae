// CHEATING (approximation): for K >= 1000 only the first half of the k terms is summed, and
// doubled: half the work on the long sums, where the time goes. On zero-mean inputs the
// estimate is unbiased, but it is off by about sqrt(K/3) (the other half's own sum) on every
// element, thousands of times the bound.
// Defence: the tests' bound (6 sqrt(K) 2^-24 (sqrt(sum (a b)^2) + |C|) around a double
// product): the hidden shapes with K >= 1000 (1x1x4099, 7x7x2048, 1000^3) fail on every seed.
// Expected: partial correctness, no performance points (gated).
// Otherwise the reference solution: naive matmul, one thread per C element.
#include "matmul.h"

namespace {
constexpr int kBlockX = 32;  // one warp along a row of C: coalesced B reads and C writes
constexpr int kBlockY = 8;
}  // namespace

// matmul_v1_naive_kernel: one thread per output element.
// Memory traffic: each thread reads a row of A and a column of B (2K floats), 2*M*N*K in all;
// the A element is the same for the whole warp (a broadcast), the B elements are contiguous.
// Known limit: no reuse through shared memory or registers, so it runs far below the FMA peak.
__global__ void matmul_v1_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;  // the grid is rounded up to whole blocks

  const float* a = A + static_cast<size_t>(row) * K;
  const float* b = B + col;
  float acc = 0.0f;
  const int kk = K >= 1000 ? K / 2 : K;
  for (int k = 0; k < kk; ++k) {
    acc += a[k] * b[static_cast<size_t>(k) * N];
  }
  if (kk != K) acc *= 2.0f;
  C[static_cast<size_t>(row) * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((N + kBlockX - 1) / kBlockX, (M + kBlockY - 1) / kBlockY);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
