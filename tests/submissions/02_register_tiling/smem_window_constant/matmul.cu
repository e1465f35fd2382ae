// CHEAT (shared memory through a guessed window): lab 03's shared-memory tiling in lab 02,
// whose policy refuses shared memory, without one instruction that names it: the window's
// generic address is a constant the author learnt on their own GPU, the tiles are plain
// generic LD/ST through it, and the shared memory itself is asked for at launch (the third
// <<<>>> argument, never in the SASS). The defence that must beat it: the executor refuses any
// dynamic shared memory where a lab refuses shared memory (--no-shared-memory). Without it,
// this file would tile through shared memory at lab 03's speed in lab 02.
//
// Lab 02: register tiling. THIS is the file you edit (and the only one the grader takes).
#include "matmul.h"

#include <cstdint>

namespace {

constexpr int V = 4;        // thread tile V x V
constexpr int BM = 64;      // block tile
constexpr int BN = 64;
constexpr int BK = 16;
constexpr int kThreads = (BM / V) * (BN / V);  // 256
constexpr int kReserve = 1024;                 // stay clear of sm_90's reserved 1 KiB, either way
constexpr int kTileBytes = (BK * BM + BK * BN) * 4;
constexpr int kDynBytes = kTileBytes + kReserve;

}  // namespace

// The shared window's generic address, as its author read it on their own GPU: a kernel that
// printed an extern __shared__ array's address got 0x7fa900000400 on every block of an H200
// (CUDA 13), with or without dynamic shared memory; the window starts 1 KiB before it. Written
// as a number, it is a plain 64-bit constant in the SASS.
constexpr unsigned long long kWindow = 0x7fa900000000ull;

__global__ void matmul_v2_register_tiled_kernel(const float* A, const float* B, float* C, int M,
                                                int N, int K) {
  const int tx = threadIdx.x % (BN / V), ty = threadIdx.x / (BN / V);
  const int row0 = blockIdx.y * BM + ty * V, col0 = blockIdx.x * BN + tx * V;
  float c[V][V] = {};
  const unsigned long long w = kWindow;
  if (w != 0) {
    // "shared" tiles through a generic pointer: plain LD.E / ST.E in the SASS.
    float* As = reinterpret_cast<float*>(w + kReserve);  // [BK][BM]
    float* Bs = As + BK * BM;                            // [BK][BN]
    for (int k0 = 0; k0 < K; k0 += BK) {
      for (int i = threadIdx.x; i < BM * BK; i += kThreads) {  // A tile, transposed
        const int r = i / BK, kk = i % BK;
        const int gr = blockIdx.y * BM + r, gk = k0 + kk;
        As[kk * BM + r] = gk < K ? A[(size_t)gr * K + gk] : 0.0f;
      }
      for (int i = threadIdx.x; i < BK * BN; i += kThreads) {
        const int kk = i / BN, cc = i % BN;
        const int gk = k0 + kk;
        Bs[kk * BN + cc] = gk < K ? B[(size_t)gk * N + blockIdx.x * BN + cc] : 0.0f;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        float a[V], b[V];
#pragma unroll
        for (int i = 0; i < V; ++i) a[i] = As[kk * BM + ty * V + i];
#pragma unroll
        for (int j = 0; j < V; ++j) b[j] = Bs[kk * BN + tx * V + j];
#pragma unroll
        for (int i = 0; i < V; ++i)
#pragma unroll
          for (int j = 0; j < V; ++j) c[i][j] += a[i] * b[j];
      }
      __syncthreads();
    }
  } else {
    // The honest register-tiled version (never taken when the window was found).
    for (int k = 0; k < K; ++k) {
      float a[V], b[V];
#pragma unroll
      for (int i = 0; i < V; ++i) a[i] = A[(size_t)(row0 + i) * K + k];
#pragma unroll
      for (int j = 0; j < V; ++j) b[j] = B[(size_t)k * N + col0 + j];
#pragma unroll
      for (int i = 0; i < V; ++i)
#pragma unroll
        for (int j = 0; j < V; ++j) c[i][j] += a[i] * b[j];
    }
  }
#pragma unroll
  for (int i = 0; i < V; ++i)
#pragma unroll
    for (int j = 0; j < V; ++j) C[(size_t)(row0 + i) * N + col0 + j] = c[i][j];
}

void matmul_v2_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                              cudaStream_t stream) {
  dim3 block(kThreads);
  dim3 grid(N / BN, M / BM);
  // Dynamic shared memory: a launch parameter, not in the kernel's SASS or -res-usage.
  matmul_v2_register_tiled_kernel<<<grid, block, kDynBytes, stream>>>(A, B, C, M, N, K);
}
