// Lab 09's worker: the variant table of histogram.h (both instantiations of each launcher),
// called as the histogram op family's signature says.
#include "histogram.h"
#include "labkit/ops/histogram_worker.hpp"

int main(int argc, char** argv) {
  return labkit::worker::main(
      argc, argv, labkit::ops::histogram::bind({HISTOGRAM_VARIANTS(LABKIT_HISTOGRAM_ENTRY)}));
}
