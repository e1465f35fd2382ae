// CHEAT: a raw `syscall` instruction in a section declared "a" (allocated, not executable):
// GNU ld's default script places .stub (like .text.* and .gnu.linkonce.t.*) into .text, so it
// lands in executable memory all the same (the assembler keeps "a" for .stub; it would add "x"
// to a .text.* name itself). Must fail the syscall rule: sections the linker puts into code
// are disassembled too.
#include "matmul.h"

asm(".pushsection .stub,\"a\",@progbits\n"
    "hidden_gate:\n"
    "  mov $39, %eax\n"
    "  syscall\n"
    "  ret\n"
    ".popsection\n");

__global__ void k(float* C) { C[threadIdx.x] = 0.0f; }

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)M; (void)N; (void)K;
  k<<<1, 1, 0, stream>>>(C);
}
