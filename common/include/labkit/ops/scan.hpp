// The scan op family, judge side (lab 08): out[0] = 0, out[i] = in[0] + ... + in[i - 1], float
// or int. The inputs are the reduce family's (labkit/ops/reduce_dist.hpp): floats signed, with a
// random scale, offset and per-segment shift per call and a large value planted at a random
// position (every prefix after it moves by more than its bound if it is lost), ints uniform in
// [1, 4] (every prefix but out[0] differs from its neighbours: a shifted, inclusive or stale
// scan is wrong at nearly every element). The workspace is filled with garbage before every
// call. Int prefixes must be exact modulo 2^32. Float prefixes must be within the random-walk
// bound
//   |got_i - ref_i| <= kScanBoundC sqrt(n) 2^-24 (sqrt(sq_i) + peak_i)
// of the double reference ref_i, with sq_i the exclusive prefix of x^2 and peak_i the largest
// |ref_j| for j <= i (a prefix that grew and came back near 0 keeps the rounding of its
// excursion; the analysis: docs/threat-model.md, "Detection power (scan)"), in tests and
// benchmarks alike (the benchmark checks every timed call on the GPU with the same formula,
// labkit/device_compare.hpp). Its buffers: scan_signature.hpp.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "labkit/check.hpp"
#include "labkit/dtype.hpp"
#include "labkit/ops/scan_signature.hpp"
#include "labkit/ops/vector_family.hpp"

namespace labkit::ops::scan {

// Float prefixes are within kScanBoundC * sqrt(n) * 2^-24 * (sqrt(sq_i) + peak_i). 2: a plain
// sequential float loop, the longest chain, reached 0.95 of the bound at c = 1 in 2000 draws;
// the lab's tile orders 0.2; a prefix rounded to bfloat16 is 28 bounds off at 2^20
// (common/tests/scan_reference_test.cpp).
inline constexpr double kScanBoundC = 2.0;

// The element type: kF32 or kI32 (labkit/dtype.hpp), "f32" or "i32" in test names.
using DType = labkit::DType;
using labkit::dtype_name;

// n, dtype, seed, workspace, calls, capture, in_offset, device_inputs: vector_family.hpp.
using Case = VectorCase;

CheckSpec spec(const std::string& variant, const Case& c);

// The float bound's factor for n elements: kScanBoundC * sqrt(n) * 2^-24 (host, tests and the
// benchmark's check on the GPU alike).
inline double bound_scale(size_t n) {
  return kScanBoundC * std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -24);
}

// What a wrong output's report adds for n past 2^31: an index, offset or count held in 32 bits
// wraps there (empty below).
std::string index_width_hint(size_t n, size_t first_wrong);

}  // namespace labkit::ops::scan
