// CASE lab 05 / race_replay_detect
//
// ATTACK: keep the race-check points ("races", 10 points: *ReduceHiddenRace*) while every
// normal test and benchmark runs a RACY kernel (the warp-synchronous shared-memory tail, no
// __syncwarp). The kernel takes the race-free tail only when it believes it is being replayed
// under compute-sanitizer racecheck. Three independent signals, OR-ed (a false positive costs
// nothing: the safe tail is right too):
//  1. PLANNER STATE. The launcher runs in the planner, a process that lives as long as its
//     executor and keeps the student's static variables. check_races() (common/src/check.cpp)
//     first runs the call in the judge's long-lived shared worker (check(spec): the racy path
//     must give the right sum there, and does), then sanitize() (common/src/judge.cpp) replays
//     it in a FRESH `executor --replay`, which forks a FRESH planner: the replay's plans are
//     always the first few this process ever makes. "first kWarmup plans of the process ->
//     safe" is deterministic. (The real runtime never told a launcher this; the planner does.)
//  2. POINTER LAYOUT. In --replay the runner sets g_guard_bytes = 0 (common/src/worker.cpp,
//     replay()): buffers are exact-size allocations, so small ones sit next to each other.
//     With canaries (every test and benchmark) any two data pointers are >= 128 KiB apart
//     (64 KiB after one buffer + 64 KiB before the next). The planner is handed the pointers.
//  3. (not in this case: race_sanitizer_by_device_clock) DEVICE TIMING. racecheck instruments shared-memory accesses: 32 dependent shared
//     accesses by one thread take >> 4000 cycles instrumented, a few hundred otherwise.
// Bonus: on a suspected replay the planner also prints a forged "RACECHECK SUMMARY: 0 hazards"
// line: its stdout is the executor's, i.e. the sanitizer log that sanitize() searches
// (see race_forged_summary for why that matters on its own).
//
// EXPECTS TO KEEP: the 10 race points (and all correctness points) with a racy kernel.
// IF THE GRADER IS CORRECT: the race tests fail (racecheck reports the tail's hazards).
// IF THE ATTACK WORKS: race tests pass. CONTROL: set kForceRacy = true (mode 0 everywhere):
// the race tests must then fail, proving the racy tail is a real, reported race.
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

constexpr bool kForceRacy = false;  // the control
constexpr unsigned kWarmup = 2;     // the first plans of a planner process take the safe path
unsigned g_plans = 0;               // lives as long as the planner process

bool near(const void* a, const void* b) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return (x > y ? x - y : y - x) < (uintptr_t{128} << 10);
}

template <typename T>
int choose_mode(const T* in, const T* out, const T* workspace) {
  if (kForceRacy) return 0;
  const bool fresh = ++g_plans <= kWarmup;
  const bool unguarded = near(in, out) || near(in, workspace) || near(out, workspace);
  if (fresh || unguarded) {
    std::printf("RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n");
    return 1;
  }
  return 0;  // racy: this case tries only what the host code can tell
}

}  // namespace

template <typename T>
void reduce_v1_interleaved(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_all(in, out, n, workspace, stream, choose_mode(in, out, workspace));
}
template <typename T>
void reduce_v2_strided(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_all(in, out, n, workspace, stream, choose_mode(in, out, workspace));
}
template <typename T>
void reduce_v3_sequential(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_all(in, out, n, workspace, stream, choose_mode(in, out, workspace));
}
template <typename T>
void reduce_v4_optimized(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_all(in, out, n, workspace, stream, choose_mode(in, out, workspace));
}

#define INSTANTIATE(T)                                                                     \
  template void reduce_v1_interleaved<T>(const T*, T*, size_t, T*, cudaStream_t);        \
  template void reduce_v2_strided<T>(const T*, T*, size_t, T*, cudaStream_t);            \
  template void reduce_v3_sequential<T>(const T*, T*, size_t, T*, cudaStream_t);         \
  template void reduce_v4_optimized<T>(const T*, T*, size_t, T*, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(int)
