// CHEATING/UNUSUAL: copies A and B to the host, multiplies on the CPU (all cores), copies C back;
// synchronous and no kernel at all.
// Defence: the policy's import rule (cudaMemcpyAsync, cudaDeviceSynchronize,
// cudaStreamSynchronize, std::thread: no copies, synchronisation or threads in a launcher).
// Behind it, the graph-capture test refuses copies inside the launcher.
#include "matmul.h"

#include <algorithm>
#include <thread>
#include <vector>

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;  // never launched
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  std::vector<float> a((size_t)M * K), b((size_t)K * N), c((size_t)M * N, 0.0f);
  cudaDeviceSynchronize();  // the harness's uploads may still be in flight on any stream
  cudaMemcpyAsync(a.data(), A, a.size() * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaMemcpyAsync(b.data(), B, b.size() * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  int workers = (int)std::max(1u, std::min(std::thread::hardware_concurrency(), 32u));
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      for (int i = w; i < M; i += workers)
        for (int k = 0; k < K; ++k) {
          float aik = a[(size_t)i * K + k];
          for (int j = 0; j < N; ++j) c[(size_t)i * N + j] += aik * b[(size_t)k * N + j];
        }
    });
  }
  for (auto& t : pool) t.join();
  cudaMemcpyAsync(C, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice, stream);
  cudaStreamSynchronize(stream);
}
