// Lab 08's worker: the variant table of scan.h (both instantiations of each launcher), called
// through the scan op family.
#include "labkit/ops/scan_worker.hpp"
#include "scan.h"

int main(int argc, char** argv) {
  return labkit::worker::main(argc, argv,
                              labkit::ops::scan::bind({SCAN_VARIANTS(LABKIT_SCAN_ENTRY)}));
}
