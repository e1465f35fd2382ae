// The histogram op family, judge side (lab 09): bins[b] = how many of in[0..n) equal b. `in`
// holds bytes (256 bins) or ints in [0, bins) for a bin count given at run time (1 to 2^20), drawn
// by the worker on the GPU from one of four distributions (labkit/ops/histogram_dist.hpp:
// uniform, one hot bin, all one value, runs); `bins` holds fresh random garbage before every
// call, tests and timed calls alike (the launcher zeroes it; no known value to fold in). Every count must be exact: the judge counts the same draw on its own CPU cores,
// without storing it. Its buffers: histogram_signature.hpp.
//
// Tests as data (labkit/cases.hpp), the keys of a row:
//   dtype     "u8" | "i32"                                   in the name as u8, i32  (required)
//   dist      "uniform" | "hot" | "same" | "runs"            in the name as is (default uniform)
//   bins      the bin count: i32 only (required there), u8 has 256   in the name as b<B>
//   n         elements                                       in the name as n<N>     (required)
//   offset    `in` this many bytes past a 16-byte boundary (4, 8 or 12)   in the name as off<O>
//   calls     calls on the same buffers, fresh inputs each (default 1)
//   capture   record the launcher under stream capture and replay it (default false)
//   race      compute-sanitizer racecheck instead of the plain check (default false)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "labkit/check.hpp"
#include "labkit/compare.hpp"
#include "labkit/dtype.hpp"
#include "labkit/ops/histogram_dist.hpp"
#include "labkit/ops/histogram_signature.hpp"

namespace labkit::cases {
struct Suite;
}

namespace labkit::ops::histogram {

struct Case {
  size_t n = 1;
  DType dtype = DType::kU8;
  uint32_t bins = kByteBins;
  uint32_t dist = kUniform;
  uint64_t seed = 1;
  int calls = 1;            // > 1: same buffers, fresh inputs each call
  bool capture = false;     // record the launcher under stream capture
  uint32_t in_offset = 0;   // bytes past a 256-byte aligned address (a multiple of 4, < 16)
};

// "v2_shared_privatized (u8, runs) on n=1025 [seed 42]"
std::string describe(const std::string& variant, const Case& c);

// The seed the worker draws call 0's `in` from (call c: protocol::source_seed(seed, c)), and
// the garbage `bins` holds before call 0 (uniform ints in [kGarbageLo, kGarbageHi]).
uint64_t in_seed(const Case& c);
uint64_t bins_seed(const Case& c);
inline constexpr int32_t kGarbageLo = INT32_MIN, kGarbageHi = INT32_MAX;

// The exact counts of `n` values drawn from `d`, over the CPU's cores (none stored).
std::vector<int64_t> count_draw(const HistogramDist& d, size_t n);

CheckSpec spec(const std::string& variant, const Case& c);

// The output `bins` as counts: 32-bit unsigned words (the tests and the benchmark read it alike;
// the poison or garbage left in a bin is told apart by `unwritten`).
Observed observe_counts(const Bytes& bins);

// Registers `suites` (tests of the keys above) for `variants`; throws std::invalid_argument
// naming the cases file and line for a row without dtype or n, a value its key cannot take, or
// a key the family does not know; then it registers none.
void register_suites(const std::vector<cases::Suite>& suites,
                     const std::vector<std::string>& variants);

// The same for the lab's own suites (labkit::cases::lab_suites(), generated into its test
// program); returns true, for a static initializer in the lab's tests/cases.cpp.
bool register_cases(const std::vector<std::string>& variants);

}  // namespace labkit::ops::histogram
