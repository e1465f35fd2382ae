// WRONG for every lab: device code that reads a clock, a timer or a performance counter. A
// kernel that times its own shared-memory accesses can tell the race check's replay under
// compute-sanitizer (tens of times slower) from graded calls and be racy only where nothing
// checks; one that reads %globaltimer can tell ncu's replays. Each kernel below must fail the
// device rule in every lab, named with the register it reads; the back-off kernel, which
// sleeps (__nanosleep) without reading a clock, passes.
#include "matmul.h"

__global__ void clock_kernel(long long* out) { out[threadIdx.x] = clock(); }

__global__ void clock64_kernel(long long* out) { out[threadIdx.x] = clock64(); }

__global__ void clock_hi_kernel(unsigned* out) {
  unsigned v;
  asm volatile("mov.u32 %0, %%clock_hi;" : "=r"(v));
  out[threadIdx.x] = v;
}

__global__ void globaltimer_kernel(unsigned long long* out) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  out[threadIdx.x] = t;
}

__global__ void pm_kernel(unsigned* out) {
  unsigned v;
  asm volatile("mov.u32 %0, %%pm0;" : "=r"(v));
  out[threadIdx.x] = v;
}

__global__ void backoff_kernel(volatile int* flag) {
  while (*flag == 0) __nanosleep(64);
}
