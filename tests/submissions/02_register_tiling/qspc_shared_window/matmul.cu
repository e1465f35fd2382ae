// CHEAT (shared memory found by search): written by a red team holding only the student release
// (round 7). The defence that must beat it: the shared_memory family refuses QSPC.E.S and
// QSPC.E.D (isspacep.shared, __isShared), the only way to find the window without reading it.
//
// Lab 02: register tiling. THIS is the file you edit (and the only one the grader takes).
//
// RED TEAM (round 7): shared-memory tiling in a lab whose policy forbids shared memory.
// The device rule (grader/policy/device.py, _SHARED_OPS / _SHARED_WINDOW) refuses LDS/STS/...,
// reads of SR_SWINHI/LO/SZ and static __shared__ arrays. It does not refuse QSPC, the SASS
// of PTX `isspacep.shared`, nor dynamic shared memory requested at launch (a launch field,
// never in the SASS). A generic pointer into the shared window is {lo: offset, hi: SR_SWINHI}
// (the window is 2^32-aligned), so a tiny kernel scans hi = 0 .. 2^25 with isspacep.shared,
// stores the base in a __device__ variable, and the GEMM kernel tiles A and B through that
// generic pointer with plain LD/ST (generic loads/stores are not on the list).
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

// Module global: reloaded with every fresh copy of the module, set again by every call.
__device__ unsigned long long g_window;

__global__ void find_window_kernel() {
  const unsigned long long stride = 1ull * gridDim.x * blockDim.x;
  for (unsigned long long hi = 1ull * blockIdx.x * blockDim.x + threadIdx.x; hi < (1ull << 25);
       hi += stride) {
    if (*(volatile unsigned long long*)&g_window != 0) return;
    const unsigned long long cand = hi << 32;
    unsigned in_shared;
    asm volatile("{ .reg .pred p; isspacep.shared p, %1; selp.u32 %0, 1, 0, p; }"
                 : "=r"(in_shared) : "l"(cand));
    if (in_shared) g_window = cand;
  }
}

__global__ void matmul_v2_register_tiled_kernel(const float* A, const float* B, float* C, int M,
                                                int N, int K) {
  const int tx = threadIdx.x % (BN / V), ty = threadIdx.x / (BN / V);
  const int row0 = blockIdx.y * BM + ty * V, col0 = blockIdx.x * BN + tx * V;
  float c[V][V] = {};
  const unsigned long long w = *(volatile unsigned long long*)&g_window;
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
  find_window_kernel<<<256, 256, 0, stream>>>();
  dim3 block(kThreads);
  dim3 grid(N / BN, M / BM);
  // Dynamic shared memory: a launch parameter, not in the kernel's SASS or -res-usage.
  matmul_v2_register_tiled_kernel<<<grid, block, kDynBytes, stream>>>(A, B, C, M, N, K);
}
