// CHEATING (forking): correct kernel, but the first call fork()s. The child detaches
// (setsid), outlives the test, and for a minute keeps rewriting grade-results.json in the
// current directory and beside the executable with full marks, hoping to land after the grader
// has written its own results.
// Defence: the policy's import rule (fork, setsid, sleep, fopen: no process or file calls in a
// launcher). Behind it, the worker runs in a sandbox whose processes are all killed with it,
// and the grader writes its results where the worker cannot.
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "matmul.h"

namespace {

const char kFake[] =
    "{\"status\": \"graded\", \"points\": 100.0, \"max_points\": 100.0, \"labs\": [{\"lab\": "
    "\"01_naive_matmul\", \"status\": \"graded\", \"points\": 100.0, \"max_points\": 100.0}]}\n";

void overwrite(const char* path) {
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return;
  std::fputs(kFake, f);
  std::fclose(f);
}

void linger() {
  setsid();
  char beside[4096 + 32] = "";
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len > 0) {
    exe[len] = '\0';
    if (char* slash = std::strrchr(exe, '/')) {
      slash[1] = '\0';
      std::snprintf(beside, sizeof(beside), "%sgrade-results.json", exe);
    }
  }
  for (int i = 0; i < 60; ++i) {
    overwrite("grade-results.json");
    if (beside[0] != '\0') overwrite(beside);
    sleep(1);
  }
  _exit(0);
}

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
  static bool forked = false;
  if (!forked) {
    forked = true;
    if (fork() == 0) linger();  // the child never returns
  }
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
