// CANARY (local memory kept between calls): a correct kernel, then a probe whose threads read
// a slot of their own local memory for a mark and leave this call's there; a thread that finds
// an earlier call's mark adds 1 to C[0] (on an H200, a first version that could not tell its
// own call's mark found it in 778240 of its 2^20 threads: all but the first wave, 132 SMs x
// 2048, which the scrub had left clean in every call). The context's local memory (the threads' stacks) outlives kernels and module
// copies, so without a scrub every call after the first in a worker finds the marks of the one
// before and C[0] comes out wrong. The defence that keeps it right: the executor clears the
// local memory the student's kernels can address before every call, timed ones too, off the
// clock (scrub_local_memory), which also leaves the race check's replay nothing to tell it by
// (05_reduction/local_memory_replay_detect).
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
  }
}

// This call's mark: its first input's bits (fresh every call), so that the threads of a later
// wave of this launch, which run on warp slots an earlier wave of it used, know its own mark.
__global__ void __launch_bounds__(256) probe_kernel(const float* A, float* C, int idx) {
  unsigned long long slot[4];
  // The slot's address escapes into inline PTX: the array lives in local memory, and the
  // uninitialised read is neither seen nor dropped by the compiler.
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_local(&slot[idx & 3]));
  const unsigned long long mark = 0x5EED5EED00000000ull | __float_as_uint(A[0]);
  unsigned long long seen = 0;
  asm volatile("ld.local.u64 %0, [%1];" : "=l"(seen) : "r"(addr) : "memory");
  if ((seen >> 32) == 0x5EED5EEDull && seen != mark) atomicAdd(C, 1.0f);  // an earlier call's
  asm volatile("st.local.u64 [%0], %1;" ::"r"(addr), "l"(mark) : "memory");
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  probe_kernel<<<4096, 256, 0, stream>>>(A, C, 0);
}
