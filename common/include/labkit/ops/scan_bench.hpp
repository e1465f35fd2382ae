// The scan op family, benchmark side: CUB's DeviceScan::ExclusiveSum on the same fresh inputs as
// every timed student call (n elements: 4n bytes read and 4n written), and the check of every
// call's output against a double (float) or exact 32-bit (int) scan of that call's inputs.
#pragma once

#include <cstddef>
#include <string>

#include "labkit/bench.hpp"
#include "labkit/dtype.hpp"

namespace labkit::ops::scan {

// "scan/<variant>/<f32|i32>/<n>"; `workspace` elements of garbage are handed to the launcher.
bench::Spec benchmark(const std::string& variant, DType dtype, size_t n, size_t workspace);

}  // namespace labkit::ops::scan
