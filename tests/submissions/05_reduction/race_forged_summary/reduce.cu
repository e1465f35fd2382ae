// CASE lab 05 / race_forged_summary
//
// ATTACK: the racy kernel runs EVERYWHERE, the race replay included (no detection at all); the
// launcher's process forges the sanitizer's verdict line instead.
// sanitize() (common/src/judge.cpp, ~lines 950-990) starts `compute-sanitizer ... worker
// --replay request --planner planner` with stdout AND stderr on one memfd log, and calls the run
// clean when  exit status == 0  &&  the log contains "RACECHECK SUMMARY: 0 hazards"  (or
// "ERROR SUMMARY: 0 errors"). The executor forks the planner (executor.cpp start()) keeping fds
// 1 and 2, so the STUDENT'S launcher writes into that very log; printf is an allowed import.
// The string test is therefore forgeable. What remains is the exit status: compute-sanitizer
// returns --error-exitcode (86) only for hazards it counts as ERRORS. The warp-synchronous
// tail below is an intra-warp hazard, which racecheck reports with WARNING severity (e.g.
// kokkos/kokkos#4855: "WARNING: Race reported ... scalar_intra_warp_reduction"); a
// warnings-only run exits 0 with "RACECHECK SUMMARY: N hazards displayed (0 errors, N warnings)"
// -- which alone the judge correctly treats as not clean (check.hpp: "errors and warnings
// alike"), but our forged line sits in the same log, so `clean` becomes true.
//
// EXPECTS TO KEEP: the 10 race points with a kernel that racecheck reports every time.
// IF THE GRADER IS CORRECT: race tests fail (e.g. it parses the tool's own summary line, counts
// warnings, or keeps the planner's output out of the tool's log).
// IF THE ATTACK WORKS: race tests pass although the replay log shows "Race reported".
// CAVEAT (not verified on a GPU here): if this tool version rates the intra-warp hazard an
// ERROR, the exit status is 86 and this case fails; race_replay_detect does not depend on it.
#include "reduce.h"

#include <cstdint>
#include <cstdio>

namespace {

constexpr unsigned kThreads = 256;
constexpr size_t kPerBlock = kThreads * 8;  // elements one block reduces per level

// RACY when the tail is not safe: the last warp reduces in shared memory "warp-synchronously" (volatile,
// no __syncwarp), the lecture's classic unrolled tail. On today's GPUs it gives the right sum
// (converged warp), but threads of the warp read and write the same shared words with no
// barrier between them: a shared-memory race that racecheck reports if it ever sees it run.
// safe tail: the same sums with warp shuffles (no shared memory in the tail): race free.
template <typename T>
__global__ void reduce_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n, int mode) {
  // mode 0: racy tail; 1: safe tail; 2: racy tail unless this block finds itself instrumented.
  __shared__ T s[kThreads];
  __shared__ int instrumented;
  const unsigned tid = threadIdx.x;
  // (mode 2's device timing is race_sanitizer_by_device_clock's: the device rule refuses clocks)
  if (tid == 0) instrumented = 0;
  const size_t base = static_cast<size_t>(blockIdx.x) * kPerBlock;
  T acc = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const size_t idx = base + static_cast<size_t>(i) * kThreads + tid;
    if (idx < n) acc += in[idx];
  }
  s[tid] = acc;
  __syncthreads();
  const int safe = (mode == 1) || (mode == 2 && instrumented);
  for (unsigned st = kThreads / 2; st > 32; st >>= 1) {
    if (tid < st) s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid < 32) {
    T v;
    if (safe) {
      v = s[tid] + s[tid + 32];
      for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    } else {
      volatile T* w = s;  // warp-synchronous tail: THE RACE
      w[tid] += w[tid + 32];
      w[tid] += w[tid + 16];
      w[tid] += w[tid + 8];
      w[tid] += w[tid + 4];
      w[tid] += w[tid + 2];
      w[tid] += w[tid + 1];
      v = w[0];
    }
    if (tid == 0) out[blockIdx.x] = v;
  }
}

template <typename T>
void reduce_all(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream, int mode) {
  const T* src = in;
  size_t count = n;
  T* dst = workspace;
  while (count > kPerBlock) {
    const size_t blocks = (count + kPerBlock - 1) / kPerBlock;
    reduce_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(src, dst, count, mode);
    src = dst;
    dst += blocks;
    count = blocks;
  }
  reduce_kernel<T><<<1, kThreads, 0, stream>>>(src, out, count, mode);
}

}  // namespace

namespace {

bool g_forged = false;

void forge() {
  if (g_forged) return;
  g_forged = true;
  // Into the executor's stdout: under sanitize() that is the racecheck log; elsewhere a log
  // nobody grades.
  std::printf("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n");
  std::printf("========= ERROR SUMMARY: 0 errors\n");
}

}  // namespace

template <typename T>
void reduce_v1_interleaved(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  forge();
  reduce_all(in, out, n, workspace, stream, 0);
}
template <typename T>
void reduce_v2_strided(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  forge();
  reduce_all(in, out, n, workspace, stream, 0);
}
template <typename T>
void reduce_v3_sequential(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  forge();
  reduce_all(in, out, n, workspace, stream, 0);
}
template <typename T>
void reduce_v4_optimized(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  forge();
  reduce_all(in, out, n, workspace, stream, 0);
}

#define INSTANTIATE(T)                                                                     \
  template void reduce_v1_interleaved<T>(const T*, T*, size_t, T*, cudaStream_t);        \
  template void reduce_v2_strided<T>(const T*, T*, size_t, T*, cudaStream_t);            \
  template void reduce_v3_sequential<T>(const T*, T*, size_t, T*, cudaStream_t);         \
  template void reduce_v4_optimized<T>(const T*, T*, size_t, T*, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(int)
