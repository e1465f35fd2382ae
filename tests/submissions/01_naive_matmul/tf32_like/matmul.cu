// WRONG (precision): truncates both operands to 10 mantissa bits (like TF32: low 13 bits masked)
// before an fp32 FMA. ~1e-3 relative error per product: outside a float32 tolerance.
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    float a = __uint_as_float(__float_as_uint(A[(size_t)row * K + k]) & 0xFFFFE000u);
    float b = __uint_as_float(__float_as_uint(B[(size_t)k * N + col]) & 0xFFFFE000u);
    acc = fmaf(a, b, acc);
  }
  C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(32, 8);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
