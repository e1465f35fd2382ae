// Lab 02 red-team case: a V x V register-tiled FP32 matmul that also keeps a packed-half running
// min (__hmin2 from cuda_fp16.h). ptxas fuses pairs of __hmin2 into VHMNMX (SIMD FP16 3-input min),
// which the device rule refuses since red team round 21 (it listed only H*2 opcodes).
#include <cuda_fp16.h>
#include "matmul.h"

namespace {
constexpr int V = 4;
}  // namespace

__global__ void matmul_v2_register_tiled_kernel(const float* A, const float* B, float* C, int M,
                                                int N, int K) {
  int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * V;
  int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (row0 >= M || col0 >= N) return;
  float acc[V][V] = {};
  __half2 m = __halves2half2(__ushort_as_half(0x7bff), __ushort_as_half(0x7bff));
  for (int k = 0; k < K; ++k) {
    float a[V], b[V];
#pragma unroll
    for (int i = 0; i < V; ++i) a[i] = A[(size_t)(row0 + i) * K + k];
#pragma unroll
    for (int j = 0; j < V; ++j) b[j] = B[(size_t)k * N + col0 + j];
#pragma unroll
    for (int i = 0; i < V; ++i)
#pragma unroll
      for (int j = 0; j < V; ++j) acc[i][j] += a[i] * b[j];
    __half2 ha = *reinterpret_cast<const __half2*>(&a[0]);   // bit reinterpretation only
    __half2 hb = *reinterpret_cast<const __half2*>(&b[0]);
    m = __hmin2(__hmin2(m, ha), hb);                         // FP16x2 math -> VHMNMX
  }
  float keep = 0.f * (float)(*reinterpret_cast<unsigned*>(&m) & 1u);
#pragma unroll
  for (int i = 0; i < V; ++i)
#pragma unroll
    for (int j = 0; j < V; ++j) C[(size_t)(row0 + i) * N + col0 + j] = acc[i][j] + keep;
}

void matmul_v2_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                              cudaStream_t stream) {
  dim3 block(16, 16);
  dim3 grid((N / V + 15) / 16, (M / V + 15) / 16);
  matmul_v2_register_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
