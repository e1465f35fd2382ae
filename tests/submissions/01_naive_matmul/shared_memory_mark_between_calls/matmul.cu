// CANARY (shared memory kept between calls): a correct kernel, then a probe whose blocks read a
// slot of their shared memory for a mark and leave this call's there; a block that finds an
// earlier call's mark adds 1 to C[0]. Shared memory outlives kernels (a block gets whatever the
// block before it on that SM left), so without a scrub every call after the first in a worker
// finds the marks of the one before and C[0] comes out wrong; a racy kernel could use the same
// mark to tell a test that follows others from the race check's replay, a fresh process. The
// defence that keeps it right: the executor clears the shared memory every block can address
// (its dynamic window and its reserved part) before every call, timed ones too, off the clock
// (scrub_shared_memory).
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

// This call's mark: its first input's bits (fresh every call), so that a block of a later wave
// of this launch, on an SM an earlier block of it used, knows its own call's mark.
__global__ void __launch_bounds__(256) probe_kernel(const float* A, float* C) {
  __shared__ unsigned long long slots[64];
  // Read and written through inline PTX: the compiler neither sees the uninitialised read nor
  // drops it.
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(&slots[threadIdx.x & 63]));
  const unsigned long long mark = 0x5EED5EED00000000ull | __float_as_uint(A[0]);
  unsigned long long seen = 0;
  asm volatile("ld.shared.u64 %0, [%1];" : "=l"(seen) : "r"(addr) : "memory");
  if ((seen >> 32) == 0x5EED5EEDull && seen != mark) atomicAdd(C, 1.0f);  // an earlier call's
  __syncthreads();
  asm volatile("st.shared.u64 [%0], %1;" ::"r"(addr), "l"(mark) : "memory");
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  probe_kernel<<<4096, 256, 0, stream>>>(A, C);
}
