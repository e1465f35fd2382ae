// CHEATING: remembers the first result per (M, N, K) in a device buffer it allocates itself
// and replays it on later calls with the same shape, even when A and B changed.
// Defence: the policy's import rule (cudaMalloc, cudaFree, cudaMemcpyAsync,
// cudaStreamSynchronize: no allocation, copy or synchronisation in a launcher). Behind it, the
// repeat test (fresh inputs every call) and the per-call check of the benchmark. The same
// replay without any import is replay_pointer_cache.
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

static float* g_cache = nullptr;
static size_t g_cache_bytes = 0;
static int g_M = -1, g_N = -1, g_K = -1;

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  size_t bytes = (size_t)M * N * sizeof(float);
  if (g_cache && M == g_M && N == g_N && K == g_K) {
    cudaMemcpyAsync(C, g_cache, bytes, cudaMemcpyDeviceToDevice, stream);
    return;
  }
  dim3 block(32, 8);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  if (bytes > g_cache_bytes) {
    cudaStreamSynchronize(stream);
    cudaFree(g_cache);
    if (cudaMalloc(&g_cache, bytes) != cudaSuccess) { g_cache = nullptr; g_cache_bytes = 0; return; }
    g_cache_bytes = bytes;
  }
  cudaMemcpyAsync(g_cache, C, bytes, cudaMemcpyDeviceToDevice, stream);
  g_M = M; g_N = N; g_K = K;
}
