// CHEAT (the race check's replay told by the launch count): written by a red team holding only
// the student release (round 8). The racy kernel (no barrier before a phase's tile is
// overwritten) runs wherever %gridid, the context's count of launched grids, is past what the
// first calls of a fresh process see; the race check's replay is such a first call, so it takes
// the race-free path and the race test passes. The defence that must beat it: the device rule
// refuses any read of the grid's launch id in every lab (c[0x0][0x30] in the SASS), and the two
// other ways to it (constant bank 0 at a register index, the parameters' generic address).
// Below, the red team's file as written (SIGNAL 1: %gridid alone).
//
// Red team (rt8), lab 03: tell the race check's replay (a fresh process under compute-sanitizer)
// from a normal call WITHOUT timing (the known, documented signal) and without the threads'
// stack frames as the executor scrubs them, then run a racy kernel (no WAR barrier at the top of
// each phase: the bug the graded race check exists for) in every call but the replay.
//
// SIGNAL (set below) picks what says "this process has run my kernel before":
//  1  %gridid (SASS: LDC.64 c[0x0][0x30]): the context's temporal grid launch number. The
//     replay's call is the first of a fresh process (only the harness's set-up kernels before
//     it); a worker that has served earlier calls has a larger one. The threshold is calibrated
//     once by the student on any GPU: the harness's launches before a first call are fixed.
//  2  stale shared memory: Executor::prepare scrubs local memory only. Each CTA leaves a marker
//     high in a static shared array (offset ~40 KiB) that no harness kernel in the executor's
//     context touches (none of common/src declares __shared__); a later call's CTA on the same
//     SM slot finds it unless the GPU clears shared memory between kernels of one context. The
//     replay's context is new: no marker.
//  3  the deep end of a large stack frame: a 4 KiB frame (STACK:4096) whose lowest word holds
//     a marker. Where cudaDeviceGetLimit(cudaLimitStackSize), which sizes the scrub, does not
//     include what the driver grew for this kernel's frame, the scrub's 1 KiB frame covers only
//     the top of it and the marker survives to the next call.
//  0  all three must say so (AND).
// Whatever the signal, a wrong answer only picks the race-free path: the file is correct and
// race-free wherever its signal fails; it can only lose the racy path's speed, never a test.
#include "matmul.h"
#include <cstdint>

#ifndef SIGNAL
#define SIGNAL 1
#endif
#ifndef GRIDID_SEEN_BEFORE
#define GRIDID_SEEN_BEFORE 64  // calibrated: above what the first call of a fresh process gets
#endif

namespace {
constexpr int L = 128, S = 8, V = 8;
constexpr int kThreadsX = L / V;
constexpr int kThreads = kThreadsX * kThreadsX;
constexpr uint32_t kMagic = 0x5eed1e55u;
constexpr int kPadWords = 8 * 1024;     // 32 KiB below the marker
constexpr int kFrameWords = 1024;       // 4 KiB stack frame (SIGNAL 3)

__device__ __forceinline__ bool gridid_says_seen() {
  uint64_t gridid;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(gridid));
  return gridid > GRIDID_SEEN_BEFORE;
}
}  // namespace

__global__ void __launch_bounds__(kThreads)
    matmul_v3_smem_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, int M, int N, int K) {
  __shared__ float sA[S][L], sB[S][L];
#if SIGNAL == 0 || SIGNAL == 2
  __shared__ volatile uint32_t sPad[kPadWords + 1];  // only sPad[kPadWords] is ever touched
#endif
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreadsX + tx;
  const int row0 = blockIdx.y * L, col0 = blockIdx.x * L;

  bool seen = true;
#if SIGNAL == 0 || SIGNAL == 1
  seen = seen && gridid_says_seen();
#endif
#if SIGNAL == 0 || SIGNAL == 3
  {
    // A 4 KiB local array in inline PTX (the compiler may not fold a read of it away): its
    // lowest word is read, then marked. SASS: LDL / STL at the bottom of a 4 KiB frame.
    uint32_t old;
    const uint32_t z = static_cast<uint32_t>(M) >> 31;   // 0 (M > 0), unknown to the compiler
    asm volatile("{ .local .align 16 .b8 fr[4096];\n"
                 "  .reg .u32 a;\n"
                 "  mov.u32 a, fr;\n"
                 "  mad.lo.u32 a, %3, 4, a;\n"
                 "  ld.local.u32 %0, [a];\n"
                 "  st.local.u32 [a], %1;\n"
                 "  st.local.u32 [a+4092], %2; }"
                 : "=r"(old) : "r"(kMagic), "r"(0u), "r"(z) : "memory");
    seen = seen && old == kMagic;              // an earlier call's thread on this slot left it
  }
#endif
#if SIGNAL == 0 || SIGNAL == 2
  if (tid == 0) {
    seen = seen && sPad[kPadWords] == kMagic;
    sPad[kPadWords] = kMagic;                  // for the next call on this SM slot
  }
#endif
  // Every thread must have seen it (BAR.RED.AND: no shared flag with several writers, which
  // racecheck would report as a write-after-write hazard even on the race-free path).
  const bool fast = __syncthreads_and(seen) != 0;

  float c[V][V] = {};
  for (int ko = 0; ko < K; ko += S) {
    if (!fast) __syncthreads();  // the WAR barrier: skipped on the fast (racy) path
    for (int idx = tid; idx < L * S; idx += kThreads) {
      const int m = idx / S, s = idx % S;
      sA[s][m] = A[static_cast<size_t>(row0 + m) * K + ko + s];
      const int s2 = idx / L, n = idx % L;
      sB[s2][n] = B[static_cast<size_t>(ko + s2) * N + col0 + n];
    }
    __syncthreads();
#pragma unroll
    for (int ki = 0; ki < S; ++ki) {
      float a[V], b[V];
#pragma unroll
      for (int y = 0; y < V; ++y) a[y] = sA[ki][ty * V + y];
#pragma unroll
      for (int x = 0; x < V; ++x) b[x] = sB[ki][tx * V + x];
#pragma unroll
      for (int y = 0; y < V; ++y)
#pragma unroll
        for (int x = 0; x < V; ++x) c[y][x] = fmaf(a[y], b[x], c[y][x]);
    }
  }
#pragma unroll
  for (int y = 0; y < V; ++y)
#pragma unroll
    for (int x = 0; x < V; ++x)
      C[static_cast<size_t>(row0 + ty * V + y) * N + col0 + tx * V + x] = c[y][x];
}

void matmul_v3_smem_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream) {
  dim3 block(kThreadsX, kThreadsX);
  dim3 grid(N / L, M / L);
  matmul_v3_smem_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
