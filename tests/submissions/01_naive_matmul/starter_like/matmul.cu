// WRONG: the untouched starter: the kernel does nothing and the launch is a 1x1 grid, so C keeps
// its NaN poison. Expected: zero everywhere (but it builds).
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(1, 1);
  dim3 grid(1, 1);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
