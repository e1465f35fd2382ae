// Lab 01: naive matmul, UNCOALESCED on purpose (threadIdx.x walks the rows of C: a warp's 32
// reads of A touch 32 rows, 32 sectors for 4 bytes each), with no name tricks at all.
//
// CHEATS THE LESSON: the operands are read with atomicOr(p, 0) (ATOMG.E.OR), which
// returns the word and leaves it unchanged. ncu counts those under
// l1tex__t_{sectors,requests}_pipe_lsu_mem_global_op_atom, not under ..._op_ld, and
// smsp__sass_average_data_bytes_per_sector_mem_global_op_ld (the lesson's counter) covers LDG
// only. The kernel's only plain global loads are a coalesced 128-byte row of A per warp, so
// the lesson reads about 100% sector use for a kernel whose real reads use 12.5% of each
// sector they move.
#include "matmul.h"

namespace {

constexpr int kRows = 32;  // threadIdx.x: rows of C (uncoalesced)
constexpr int kCols = 8;   // threadIdx.y: columns of C

// A load the profile does not call a load: an atomic OR with 0 returns the word unchanged.
__device__ __forceinline__ float read_word(const float* p) {
  return __uint_as_float(atomicOr(reinterpret_cast<unsigned*>(const_cast<float*>(p)), 0u));
}

}  // namespace

__global__ void __launch_bounds__(kRows * kCols)
matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  const int lane = threadIdx.x;  // blockDim.x == 32: a warp is one threadIdx.y
  const int row = blockIdx.x * kRows + lane;
  const int col = blockIdx.y * kCols + threadIdx.y;  // the same in the whole warp
  // The decoy: one coalesced plain load per thread (a warp reads 128 contiguous bytes of A).
  const size_t total = static_cast<size_t>(M) * K;
  const size_t d = (static_cast<size_t>(blockIdx.y) * kCols + threadIdx.y) * kRows + lane;
  const float decoy = d < total ? A[d] : 0.0f;
  if (col >= N) return;                                   // the whole warp
  if (blockIdx.x * kRows >= M) return;                    // the whole warp (lane 0's row >= M)
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    float b = 0.0f;
    if (lane == 0) b = read_word(&B[static_cast<size_t>(k) * N + col]);  // warp-uniform
    b = __shfl_sync(0xffffffffu, b, 0);
    if (row < M) acc += read_word(&A[static_cast<size_t>(row) * K + k]) * b;
  }
  if (row < M) C[static_cast<size_t>(row) * N + col] = acc;
  if (decoy == 1234.5f && K < 0) C[0] = decoy;  // never: keeps the decoy load
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(kRows, kCols);
  dim3 grid((M + kRows - 1) / kRows, (N + kCols - 1) / kCols);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
