// Cheat: calls the vendor library instead of writing the kernel (rules: include, import).
#include <cublas_v2.h>

#include "matmul.h"

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  static cublasHandle_t handle = nullptr;
  if (!handle) cublasCreate(&handle);
  cublasSetStream(handle, stream);
  const float one = 1.0f, zero = 0.0f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N);
}
