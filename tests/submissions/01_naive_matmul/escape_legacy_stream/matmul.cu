// CHEATING (timing escape): correct kernel, launched on the legacy default stream through its
// explicit handle cudaStreamLegacy (no import) instead of the stream it is given; the same
// escape as ignores_stream, written on purpose. The legacy stream is not ordered with a
// non-blocking stream, so events on such a stream miss the kernel.
// Defence: the graph-capture test LaunchesOnTheGivenStream finds no work on the stream; with
// correctness not full, performance is never measured.
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
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, cudaStreamLegacy>>>(A, B, C, M, N, K);
}
