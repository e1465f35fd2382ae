// WRONG for every lab: device code that allocates from the device heap (malloc and free, new
// and delete, __nv_aligned_device_malloc in a kernel), which outlives a call. Must fail the
// device rule's calls check (cuobjdump -elf: the undefined functions malloc, free and
// __cuda_syscall_aligned_malloc); printf and assert, also calls into the driver, pass.
#include <cassert>
#include <cstdio>

#include "matmul.h"

__global__ void heap_kernel(float* C, int n) {
  float* scratch = static_cast<float*>(malloc(4 * sizeof(float)));
  if (scratch == nullptr) return;
  scratch[0] = static_cast<float>(n);
  C[0] = scratch[0];
  free(scratch);
}

__global__ void new_delete_kernel(float* C) {
  float* v = new float[2];
  v[1] = C[0];
  C[1] = v[1];
  delete[] v;
}

__global__ void aligned_kernel(float* C) {
  void* p = __nv_aligned_device_malloc(64, 32);
  C[2] = p != nullptr ? 1.0f : 0.0f;
  free(p);
}

__global__ void printf_assert_kernel(const float* A, int n) {
  assert(n >= 0);
  if (threadIdx.x == 0 && blockIdx.x == 0) printf("A[0] = %f\n", A[0]);
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)B; (void)N; (void)K;
  heap_kernel<<<1, 1, 0, stream>>>(C, M);
  new_delete_kernel<<<1, 1, 0, stream>>>(C);
  aligned_kernel<<<1, 1, 0, stream>>>(C);
  printf_assert_kernel<<<1, 1, 0, stream>>>(A, M);
}
