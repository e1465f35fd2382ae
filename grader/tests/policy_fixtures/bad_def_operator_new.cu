// Cheat: replaces the global operator new, which the harness uses too (rule: definition).
#include <cstdlib>
#include <new>

#include "matmul.h"

void* operator new(std::size_t n) {
  if (void* p = std::malloc(n ? n : 1)) return p;
  std::abort();
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
}
