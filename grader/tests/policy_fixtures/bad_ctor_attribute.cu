// Cheat: runs code before main, before the worker drops its privileges (rule: constructor).
#include "matmul.h"

static volatile int g_ready = 0;   // volatile: the store cannot be optimised away

__attribute__((constructor)) static void before_main() { g_ready = 42; }

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
}
