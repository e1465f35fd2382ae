// CHEATING (runtime interposition): correct kernel, but the file defines the CUDA runtime's
// cudaEventElapsedTime as extern "C": every event timing in the process goes through it, and it
// reports 1000x less than the driver measured (via cuEventElapsedTime, the driver API). A
// harness that timed with events in the student's process would record a 1000x speed-up.
// Defence: the policy's definition rule (the student object may not define a symbol of the
// CUDA runtime, the C library or the C++ runtime). Behind it, the judge checks the worker's
// event and host times against its own clock.
#include <cuda.h>

#include "matmul.h"

extern "C" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  float real = 0.0f;
  const CUresult r = cuEventElapsedTime(&real, reinterpret_cast<CUevent>(start),
                                        reinterpret_cast<CUevent>(end));
  if (r != CUDA_SUCCESS) return cudaErrorInvalidResourceHandle;
  *ms = real / 1000.0f;
  return cudaSuccess;
}

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
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
