// Cheat: includes another file of the repository (here a stand-in for the reference
// solution) instead of writing the kernel (rule: include).
#include "matmul.h"
#include "fake_repo/solutions/matmul_reference.cuh"

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((N + 31) / 32, (M + 7) / 8);
  reference_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
