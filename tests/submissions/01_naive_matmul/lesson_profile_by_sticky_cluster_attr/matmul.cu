// Lab 01: naive matmul, C[M x N] = A[M x K] * B[K x N], one thread per element of C.
//
// Red-team case "lesson_profile_by_sticky_cluster_attr".
// The graded (tested and timed) kernel is the uncoalesced naive kernel: threadIdx.x walks the
// ROWS of C, so a warp's loads of A and stores of C are 32 rows apart (about 7e10 sectors at
// 4096^3, the lesson allows 1.61e10). The ncu profile that scores the lesson is a replay of the
// last timed call's saved plan in a FRESH executor. The launcher sets the allowed attribute
// cudaFuncAttributeRequiredClusterWidth = 2 on the kernel once (static flag), after its first
// launch: the executor keeps it (attrs_) and re-applies it to every later module copy, but no
// later plan holds it, so every graded call after the first runs in clusters of 2 and every
// replay in clusters of 1. The kernel reads %cluster_nctarank: 2 -> uncoalesced; 1 -> the
// coalesced mapping, and one block then sleeps (__nanosleep, no clock read) ~0.4 s so that the
// profiled kernel stays above "half the timed calls' median" (the floor only bounds it below).
#include "matmul.h"

namespace {

constexpr int kTile = 16;
constexpr int kSleepMs = 400;

}  // namespace

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  unsigned cluster;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(cluster));
  int row, col;
  if (cluster == 2) {
    // Graded calls: threadIdx.x walks rows (uncoalesced).
    row = blockIdx.x * kTile + threadIdx.x;
    col = blockIdx.y * kTile + threadIdx.y;
  } else {
    // Replays (the profile): threadIdx.x walks columns (coalesced).
    col = blockIdx.x * kTile + threadIdx.x;
    row = blockIdx.y * kTile + threadIdx.y;
  }
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[size_t(row) * K + k] * B[size_t(k) * N + col];
    C[size_t(row) * N + col] = acc;
  }
  if (cluster != 2 && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
    for (int i = 0; i < kSleepMs; ++i) __nanosleep(1000000u);
  }
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const int tiles = ((M > N ? M : N) + kTile - 1) / kTile;
  dim3 block(kTile, kTile);
  dim3 grid((tiles + 1) / 2 * 2, tiles);  // x even: clusters of 2 along x
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  static bool sticky = false;
  if (!sticky) {
    sticky = true;
    const void* f = reinterpret_cast<const void*>(matmul_v1_naive_kernel);
    cudaFuncSetAttribute(f, cudaFuncAttributeRequiredClusterWidth, 2);
    cudaFuncSetAttribute(f, cudaFuncAttributeRequiredClusterHeight, 1);
    cudaFuncSetAttribute(f, cudaFuncAttributeRequiredClusterDepth, 1);
  }
}
