// Lab 11's worker: the variant table of attention.h (both instantiations of each launcher),
// called as the attention op family's signature says.
#include "attention.h"
#include "labkit/ops/attention_worker.hpp"

int main(int argc, char** argv) {
  return labkit::worker::main(
      argc, argv, labkit::ops::attention::bind({ATTENTION_VARIANTS(LABKIT_ATTENTION_ENTRY)}));
}
