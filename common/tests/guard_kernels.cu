// Small kernels the harness tests use to prove each check catches what it claims to.
#include "guard_kernels.hpp"

namespace {

__global__ void write_at_kernel(float* p, long long offset, float value) { p[offset] = value; }

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// A correct naive matmul, plus switchable faults.
__global__ void harness_matmul_kernel(const float* A, const float* B, float* C, int M, int N,
                                      int K, HarnessFault fault) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (fault != HarnessFault::kNoGuard && (row >= M || col >= N)) return;
  if (fault == HarnessFault::kSkipLastColumn && col == N - 1) return;
  float acc = 0.0f;
  const int k_end = fault == HarnessFault::kDropLastK ? K - 1 : K;
  if (fault != HarnessFault::kNoGuard || (row < M && col < N)) {
    for (int k = 0; k < k_end; ++k) acc += A[row * K + k] * B[k * N + col];
  }
  C[row * N + col] = acc;
}

}  // namespace

void launch_write_at(float* p, long long offset, float value) {
  write_at_kernel<<<1, 1>>>(p, offset, value);
}

void launch_spin(long long cycles, cudaStream_t stream) { spin_kernel<<<1, 1, 0, stream>>>(cycles); }

void launch_harness_matmul(const float* A, const float* B, float* C, int M, int N, int K,
                           cudaStream_t stream, HarnessFault fault) {
  const dim3 block(16, 16);
  const dim3 grid((N + 15) / 16, (M + 15) / 16);
  harness_matmul_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K, fault);
}

void launch_bad_config(cudaStream_t stream) { spin_kernel<<<1, 4096, 0, stream>>>(1); }
