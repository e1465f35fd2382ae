//@ starter
//| // Lab 03: shared-memory tiling with a cooperative fetch. THIS is the file you edit (and the
//| // only one the grader takes).
//| //
//| // C[M x N] = A[M x K] * B[K x N], row-major float32. A block computes an L x L tile of C; S-deep
//| // slices of A and B are staged in shared memory by all threads of the block together; each
//| // thread computes a V x V block of C from shared memory.
//| // Size promise (matmul.h): M, N multiples of 128, K a multiple of 8.
//| // Read README.md in this folder first. Build and test with:
//| //   cmake --workflow --preset student     (your tests)   python3 -m grader grade 03  (your grade)
//@ solution
// Lab 03 reference solution: shared-memory tiling with a cooperative fetch.
//
// A block of 16 x 16 threads computes one L x L = 128 x 128 tile of C. The K dimension is
// walked in slices of depth S = 8: all 256 threads copy the L x S slice of A and the S x L
// slice of B into shared memory (the cooperative fetch), then each thread accumulates its own
// V x V = 8 x 8 block of C from shared memory, as outer products of a[V] and b[V].
// The size promise (matmul.h): M, N multiples of 128 and K a multiple of 8, so no guards.
//@ end
#include "matmul.h"

namespace {

//@ starter
//| // The tile sizes. L must divide 128 and S must divide 8 (the size promise), V must divide L.
//| // L = 128, S = 8, V = 8 (256 threads) is a good start; the handout asks you why.
//| constexpr int L = 128;  // block tile: L x L elements of C per block
//| constexpr int S = 8;    // slice depth
//| constexpr int V = 8;    // thread tile: V x V elements of C per thread
//| constexpr int kThreadsX = L / V;
//| constexpr int kThreads = kThreadsX * kThreadsX;
//| static_assert(kMatmulMultipleMN % L == 0 && kMatmulMultipleK % S == 0 && L % V == 0,
//|               "L must divide 128, S must divide 8, V must divide L");
//@ solution
constexpr int L = 128;  // block tile: L x L elements of C per block
constexpr int S = 8;    // slice depth: K advances S per phase
constexpr int V = 8;    // thread tile: V x V elements of C per thread
constexpr int kThreadsX = L / V;                   // 16
constexpr int kThreads = kThreadsX * kThreadsX;    // 256
static_assert(kMatmulMultipleMN % L == 0 && kMatmulMultipleK % S == 0,
              "the tile must divide the sizes the lab promises");
static_assert(V % 4 == 0, "the thread tile is read and written as float4");
//@ end

}  // namespace

// matmul_v3_smem_tiled_kernel: block tile L x L, slices of depth S in shared memory, thread
// tile V x V in registers.
//@ starter
//| // Memory traffic: 2N^3/L floats from global memory, 2N^3/V from shared memory (README.md).
//| // Known limit: the fetch and the math take turns; nothing overlaps them.
//@ solution
// Memory traffic: each block reads 2*L*K floats from global memory, 2*M*N*K/L in all (2N^3/L);
// each thread reads 2*V*K floats from shared memory, 2*M*N*K/V in all (2N^3/V).
// Known limit: the shared-memory stores of A's transposed slice conflict on banks, and nothing
// overlaps the fetch with the math (lab 04's v5 does).
//@ end
__global__ void __launch_bounds__(kThreads)
    matmul_v3_smem_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, int M, int N, int K) {
  //@ starter
  //|   // ---- TODO(student) BEGIN -------------------------------------------------------------
  //|   // 1. Declare the shared slices, e.g. __shared__ float sA[S][L], sB[S][L];
  //|   //    sA holds A's L x S slice TRANSPOSED: sA[s][m] = A(row0 + m, ko + s). A is M x K
  //|   //    row-major, so A(r, k) is A[r * K + k] (not A[k * M + r]).
  //|   //    sB holds B's S x L slice as it is: sB[s][n] = B(ko + s, col0 + n).
  //|   // 2. Registers: float c[V][V] = {}; float a[V], b[V];
  //|   // 3. For ko = 0, S, 2S, ... < K (one phase per slice):
  //|   //    a. __syncthreads()  (why? the handout asks)
  //|   //    b. the cooperative fetch: thread tid = threadIdx.y * blockDim.x + threadIdx.x takes
  //|   //       elements idx = tid, tid + kThreads, ... < L * S of each slice. Map idx so that
  //|   //       consecutive threads read consecutive addresses of A and of B (coalesced), and
  //|   //       index the slices with ko, the start of this slice.
  //|   //    c. __syncthreads()  (why? the handout asks)
  //|   //    d. for ki in [0, S): a[y] = sA[ki][threadIdx.y * V + y], b[x] = sB[ki][threadIdx.x * V + x],
  //|   //       c[y][x] += a[y] * b[x]   (b comes from sB, not sA)
  //|   // 4. Write c[V][V] to C(row0 + threadIdx.y * V + y, col0 + threadIdx.x * V + x).
  //|   (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;  // placeholder: remove this line
  //|   // ---- TODO(student) END ---------------------------------------------------------------
  //@ solution
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
  //@ end
}

void matmul_v3_smem_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream) {
  //@ starter
  //|   // ---- TODO(student) BEGIN -------------------------------------------------------------
  //|   // One block of kThreadsX x kThreadsX threads per L x L tile of C: grid (N / L, M / L).
  //|   dim3 block(1, 1);  // placeholder
  //|   dim3 grid(1, 1);   // placeholder
  //|   // ---- TODO(student) END ---------------------------------------------------------------
  //@ solution
  const dim3 block(kThreadsX, kThreadsX);
  const dim3 grid(N / L, M / L);  // exact: the promise
  //@ end
  matmul_v3_smem_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
