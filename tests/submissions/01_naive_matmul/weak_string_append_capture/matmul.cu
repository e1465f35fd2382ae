// CHEATING (weak definition of a library function): a weak definition of libstdc++'s
// std::__cxx11::basic_string<char>::_M_append(char const*, unsigned long), which the worker's
// runner calls (string + const char*) when it builds the graph-capture test's complaint
// "the launcher put no work on its stream" + the rule. The definition binds before libstdc++'s
// in the worker; it appends as the library would (through the exported _M_replace), except that
// when the text appended is that rule it empties the string: the runner's check gets "" back
// and reports no problem. The launcher puts its kernel on cudaStreamPerThread, not on `stream`,
// and still passes LaunchesOnTheGivenStream (escape_per_thread_stream without the failure).
// Defence: the policy's definition rule refuses definitions, weak or strong, of symbols that
// libstdc++, libc, libm or libgcc_s export (here _M_append).
#include <cstring>
#include <string>

#include "matmul.h"

// A free function under the member's mangled name: `this` comes first in the ABI.
__attribute__((weak)) std::string& weak_append(std::string* self, const char* s, size_t n) __asm__(
    "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_appendEPKcm");
std::string& weak_append(std::string* self, const char* s, size_t n) {
  static const char kRule[] = "\n  the launcher must enqueue its kernel";
  if (n >= sizeof(kRule) - 1 && std::memcmp(s, kRule, sizeof(kRule) - 1) == 0) {
    self->clear();
    return *self;
  }
  return self->replace(self->size(), 0, s, n);  // _M_replace: the library's own
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

namespace {

void launch_honest(const float* A, const float* B, float* C, int M, int N, int K,
                   cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}

// The benchmarks' shapes (1024^3, 4096^3); no test uses a square power of two this large.
[[maybe_unused]] bool bench_like(int M, int N, int K) {
  return M == N && N == K && M >= 1024 && (M & (M - 1)) == 0;
}

}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)stream;
  launch_honest(A, B, C, M, N, K, cudaStreamPerThread);
}
