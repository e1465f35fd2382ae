//@ starter
//| // Lab 01: naive matmul. THIS is the file you edit (and the only one the grader takes).
//| //
//| // C[M x N] = A[M x K] * B[K x N], row-major float32. One thread computes one C element.
//| // Read README.md in this folder first. Build and test with:
//| //   cmake --workflow --preset student     (your tests)   python3 -m grader grade 01  (your grade)
//| #include "matmul.h"
//|
//| // matmul_v1_naive_kernel: one thread per output element.
//| // Memory traffic: each thread reads a row of A and a column of B (2K floats), 2*M*N*K in all.
//| // Known limit: nothing is reused from on-chip memory; every operand comes from global memory.
//| __global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
//|                                        int K) {
//|   // ---- TODO(student) BEGIN -------------------------------------------------------------
//|   // 1. Work out which element of C this thread owns: a row in [0, M) and a column in [0, N).
//|   //    Let threadIdx.x / blockIdx.x pick the COLUMN, so that neighbouring threads of a warp
//|   //    read neighbouring B elements and write neighbouring C elements (coalesced).
//|   // 2. Guard: the grid is rounded up to whole blocks, so some threads fall outside C.
//|   //    They must return without reading or writing anything.
//|   // 3. Accumulate the dot product of row `row` of A and column `col` of B over all K terms,
//|   //    then write it to C[row][col] (row-major: element (r, c) of an R x S matrix is r*S + c).
//|   (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;  // placeholder: remove these
//|   // ---- TODO(student) END ---------------------------------------------------------------
//@ solution
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
                                       float* __restrict__ C, int M, int N, int K) {
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
//@ end
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  //@ starter
  //|   // ---- TODO(student) BEGIN -------------------------------------------------------------
  //|   // Choose a 2D block shape (e.g. 32 x 8 threads) and a grid that covers all of C:
  //|   // ceil(N / block.x) blocks along x (columns) and ceil(M / block.y) along y (rows).
  //|   dim3 block(1, 1);  // placeholder
  //|   dim3 grid(1, 1);   // placeholder
  //|   // ---- TODO(student) END ---------------------------------------------------------------
  //@ solution
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((N + kBlockX - 1) / kBlockX, (M + kBlockY - 1) / kBlockY);
  //@ end
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
