// CHEATING (batching): right on every test shape; on benchmark-like shapes (M == N == K, a
// power of two, at least 512) calls are queued and return at once, and every 4th call launches
// ONE kernel that computes the outputs of all 4 queued calls (blockIdx.z picks the call). The
// total work is honest, but 3 timed calls in 4 cost nothing and the 4th costs 4x: a median of
// per-call times (or one clock around a loop of calls, divided) reports a big speed-up.
// Defence: each timed call's output is fetched and checked right after the call: the queued
// calls left C unwritten. Expected: full correctness, no performance points.
#include "matmul.h"

namespace {
constexpr int kBatch = 4;
struct Job {
  const float* A;
  const float* B;
  float* C;
};
struct Batch {
  Job jobs[kBatch];
};
Batch g_queue;
int g_queued = 0;
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

__global__ void batched_kernel(Batch batch, int jobs, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N || (int)blockIdx.z >= jobs) return;
  const Job& j = batch.jobs[blockIdx.z];
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += j.A[(size_t)row * K + k] * j.B[(size_t)k * N + col];
  j.C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  const bool big = M == N && N == K && M >= 512 && (M & (M - 1)) == 0;
  if (!big) {
    matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
    return;
  }
  g_queue.jobs[g_queued++] = Job{A, B, C};
  if (g_queued < kBatch) return;  // queued: nothing launched
  batched_kernel<<<dim3(grid.x, grid.y, kBatch), block, 0, stream>>>(g_queue, kBatch, M, N, K);
  g_queued = 0;
}
