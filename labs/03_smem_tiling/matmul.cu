// Lab 03: shared-memory tiling with a cooperative fetch. THIS is the file you edit (and the
// only one the grader takes).
//
// C[M x N] = A[M x K] * B[K x N], row-major float32. A block computes an L x L tile of C; S-deep
// slices of A and B are staged in shared memory by all threads of the block together; each
// thread computes a V x V block of C from shared memory.
// Size promise (matmul.h): M, N multiples of 128, K a multiple of 8.
// Read README.md in this folder first. Build and test with:
//   cmake --workflow --preset student     (your tests)   python3 -m grader grade 03  (your grade)
#include "matmul.h"

namespace {

// The tile sizes. L must divide 128 and S must divide 8 (the size promise), V must divide L.
// L = 128, S = 8, V = 8 (256 threads) is a good start; the handout asks you why.
constexpr int L = 128;  // block tile: L x L elements of C per block
constexpr int S = 8;    // slice depth
constexpr int V = 8;    // thread tile: V x V elements of C per thread
constexpr int kThreadsX = L / V;
constexpr int kThreads = kThreadsX * kThreadsX;
static_assert(kMatmulMultipleMN % L == 0 && kMatmulMultipleK % S == 0 && L % V == 0,
              "L must divide 128, S must divide 8, V must divide L");

}  // namespace

// matmul_v3_smem_tiled_kernel: block tile L x L, slices of depth S in shared memory, thread
// tile V x V in registers.
// Memory traffic: 2N^3/L floats from global memory, 2N^3/V from shared memory (README.md).
// Known limit: the fetch and the math take turns; nothing overlaps them.
__global__ void __launch_bounds__(kThreads)
    matmul_v3_smem_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, int M, int N, int K) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. Declare the shared slices, e.g. __shared__ float sA[S][L], sB[S][L];
  //    sA holds A's L x S slice TRANSPOSED: sA[s][m] = A(row0 + m, ko + s). A is M x K
  //    row-major, so A(r, k) is A[r * K + k] (not A[k * M + r]).
  //    sB holds B's S x L slice as it is: sB[s][n] = B(ko + s, col0 + n).
  // 2. Registers: float c[V][V] = {}; float a[V], b[V];
  // 3. For ko = 0, S, 2S, ... < K (one phase per slice):
  //    a. __syncthreads()  (why? the handout asks)
  //    b. the cooperative fetch: thread tid = threadIdx.y * blockDim.x + threadIdx.x takes
  //       elements idx = tid, tid + kThreads, ... < L * S of each slice. Map idx so that
  //       consecutive threads read consecutive addresses of A and of B (coalesced), and
  //       index the slices with ko, the start of this slice.
  //    c. __syncthreads()  (why? the handout asks)
  //    d. for ki in [0, S): a[y] = sA[ki][threadIdx.y * V + y], b[x] = sB[ki][threadIdx.x * V + x],
  //       c[y][x] += a[y] * b[x]   (b comes from sB, not sA)
  // 4. Write c[V][V] to C(row0 + threadIdx.y * V + y, col0 + threadIdx.x * V + x).
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;  // placeholder: remove this line
  // ---- TODO(student) END ---------------------------------------------------------------
}

void matmul_v3_smem_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // One block of kThreadsX x kThreadsX threads per L x L tile of C: grid (N / L, M / L).
  dim3 block(1, 1);  // placeholder
  dim3 grid(1, 1);   // placeholder
  // ---- TODO(student) END ---------------------------------------------------------------
  matmul_v3_smem_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
