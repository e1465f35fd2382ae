// CHEATING (runtime interposition): correct kernel, but the file defines the C library's
// clock_gettime (extern "C", no import at all): std::chrono's clocks in the whole process,
// glibc's and libstdc++'s included, then read a counter that advances 1 microsecond per call.
// Any host-side timing inside the student's process reads near-zero durations.
// Defence: the policy's definition rule (no definition of a C library, CUDA runtime or C++
// runtime symbol). Behind it, the judge times each request with its own clock, in a process
// without student code.
#include <time.h>

#include "matmul.h"

extern "C" int clock_gettime(clockid_t clock, struct timespec* ts) noexcept {
  (void)clock;
  static long long fake_ns = 1000000000LL;
  fake_ns += 1000;
  ts->tv_sec = static_cast<time_t>(fake_ns / 1000000000LL);
  ts->tv_nsec = static_cast<long>(fake_ns % 1000000000LL);
  return 0;
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

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
