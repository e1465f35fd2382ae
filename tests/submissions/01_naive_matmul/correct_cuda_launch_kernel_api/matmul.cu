// CORRECT, unusual: launches through the runtime API, cudaLaunchKernel(func, grid, block, args,
// shared, stream), instead of the <<<>>> syntax (which nvcc itself lowers to an internal launch
// call). Same kernel, same stream. The policy must allow the documented launch call.
// Expected: full marks.
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  void* args[] = {&A, &B, &C, &M, &N, &K};
  cudaLaunchKernel(reinterpret_cast<const void*>(&matmul_v1_naive_kernel), grid, block, args, 0,
                   stream);
}
