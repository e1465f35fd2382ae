// CHEATING (the wrong lab's technique: shared memory, hidden in inline PTX): smem_lab03_kernel
// with every shared-memory access written as inline PTX (st.shared.f32, ld.shared.v4.f32) on
// 32-bit shared-window addresses, in dynamic shared memory: no __shared__ array is indexed in
// C++, so nothing in the source reads like shared memory but one extern declaration. Right
// everywhere and faster than any register-only kernel; the handout says "there is no shared
// memory in this lab".
// Defence: the policy reads the kernels' SASS, where inline PTX has become machine code like
// the rest, and refuses shared memory in this lab (forbid_device_instructions
// "shared_memory"): STS and LDS.128. Expected: rejected.
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
  // A's slice stored transposed (sA(s, m) = A(row0 + m, ko + s)), B's as it is, at 32-bit
  // shared-window addresses: sA(s, m) at a_base + (s * L + m) * 4, sB(s, n) at b_base + ...
  extern __shared__ __align__(16) float smem[];
  const unsigned a_base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const unsigned b_base = a_base + S * L * sizeof(float);

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
      const float av = ko + s < K ? A[static_cast<size_t>(row0 + m) * K + ko + s] : 0.0f;
      asm volatile("st.shared.f32 [%0], %1;" ::"r"(a_base + (s * L + m) * 4), "f"(av));
      const int sb = idx / L, n = idx % L;
      const float bv = ko + sb < K ? B[static_cast<size_t>(ko + sb) * N + col0 + n] : 0.0f;
      asm volatile("st.shared.f32 [%0], %1;" ::"r"(b_base + (sb * L + n) * 4), "f"(bv));
    }
    __syncthreads();

#pragma unroll
    for (int ki = 0; ki < S; ++ki) {
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(a[0]), "=f"(a[1]), "=f"(a[2]), "=f"(a[3])
                   : "r"(a_base + (ki * L + threadIdx.y * V) * 4));
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(b[0]), "=f"(b[1]), "=f"(b[2]), "=f"(b[3])
                   : "r"(b_base + (ki * L + threadIdx.x * V) * 4));
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
