// CHEATING (host compute): no kernel. The launcher enqueues, all on the given stream, copies of
// A and B to host memory, a host callback (cudaLaunchHostFunc) that multiplies them on the CPU,
// and a copy of the result back into C. It is even correct and stream-ordered, so a
// graph-capture test alone would accept it; the lab is about writing the kernel.
// Defence: the policy's import rule (cudaLaunchHostFunc, cudaMemcpyAsync: a launcher enqueues
// kernels and memsets only).
#include <vector>

#include "matmul.h"

namespace {

struct HostProduct {
  std::vector<float> a, b, c;
  int M = 0, N = 0, K = 0;
};
void CUDART_CB multiply_on_cpu(void* data) {
  HostProduct& w = *static_cast<HostProduct*>(data);
  for (int i = 0; i < w.M; ++i) {
    for (int j = 0; j < w.N; ++j) {
      double acc = 0.0;
      for (int k = 0; k < w.K; ++k) acc += (double)w.a[(size_t)i * w.K + k] * w.b[(size_t)k * w.N + j];
      w.c[(size_t)i * w.N + j] = (float)acc;
    }
  }
}

}  // namespace

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;  // never launched
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  static HostProduct w;  // function-local: built on first use, no global constructor
  w.M = M;
  w.N = N;
  w.K = K;
  w.a.resize((size_t)M * K);
  w.b.resize((size_t)K * N);
  w.c.resize((size_t)M * N);
  cudaMemcpyAsync(w.a.data(), A, w.a.size() * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaMemcpyAsync(w.b.data(), B, w.b.size() * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaLaunchHostFunc(stream, multiply_on_cpu, &w);
  cudaMemcpyAsync(C, w.c.data(), w.c.size() * sizeof(float), cudaMemcpyHostToDevice, stream);
}
