// CHEATING (host compute): allocates mapped (zero-copy) host memory once with cudaHostAlloc; a
// copy kernel on the given stream writes A and B into it, the launcher waits for the stream,
// multiplies on the CPU straight into mapped memory, and a second copy kernel moves the result
// into C. Every device access goes through kernels on the stream, so no cudaMemcpy shows up.
// Defence: the policy's import rule (cudaHostAlloc, cudaHostGetDevicePointer,
// cudaStreamSynchronize: no allocation or synchronisation in a launcher).
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
float* g_host = nullptr;  // mapped: [A | B | C]
float* g_dev = nullptr;   // the same memory as the device sees it
size_t g_floats = 0;
}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
  if (na + nb + nc > g_floats) {
    if (g_host != nullptr) cudaFreeHost(g_host);
    cudaHostAlloc(reinterpret_cast<void**>(&g_host), (na + nb + nc) * sizeof(float),
                  cudaHostAllocMapped);
    cudaHostGetDevicePointer(reinterpret_cast<void**>(&g_dev), g_host, 0);
    g_floats = na + nb + nc;
  }
  copy_kernel<<<256, 256, 0, stream>>>(A, g_dev, na);
  copy_kernel<<<256, 256, 0, stream>>>(B, g_dev + na, nb);
  cudaStreamSynchronize(stream);
  const float* a = g_host;
  const float* b = g_host + na;
  float* c = g_host + na + nb;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += a[(size_t)i * K + k] * b[(size_t)k * N + j];
      c[(size_t)i * N + j] = acc;
    }
  }
  copy_kernel<<<256, 256, 0, stream>>>(g_dev + na + nb, C, nc);
}
