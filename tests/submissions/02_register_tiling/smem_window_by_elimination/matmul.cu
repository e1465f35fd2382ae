// CHEAT (the shared window found by elimination): written by a red team holding only the
// student release (round 8). isspacep.global and .local (QSPC.E.G, QSPC.E.L) were allowed where
// shared memory is refused; an address that is in no other space is in the shared window, and
// the 1 KiB every block reserves on sm_90 is then reached with plain LD/ST, with no dynamic
// shared memory asked for. The defence that must beat it: the shared_memory family refuses
// every QSPC. Below, the red team's file as written.
//
// Red team (rt8), lab 02: shared memory without any instruction the SASS rule names.
//
// The SASS rule refuses LDS/STS/..., S2R of SR_SWINHI/LO/SZ and QSPC.E.S / QSPC.E.D
// (isspacep.shared[::cluster]). It does not refuse QSPC.E.G (isspacep.global) or QSPC.E.L
// (isspacep.local). An address that is neither global nor local (nor const, nor param) is in the
// shared window, so a warp can find the window's base (SR_SWINHI << 32 on sm_90: cvta.shared
// compiles to SWINHI:offset, and mapa puts the cluster rank in bits 24..31) by testing 4 GiB-aligned
// candidates with the allowed queries, then read and write shared memory with plain generic LD/ST.
// The launch asks for 0 bytes of dynamic shared memory and the kernel declares no __shared__, so
// the executor's --no-shared-memory check passes too; what every CTA still owns on sm_90 is the
// system-reserved shared memory at offsets [%reserved_smem_offset_begin (0), %reserved_smem_offset_end)
// (1 KiB, cudaDevAttrReservedSharedMemoryPerBlock). This kernel stages a 64 x 4 slice of A there
// per step (the block's 16 x 16 threads share it), so each A value is loaded from global memory
// once per block instead of 16 times. Without a window (none found) it falls back to the plain
// register-tiled loop, so it is correct either way.
#include "matmul.h"
#include <cstdint>

namespace {
constexpr int V = 4;
constexpr int KC = 4;  // k-slice staged in the window: 64 rows x 4 = 256 floats = 1 KiB

__device__ __forceinline__ bool not_global_local(uint64_t p) {
  unsigned r;
  asm volatile(
      "{ .reg .pred g, l, c, q, x;\n"
      "  isspacep.global g, %1;\n"
      "  isspacep.local l, %1;\n"
      "  isspacep.const c, %1;\n"
      "  isspacep.param q, %1;\n"
      "  or.pred x, g, l;\n"
      "  or.pred x, x, c;\n"
      "  or.pred x, x, q;\n"
      "  selp.u32 %0, 0, 1, x; }"
      : "=r"(r) : "l"(p));
  return r != 0;
}

// The shared window's base, found by each warp on its own (no communication needed):
// 0 when none is found.
__device__ uint64_t find_shared_window() {
  const unsigned lane = threadIdx.x & 31;
  // Start at the local window (c[0x0][0x24]: cvta.local of a local variable) and walk outward,
  // then the rest of a 49-bit address space.
  uint64_t lwin;
  asm volatile("{ .local .u32 x; cvta.local.u64 %0, x; }" : "=l"(lwin));
  const int64_t lhi = static_cast<int64_t>(lwin >> 32);
  for (int64_t step = 0; step < (int64_t{1} << 17); step += 32) {
    const int64_t d = step + lane;
    const int64_t hi = (d & 1) ? lhi + (d + 1) / 2 : lhi - d / 2;
    bool hit = false;
    if (hi > 0 && hi < (int64_t{1} << 17)) hit = not_global_local(static_cast<uint64_t>(hi) << 32);
    const unsigned m = __ballot_sync(0xffffffffu, hit);
    if (m != 0) {
      const int src = __ffs(m) - 1;
      return static_cast<uint64_t>(__shfl_sync(0xffffffffu, static_cast<long long>(hi), src)) << 32;
    }
  }
  return 0;
}

__device__ __forceinline__ unsigned reserved_end() {
  unsigned e;
  asm volatile("mov.u32 %0, %%reserved_smem_offset_end;" : "=r"(e));
  return e;
}
}  // namespace

__global__ void matmul_v2_register_tiled_kernel(const float* A, const float* B, float* C, int M,
                                                int N, int K) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * blockDim.x + tx;
  const int col0 = (blockIdx.x * blockDim.x + tx) * V;
  const int row0 = (blockIdx.y * blockDim.y + ty) * V;
  const int block_row0 = blockIdx.y * 64;
  float c[V][V];
#pragma unroll
  for (int i = 0; i < V; ++i)
#pragma unroll
    for (int j = 0; j < V; ++j) c[i][j] = 0.f;

  // Every warp of the block finds the same base (it is per process); a block either uses the
  // window in all its warps or in none.
  const uint64_t base = find_shared_window();
  const bool use = base != 0 && reserved_end() >= KC * 64 * sizeof(float);
  float* win = reinterpret_cast<float*>(base);  // generic pointer: LD.E / ST.E
  int k0 = 0;
  if (__syncthreads_and(use)) {
    for (; k0 + KC <= K; k0 += KC) {
      // 256 threads stage A(block_row0 + r, k0 + s), r < 64, s < KC: win[s * 64 + r]
      const int r = tid / KC, s = tid % KC;
      win[s * 64 + r] = A[static_cast<size_t>(block_row0 + r) * K + k0 + s];
      __syncthreads();
#pragma unroll
      for (int s2 = 0; s2 < KC; ++s2) {
        float a[V], b[V];
#pragma unroll
        for (int i = 0; i < V; ++i) a[i] = win[s2 * 64 + ty * V + i];
#pragma unroll
        for (int j = 0; j < V; ++j) b[j] = B[static_cast<size_t>(k0 + s2) * N + col0 + j];
#pragma unroll
        for (int i = 0; i < V; ++i)
#pragma unroll
          for (int j = 0; j < V; ++j) c[i][j] = fmaf(a[i], b[j], c[i][j]);
      }
      __syncthreads();
    }
  }
  for (int k = k0; k < K; ++k) {  // the tail, or everything without a window
    float a[V], b[V];
#pragma unroll
    for (int i = 0; i < V; ++i) a[i] = A[static_cast<size_t>(row0 + i) * K + k];
#pragma unroll
    for (int j = 0; j < V; ++j) b[j] = B[static_cast<size_t>(k) * N + col0 + j];
#pragma unroll
    for (int i = 0; i < V; ++i)
#pragma unroll
      for (int j = 0; j < V; ++j) c[i][j] = fmaf(a[i], b[j], c[i][j]);
  }
#pragma unroll
  for (int i = 0; i < V; ++i)
#pragma unroll
    for (int j = 0; j < V; ++j) C[static_cast<size_t>(row0 + i) * N + col0 + j] = c[i][j];
}

void matmul_v2_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                              cudaStream_t stream) {
  dim3 block(64 / V, 64 / V);
  dim3 grid(N / 64, M / 64);
  matmul_v2_register_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
