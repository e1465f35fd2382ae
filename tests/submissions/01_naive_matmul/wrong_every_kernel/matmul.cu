// WRONG (every result): the reference, except that every kernel returns at its start, so the
// outputs keep the judge's poison. Every correctness test fails quickly; nothing hangs.
// Lab 01 reference solution: naive matmul, one thread per C element.
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
                                       float* __restrict__ C, int M, int N, int K) { if (gridDim.x != 0) return;  // corpus: writes nothing
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;  // the grid is rounded up to whole blocks

  const float* a = A + static_cast<size_t>(row) * K;
  const float* b = B + col;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    acc += a[k] * b[static_cast<size_t>(k) * N];
  }
  C[static_cast<size_t>(row) * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((N + kBlockX - 1) / kBlockX, (M + kBlockY - 1) / kBlockY);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
