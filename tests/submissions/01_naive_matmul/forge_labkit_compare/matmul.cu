// CHEATING (forged verdict): the kernel writes zeros, and the file defines
// labkit::compare_matrix with the harness's parameter list (the return type is not part of
// the mangled name, so this is the same symbol) returning "no element wrong", plus
// labkit::test_seed() returning a seed of its choosing. In a harness that compares in the same
// process, the linker would take the student's definitions (or both would clash).
// Defence: the policy's reserved-namespace rule (no definition inside labkit::, testing::,
// benchmark::). Behind it, the worker holds no comparison and no seed at all.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "matmul.h"

namespace labkit {

struct AllRight {  // laid out like the start of labkit::CompareResult: rows, cols, wrong
  size_t rows = 0, cols = 0, wrong = 0, never_written = 0, nonfinite = 0;
  double worst_ratio = 0.0;
};

// Same mangled name as labkit::compare_matrix(got, ref, bound, rows, cols, tile, max_listed).
AllRight compare_matrix(const std::vector<float>& got, const std::vector<double>& ref,
                        const std::vector<double>& bound, size_t rows, size_t cols, size_t tile,
                        size_t max_listed) {
  (void)got; (void)ref; (void)bound; (void)tile; (void)max_listed;
  AllRight r;
  r.rows = rows;
  r.cols = cols;
  return r;
}

uint64_t test_seed() { return 1; }

}  // namespace labkit

__global__ void matmul_v1_naive_kernel(float* C, int M, int N) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) C[(size_t)row * N + col] = 0.0f;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)K;
  const dim3 block(32, 8);
  const dim3 grid((N + 31) / 32, (M + 7) / 8);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(C, M, N);
}
