// Lab 08 benchmark: each version of scan.h, float and int, against CUB's
// DeviceScan::ExclusiveSum on the same GPU, in the same run, fresh inputs every call, every
// call's output checked on the GPU (labkit/bench.hpp). The grader reads the `ratio` counter of
// scan/v3_single_pass/f32/268435456 and scan/v3_single_pass/i32/268435456; the rest is the
// ladder the handout asks you to explain (GBps counts the 8n bytes read and written).
//
//   ./08_scan_bench [--smoke] [--benchmark_filter=REGEX]
// Exit status: 0 all ran and were right, 1 an error, 77 no GPU (skipped).
#include <vector>

#include "labkit/bench.hpp"
#include "labkit/ops/scan_bench.hpp"
#include "labkit/worker.hpp"
#include "scan.h"

int main(int argc, char** argv) {
  return labkit::bench::main(argc, argv, [](bool smoke) {
    std::vector<labkit::bench::Spec> specs;
    const std::vector<size_t> sizes =
        smoke ? std::vector<size_t>{size_t{1} << 16}
              : std::vector<size_t>{size_t{1} << 20, size_t{1} << 24, size_t{1} << 28};
    for (const char* variant : {SCAN_VARIANTS(LABKIT_VARIANT_NAME)}) {
      for (labkit::DType dtype : {labkit::DType::kF32, labkit::DType::kI32}) {
        for (size_t n : sizes) {
          specs.push_back(
              labkit::ops::scan::benchmark(variant, dtype, n, scan_workspace_size(n)));
        }
      }
    }
    return specs;
  });
}
