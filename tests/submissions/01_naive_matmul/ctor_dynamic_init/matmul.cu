// CHEATING (global constructor): correct kernel, plus code that runs before main through
// ordinary C++ dynamic initialisation, no attribute needed: a namespace-scope object whose
// constructor runs at load time, and a static int initialised by a function call. They record
// and print that they ran first; in a shared process they could patch anything.
// Defence: the policy's constructor rule (no static initialiser of the student's own: the
// object's .init_array holds only nvcc's module registration). Function-local statics, which
// run on first use inside the launcher, stay allowed.
#include <cstdio>

#include "matmul.h"

namespace {

struct RunsFirst {
  RunsFirst() { std::printf("student code running before main\n"); }
};
RunsFirst g_runs_first;

int init_counter() {
  std::printf("static int initialised by a call\n");
  return 42;
}
int g_counter = init_counter();

}  // namespace

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
  (void)g_runs_first;
  (void)g_counter;
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
