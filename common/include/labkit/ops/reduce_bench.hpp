// The reduce op family, benchmark side: CUB's DeviceReduce::Sum on the same fresh inputs as
// every timed student call (float, n elements: 4n bytes read), and the check of each call's
// sum against it.
#pragma once

#include <cstddef>
#include <string>

#include "labkit/bench.hpp"

namespace labkit::ops::reduce {

// "reduce/<variant>/<n>"; `workspace` elements of garbage are handed to the launcher.
bench::Spec benchmark(const std::string& variant, size_t n, size_t workspace);

}  // namespace labkit::ops::reduce
