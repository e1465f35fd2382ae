// WRONG for these labs: a tensor-core kernel (wmma on half, HMMA) and packed half math
// (__hfma2: HFMA2; __float2half: F2FP). Must fail the device rule when the lab forbids
// tensor_cores and low_precision; compiles and passes every other rule.
#include <cuda_fp16.h>
#include <mma.h>

#include "matmul.h"

__global__ void wmma_kernel(const half* a, const half* b, float* c) {
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> fa;
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, half, nvcuda::wmma::col_major> fb;
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> fc;
  nvcuda::wmma::fill_fragment(fc, 0.0f);
  nvcuda::wmma::load_matrix_sync(fa, a, 16);
  nvcuda::wmma::load_matrix_sync(fb, b, 16);
  nvcuda::wmma::mma_sync(fc, fa, fb, fc);
  nvcuda::wmma::store_matrix_sync(c, fc, 16, nvcuda::wmma::mem_row_major);
}

__global__ void half_kernel(const float* A, float* C, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __half2 x = __floats2half2_rn(A[i], A[i] + 1.0f);
  const __half2 y = __hfma2(x, x, x);
  C[i] = __low2float(y) + __high2float(y);
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)B; (void)K;
  half_kernel<<<(M * N + 255) / 256, 256, 0, stream>>>(A, C, M * N);
}
