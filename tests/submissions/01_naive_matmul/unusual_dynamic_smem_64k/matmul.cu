// CORRECT (unusual): more than 48 KB of dynamic shared memory (cudaFuncSetAttribute with
// cudaFuncAttributeMaxDynamicSharedMemorySize), a kernel templated on its tile sizes, a host
// lambda, a function-local static with a dynamic initialiser (thread-safe static
// initialisation: __cxa_guard_acquire/release) and printf from the launcher (first call only).
// Each block of 32 x 8 threads computes an 8 x 32 tile of C, staging a slice of KC = 384
// columns of A (8 x 384) and rows of B (384 x 32) in 60 KB of dynamic shared memory. Nothing
// here needs a system call the worker's sandbox refuses: it must keep full correctness.
#include <cstdio>

#include "matmul.h"

template <int TM, int TN, int KC>
__global__ void tiled_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  extern __shared__ float smem[];
  float* a_s = smem;            // TM x KC
  float* b_s = smem + TM * KC;  // KC x TN
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TM + ty, col = blockIdx.x * TN + tx;
  const int tid = ty * TN + tx, threads = TM * TN;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += KC) {
    for (int e = tid; e < TM * KC; e += threads) {
      const int r = e / KC, k = e % KC;
      const int gr = blockIdx.y * TM + r, gk = k0 + k;
      a_s[e] = (gr < M && gk < K) ? A[(size_t)gr * K + gk] : 0.0f;
    }
    for (int e = tid; e < KC * TN; e += threads) {
      const int k = e / TN, c = e % TN;
      const int gk = k0 + k, gc = blockIdx.x * TN + c;
      b_s[e] = (gk < K && gc < N) ? B[(size_t)gk * N + gc] : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < KC; ++k) acc += a_s[ty * KC + k] * b_s[k * TN + tx];
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

namespace {

template <int TM, int TN, int KC>
struct Config {
  static constexpr size_t smem_bytes() { return sizeof(float) * (TM * KC + KC * TN); }
  static int setup() {
    const int bytes = static_cast<int>(smem_bytes());
    const cudaError_t err = cudaFuncSetAttribute(
        tiled_kernel<TM, TN, KC>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    std::printf("v1: %d bytes of dynamic shared memory per block (%s)\n", bytes,
                cudaGetErrorString(err));
    return bytes;
  }
};

}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  using Tile = Config<8, 32, 384>;
  static const int smem = Tile::setup();  // once, thread-safe
  auto blocks = [](int n, int tile) { return static_cast<unsigned>((n + tile - 1) / tile); };
  const dim3 block(32, 8);
  const dim3 grid(blocks(N, 32), blocks(M, 8));
  tiled_kernel<8, 32, 384><<<grid, block, smem, stream>>>(A, B, C, M, N, K);
}
