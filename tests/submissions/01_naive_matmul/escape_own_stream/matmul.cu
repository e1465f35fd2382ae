// CHEATING (timing escape): correct kernel, launched on a non-blocking stream the launcher
// creates itself (once) instead of the stream it is given. Events recorded on the caller's
// stream do not see the kernel, so event timing reads near zero.
// Defence: the policy's import rule (cudaStreamCreateWithFlags: no stream, event or memory
// management in a launcher). Behind it, the graph-capture test finds no work on the stream,
// and the benchmark's host clock runs to a device-wide synchronise.
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
  (void)stream;
  static cudaStream_t own = nullptr;
  if (own == nullptr) cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, own>>>(A, B, C, M, N, K);
}
