// The conv family's inputs (lab 07): unpredictable without reading every element, and drawn so
// that the error bound stays as tight as honest float32 rounding allows.
//
// Per call (per seed), element i of a tensor is scale * ((offset + shift[i / plane]) + u[i]):
//
//            scale            offset              shift (per plane)        u
//   x        2^e, e in [-6,6]  +-[0.25, 1.0)       [-0.5, 0.5) per (image,   [-0.5, 0.5)
//                              (random sign)        input channel): plane
//                                                   = H*W
//   w        2^e, e in [-6,6]  0                   none (zero mean)          [-0.5, 0.5)
//   bias     +-[0.5, 1.5) * scale_x * scale_w (random sign per channel): as large as a term
//
// and kPlanted elements of x and of w, at random positions, are replaced by +-kPlantedMag *
// [1, 2) * scale. Why each part:
// - Scales are powers of two (multiplying by one is exact), fresh per call: another call's
//   output (stale, cached) is off by about a whole output.
// - x's offset and per-plane shift: the mean of one channel or of one image says nothing of
//   another's; a read of the wrong channel or image is off by a whole term per tap.
// - w is zero-mean: the products' running sum then walks (about sqrt(D) terms, D = C_in*K*K)
//   instead of drifting. The bound has a |y| term (conv_bounds in conv.hpp), and it does not
//   see a partial sum that grew and cancelled again: with a per-filter shift in w (a mean per
//   (C_out, C_in), tried) an honest sequential sum reached 0.46 of the bound on the stem layer,
//   ten times its mean; with a mean in both x and w the bound would grow about sqrt(D) times and
//   let TF32 products through (the matmul lesson, docs/threat-model.md).
// - The planted values: one output's sum holds at most one of them per tensor (unless two land
//   in one window), at 2^8 times a typical term. Losing it (a tap skipped, a channel dropped, a
//   sample), or counting it twice (a doubled half), moves that output by about 2^8 terms, tens
//   of thousands of bounds; they also widen the outputs they touch, so they stay few.
// The same numbers on the CPU (tests) and the GPU (benchmarks): the arithmetic below is adds
// and an exact multiply, which no compiler contracts into an FMA.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "labkit/protocol.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::conv {

// The generated sources (labkit/source.hpp; common/src/ops/conv_source.cu): x, its shift's
// segment the buffer's H*W (its last two dims), and w, the segment K*K.
inline constexpr protocol::Source kSourceX{6};
inline constexpr protocol::Source kSourceW{7};

inline constexpr int kPlanted = 2;            // per tensor (x, w); positions may repeat
inline constexpr float kPlantedMag = 256.0f;  // 2^8 times the scale

enum class Tensor : uint32_t { kX = 0, kW = 1 };

struct ConvDist {
  uint64_t seed = 0;
  uint64_t count = 0;
  uint64_t plane = 1;      // elements per shift segment: H*W for x, K*K for w
  float scale = 1;
  float offset = 0;
  float shift_half = 0.5f;  // shift in [-shift_half, shift_half)
  uint64_t pos[kPlanted] = {};
  float planted[kPlanted] = {};
};

LABKIT_HD inline float conv_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// Element i of the tensor `d` describes.
LABKIT_HD inline float conv_value(const ConvDist& d, uint64_t i) {
  for (int p = 0; p < kPlanted; ++p) {
    if (d.pos[p] == i) return d.planted[p];
  }
  const float shift =
      uniform_f32(d.seed ^ 0xC0475A1F7C0475A1ull, i / d.plane, -d.shift_half, d.shift_half);
  const float u = uniform_f32(d.seed, i, -0.5f, 0.5f);
  return conv_add(conv_add(d.offset, shift), u) * d.scale;
}

// The distribution of one call's x (count = N*C_in*H*W, plane = H*W) or w (count =
// C_out*C_in*K*K, plane = K*K), from its seed (host only: the GPU gets it by value).
inline ConvDist make_conv_dist(Tensor t, uint64_t seed, uint64_t count, uint64_t plane) {
  ConvDist d;
  d.seed = seed;
  d.count = count;
  d.plane = plane == 0 ? 1 : plane;
  const uint64_t h = hash64(seed ^ 0xC0DD157C0DD157C0ull, static_cast<uint64_t>(t));
  d.scale = std::ldexp(1.0f, static_cast<int>(h % 13) - 6);
  if (t == Tensor::kX) {
    const float mag = uniform_f32(seed ^ 0x0FF5E7C00FF5E7C0ull, 0, 0.25f, 1.0f);
    d.offset = (h >> 32) & 1 ? mag : -mag;
    d.shift_half = 0.5f;
  } else {
    d.offset = 0.0f;
    d.shift_half = 0.0f;  // no shift (uniform_f32 over [0, 0) is 0)
  }
  for (int p = 0; p < kPlanted; ++p) {
    const uint64_t r = hash64(seed ^ 0x91A47EDC091A47EDull, static_cast<uint64_t>(p));
    d.pos[p] = count == 0 ? 0 : r % count;
    const float factor =
        uniform_f32(seed ^ 0x91A47EDC191A47EDull, static_cast<uint64_t>(p), 1.0f, 2.0f);
    d.planted[p] = ((r >> 63) ? -1.0f : 1.0f) * factor * kPlantedMag * d.scale;
  }
  return d;
}

// The whole tensor, on the CPU.
inline std::vector<float> draw_conv(const ConvDist& d) {
  std::vector<float> v(d.count);
  for (uint64_t i = 0; i < d.count; ++i) v[i] = conv_value(d, i);
  return v;
}

// The bias of one call (tests only; the benchmark has none): +-[0.5, 1.5) * scale_x * scale_w,
// the size of one term, so that a lost or doubled bias is off by a whole term, and a bias much
// larger than the sum cannot widen the bound (its |y| term) over the products' errors.
inline std::vector<float> draw_conv_bias(uint64_t seed, uint64_t c_out, float scale_x,
                                         float scale_w) {
  std::vector<float> b(c_out);
  for (uint64_t i = 0; i < c_out; ++i) {
    const uint64_t r = hash64(seed ^ 0xB1A5B1A5B1A5B1A5ull, i);
    const float mag = uniform_f32(seed, i, 0.5f, 1.5f) * scale_x * scale_w;
    b[i] = (r >> 63) ? -mag : mag;
  }
  return b;
}

}  // namespace labkit::ops::conv
