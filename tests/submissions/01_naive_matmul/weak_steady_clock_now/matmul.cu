// CHEATING (weak definition of a library function): a weak definition of
// std::chrono::_V2::steady_clock::now() that advances 1 us per call. A definition in the
// executable binds before libstdc++'s, so every std::chrono::steady_clock::now() in the worker
// -- the runner's host clock around the launcher included -- reads it; being weak and in std::,
// it passed for a template instantiation. At the benchmark shapes the kernel goes to
// cudaStreamPerThread and the stream gets an empty kernel: the events see nothing and the
// worker's host clock says 1 us. Tests: the honest launch on `stream`.
// Defence: the policy's definition rule refuses definitions, weak or strong, of symbols that
// libstdc++, libc, libm or libgcc_s export. Behind it, only the judge's clock counts.
#include <chrono>

#include "matmul.h"

__attribute__((weak)) std::chrono::steady_clock::time_point
std::chrono::steady_clock::now() noexcept {
  static long long fake_ns = 1000000000LL;
  fake_ns += 1000;
  return time_point(duration(fake_ns));
}

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

namespace {

void launch_honest(const float* A, const float* B, float* C, int M, int N, int K,
                   cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}

// The benchmarks' shapes (1024^3, 4096^3); no test uses a square power of two this large.
[[maybe_unused]] bool bench_like(int M, int N, int K) {
  return M == N && N == K && M >= 1024 && (M & (M - 1)) == 0;
}

}  // namespace

__global__ void empty_kernel() {}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  if (!bench_like(M, N, K)) {
    launch_honest(A, B, C, M, N, K, stream);
    return;
  }
  launch_honest(A, B, C, M, N, K, cudaStreamPerThread);
  empty_kernel<<<1, 1, 0, stream>>>();
}
