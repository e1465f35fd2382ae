// CORRECT (unusual): a grid-stride kernel launched with cudaLaunchCooperativeKernel, its grid
// sized from the occupancy API (cudaOccupancyMaxActiveBlocksPerMultiprocessor, the SM count
// from cudaDeviceGetAttribute) so that every block is resident at once. Nothing here needs a
// system call the worker's sandbox refuses: it must keep full correctness.
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  const long long total = (long long)M * N;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int row = static_cast<int>(i / N), col = static_cast<int>(i % N);
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[i] = acc;
  }
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  constexpr int kThreads = 256;
  int device = 0, sms = 1, per_sm = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, matmul_v1_naive_kernel, kThreads, 0);
  const long long needed = ((long long)M * N + kThreads - 1) / kThreads;
  const long long resident = (long long)sms * (per_sm > 0 ? per_sm : 1);
  const dim3 grid(static_cast<unsigned>(needed < resident ? needed : resident));
  const dim3 block(kThreads);
  void* args[] = {&A, &B, &C, &M, &N, &K};
  cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(matmul_v1_naive_kernel), grid, block,
                              args, 0, stream);
}
