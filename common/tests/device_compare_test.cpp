// The benchmark judge's check on the GPU (labkit/device_compare.hpp) must give the host
// comparison's answer (compare.cpp, with the families' own bound functions) on every element:
// planted errors just outside and just inside the bound, the poison, infinities and NaN.
// Skips (visibly) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_compare.hpp"
#include "labkit/gpu.hpp"
#include "labkit/ops/conv.hpp"
#include "labkit/ops/matmul_reference.hpp"
#include "labkit/ops/spmv.hpp"
#include "labkit/random.hpp"

namespace labkit {
namespace {

float poison() {
  float f;
  std::memcpy(&f, &kPoisonBits, sizeof f);
  return f;
}

// got[i] = ref[i] + t * bound[i] in float, t drawn so that about a quarter of the elements sit
// near the bound on either side; a few are the poison, an infinity or NaN.
std::vector<float> planted(const std::vector<double>& ref, const std::vector<double>& bound,
                           uint64_t seed) {
  std::vector<float> got(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    const float u = uniform_f32(seed, i, 0.0f, 1.0f);
    const double t = u < 0.75f ? 0.5 * u : (u < 0.875f ? 0.999 : 1.001);
    got[i] = static_cast<float>(ref[i] + (i % 2 ? t : -t) * bound[i]);
  }
  got[got.size() / 3] = poison();
  got[got.size() / 2] = std::numeric_limits<float>::infinity();
  got[got.size() - 1] = std::numeric_limits<float>::quiet_NaN();
  return got;
}

uint64_t on_device(const std::vector<float>& got, const std::vector<double>& ref,
                   const std::vector<double>& sq, double scale) {
  DeviceBuffer<float> g(got.size());
  DeviceBuffer<double> r(ref.size()), s(sq.size());
  g.upload(got);
  r.upload(ref);
  s.upload(sq);
  return count_beyond_walk_bound(g.get(), r.get(), s.get(), got.size(), scale, nullptr);
}

TEST(DeviceCompareGpu, WalkBoundCountsWhatTheHostComparisonCounts) {
  LABKIT_REQUIRE_GPU();
  const size_t rows = 313, cols = 331;
  const int K = 4093;
  std::vector<double> ref(rows * cols), sq(rows * cols);
  for (size_t i = 0; i < ref.size(); ++i) {
    ref[i] = uniform_f32(7, i, -40.0f, 40.0f);
    sq[i] = uniform_f32(8, i, 1.0f, 2000.0f);
  }
  const std::vector<double> bound = matmul_walk_bounds(ref, sq, K);
  const std::vector<float> got = planted(ref, bound, 9);
  const CompareResult host = compare_matrix(got, ref, bound, rows, cols);
  ASSERT_GT(host.wrong, ref.size() / 20) << "the planted errors must be there to count";
  EXPECT_EQ(on_device(got, ref, sq, matmul_walk_scale(K)), host.wrong);

  // conv's bound has the same form with its own scale.
  ops::conv::Shape shape;
  shape.n = 1;
  shape.c_in = 64;
  shape.h = rows;
  shape.w = cols;
  shape.c_out = 1;
  shape.k = 3;
  shape.stride = 1;
  shape.pad = 1;
  const std::vector<double> conv_bound = ops::conv::conv_bounds(ref, sq, shape);
  const std::vector<float> conv_got = planted(ref, conv_bound, 10);
  const CompareResult conv_host = compare_matrix(conv_got, ref, conv_bound, rows, cols);
  EXPECT_EQ(on_device(conv_got, ref, sq, ops::conv::conv_bound_scale(shape)), conv_host.wrong);

  // All right: nothing counted.
  std::vector<float> right(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) right[i] = static_cast<float>(ref[i]);
  EXPECT_EQ(on_device(right, ref, sq, matmul_walk_scale(K)), 0u);
}

TEST(DeviceCompareGpu, RowBoundCountsWhatTheHostComparisonCounts) {
  LABKIT_REQUIRE_GPU();
  const size_t rows = 50021;
  std::vector<int32_t> row_ptr(rows + 1, 0);
  for (size_t r = 0; r < rows; ++r) {
    row_ptr[r + 1] = row_ptr[r] + static_cast<int32_t>(uniform_i32(11, r, 0, 70));
  }
  std::vector<double> ref(rows), abs_ref(rows), bound(rows);
  for (size_t r = 0; r < rows; ++r) {
    ref[r] = uniform_f32(12, r, -30.0f, 30.0f);
    abs_ref[r] = std::fabs(ref[r]) + uniform_f32(13, r, 0.0f, 50.0f);
    bound[r] = ops::spmv::row_bound(row_ptr[r + 1] - row_ptr[r], abs_ref[r]);
  }
  const std::vector<float> got = planted(ref, bound, 14);
  std::vector<uint8_t> bytes(got.size() * sizeof(float));
  std::memcpy(bytes.data(), got.data(), bytes.size());
  VectorLayout layout;
  layout.n = rows;
  const CompareResult host = compare_vector(observe(bytes, DType::kF32), ref, bound, layout);
  ASSERT_GT(host.wrong, rows / 20);

  DeviceBuffer<float> g(rows);
  DeviceBuffer<double> r(rows), a(rows);
  DeviceBuffer<int32_t> p(rows + 1);
  g.upload(got);
  r.upload(ref);
  a.upload(abs_ref);
  p.upload(row_ptr);
  EXPECT_EQ(count_beyond_row_bound(g.get(), r.get(), a.get(), p.get(), rows, ops::spmv::kSpmvBoundC,
                                   ops::spmv::kSpmvWalkC, nullptr),
            host.wrong);
}

}  // namespace
}  // namespace labkit
