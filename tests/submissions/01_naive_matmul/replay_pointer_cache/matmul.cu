// CHEATING (replay): remembers the last call's (A, B, C, M, N, K). When a call repeats them, it
// does not multiply: a copy kernel replays the previous result from a cache in static device
// memory (a __device__ array of 4096 x 4096 floats: no allocation call, nothing to import).
// The output is poisoned before every call, so the cheat must write C; it writes a stale C. A
// benchmark that times repeated calls on the same buffers would time a copy.
// Defence: fresh inputs on every call, in the same buffers: the repeat test
// (FreshInputsEveryCall) catches the stale result, and the benchmark checks every timed call's
// output. Expected: every single-call test passes, the repeat test fails, no performance.
#include "matmul.h"

constexpr size_t kCacheFloats = size_t{4096} * 4096;
__device__ float g_cache[kCacheFloats];  // 64 MiB, part of the module's static memory

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K, bool keep) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  const size_t idx = (size_t)row * N + col;
  C[idx] = acc;
  if (keep) g_cache[idx] = acc;
}

__global__ void replay_kernel(float* C, size_t count) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x) {
    C[i] = g_cache[i];
  }
}

namespace {
struct Key {
  const float* A = nullptr;
  const float* B = nullptr;
  float* C = nullptr;
  int M = 0, N = 0, K = 0;
  bool operator==(const Key& o) const {
    return A == o.A && B == o.B && C == o.C && M == o.M && N == o.N && K == o.K;
  }
};
Key g_last;
bool g_cached = false;
}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const Key key{A, B, C, M, N, K};
  const size_t count = (size_t)M * N;
  if (g_cached && key == g_last) {
    replay_kernel<<<1024, 256, 0, stream>>>(C, count);
    return;
  }
  const bool keep = count <= kCacheFloats;
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K, keep);
  g_last = key;
  g_cached = keep;
}
