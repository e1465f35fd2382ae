// UNUSUAL (runtime interposition): correct kernel, and the file replaces the global operator
// new and operator delete (allowed by the C++ standard) with versions that count calls and
// forward to malloc/free. In the worker this reaches only the worker's own host allocations,
// and nothing a verdict rests on lives there (the judge holds inputs, reference, comparison and
// clock), so it is no threat; but it replaces the allocator of the whole process, which no
// launcher needs.
// Defence: the policy's definition rule (no definition of the global operator new/delete or of
// any C, C++ runtime or CUDA name). Expected: rejected, at no cost to an honest submission.
#include <cstdlib>
#include <new>

#include "matmul.h"

#if !defined(__CUDA_ARCH__)
namespace {
unsigned long g_allocations = 0;
}  // namespace
#endif

// nvcc treats the global operator new and delete as __host__ __device__: the device side
// keeps the device heap, the host side counts.
void* operator new(std::size_t size) {
#if defined(__CUDA_ARCH__)
  return std::malloc(size);
#else
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
#endif
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

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
