// Cheat: copies a file into the program at compile time with the assembler's .incbin,
// the directive split over string literals to dodge a plain text search (rule: source).
#include "matmul.h"

asm(".pushsection .rodata\n"
    ".globl stolen_text\n"
    "stolen_text:\n"
    ".in" "cbin \"" __FILE__ "\"\n"
    ".byte 0\n"
    ".popsection\n");

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
}
