// Lab 02's worker: the variant table of matmul.h, called through the matmul op family.
#include "labkit/ops/matmul_worker.hpp"
#include "matmul.h"

int main(int argc, char** argv) {
  return labkit::worker::main(argc, argv,
                              labkit::ops::matmul::bind({MATMUL_VARIANTS(LABKIT_WORKER_ENTRY)}));
}
