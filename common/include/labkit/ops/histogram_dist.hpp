// The histogram family's inputs (lab 09): values in [0, bins), bytes (bins = 256) or ints, drawn
// per call (per seed) from one of four distributions, each a different load on the atomics:
//
//   kUniform  every value uniform in [0, bins)           (few collisions: the bandwidth case)
//   kHot      one hot bin, random per call, takes a fraction p uniform in [1/2, 9/10) of the
//             elements; the rest uniform                 (skewed: most atomics hit one address)
//   kSame     every element the same value, random per call
//                                                        (the worst contention: one address)
//   kRuns     runs of 2^s equal values, s uniform in [3, 12] per call, each run's value uniform
//                                                        (neighbouring lanes collide: a warp's
//                                                        32 loads are one or two values)
//
// Every count depends on the whole input: a kernel that samples, skips a tail or stops early
// is off in some bin, and the hot bin and the constant move with every call (a stale or
// guessed histogram is wrong). The same numbers on the CPU (the judge's reference counts them
// without storing them) and the GPU (the worker's and the benchmark's draws): integer
// arithmetic only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "labkit/protocol.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::histogram {

// The generated sources (labkit/source.hpp; common/src/ops/histogram_source.cu): bytes and
// int32 values drawn by histogram_value below (lo: the distribution, hi: the bin count).
inline constexpr protocol::Source kSourceU8{8};
inline constexpr protocol::Source kSourceI32{9};

enum Dist : uint32_t { kUniform = 0, kHot = 1, kSame = 2, kRuns = 3, kDistCount = 4 };

// "uniform", "hot", "same", "runs": the cases files' `dist` and the test names.
inline const char* dist_name(uint32_t d) {
  switch (d) {
    case kUniform: return "uniform";
    case kHot: return "hot";
    case kSame: return "same";
    case kRuns: return "runs";
  }
  return "?";
}
inline uint32_t dist_of(const std::string& name) {
  for (uint32_t d = 0; d < kDistCount; ++d) {
    if (name == dist_name(d)) return d;
  }
  throw std::invalid_argument("dist '" + name + "' is none of uniform, hot, same, runs");
}

struct HistogramDist {
  uint64_t seed = 0;
  uint32_t kind = kUniform;
  uint32_t bins = 256;
  uint32_t special = 0;    // kHot: the hot bin; kSame: the value
  uint32_t hot_p24 = 0;    // kHot: p * 2^24
  uint32_t run_shift = 0;  // kRuns: s
};

// A value in [0, bins) from 64 random bits (the high 32 bits times bins: no modulo bias worth
// the name at bins <= 2^20, and no division).
LABKIT_HD inline uint32_t scale_to_bins(uint64_t bits, uint32_t bins) {
  return static_cast<uint32_t>(((bits >> 32) * static_cast<uint64_t>(bins)) >> 32);
}

LABKIT_HD inline HistogramDist make_histogram_dist(uint64_t seed, uint32_t kind, uint32_t bins) {
  HistogramDist d;
  d.seed = seed;
  d.kind = kind;
  d.bins = bins;
  d.special = scale_to_bins(hash64(seed, ~uint64_t{0}), bins);
  // p in [1/2, 9/10): 2^23 + [0, 0.4 * 2^24)
  d.hot_p24 = (1u << 23) + static_cast<uint32_t>((hash64(seed, ~uint64_t{1}) >> 40) * 2 / 5);
  d.run_shift = 3 + static_cast<uint32_t>(hash64(seed, ~uint64_t{2}) % 10);
  return d;
}

LABKIT_HD inline uint32_t histogram_value(const HistogramDist& d, uint64_t i) {
  switch (d.kind) {
    case kSame: return d.special;
    case kRuns: return scale_to_bins(hash64(d.seed ^ 0x52554E53ull, i >> d.run_shift), d.bins);
    case kHot: {
      const uint64_t h = hash64(d.seed, i);
      if (static_cast<uint32_t>(h & 0xFFFFFFu) < d.hot_p24) return d.special;
      return scale_to_bins(h, d.bins);
    }
    default: return scale_to_bins(hash64(d.seed, i), d.bins);
  }
}

// The bin counts the lab allows: bytes have 256; ints any count in [1, kMaxBins].
inline constexpr uint32_t kByteBins = 256;
inline constexpr uint32_t kMaxBins = uint32_t{1} << 20;

}  // namespace labkit::ops::histogram
