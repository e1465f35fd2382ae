// Lab 10's worker: the variant table of gemm.h (both instantiations of each launcher), called
// through the matmul op family with 16-bit inputs.
#include "gemm.h"
#include "labkit/ops/matmul_worker.hpp"

int main(int argc, char** argv) {
  return labkit::worker::main(argc, argv,
                              labkit::ops::matmul::bind({GEMM_VARIANTS(LABKIT_MATMUL16_ENTRY)}));
}
