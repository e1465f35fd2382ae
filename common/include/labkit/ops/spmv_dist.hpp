// The spmv family's x: uniform in [kXLo, kXHi) (spmv.hpp), but for one column per call, at a
// random position, that holds +-2^20. Every row holding that column has one term far larger than
// its bound; a row summed in part (half of it doubled, a sample scaled up) loses that term or
// counts it twice, and a row whose columns are assumed rather than read pairs it with the wrong
// value: each is off by far more than the bound, where the ordinary terms' errors (unbiased,
// growing like sqrt(len), as the bound does) could hide. One column, not several: the errors of
// several could cancel. The same numbers on the CPU (tests) and the GPU (benchmarks).
#pragma once

#include <cstdint>

#include "labkit/protocol.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::spmv {

// The generated sources (labkit/source.hpp; common/src/ops/spmv_source.cu): x (spmv_x_value
// below: uniform in [lo, hi) but for one planted column), and an int32 row_ptr of count - 1 rows
// sharing hi entries evenly, out[i] = floor(i * hi / (count - 1)) (no seed).
inline constexpr protocol::Source kSourceX{4};
inline constexpr protocol::Source kSourceRowPtrEven{5};

// 2^20: times a value of typical size, hundreds of times a dense row's bound; larger would widen
// the bound itself (it grows with sum |a x|) until a few percent of a row could go missing.
inline constexpr float kXPlanted = 1048576.0f;

struct SpmvX {
  uint64_t seed = 0;
  uint64_t count = 0;   // cols
  uint64_t pos = 0;     // the planted column
  float planted = 0;    // +-kXPlanted
  float lo = 0, hi = 1;
};

LABKIT_HD inline float spmv_x_value(const SpmvX& d, uint64_t j) {
  return j == d.pos ? d.planted : uniform_f32(d.seed, j, d.lo, d.hi);
}

inline SpmvX make_spmv_x(uint64_t seed, uint64_t cols, float lo, float hi) {
  SpmvX d;
  d.seed = seed;
  d.count = cols;
  const uint64_t h = hash64(seed ^ 0x9A17ED9A17ED9A17ull, 0);
  d.pos = cols == 0 ? 0 : h % cols;
  d.planted = (h >> 63) ? -kXPlanted : kXPlanted;
  d.lo = lo;
  d.hi = hi;
  return d;
}

}  // namespace labkit::ops::spmv
