// CANARY (local memory kept between calls): a correct kernel, then a probe whose threads read
// a slot of their own local memory for a mark and leave it there; a thread that finds the mark
// adds 1 to C[0]. The context's local memory (the threads' stacks) outlives kernels and module
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

constexpr unsigned long long kMark = 0x5EED5EED0BADF00Dull;

// Enough blocks of 256 to pass over every warp slot of every SM of a large GPU several times.
__global__ void __launch_bounds__(256) probe_kernel(float* C, int idx) {
  unsigned long long slot[4];
  // The slot's address escapes into inline PTX: the array lives in local memory, and the
  // uninitialised read is neither seen nor dropped by the compiler.
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_local(&slot[idx & 3]));
  unsigned long long seen = 0;
  asm volatile("ld.local.u64 %0, [%1];" : "=l"(seen) : "r"(addr) : "memory");
  if (seen == kMark) atomicAdd(C, 1.0f);
  asm volatile("st.local.u64 [%0], %1;" ::"r"(addr), "l"(kMark) : "memory");
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  probe_kernel<<<4096, 256, 0, stream>>>(C, 0);
}
