// WRONG (hang): the reference, except that every kernel spins forever at its start (a
// condition that never becomes false). Every test times out; the judge must bound what it
// costs (a variant that hangs three times in a row is not run again), not wait a timeout per test.
// Lab 03 reference solution: shared-memory tiling with a cooperative fetch.
//
// A block of 16 x 16 threads computes one L x L = 128 x 128 tile of C. The K dimension is
// walked in slices of depth S = 8: all 256 threads copy the L x S slice of A and the S x L
// slice of B into shared memory (the cooperative fetch), then each thread accumulates its own
// V x V = 8 x 8 block of C from shared memory, as outer products of a[V] and b[V].
// The size promise (matmul.h): M, N multiples of 128 and K a multiple of 8, so no guards.
#include "matmul.h"

namespace {

constexpr int L = 128;  // block tile: L x L elements of C per block
constexpr int S = 8;    // slice depth: K advances S per phase
constexpr int V = 8;    // thread tile: V x V elements of C per thread
constexpr int kThreadsX = L / V;                   // 16
constexpr int kThreads = kThreadsX * kThreadsX;    // 256
static_assert(kMatmulMultipleMN % L == 0 && kMatmulMultipleK % S == 0,
              "the tile must divide the sizes the lab promises");
static_assert(V % 4 == 0, "the thread tile is read and written as float4");

}  // namespace

// matmul_v3_smem_tiled_kernel: block tile L x L, slices of depth S in shared memory, thread
// tile V x V in registers.
// Memory traffic: each block reads 2*L*K floats from global memory, 2*M*N*K/L in all (2N^3/L);
// each thread reads 2*V*K floats from shared memory, 2*M*N*K/V in all (2N^3/V).
// Known limit: the shared-memory stores of A's transposed slice conflict on banks, and nothing
// overlaps the fetch with the math (lab 04's v5 does).
__global__ void __launch_bounds__(kThreads)
    matmul_v3_smem_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, int M, int N, int K) { while (gridDim.x != 0) __nanosleep(1000);  // corpus: never ends
  // A's slice is stored transposed (sA[s][m] = A(row0 + m, ko + s)), so that for a given s
  // the V values a thread needs are contiguous, like B's (sB[s][n] = B(ko + s, col0 + n)).
  __shared__ __align__(16) float sA[S][L];
  __shared__ __align__(16) float sB[S][L];

  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int row0 = blockIdx.y * L;  // this block's tile of C
  const int col0 = blockIdx.x * L;
  (void)M;

  float c[V][V] = {};
  float a[V], b[V];

  for (int ko = 0; ko < K; ko += S) {
    // Barrier 1: every thread has finished reading the previous slice before anyone
    // overwrites it (a write-after-read hazard without it).
    __syncthreads();
    // The cooperative fetch: L * S elements of each slice, spread over all threads. The
    // stride loop covers them whether or not L * S is a multiple of the thread count.
    // A: two consecutive threads take the 8 floats (one 32-byte sector) of one row's slice.
    // B: consecutive threads take consecutive float4s of one row (fully coalesced).
    // 16-byte loads: K and N are multiples of 8 and 128 (the promise), so every float4 is
    // aligned and inside the matrices; L * S / 4 = 256 float4s of each slice, one per thread.
    for (int idx = tid; idx < L * S / 4; idx += kThreads) {
      const int m = idx / (S / 4), s = (idx % (S / 4)) * 4;
      const float4 av =
          *reinterpret_cast<const float4*>(A + static_cast<size_t>(row0 + m) * K + ko + s);
      sA[s][m] = av.x, sA[s + 1][m] = av.y, sA[s + 2][m] = av.z, sA[s + 3][m] = av.w;
      const int sb = idx / (L / 4), n = (idx % (L / 4)) * 4;
      *reinterpret_cast<float4*>(&sB[sb][n]) =
          *reinterpret_cast<const float4*>(B + static_cast<size_t>(ko + sb) * N + col0 + n);
    }
    // Barrier 2: the whole slice is in shared memory before anyone reads it (a
    // read-after-write hazard without it).
    __syncthreads();

    for (int ki = 0; ki < S; ++ki) {
      // V contiguous floats each, read as float4 (the same a[] for the 16 threads of a row
      // of the block: a broadcast).
      for (int v = 0; v < V; v += 4) {
        const float4 av = *reinterpret_cast<const float4*>(&sA[ki][threadIdx.y * V + v]);
        const float4 bv = *reinterpret_cast<const float4*>(&sB[ki][threadIdx.x * V + v]);
        a[v] = av.x, a[v + 1] = av.y, a[v + 2] = av.z, a[v + 3] = av.w;
        b[v] = bv.x, b[v + 1] = bv.y, b[v + 2] = bv.z, b[v + 3] = bv.w;
      }
      for (int y = 0; y < V; ++y) {
        for (int x = 0; x < V; ++x) c[y][x] += a[y] * b[x];
      }
    }
  }

  // N is a multiple of 128, so every row of the thread's block starts 16-byte aligned.
  for (int y = 0; y < V; ++y) {
    float* out = C + static_cast<size_t>(row0 + threadIdx.y * V + y) * N + col0 + threadIdx.x * V;
    for (int x = 0; x < V; x += 4) {
      *reinterpret_cast<float4*>(out + x) = make_float4(c[y][x], c[y][x + 1], c[y][x + 2], c[y][x + 3]);
    }
  }
}

void matmul_v3_smem_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream) {
  const dim3 block(kThreadsX, kThreadsX);
  const dim3 grid(N / L, M / L);  // exact: the promise
  matmul_v3_smem_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
