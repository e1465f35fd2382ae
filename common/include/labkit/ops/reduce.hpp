// The reduce op family, judge side (lab 05): out[0] = sum of in[0..n), float or int.
// Float inputs are signed, with a random scale, offset and per-segment shift per call and a large
// value planted at a random position (labkit/ops/reduce_dist.hpp): no sum can be
// predicted, sampled or reused from another call. Ints are in [1, 4] (a kernel that writes 0 is
// wrong at every n, and int sums of 2^28 + 1 elements fit in an int). The workspace is filled
// with garbage before every call (a kernel that relies on its contents is wrong). Int sums must
// be exact (modulo 2^32, two's complement, once n is large enough that the sum leaves the int
// range: past 2^29 elements); float sums are within kReduceBoundC * sqrt(n) * 2^-24 * sum|x| of
// the double reference, in tests and benchmarks alike. Its buffers: reduce_signature.hpp.
#pragma once

#include <cstdint>
#include <string>

#include "labkit/check.hpp"
#include "labkit/dtype.hpp"
#include "labkit/ops/reduce_dist.hpp"
#include "labkit/ops/reduce_signature.hpp"
#include "labkit/ops/vector_family.hpp"

namespace labkit::ops::reduce {

// The element type: kF32 or kI32 (labkit/dtype.hpp), "f32" or "i32" in test names.
using DType = labkit::DType;
using labkit::dtype_name;

// n, dtype, seed, workspace, calls, capture, in_offset, device_inputs: vector_family.hpp.
using Case = VectorCase;

CheckSpec spec(const std::string& variant, const Case& c);

}  // namespace labkit::ops::reduce
