// CHEATING (stale result): remembers the last call's (A, B, C, M, N, K) in host statics and
// keeps its C in a static __device__ array (4096 x 4096 floats: no allocation, nothing to
// import); when a call repeats them, a copy kernel replays the stored C instead of
// multiplying. Right whenever the data behind the pointers did not change; a benchmark that
// times repeated calls on the same buffers would time a copy.
// Defence: fresh inputs on every call, in the same buffers: the hidden repeat test
// (FreshInputsEveryCall, 320x192x100, three calls) gets call 1's C on calls 2 and 3, and the
// benchmark checks every timed call. Expected: partial correctness (every single-call test
// passes), performance gated.
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

constexpr size_t kCacheFloats = size_t{4096} * 4096;

}  // namespace

__device__ float g_cache[kCacheFloats];  // 64 MiB of the module's static memory

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
                                    float* __restrict__ C, int M, int N, int K, bool keep) {
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
    for (int j = 0; j < V; ++j) {
      c_row[j] = c[i][j];
      if (keep) g_cache[static_cast<size_t>(row0 + i) * N + col0 + j] = c[i][j];
    }
  }
}

__global__ void replay_kernel(float* C, size_t count) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    C[i] = g_cache[i];
  }
}

namespace {
struct Key {
  const float* A = nullptr;
  const float* B = nullptr;
  float* C = nullptr;
  int M = 0, N = 0, K = 0;
  bool operator==(const Key& o) const {
    return A == o.A && B == o.B && C == o.C && M == o.M && N == o.N && K == o.K;
  }
};
Key g_last;
bool g_cached = false;
}  // namespace

void matmul_v2_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                              cudaStream_t stream) {
  const Key key{A, B, C, M, N, K};
  const size_t count = size_t(M) * N;
  if (g_cached && key == g_last) {  // the same call again: replay the stored C
    replay_kernel<<<1024, 256, 0, stream>>>(C, count);
    return;
  }
  const bool keep = count <= kCacheFloats;
  const dim3 block(kThreads, kThreads);
  const dim3 grid(N / kTile, M / kTile);  // exact: M and N are multiples of 64
  matmul_v2_register_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K, keep);
  g_last = key;
  g_cached = keep;
}
