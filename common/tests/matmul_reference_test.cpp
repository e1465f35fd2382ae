// Host-only tests of the matmul reference and its float32 error bound.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>

#include "labkit/compare.hpp"
#include "labkit/ops/matmul_reference.hpp"
#include "labkit/random.hpp"

namespace labkit {
namespace {

TEST(MatmulReference, SmallKnownProduct) {
  // [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154]
  const std::vector<float> A = {1, 2, 3, 4, 5, 6}, B = {7, 8, 9, 10, 11, 12};
  std::vector<double> abs_product;
  const std::vector<double> C = matmul_reference(A, B, 2, 2, 3, &abs_product);
  EXPECT_EQ(C, (std::vector<double>{58, 64, 139, 154}));
  EXPECT_EQ(abs_product, C);  // all entries positive
}

TEST(MatmulReference, AbsProductUsesMagnitudes) {
  const std::vector<float> A = {1, -1}, B = {1, 1};  // 1x2 * 2x1
  std::vector<double> abs_product;
  EXPECT_EQ(matmul_reference(A, B, 1, 1, 2, &abs_product), std::vector<double>{0.0});
  EXPECT_EQ(abs_product, std::vector<double>{2.0});
}

// A float32 dot product in the obvious order stays far inside the bound; dropping one
// k term lands far outside it. This is what makes the rule a fair judge at every K.
class MatmulBound : public ::testing::TestWithParam<int> {};

TEST_P(MatmulBound, SeparatesFloatRoundingFromADroppedTerm) {
  const int K = GetParam(), M = 8, N = 8;
  const std::vector<float> A = random_floats(size_t{8} * K, 11), B = random_floats(size_t{8} * K, 12);
  std::vector<double> abs_product;
  const std::vector<double> ref = matmul_reference(A, B, M, N, K, &abs_product);
  const std::vector<double> bound = matmul_bounds(abs_product, K);
  std::vector<float> good(M * N), dropped(M * N);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc = std::fma(A[i * K + k], B[k * N + j], acc);
      good[i * N + j] = acc;
      dropped[i * N + j] = acc - A[i * K + K - 1] * B[(K - 1) * N + j];
    }
  }
  const CompareResult ok = compare_matrix(good, ref, bound, M, N);
  EXPECT_TRUE(ok.ok()) << ok.report();
  EXPECT_LT(ok.worst_ratio, 0.5);
  const CompareResult bad = compare_matrix(dropped, ref, bound, M, N);
  EXPECT_GT(bad.wrong, size_t{M * N / 2}) << "K=" << K;
}

INSTANTIATE_TEST_SUITE_P(K, MatmulBound, ::testing::Values(1, 2, 3, 17, 256, 4096));

// The random-walk bound the labs grade with (matmul_walk_bounds): every honest float32 order
// stays inside it, on zero-mean data and on data with a mean; products of TF32-rounded inputs
// (10-bit mantissas, what a tensor-core shortcut computes) and a dropped term land outside.
float to_tf32(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  b = (b + 0x1000u) & ~0x1FFFu;
  std::memcpy(&x, &b, 4);
  return x;
}

struct Orders {
  std::vector<float> seq, fma, tile8, split16, tf32, dropped;
};

Orders products(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K) {
  Orders o;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float seq = 0, fma = 0, tile = 0, tf = 0;
      float parts[16] = {};
      for (int k0 = 0; k0 < K; k0 += 8) {
        float t = 0;
        for (int k = k0; k < std::min(K, k0 + 8); ++k) t = std::fma(A[i * K + k], B[k * N + j], t);
        tile += t;
      }
      for (int k = 0; k < K; ++k) {
        const float a = A[i * K + k], b = B[k * N + j];
        seq += a * b;
        fma = std::fma(a, b, fma);
        parts[k % 16] = std::fma(a, b, parts[k % 16]);
        tf = std::fma(to_tf32(a), to_tf32(b), tf);
      }
      for (int h = 8; h > 0; h /= 2) {
        for (int l = 0; l < h; ++l) parts[l] += parts[l + h];
      }
      o.seq.push_back(seq);
      o.fma.push_back(fma);
      o.tile8.push_back(tile);
      o.split16.push_back(parts[0]);
      o.tf32.push_back(tf);
      o.dropped.push_back(fma - A[i * K + K - 1] * B[(K - 1) * N + j]);
    }
  }
  return o;
}

class MatmulWalkBound : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(MatmulWalkBound, HonestOrdersInsideShortcutsOutside) {
  const auto [K, with_mean] = GetParam();
  const int M = 16, N = 16;
  const float lo = with_mean ? 0.0f : -1.0f;
  const std::vector<float> A = random_floats(size_t{16} * K, 21, lo, 1.0f);
  const std::vector<float> B = random_floats(size_t{16} * K, 22, lo, 1.0f);
  std::vector<double> sq;
  const std::vector<double> ref = matmul_reference(A, B, M, N, K, nullptr, &sq);
  const std::vector<double> bound = matmul_walk_bounds(ref, sq, K);
  const Orders o = products(A, B, M, N, K);
  for (const auto& [name, got] : {std::pair{"sequential", &o.seq}, std::pair{"fma", &o.fma},
                                  std::pair{"tiles of 8", &o.tile8},
                                  std::pair{"split-K 16, tree", &o.split16}}) {
    const CompareResult r = compare_matrix(*got, ref, bound, M, N);
    EXPECT_TRUE(r.ok()) << name << ", K=" << K << ": " << r.report();
    EXPECT_LT(r.worst_ratio, 0.5) << name << ", K=" << K;   // 3x the margin CPU samples show
  }
  // On the labs' zero-mean inputs (uniform in [-1, 1)). With a mean, the |C| term allows for
  // the running sum's growth, and at K = 4096 that covers TF32's error as well: the labs' data
  // is zero-mean so that it does not. Below 64 products TF32's error is a few roundings.
  if (K >= 64 && !with_mean) {
    EXPECT_GT(compare_matrix(o.tf32, ref, bound, M, N).wrong, size_t{M * N / 2})
        << "TF32-rounded inputs, K=" << K;
  }
  EXPECT_GT(compare_matrix(o.dropped, ref, bound, M, N).wrong, size_t{M * N / 2})
      << "a dropped term, K=" << K;
}

INSTANTIATE_TEST_SUITE_P(K, MatmulWalkBound,
                         ::testing::Combine(::testing::Values(1, 2, 3, 17, 64, 256, 4096),
                                            ::testing::Bool()));

TEST(MatmulBound, ZeroOutputIsWrongForSmallValues) {
  // A bare absolute tolerance of 1e-3 would pass an all-zero output here; this rule does not.
  const std::vector<float> A = random_floats(16, 1, -1e-3f, 1e-3f), B = random_floats(16, 2, -1e-3f, 1e-3f);
  std::vector<double> abs_product;
  const std::vector<double> ref = matmul_reference(A, B, 4, 4, 4, &abs_product);
  const CompareResult r =
      compare_matrix(std::vector<float>(16, 0.0f), ref, matmul_bounds(abs_product, 4), 4, 4);
  EXPECT_EQ(r.wrong, 16u);
}

TEST(Random, SeedsReproduceAndDiffer) {
  EXPECT_EQ(random_floats(100, 5), random_floats(100, 5));
  EXPECT_NE(random_floats(100, 5), random_floats(100, 6));
  for (float v : random_floats(10000, 9)) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  size_t zeros = 0;
  for (float v : random_floats(10000, 9)) zeros += v == 0.0f;
  EXPECT_EQ(zeros, 0u);
  EXPECT_NE(mix_seed(1, 1), mix_seed(1, 2));
}

TEST(Random, SeedFromEnvironment) {
  ::setenv("LABKIT_SEED", "12345", 1);
  EXPECT_EQ(test_seed(), 12345u);
  ::setenv("LABKIT_SEED", "12x", 1);
  EXPECT_THROW(test_seed(), std::invalid_argument);
  ::unsetenv("LABKIT_SEED");
  EXPECT_EQ(test_seed(), kDefaultSeed);
}

TEST(ShapeLabel, IsTestNameSafe) { EXPECT_EQ(shape_label(127, 1, 33), "M127_N1_K33"); }

}  // namespace
}  // namespace labkit
