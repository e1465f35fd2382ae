// CHEATING (the wrong lab's technique: shared memory): smem_lab03_kernel with its slices in
// dynamic shared memory instead: one `extern __shared__` array sized by the launch (the third
// <<<>>> argument, 4 KiB), so the kernel declares no static shared memory at all and
// cuobjdump -res-usage shows only what the system reserves. Right everywhere and faster than
// any register-only kernel; the handout says "there is no shared memory in this lab".
// Defence: the policy refuses shared memory in this lab (forbid_device_instructions
// "shared_memory"): the kernel's SASS stores to and loads from it (STS, LDS). Expected:
// rejected.
#include "matmul.h"

namespace {

constexpr int L = 64;   // block tile: L x L elements of C per block (divides the promise, 64)
constexpr int S = 8;    // slice depth: K advances S per phase
constexpr int V = 4;    // thread tile: V x V elements of C per thread
constexpr int kThreadsX = L / V;                 // 16
constexpr int kThreads = kThreadsX * kThreadsX;  // 256
static_assert(MATMUL_SIZE_MULTIPLE % L == 0, "the block tile must divide the size promise");
constexpr size_t kSmemBytes = 2 * S * L * sizeof(float);  // 4 KiB: both slices

}  // namespace

__global__ void __launch_bounds__(kThreads)
    matmul_v2_register_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  // A's slice stored transposed (sA[s][m] = A(row0 + m, ko + s)), B's as it is, both in the
  // block's dynamic shared memory (kSmemBytes, given at launch).
  extern __shared__ __align__(16) float smem[];
  float(*sA)[L] = reinterpret_cast<float(*)[L]>(smem);
  float(*sB)[L] = reinterpret_cast<float(*)[L]>(smem + S * L);

  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int row0 = blockIdx.y * L;
  const int col0 = blockIdx.x * L;
  (void)M;

  float c[V][V] = {};
  float a[V], b[V];

  for (int ko = 0; ko < K; ko += S) {
    __syncthreads();
    // L * S = 512 elements of each slice, two per thread; zero past K.
    for (int idx = tid; idx < L * S; idx += kThreads) {
      const int m = idx / S, s = idx % S;
      sA[s][m] = ko + s < K ? A[static_cast<size_t>(row0 + m) * K + ko + s] : 0.0f;
      const int sb = idx / L, n = idx % L;
      sB[sb][n] = ko + sb < K ? B[static_cast<size_t>(ko + sb) * N + col0 + n] : 0.0f;
    }
    __syncthreads();

#pragma unroll
    for (int ki = 0; ki < S; ++ki) {
      const float4 av = *reinterpret_cast<const float4*>(&sA[ki][threadIdx.y * V]);
      const float4 bv = *reinterpret_cast<const float4*>(&sB[ki][threadIdx.x * V]);
      a[0] = av.x, a[1] = av.y, a[2] = av.z, a[3] = av.w;
      b[0] = bv.x, b[1] = bv.y, b[2] = bv.z, b[3] = bv.w;
#pragma unroll
      for (int y = 0; y < V; ++y) {
#pragma unroll
        for (int x = 0; x < V; ++x) c[y][x] = fmaf(a[y], b[x], c[y][x]);
      }
    }
  }

  for (int y = 0; y < V; ++y) {
    float* out = C + static_cast<size_t>(row0 + threadIdx.y * V + y) * N + col0 + threadIdx.x * V;
    *reinterpret_cast<float4*>(out) = make_float4(c[y][0], c[y][1], c[y][2], c[y][3]);
  }
}

void matmul_v2_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                              cudaStream_t stream) {
  const dim3 block(kThreadsX, kThreadsX);
  const dim3 grid(N / L, M / L);  // exact: M and N are multiples of 64
  matmul_v2_register_tiled_kernel<<<grid, block, kSmemBytes, stream>>>(A, B, C, M, N, K);
}
