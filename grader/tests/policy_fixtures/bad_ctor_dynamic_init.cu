// Cheat: a namespace-scope variable with a dynamic initialiser runs code before main
// (rule: constructor).
#include "matmul.h"

__attribute__((noinline)) int probe() {
  static volatile int seen = 0;
  return seen + 1;
}

static int x = probe();

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
  (void)x;
}
