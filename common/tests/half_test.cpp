// Tests of lab 10's 16-bit inputs (host-only but for the last, which skips without a GPU): the conversions of labkit/half.hpp against CUDA's
// own (cuda_fp16.h, cuda_bf16.h), and the float32-accumulation bound (matmul_walk_bounds with
// kMatmulHalfWalkC) against honest tensor-core orders and sums kept in 16 bits.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/gpu.hpp"
#include "labkit/half.hpp"
#include "labkit/ops/matmul_reference.hpp"
#include "labkit/random.hpp"

namespace labkit {
namespace {

uint16_t cuda_f16(float f) {
  const __half h = __float2half_rn(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
uint16_t cuda_bf16(float f) {
  const __nv_bfloat16 h = __float2bfloat16_rn(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

// Every 16-bit pattern widens exactly and rounds back to itself (NaNs stay NaNs).
TEST(Half, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = f16_bits_to_f32(bits), g = bf16_bits_to_f32(bits);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_bits_to_f32(f32_to_f16_bits(f)))) << h;
    } else {
      EXPECT_EQ(f32_to_f16_bits(f), bits) << "f16 " << h;
      EXPECT_EQ(f, static_cast<float>(__ushort_as_half(bits))) << "f16 widening " << h;
    }
    if (std::isnan(g)) {
      EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(g)))) << h;
    } else {
      EXPECT_EQ(f32_to_bf16_bits(g), bits) << "bf16 " << h;
    }
  }
}

// Rounding to nearest even, ties, subnormals, overflow: the same bits as CUDA's conversions on
// every float from a spread of exponents (each of 2^22 floats: all sign and exponent values,
// random mantissas, and the exact halfway points between neighbouring 16-bit values).
TEST(Half, RoundsLikeCuda) {
  size_t checked = 0;
  for (uint32_t i = 0; i < (1u << 22); ++i) {
    const uint64_t r = hash64(7, i);
    uint32_t x = static_cast<uint32_t>(r);
    if (i % 4 == 1) x = (x & ~0x1fffu) | 0x1000u;  // an f16 tie (mantissa bits below 13: 1000...)
    if (i % 4 == 2) x = (x & ~0xffffu) | 0x8000u;  // a bf16 tie
    float f;
    std::memcpy(&f, &x, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16_bits(f), cuda_f16(f)) << "f16 of " << f << " (bits " << x << ")";
    ASSERT_EQ(f32_to_bf16_bits(f), cuda_bf16(f)) << "bf16 of " << f << " (bits " << x << ")";
    ++checked;
  }
  EXPECT_GT(checked, size_t{4000000});
}

TEST(Half, UniformDrawsAreTheRoundedFloats) {
  for (uint64_t i = 0; i < 1000; ++i) {
    const float f = uniform_f32(3, i, -1.0f, 1.0f);
    EXPECT_EQ(uniform_16(3, i, -1.0f, 1.0f, false), cuda_f16(f));
    EXPECT_EQ(uniform_16(3, i, -1.0f, 1.0f, true), cuda_bf16(f));
  }
}

// ------------------------------------------------------------------ the bound of 16-bit inputs

// float32 toward zero (what tensor cores do to their float32 sums, by the published
// measurements of their arithmetic: products exact, a block of products added without
// rounding, then truncated into the accumulator).
float to_f32_truncated(double v) {
  float f = static_cast<float>(v);  // nearest
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return f;
}

float round_16(float f, bool bf16) { return from_16_bits(to_16_bits(f, bf16), bf16); }

struct HalfOrders {
  std::vector<float> fma, tensor16, tensor4, acc16, acc16_tiles, dropped;
};

HalfOrders half_products(const std::vector<float>& A, const std::vector<float>& B, int M, int N,
                         int K, bool bf16) {
  HalfOrders o;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float fma = 0, acc16 = 0, tiles16 = 0;
      float t16 = 0, t4 = 0;
      for (int k0 = 0; k0 < K; k0 += 16) {
        // Tensor-core style: exact block sums of 16 (and of 4), truncated into float32.
        double block = t16;
        for (int k = k0; k < std::min(K, k0 + 16); ++k) {
          block += static_cast<double>(A[i * K + k]) * B[k * N + j];
        }
        t16 = to_f32_truncated(block);
        for (int k1 = k0; k1 < std::min(K, k0 + 16); k1 += 4) {
          double b4 = t4;
          for (int k = k1; k < std::min(K, k1 + 4); ++k) {
            b4 += static_cast<double>(A[i * K + k]) * B[k * N + j];
          }
          t4 = to_f32_truncated(b4);
        }
        // A sum kept in 16 bits per slice of 16 (an mma with a 16-bit accumulator), and one
        // rounded to 16 bits after every product.
        float tile = 0;
        for (int k = k0; k < std::min(K, k0 + 16); ++k) tile = std::fma(A[i * K + k], B[k * N + j], tile);
        tiles16 = round_16(tiles16 + tile, bf16);
      }
      for (int k = 0; k < K; ++k) {
        fma = std::fma(A[i * K + k], B[k * N + j], fma);
        acc16 = round_16(std::fma(A[i * K + k], B[k * N + j], acc16), bf16);
      }
      o.fma.push_back(fma);
      o.tensor16.push_back(t16);
      o.tensor4.push_back(t4);
      o.acc16.push_back(acc16);
      o.acc16_tiles.push_back(tiles16);
      o.dropped.push_back(fma - A[i * K + K - 1] * B[(K - 1) * N + j]);
    }
  }
  return o;
}

class MatmulHalfBound : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(MatmulHalfBound, FloatSumsInsideSixteenBitSumsOutside) {
  const auto [K, bf16] = GetParam();
  const int M = 16, N = 16;
  std::vector<float> A = random_floats(size_t{16} * K, 31), B = random_floats(size_t{16} * K, 32);
  for (float& a : A) a = round_16(a, bf16);
  for (float& b : B) b = round_16(b, bf16);
  std::vector<double> sq;
  const std::vector<double> ref = matmul_reference(A, B, M, N, K, nullptr, &sq);
  const std::vector<double> bound = matmul_scaled_bounds(ref, sq, matmul_bound_scale(K, bf16 ? DType::kBF16 : DType::kF16));
  const HalfOrders o = half_products(A, B, M, N, K, bf16);
  const std::string what = std::string(bf16 ? "bf16" : "f16") + ", K=" + std::to_string(K);
  for (const auto& [name, got] : {std::pair{"fma", &o.fma},
                                  std::pair{"tensor cores, blocks of 16, truncated", &o.tensor16},
                                  std::pair{"tensor cores, blocks of 4, truncated", &o.tensor4}}) {
    const CompareResult r = compare_matrix(*got, ref, bound, M, N);
    EXPECT_TRUE(r.ok()) << name << ", " << what << ": " << r.report();
    EXPECT_LT(r.worst_ratio, 0.5) << name << ", " << what;
  }
  if (K >= 32) {
    EXPECT_GT(compare_matrix(o.acc16, ref, bound, M, N).wrong, size_t{M * N / 2})
        << "a 16-bit sum, " << what;
    EXPECT_GT(compare_matrix(o.acc16_tiles, ref, bound, M, N).wrong, size_t{M * N / 2})
        << "a 16-bit accumulator of float32 slices, " << what;
  }
  EXPECT_GT(compare_matrix(o.dropped, ref, bound, M, N).wrong, size_t{M * N / 2})
      << "a dropped term, " << what;
}

INSTANTIATE_TEST_SUITE_P(K, MatmulHalfBound,
                         ::testing::Combine(::testing::Values(16, 32, 96, 512, 4096, 8192),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return "K" + std::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_bf16" : "_f16");
                         });

}  // namespace
}  // namespace labkit

namespace labkit {
namespace {

// The GPU draws lab 10's inputs (kUniformF16, kUniformBF16) as the CPU does, widens them exactly
// for the benchmark's double reference, and counts a changed element.
TEST(HalfGpu, DrawsWidensAndCountsLikeTheCpu) {
  LABKIT_REQUIRE_GPU();
  const size_t n = 100003;
  for (const bool bf16 : {false, true}) {
    DeviceBuffer<uint16_t> bits(n);
    DeviceBuffer<double> wide(n);
    fill_source(bits.get(), bf16 ? protocol::Source::kUniformBF16 : protocol::Source::kUniformF16,
                n, 77, -1.0, 1.0, nullptr);
    to_f64_16(bits.get(), bf16, wide.get(), n, true, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<uint16_t> got = bits.download();
    const std::vector<double> squares = wide.download();
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], uniform_16(77, i, -1.0f, 1.0f, bf16)) << (bf16 ? "bf16 " : "f16 ") << i;
      const double v = from_16_bits(got[i], bf16);
      ASSERT_EQ(squares[i], v * v) << i;
    }
    EXPECT_EQ(count_not_source(bits.get(),
                               bf16 ? protocol::Source::kUniformBF16 : protocol::Source::kUniformF16,
                               n, 77, -1.0, 1.0, nullptr),
              0u);
    EXPECT_EQ(count_not_source(bits.get(),
                               bf16 ? protocol::Source::kUniformBF16 : protocol::Source::kUniformF16,
                               n, 78, -1.0, 1.0, nullptr),
              n - std::count_if(got.begin(), got.end(), [&, i = size_t{0}](uint16_t h) mutable {
                    return h == uniform_16(78, i++, -1.0f, 1.0f, bf16);
                  }));
  }
}

}  // namespace
}  // namespace labkit
