// WRONG (cooperative fetch): correct_L96_guarded with the fetch written as
// `for (j = 0; j < L * S / nthreads; ++j)`: with 144 threads and L * S = 768 that is 5 rounds,
// 720 elements; the last 48 of each slice (rows 90..95 of A's slice, the last k-row's 48
// columns of B's) are never fetched and hold stale shared memory.
#include "matmul.h"

namespace v3 {

constexpr int L = 96;   // block tile: 96 x 96, 12 x 12 = 144 threads
constexpr int S = 8;    // slice depth
constexpr int V = 8;    // thread tile: V x V per thread
constexpr int kThreadsX = L / V;
constexpr int kThreads = kThreadsX * kThreadsX;
static_assert(L % V == 0 && V % 4 == 0, "V divides L; the thread tile is read as float4");

}  // namespace v3

// matmul_v3_smem_tiled_kernel: lab 03's kernel (block tile L x L, slices of depth S, thread tile
// V x V) for any M, N, K.
// Memory traffic: as lab 03 (2N^3/L global, 2N^3/V shared); the zeros past the edges cost
// shared-memory stores only.
// Known limit: the edge blocks do the full tile's arithmetic on zeros; scalar global loads.
__global__ void __launch_bounds__(v3::kThreads)
    matmul_v3_smem_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                              float* __restrict__ C, int M, int N, int K) {
  using namespace v3;
  __shared__ __align__(16) float sA[S][L];  // sA[s][m] = A(row0 + m, ko + s), 0 past an edge
  __shared__ __align__(16) float sB[S][L];  // sB[s][n] = B(ko + s, col0 + n), 0 past an edge

  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int row0 = blockIdx.y * L;
  const int col0 = blockIdx.x * L;

  float c[V][V] = {};
  float a[V], b[V];

  // ko runs while ko < K: the last slice may be partial (K not a multiple of S); its missing
  // k are zeros in both slices, so they add nothing.
  for (int ko = 0; ko < K; ko += S) {
    __syncthreads();  // barrier 1: the previous slice is no longer being read
    for (int j = 0; j < L * S / kThreads; ++j) {  // 768 / 144 = 5 rounds: 720 elements
      const int idx = j * kThreads + tid;
      const int m = idx / S, s = idx % S;
      const int ar = row0 + m, ak = ko + s;
      sA[s][m] = (ar < M && ak < K) ? A[static_cast<size_t>(ar) * K + ak] : 0.0f;
      const int sb = idx / L, n = idx % L;
      const int bk = ko + sb, bc = col0 + n;
      sB[sb][n] = (bk < K && bc < N) ? B[static_cast<size_t>(bk) * N + bc] : 0.0f;
    }
    __syncthreads();  // barrier 2: the whole slice is in shared memory

    for (int ki = 0; ki < S; ++ki) {
      for (int v = 0; v < V; v += 4) {
        const float4 av = *reinterpret_cast<const float4*>(&sA[ki][threadIdx.y * V + v]);
        const float4 bv = *reinterpret_cast<const float4*>(&sB[ki][threadIdx.x * V + v]);
        a[v] = av.x, a[v + 1] = av.y, a[v + 2] = av.z, a[v + 3] = av.w;
        b[v] = bv.x, b[v + 1] = bv.y, b[v + 2] = bv.z, b[v + 3] = bv.w;
      }
      for (int y = 0; y < V; ++y) {
        for (int x = 0; x < V; ++x) c[y][x] += a[y] * b[x];
      }
    }
  }

  // Guarded stores: only the elements inside C. (Scalar: with N not a multiple of 4 the rows
  // of C are not 16-byte aligned.)
  for (int y = 0; y < V; ++y) {
    const int r = row0 + threadIdx.y * V + y;
    if (r >= M) break;
    for (int x = 0; x < V; ++x) {
      const int col = col0 + threadIdx.x * V + x;
      if (col < N) C[static_cast<size_t>(r) * N + col] = c[y][x];
    }
  }
}

void matmul_v3_smem_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                        cudaStream_t stream) {
  using namespace v3;
  const dim3 block(kThreadsX, kThreadsX);
  const dim3 grid((N + L - 1) / L, (M + L - 1) / L);  // rounded up: edge tiles are partial
  matmul_v3_smem_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}

