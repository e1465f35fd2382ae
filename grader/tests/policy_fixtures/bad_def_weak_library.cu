// CHEAT: replaces libstdc++'s own steady_clock::now() in the worker with a weak definition
// (a weak definition in std:: used to pass as "a template instantiation"), and a weak
// non-COMDAT definition of a harness-looking std:: helper. Must fail the definition rule
// (library export; weak definition outside a COMDAT group).
#include <chrono>

#include "matmul.h"

namespace std::chrono::_V2 {
__attribute__((weak)) steady_clock::time_point steady_clock::now() noexcept {
  return steady_clock::time_point(steady_clock::duration(0));
}
}  // namespace std::chrono::_V2

namespace std {
__attribute__((weak)) int labs_private_helper(int x) { return x + 1; }
}  // namespace std

__global__ void k(float* C) { C[threadIdx.x] = 0.0f; }

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)M; (void)N; (void)K;
  k<<<1, 1, 0, stream>>>(C);
}
