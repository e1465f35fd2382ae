// 16-bit floats as bits (lab 10's inputs): IEEE half (FP16) and bfloat16 (BF16), rounded to
// nearest even from float and widened back exactly, the same on the CPU and the GPU (no
// cuda_fp16.h: the judge is plain C++). The generated sources kUniformF16 and kUniformBF16 are
// labkit::uniform_f32 rounded by these.
#pragma once

#include <cstdint>
#include <cstring>

#include "labkit/random.hpp"

namespace labkit {

LABKIT_HD inline uint32_t f32_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
LABKIT_HD inline float bits_f32(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// float -> IEEE half, round to nearest even; overflow to infinity, subnormals kept, NaN quiet.
LABKIT_HD inline uint16_t f32_to_f16_bits(float f) {
  uint32_t x = f32_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  uint32_t h;
  if (x >= 0x47800000u) {  // |f| >= 65536, infinity or NaN (65520 and up round to infinity below)
    h = x > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (x < 0x38800000u) {  // below 2^-14: a subnormal half (or zero)
    // Adding 0.5 aligns the value's bits at 2^-24 in the low mantissa bits, rounding to nearest
    // even in the float addition itself.
    h = f32_bits(bits_f32(x) + 0.5f) - 0x3f000000u;
  } else {
    const uint32_t odd = (x >> 13) & 1u;
    x += 0xc8000fffu + odd;  // rebias the exponent (-112 << 23) and round (0xfff + odd)
    h = x >> 13;
    if (h > 0x7c00u) h = 0x7c00u;
  }
  return static_cast<uint16_t>(h | sign);
}

// IEEE half -> float, exactly.
LABKIT_HD inline float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = static_cast<float>(mant) * 0x1.0p-24f;
    return bits_f32(f32_bits(v) | sign);
  }
  if (exp == 31) return bits_f32(sign | 0x7f800000u | (mant << 13));
  return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

// float -> bfloat16, round to nearest even; NaN stays NaN.
LABKIT_HD inline uint16_t f32_to_bf16_bits(float f) {
  const uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

LABKIT_HD inline float bf16_bits_to_f32(uint16_t h) { return bits_f32(uint32_t{h} << 16); }

LABKIT_HD inline uint16_t to_16_bits(float f, bool bf16) {
  return bf16 ? f32_to_bf16_bits(f) : f32_to_f16_bits(f);
}
LABKIT_HD inline float from_16_bits(uint16_t h, bool bf16) {
  return bf16 ? bf16_bits_to_f32(h) : f16_bits_to_f32(h);
}

// Element i of the kUniformF16 (bf16 = false) or kUniformBF16 source.
LABKIT_HD inline uint16_t uniform_16(uint64_t seed, uint64_t i, float lo, float hi, bool bf16) {
  return to_16_bits(uniform_f32(seed, i, lo, hi), bf16);
}

}  // namespace labkit
