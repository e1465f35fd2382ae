// Lab 01: naive matmul. THIS is the file you edit (and the only one the grader takes).
//
// C[M x N] = A[M x K] * B[K x N], row-major float32. One thread computes one C element.
//
// CHEATS THE LESSON (red team round 31): an uncoalesced kernel padded, inside itself, with
// coalesced loads that are never used, to lift its own share of each sector used above the
// lesson's old 50% bound. The lesson now counts the sectors the loads move: the padding adds.
#include "matmul.h"

// One thread per output element, but threadIdx.x walks ROWS (uncoalesced: the 32 lanes of a
// warp read 32 different rows of A, one 4-byte word per 32-byte sector, and all read the same
// word of B). Beside the real loads, each k step streams a small window of B with fully
// coalesced float4 loads (L1-resident, so cheap) whose sum is never used: the kernel's own
// average bytes-per-sector rises above the lesson's 50% bound.
__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;   // lanes on rows: uncoalesced
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  // A window of B in float4s: a power of two <= K*N/4, at most 2048 float4s (32 KiB).
  // B may start at any 4-byte offset (tests with offset buffers): the window starts at B's
  // first 16-byte boundary and stays inside B.
  const unsigned skip = static_cast<unsigned>(((16u - (reinterpret_cast<size_t>(B) & 15u)) & 15u) / 4u);
  const long long total4 = (static_cast<long long>(K) * N - skip) / 4;
  unsigned window = 0;
  if (total4 >= 128) {
    window = 128;
    while (window < 2048 && static_cast<long long>(window) * 2 <= total4) window *= 2;
  }
  const float4* B4 = reinterpret_cast<const float4*>(B + skip);
  const unsigned lane = threadIdx.x & 31u;
  float acc = 0.0f;
  float pad = 0.0f;
  for (int k = 0; k < K; ++k) {
    acc += A[static_cast<size_t>(row) * K + k] * B[static_cast<size_t>(k) * N + col];
    if (window != 0) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const unsigned idx = (static_cast<unsigned>(k) * 128u + j * 32u + lane) & (window - 1);
        const float4 v = B4[idx];
        pad += v.x + v.y + v.z + v.w;
      }
    }
  }
  // Never true for a sum of finite floats (a NaN with this payload is never produced), but the
  // compiler cannot know: the padding loads stay.
  if (__float_as_uint(pad) == 0x7fc0dea1u) acc = -acc;
  C[static_cast<size_t>(row) * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(32, 8);
  dim3 grid((M + block.x - 1) / block.x, (N + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
