// Lab 08's worker: the variant table of scan.h (both instantiations of each launcher), called
// as the scan op family's signature says.
#include "labkit/ops/scan_signature.hpp"
#include "labkit/ops/typed_worker.hpp"
#include "scan.h"

int main(int argc, char** argv) {
  return labkit::worker::main(argc, argv,
                              labkit::ops::typed::bind<labkit::ops::scan::Sig>(
                                  {SCAN_VARIANTS(LABKIT_TYPED_ENTRY)}));
}
