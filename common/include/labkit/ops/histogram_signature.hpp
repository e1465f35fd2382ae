// The histogram family's signature (lab 09): bins[b] = how many of in[0..n) equal b, for b in
// [0, num_bins); `in` holds bytes (num_bins = 256) or ints in [0, num_bins). The launcher is
// fn(in, bins, n, num_bins, stream), one instantiation per element type. The one declaration of
// its buffers and parameters (labkit/signature.hpp): the worker, the judge and the benchmark
// derive theirs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "labkit/signature.hpp"

namespace labkit::ops::histogram {

struct Sig {
  struct Param {
    enum : int { kN, kDType, kBins, kCount };
  };
  enum Buf : int { kIn, kBins, kCount };
  struct Sizes {
    uint64_t n;     // elements of `in`
    uint64_t bins;  // counts in `bins`
    DType dtype;    // of `in`: kU8 or kI32
  };
  static constexpr BufDecl<Sizes> kBufs[] = {
      {kIn, "in", protocol::Role::kInput, DType::kU8, [](const Sizes& s) { return Dims{s.n}; },
       [](const Sizes& s) { return s.dtype; }},
      // The counts, as unsigned 32-bit words (read as int32: no test's count reaches 2^31).
      {kBins, "bins", protocol::Role::kOutput, DType::kI32,
       [](const Sizes& s) { return Dims{s.bins}; }},
  };

  // The dtype parameter on the wire: 0 bytes, 1 ints.
  static constexpr int64_t kU8Param = 0, kI32Param = 1;
  static std::vector<int64_t> params(size_t n, DType dtype, uint32_t bins) {
    if (dtype != DType::kU8 && dtype != DType::kI32) {
      throw std::invalid_argument("histogram: the element type is u8 or i32");
    }
    return {static_cast<int64_t>(n), dtype == DType::kU8 ? kU8Param : kI32Param,
            static_cast<int64_t>(bins)};
  }
};
static_assert(signature_ok(Sig::kBufs, Sig::kCount),
              "histogram: one row per buffer, in enum order");

}  // namespace labkit::ops::histogram
