// Cheat: looks up cudaMemcpy at run time to get round the import list (rule: import, dlsym).
#include <dlfcn.h>

#include "matmul.h"

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
  void* copy = dlsym(RTLD_DEFAULT, "cudaMemcpy");
  (void)copy;
}
