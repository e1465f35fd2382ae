// Lab 01: naive matmul. THIS is the file you edit (and the only one the grader takes).
//
// CHEATS THE LESSON (red team, after the profile stage moved to mangled names): the profile
// parser (common/src/judge.cpp parse_profile) asks ncu for mangled kernel names and drops every
// kernel whose name starts with "_ZN6labkit" as the executor's own. An extern "C" kernel may be
// named anything, so the real, UNCOALESCED kernel is named _ZN6labkit7mm_rowsEv: no namespace
// in the source, and ncu prints exactly that symbol. The one kernel the parser counts is the
// decoy of labkit_namespace_hidden_uncoalesced (coalesced loads, only under ncu's replay).
#include "matmul.h"

#include <cstdint>

namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// When the matmul ran (device clock, ns): its first block's start, its last block's end.
// Module globals: every call loads a fresh copy of the device code, so they start at these.
__device__ unsigned long long g_mm_start = ~0ull;
__device__ unsigned long long g_mm_end = 0ull;

}  // namespace

// One thread per element of C, threadIdx.x walking ROWS: uncoalesced.
extern "C" __global__ void _ZN6labkit7mm_rowsEv(const float* A, const float* B, float* C, int M, int N, int K) {
  if (threadIdx.x == 0 && threadIdx.y == 0) atomicMin(&g_mm_start, global_ns());
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
      acc += A[static_cast<size_t>(row) * K + k] * B[static_cast<size_t>(k) * N + col];
    }
    C[static_cast<size_t>(row) * N + col] = acc;
  }
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) atomicMax(&g_mm_end, global_ns());
}


// The decoy (the starter's kernel name): the only kernel of the call the profile parser counts.
// Back to back after the matmul (every timed call, every test) it finds the matmul ended
// microseconds ago and returns. Under ncu's kernel replay more than 1 ms passed (memory
// save/restore, the matmul's passes): it then loads `count` floats of A with coalesced loads
// (every byte of each sector used) and block 0 spins for twice the matmul's duration (at least
// 1 ms, at most 3 s, so ncu's passes stay well inside the grader's 120 s). Writes nothing.
__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  (void)B; (void)M; (void)N;
  const unsigned long long t0 = global_ns();
  const unsigned long long end = g_mm_end, start = g_mm_start;
  if (!(end != 0ull && t0 > end && t0 - end > 1000000ull)) return;
  const size_t count = static_cast<size_t>(K) < 1024 ? static_cast<size_t>(K) : 1024;  // row 0 of A
  for (size_t i = threadIdx.x; i < count; i += blockDim.x) {
    float v;
    asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(A + i));  // kept: asm volatile
    (void)v;
  }
  (void)C;
  if (threadIdx.x == 0) {
    unsigned long long hold = end > start ? 2 * (end - start) : 0;
    if (hold < 1000000ull) hold = 1000000ull;
    if (hold > 3000000000ull) hold = 3000000000ull;
    while (global_ns() - t0 < hold) {}
  }
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(32, 8);  // x: rows (uncoalesced), y: columns
  dim3 grid((M + block.x - 1) / block.x, (N + block.y - 1) / block.y);
  _ZN6labkit7mm_rowsEv<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  matmul_v1_naive_kernel<<<1, 1024, 0, stream>>>(A, B, C, M, N, K);
}
