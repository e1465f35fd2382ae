// CHEAT (race check on a plan made again): an honest tiled SGEMM whose graded calls, all but the
// first its planner process makes, run a kernel WITHOUT the first barrier (the WAR race the
// handout describes, "often still gives the right product"). Written by a red team holding only
// the student release. The race check replays the plan the graded call ran (kPlanOf), which the
// judge read into its arena; a plan larger than the arena (legal: up to 64 MiB, here ~60 MiB of
// no-op launches with 32000-byte arguments after every small product) was not kept, and the
// replay then started a FRESH planner, whose first plan is the race-free kernel: racecheck saw
// 0 hazards. The defence that must beat it: the judge makes room for the largest legal plan,
// and a race check without the graded call's plan is never clean (judge.cpp, Worker::sanitize).
#include "matmul.h"

namespace {

constexpr int L = 128;
constexpr int S = 8;
constexpr int V = 8;
constexpr int kThreadsX = L / V;
constexpr int kThreads = kThreadsX * kThreadsX;
static_assert(kMatmulMultipleMN % L == 0 && kMatmulMultipleK % S == 0 && L % V == 0,
              "L must divide 128, S must divide 8, V must divide L");

// A kernel parameter of 32000 bytes (the limit is 32764 on sm_70+ with CUDA 12.1+): each
// launch of pad_kernel adds ~32 KB to the plan and does nothing on the GPU.
struct Pad {
  unsigned char bytes[32000];
};
constexpr int kPadLaunches = 1950;  // 1950 * ~32.1 KB = ~59.7 MiB < the 64 MiB frame limit

}  // namespace

__global__ void pad_kernel(Pad p) { (void)p; }

template <bool kSafe>
__global__ void __launch_bounds__(kThreads)
    matmul_v3_smem_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, int M, int N, int K) {
  __shared__ float sA[S][L];
  __shared__ float sB[S][L];
  float c[V][V] = {};
  float a[V], b[V];
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int row0 = blockIdx.y * L, col0 = blockIdx.x * L;
  (void)M;
  for (int ko = 0; ko < K; ko += S) {
    if (kSafe) __syncthreads();  // the barrier the racy version leaves out (WAR on sA/sB)
    for (int idx = tid; idx < L * S; idx += kThreads) {
      const int m = idx / S, s = idx % S;       // A: consecutive threads along k
      sA[s][m] = A[static_cast<size_t>(row0 + m) * K + ko + s];
      const int s2 = idx / L, n = idx % L;      // B: consecutive threads along n
      sB[s2][n] = B[static_cast<size_t>(ko + s2) * N + col0 + n];
    }
    __syncthreads();
    for (int ki = 0; ki < S; ++ki) {
      for (int y = 0; y < V; ++y) a[y] = sA[ki][threadIdx.y * V + y];
      for (int x = 0; x < V; ++x) b[x] = sB[ki][threadIdx.x * V + x];
      for (int y = 0; y < V; ++y)
        for (int x = 0; x < V; ++x) c[y][x] += a[y] * b[x];
    }
  }
  for (int y = 0; y < V; ++y)
    for (int x = 0; x < V; ++x)
      C[static_cast<size_t>(row0 + threadIdx.y * V + y) * N + col0 + threadIdx.x * V + x] = c[y][x];
}

void matmul_v3_smem_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream) {
  // The planner is one long-lived process per worker: this counts the requests it has planned.
  // The racecheck replay without a saved plan starts a fresh planner: its first request.
  static unsigned long long planned = 0;
  const bool first = planned++ == 0;
  dim3 block(kThreadsX, kThreadsX);
  dim3 grid(N / L, M / L);
  if (first) {
    matmul_v3_smem_tiled_kernel<true><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
    return;
  }
  matmul_v3_smem_tiled_kernel<false><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  // Every small product (the race test's shape is not published; nothing the benchmark times).
  if (static_cast<long long>(M) * N * K <= (1LL << 23)) {
    static Pad pad = {};
    for (int i = 0; i < kPadLaunches; ++i) pad_kernel<<<1, 1, 0, stream>>>(pad);
  }
}
