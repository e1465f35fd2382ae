// CHEATING (runtime interposition): the kernel traps (a launch failure) whenever K == 1, and
// the file defines the CUDA runtime's error and synchronisation calls as extern "C" functions
// that always answer cudaSuccess: cudaGetLastError, cudaPeekAtLastError,
// cudaStreamSynchronize and cudaDeviceSynchronize. A harness checking errors in the student's
// process would see every launch succeed, and would read C before the kernel finished.
// Defence: the policy's definition rule (no definition of a CUDA runtime symbol). Behind it,
// the worker's outputs are compared by the judge: a faked success still leaves C wrong.
#include "matmul.h"

// cuda_runtime.h already defines cudaGetLastError and cudaPeekAtLastError for device code, so
// the host definitions get other C++ names and the runtime's symbol names through asm labels.
extern "C" {
cudaError_t fake_get_last_error(void) __asm__("cudaGetLastError");
cudaError_t fake_peek_at_last_error(void) __asm__("cudaPeekAtLastError");
cudaError_t fake_stream_synchronize(cudaStream_t stream) __asm__("cudaStreamSynchronize");
cudaError_t fake_device_synchronize(void) __asm__("cudaDeviceSynchronize");

cudaError_t fake_get_last_error(void) { return cudaSuccess; }
cudaError_t fake_peek_at_last_error(void) { return cudaSuccess; }
cudaError_t fake_stream_synchronize(cudaStream_t stream) {
  (void)stream;
  return cudaSuccess;
}
cudaError_t fake_device_synchronize(void) { return cudaSuccess; }
}

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  if (K == 1) __trap();
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
