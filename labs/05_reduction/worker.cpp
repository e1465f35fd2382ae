// Lab 05's worker: the variant table of reduce.h (both instantiations of each launcher),
// called as the reduce op family's signature says.
#include "labkit/ops/reduce_signature.hpp"
#include "labkit/ops/typed_worker.hpp"
#include "reduce.h"

int main(int argc, char** argv) {
  return labkit::worker::main(argc, argv,
                              labkit::ops::typed::bind<labkit::ops::reduce::Sig>(
                                  {REDUCE_VARIANTS(LABKIT_TYPED_ENTRY)}));
}
