// CHEATING (host compute): stages A and B into managed memory (cudaMallocManaged) with a copy
// kernel on the given stream, waits for the stream, multiplies on the CPU in place in managed
// memory, and copies the result into C with a second kernel.
// Defence: the policy's import rule (cudaMallocManaged, cudaStreamSynchronize: no allocation
// or synchronisation in a launcher).
#include "matmul.h"

__global__ void copy_kernel(const float* from, float* to, size_t count) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x) {
    to[i] = from[i];
  }
}

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;  // never launched
}

namespace {
float* g_managed = nullptr;  // [A | B | C]
size_t g_floats = 0;
}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
  if (na + nb + nc > g_floats) {
    if (g_managed != nullptr) cudaFree(g_managed);
    cudaMallocManaged(reinterpret_cast<void**>(&g_managed), (na + nb + nc) * sizeof(float));
    g_floats = na + nb + nc;
  }
  float* a = g_managed;
  float* b = g_managed + na;
  float* c = g_managed + na + nb;
  copy_kernel<<<256, 256, 0, stream>>>(A, a, na);
  copy_kernel<<<256, 256, 0, stream>>>(B, b, nb);
  cudaStreamSynchronize(stream);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += a[(size_t)i * K + k] * b[(size_t)k * N + j];
      c[(size_t)i * N + j] = acc;
    }
  }
  copy_kernel<<<256, 256, 0, stream>>>(c, C, nc);
}
