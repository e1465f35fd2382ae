// Cheat: a raw system call in host inline assembly, which no import list can see
// (rule: syscall).
#include "matmul.h"

static long raw_getpid() {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");
  return ret;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
  (void)raw_getpid();
}
