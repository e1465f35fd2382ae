// Cheat: starts a process that outlives the test (rule: import, fork).
#include <unistd.h>

#include "matmul.h"

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
  if (fork() == 0) _exit(0);
}
