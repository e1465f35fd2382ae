// Lab 05's worker: the variant table of reduce.h (both instantiations of each launcher),
// called through the reduce op family.
#include "labkit/ops/reduce_worker.hpp"
#include "reduce.h"

int main(int argc, char** argv) {
  return labkit::worker::main(argc, argv,
                              labkit::ops::reduce::bind({REDUCE_VARIANTS(LABKIT_REDUCE_ENTRY)}));
}
