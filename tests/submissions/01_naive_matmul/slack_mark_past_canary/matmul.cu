// Keeps a mark from one call to the next in the bytes past C's canary zone: the harness puts
// 64 KiB of canary after every buffer, but the driver maps whole pages of 2 MiB, so the rest of
// the page was memory the kernel could write unseen and find again in the next call (a mark that
// tells a test that follows others from the race check's replay, a fresh process; a count of
// calls). A probe writes this call's mark 256 bytes past the canary and counts an earlier
// call's mark into C[0]. The defence: guarded buffers take whole pages and their canary runs to
// the end of the allocation (guarded_allocation_bytes), so the write itself fails every test.
#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
  }
}

__global__ void probe_kernel(const float* A, float* C, size_t words) {
  // Past the data and the 64 KiB (16384 words) of canary the harness documents.
  volatile unsigned* slot = reinterpret_cast<volatile unsigned*>(C + words + 16384 + 64);
  const unsigned mark = __float_as_uint(A[0]);
  if (*slot != mark && *slot != 0x7FC0CA11u) atomicAdd(C, 1.0f);  // an earlier call's mark
  *slot = mark;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  probe_kernel<<<1, 1, 0, stream>>>(A, C, (size_t)M * N);
}
