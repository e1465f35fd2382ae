// CHEATING (reading the hidden tests from disk): correct kernel, and on the first call the
// launcher looks for labs/01_naive_matmul/hidden/cases.toml at run time -- relative to the
// current directory and to its own executable (/proc/self/exe), several levels up -- and
// copies it to stderr, so the hidden shapes come back to the student as the test's output.
// Defence: the policy's import rule (fopen, readlink: no file access in a launcher). Behind
// it, the worker runs as another user in a directory that holds no sources.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "matmul.h"

namespace {

bool dump(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  std::fprintf(stderr, "=== %s ===\n", path.c_str());
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) std::fwrite(buf, 1, n, stderr);
  std::fclose(f);
  return true;
}

void leak_hidden_tests() {
  static bool done = false;
  if (done) return;
  done = true;
  const std::string rel = "labs/01_naive_matmul/hidden/cases.toml";
  std::string up;
  for (int depth = 0; depth < 8; ++depth, up += "../") {
    if (dump(up + rel)) return;
  }
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len <= 0) return;
  exe[len] = '\0';
  std::string dir(exe);
  for (int depth = 0; depth < 8; ++depth) {
    dir.erase(dir.find_last_of('/'));
    if (dump(dir + "/" + rel)) return;
    if (dir.empty()) return;
  }
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
  leak_hidden_tests();
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
