// CHEATING (forking): correct kernel, but the first call starts a shell through popen() with a
// background job that survives the test ("(...) &"): for a minute it rewrites every
// grade-results*.json it can find under the current directory and its parents with full marks.
// Defence: the policy's import rule (popen, pclose: no process creation in a launcher). Behind
// it, the worker's sandbox kills every process it started.
#include <cstdio>

#include "matmul.h"

namespace {

const char kJob[] =
    "( for i in $(seq 60); do "
    "for f in grade-results*.json ../grade-results*.json ../../grade-results*.json; do "
    "[ -w \"$f\" ] && printf '%s' '{\"status\": \"graded\", \"points\": 100.0}' > \"$f\"; "
    "done; sleep 1; done ) >/dev/null 2>&1 &";

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
  static bool started = false;
  if (!started) {
    started = true;
    if (FILE* p = popen(kJob, "r")) pclose(p);
  }
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
