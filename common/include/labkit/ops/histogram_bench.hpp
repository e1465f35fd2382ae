// The histogram op family, benchmark side: CUB's DeviceHistogram::HistogramEven on the same fresh
// inputs as every timed student call (n bytes or ints, uniform over the bins: n * elem bytes
// read), and the exact check of every call's counts against CUB's counts of those inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "labkit/bench.hpp"
#include "labkit/dtype.hpp"

namespace labkit::ops::histogram {

// "histogram/<variant>/<u8|i32>/<bins>/<n>"; `dist` is one of histogram_dist.hpp's (kUniform
// where the grade reads the ratio).
bench::Spec benchmark(const std::string& variant, DType dtype, uint32_t bins, size_t n,
                      uint32_t dist = 0);

}  // namespace labkit::ops::histogram
