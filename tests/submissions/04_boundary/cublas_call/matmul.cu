// CHEATING (vendor library): both launchers call cublasSgemm.
// Defence: the policy's include rule (<cublas_v2.h>) and import rule (cublasSgemm_v2).
#include "matmul.h"

#include <cublas_v2.h>

void matmul_v4_boundary(const float* A, const float* B, float* C, int M, int N, int K,
              cudaStream_t stream) {
  static cublasHandle_t handle = nullptr;
  if (!handle) cublasCreate(&handle);
  cublasSetStream(handle, stream);
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major C = A*B is column-major C^T = B^T * A^T.
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N);
}

void matmul_v5_optimized(const float* A, const float* B, float* C, int M, int N, int K,
              cudaStream_t stream) {
  static cublasHandle_t handle = nullptr;
  if (!handle) cublasCreate(&handle);
  cublasSetStream(handle, stream);
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major C = A*B is column-major C^T = B^T * A^T.
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N);
}
