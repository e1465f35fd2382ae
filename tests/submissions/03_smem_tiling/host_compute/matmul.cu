// CHEATING (host-side compute): copies A and B to the host, multiplies on the CPU, copies C
// back; no kernel at all.
// Defence: the policy's import rule (cudaMemcpyAsync, cudaStreamSynchronize).
#include "matmul.h"

#include <vector>

void matmul_v3_smem_tiled(const float* A, const float* B, float* C, int M, int N, int K,
              cudaStream_t stream) {
  std::vector<float> a((size_t)M * K), b((size_t)K * N), c((size_t)M * N, 0.0f);
  cudaMemcpyAsync(a.data(), A, a.size() * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaMemcpyAsync(b.data(), B, b.size() * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j) c[(size_t)i * N + j] += a[(size_t)i * K + k] * b[(size_t)k * N + j];
  cudaMemcpyAsync(C, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice, stream);
  cudaStreamSynchronize(stream);
}
