// WRONG (hang): the reference, except that every kernel spins forever at its start (a
// condition that never becomes false). Every test times out; the judge must bound what it
// costs (a variant that hangs three times in a row is not run again), not wait a timeout per test.
// Lab 02 reference solution: register tiling, each thread computes a V x V block of C.
#include "matmul.h"

namespace {

// The thread tile: each thread owns V rows x V columns of C. Try 2, 4 or 8 and read the
// compiler's resource report (the handout shows how): registers grow about as V^2 + 2V.
constexpr int V = 4;

// The block tile: 64 x 64 elements of C, (64 / V) x (64 / V) threads. It divides the size
// promise of matmul.h exactly, so the grid below covers C with whole tiles and no thread
// falls outside C.
constexpr int kTile = 64;
constexpr int kThreads = kTile / V;  // threads along each side of the block
static_assert(kTile % V == 0, "V must divide the block tile");
static_assert(MATMUL_SIZE_MULTIPLE % kTile == 0, "the block tile must divide the size promise");
static_assert(kThreads * kThreads <= 1024, "at most 1024 threads per block");

}  // namespace

// matmul_v2_register_tiled_kernel: each thread computes the V x V block of C at rows
// [row0, row0 + V) and columns [col0, col0 + V). For every k it loads a column slice of A,
// a[i] = A(row0 + i, k), and a row slice of B, b[j] = B(k, col0 + j), into registers, and adds
// their outer product a b^T to its V x V accumulators.
// Memory traffic: 2V loads feed V^2 multiply-adds, so the kernel reads 2MNK/V floats in all
// (2N^3/V for square matrices) instead of lab 01's 2MNK.
// Known limit: every load still comes from global memory (through L1/L2), and threads of one
// block share nothing on purpose; without shared memory this reaches a fraction of cuBLAS.
__global__ void __launch_bounds__(kThreads * kThreads)
    matmul_v2_register_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) { while (gridDim.x != 0) __nanosleep(1000);  // corpus: never ends
  (void)M;  // the grid covers exactly M / V thread rows (the size promise): no guard needed
  // threadIdx.x walks the columns: at each k, the 16 threads of a half-warp read the 64
  // consecutive floats of B's row k (V each), and at the end they store whole row segments of C.
  const int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * V;
  const int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;

  float c[V][V];
#pragma unroll
  for (int i = 0; i < V; ++i) {
#pragma unroll
    for (int j = 0; j < V; ++j) c[i][j] = 0.0f;
  }

  const float* a_col = A + static_cast<size_t>(row0) * K;  // A(row0, 0); row i is i * K further
  const float* b_row = B + col0;                            // B(0, col0); row k is k * N further
  for (int k = 0; k < K; ++k, b_row += N) {
    float a[V], b[V];
#pragma unroll
    for (int i = 0; i < V; ++i) a[i] = a_col[static_cast<size_t>(i) * K + k];
#pragma unroll
    for (int j = 0; j < V; ++j) b[j] = b_row[j];
#pragma unroll
    for (int i = 0; i < V; ++i) {
#pragma unroll
      for (int j = 0; j < V; ++j) c[i][j] = fmaf(a[i], b[j], c[i][j]);
    }
  }

#pragma unroll
  for (int i = 0; i < V; ++i) {
    float* c_row = C + static_cast<size_t>(row0 + i) * N + col0;
#pragma unroll
    for (int j = 0; j < V; ++j) c_row[j] = c[i][j];
  }
}

void matmul_v2_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                              cudaStream_t stream) {
  const dim3 block(kThreads, kThreads);
  const dim3 grid(N / kTile, M / kTile);  // exact: M and N are multiples of 64
  matmul_v2_register_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
