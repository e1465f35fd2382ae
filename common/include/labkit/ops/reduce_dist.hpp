// The reduce family's float inputs: unpredictable without reading every element.
//
// Per call (per seed), x[i] = scale * ((offset + shift[i >> seg_shift]) + u[i]), where
//   scale  = 2^e, e uniform in [-6, 6]         (a power of two: multiplying by it is exact)
//   offset = +-[0.25, 1.0), random sign        (the sum is about n * offset * scale: a stale
//                                               sum from another call is off by a multiple of n)
//   shift  = one value in [-0.5, 0.5) per segment of 2^seg_shift elements, seg_shift uniform in
//            [10, 16]                          (the mean of a prefix or a sample says little
//                                               about the rest)
//   u[i]   in [-0.5, 0.5)
// and kPlanted (one) element at a random position is replaced by +-M * [1, 2) * scale, M a
// power of two at least 8 times the bound of the ordinary elements' sum: losing it, by
// skipping, sampling, stopping early or summing a stale copy, or counting it twice or 64 times
// (a doubled half, a scaled sample) moves the sum by more than 4 times the whole error bound (kReduceBoundC below; common/tests/reduce_dist_test.cpp proves
// it). The same numbers on the CPU (tests) and the GPU (benchmarks): the arithmetic below is
// adds and an exact multiply, which no compiler contracts into an FMA.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "labkit/protocol.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::reduce {

// The float inputs as a generated source (labkit/source.hpp; common/src/ops/reduce_source.cu):
// reduce_value below, n = the buffer's count. The scan family draws its floats from it too.
inline constexpr protocol::Source kSourceF32{3};

// Float sums are within kReduceBoundC * sqrt(n) * 2^-24 * sum|x| of the double reference.
inline constexpr double kReduceBoundC = 4.0;
// One planted element: with several, the error of a shortcut that halves or samples is a signed
// sum of them, which can cancel; with one it is that element, or (kept and scaled) a multiple.
inline constexpr int kPlanted = 1;

// The int inputs: uniform in [kIntLo, kIntHi] (positive: a sum or prefix is never 0, so a kernel
// that writes 0 is wrong; 2^28 + 1 of them sum below 2^31). The scan family uses them too.
inline constexpr int32_t kIntLo = 1, kIntHi = 4;
// What the workspace holds before every call of a correctness test: garbage, floats in
// [100, 1000), ints in [100000, 1000000].
inline constexpr float kGarbageF32Lo = 100.0f, kGarbageF32Hi = 1000.0f;
inline constexpr int32_t kGarbageI32Lo = 100000, kGarbageI32Hi = 1000000;

struct ReduceDist {
  uint64_t seed = 0;
  uint64_t n = 0;
  float scale = 1;
  float offset = 0.5f;
  uint32_t seg_shift = 12;
  float magnitude = 0;            // M * scale
  uint64_t pos[kPlanted] = {};    // where the planted values are (repeats allowed)
  float planted[kPlanted] = {};   // their values
};

LABKIT_HD inline float reduce_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// Element i of the stream `d` describes.
LABKIT_HD inline float reduce_value(const ReduceDist& d, uint64_t i) {
  for (int p = 0; p < kPlanted; ++p) {
    if (d.pos[p] == i) return d.planted[p];
  }
  const float shift = uniform_f32(d.seed ^ 0x5E65E65E65E65E6Bull, i >> d.seg_shift, -0.5f, 0.5f);
  const float u = uniform_f32(d.seed, i, -0.5f, 0.5f);
  return reduce_add(reduce_add(d.offset, shift), u) * d.scale;
}

// A float sum's bound, in tests and benchmarks alike: kReduceBoundC * sqrt(n) * 2^-24 * sum|x|.
inline double sum_bound(uint64_t n, double abs_sum) {
  return kReduceBoundC * std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -24) * abs_sum;
}

// The bound of the ordinary elements' sum, before planting: kReduceBoundC * sqrt(n) * 2^-24 *
// sum|x|, with |x| < 2 * scale.
inline double reduce_ordinary_bound(uint64_t n, double scale) {
  return sum_bound(n, 2.0 * static_cast<double>(n) * scale);
}

// The distribution of one call's n elements, from its seed (host only: the GPU gets it by value).
inline ReduceDist make_reduce_dist(uint64_t seed, uint64_t n) {
  ReduceDist d;
  d.seed = seed;
  d.n = n;
  const uint64_t h = hash64(seed ^ 0xD157D157D157D157ull, 0);
  d.scale = std::ldexp(1.0f, static_cast<int>(h % 13) - 6);
  const float mag = uniform_f32(seed ^ 0x0FF5E70FF5E70FF5ull, 1, 0.25f, 1.0f);
  d.offset = (h >> 32) & 1 ? mag : -mag;
  d.seg_shift = 10 + static_cast<uint32_t>((h >> 33) % 7);
  // M: a power of two, at least 8 times the ordinary bound (and 2^8, for tiny n).
  const double need = 8.0 * reduce_ordinary_bound(n, 1.0);
  const int e = std::max(8, static_cast<int>(std::ceil(std::log2(std::max(need, 1.0)))));
  d.magnitude = std::ldexp(1.0f, e) * d.scale;
  for (int p = 0; p < kPlanted; ++p) {
    const uint64_t r = hash64(seed ^ 0x91A47ED091A47ED0ull, static_cast<uint64_t>(p));
    d.pos[p] = n == 0 ? 0 : r % n;
    const float factor = uniform_f32(seed ^ 0x91A47ED091A47ED1ull, static_cast<uint64_t>(p), 1.0f, 2.0f);
    d.planted[p] = ((r >> 63) ? -1.0f : 1.0f) * factor * d.magnitude;
  }
  return d;
}

}  // namespace labkit::ops::reduce
