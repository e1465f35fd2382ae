// CHEATING (global constructor): correct kernel, plus startup code with no constructor
// attribute and no C++ initialiser: function pointers placed by hand in the loader's
// sections -- one in ".init_array.00099" (a prioritised entry, run before the unprioritised
// ones; the linker merges it into .init_array) and one in ".ctors" (the legacy list, which
// the linker also folds into .init_array) -- plus one in ".fini_array" for exit time.
// Defence: the policy's constructor rule must look at every section the linker folds into
// .init_array/.fini_array (.init_array*, .ctors*, .fini_array*, .dtors*), not only
// __attribute__((constructor)) or a count of .init_array entries under that exact name.
#include <cstdio>

#include "matmul.h"

namespace {
void early() { std::printf("ran from .init_array.00099\n"); }
void legacy() { std::printf("ran from .ctors\n"); }
void late() { std::printf("ran from .fini_array\n"); }
}  // namespace

__attribute__((used, section(".init_array.00099"))) static void (*const p_early)() = &early;
__attribute__((used, section(".ctors"))) static void (*const p_legacy)() = &legacy;
__attribute__((used, section(".fini_array"))) static void (*const p_late)() = &late;

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
