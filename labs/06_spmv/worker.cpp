// Lab 06's worker: the variant table of spmv.h, called through the spmv op family.
#include "labkit/ops/spmv_worker.hpp"
#include "spmv.h"

int main(int argc, char** argv) {
  return labkit::worker::main(argc, argv, labkit::ops::spmv::bind({SPMV_VARIANTS(LABKIT_WORKER_ENTRY)}));
}
