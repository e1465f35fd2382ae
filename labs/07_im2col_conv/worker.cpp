// Lab 07's workers: the variant table of conv.h called through the conv op family, and the
// GEMM the lab gives the student (conv_sgemm, cuBLAS) made ready before the first request.
// Linked twice (CMakeLists.txt): v1_im2col's worker with cuBLAS, the other with a stub.
#include "conv.h"
#include "labkit/ops/conv_worker.hpp"

int main(int argc, char** argv) {
  labkit::ops::conv::gemm_setup();
  return labkit::worker::main(argc, argv,
                              labkit::ops::conv::bind<ConvShape>({CONV_VARIANTS(LABKIT_WORKER_ENTRY)}));
}
