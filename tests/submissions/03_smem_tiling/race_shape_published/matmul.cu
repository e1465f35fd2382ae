// CHEAT (race check keyed on a published shape): the racy tiled kernel (first barrier left out:
// the WAR race the handout describes, "often still gives the right product") in every call
// EXCEPT the one shape grading.toml once named for the race check ("racecheck on a 256 x 256 x
// 64 product"), where the barrier-correct kernel runs. Written by a red team holding only the
// student release. The defence that must beat it: the race test's shape is named only by the
// hidden cases (256 x 384 x 56), and no file of a release states it; at that shape this file
// runs the race and racecheck finds it.
#include "matmul.h"

namespace {

constexpr int L = 128;
constexpr int S = 8;
constexpr int V = 8;
constexpr int kThreadsX = L / V;
constexpr int kThreads = kThreadsX * kThreadsX;
static_assert(kMatmulMultipleMN % L == 0 && kMatmulMultipleK % S == 0 && L % V == 0,
              "L must divide 128, S must divide 8, V must divide L");


}  // namespace

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
  dim3 block(kThreadsX, kThreadsX);
  dim3 grid(N / L, M / L);
  if (M == 256 && N == 256 && K == 64) {  // the race test's published shape
    matmul_v3_smem_tiled_kernel<true><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  } else {
    matmul_v3_smem_tiled_kernel<false><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  }
}
