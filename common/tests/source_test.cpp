// The generated sources (labkit/source.hpp): the core's and the families' entries of one table,
// found by identifier. CPU: identifiers unique, entries complete, unknown ones refused, the
// conv sources' segment from the dims. GPU: every source draws on the device what its family's
// value function gives on the CPU, and counts a changed element.
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/gpu.hpp"
#include "labkit/half.hpp"
#include "labkit/ops/conv_dist.hpp"
#include "labkit/ops/histogram_dist.hpp"
#include "labkit/ops/reduce_dist.hpp"
#include "labkit/ops/spmv_dist.hpp"
#include "labkit/random.hpp"
#include "labkit/source.hpp"

namespace labkit {
namespace {

using protocol::Source;

const std::vector<Source> kCore = {Source::kUniformF32, Source::kUniformI32, Source::kUniformF16,
                                   Source::kUniformBF16};

TEST(Sources, FamiliesHaveIdentifiersOfTheirOwn) {
  std::set<uint32_t> seen;
  for (Source c : kCore) {
    ASSERT_NE(find_source(c), nullptr) << static_cast<uint32_t>(c);
    seen.insert(static_cast<uint32_t>(c));
  }
  ASSERT_GE(family_sources().size(), 7u);
  for (const SourceKind* k : family_sources()) {
    const uint32_t id = static_cast<uint32_t>(k->id);
    EXPECT_NE(k->id, Source::kArena) << k->name;
    EXPECT_TRUE(seen.insert(id).second) << k->name << ": identifier " << id << " taken twice";
    EXPECT_EQ(find_source(k->id), k) << k->name;
    EXPECT_TRUE(k->elem_size == 1 || k->elem_size == 2 || k->elem_size == 4 || k->elem_size == 8)
        << k->name;
    EXPECT_NE(k->fill, nullptr) << k->name;
    EXPECT_NE(k->count_not, nullptr) << k->name;
  }
}

TEST(Sources, ArenaAndUnknownIdentifiersAreNoSource) {
  EXPECT_EQ(find_source(Source::kArena), nullptr);
  EXPECT_EQ(find_source(uint32_t{999}), nullptr);
  // Refused before anything reaches the device: no GPU needed.
  EXPECT_THROW(fill_source(nullptr, Source{999}, 16, 1, 0, 1, nullptr), std::invalid_argument);
  EXPECT_THROW(count_not_source(nullptr, Source::kArena, 16, 1, 0, 1, nullptr),
               std::invalid_argument);
}

TEST(Sources, ConvInputsTakeTheirSegmentFromTheLastTwoDims) {
  const SourceKind* x = find_source(ops::conv::kSourceX);
  const SourceKind* w = find_source(ops::conv::kSourceW);
  ASSERT_NE(x, nullptr);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(x->plane, nullptr);
  EXPECT_EQ(x->plane({2, 3, 17, 19}, "x"), 17u * 19u);
  EXPECT_EQ(w->plane({8, 3, 5, 5}, "w"), 25u);
  EXPECT_THROW(x->plane({3, 17, 19}, "x"), std::invalid_argument);
  EXPECT_EQ(find_source(Source::kUniformF32)->plane, nullptr);
}

// What the CPU says element i of a source is, as its bits.
struct HostDraw {
  Source id;
  double lo, hi;
  std::vector<uint64_t> dims;  // for the plane
  std::function<uint64_t(uint64_t seed, size_t n, size_t plane, uint64_t i)> bits;
};

template <typename T>
uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

TEST(SourcesGpu, EveryDrawIsTheHostsAndCountsAChangedElement) {
  LABKIT_REQUIRE_GPU();
  namespace rd = ops::reduce;
  namespace sp = ops::spmv;
  namespace cv = ops::conv;
  namespace hg = ops::histogram;
  const std::vector<HostDraw> draws = {
      {Source::kUniformF32, -2, 3, {}, [](uint64_t s, size_t, size_t, uint64_t i) {
         return bits_of(uniform_f32(s, i, -2.0f, 3.0f)); }},
      {Source::kUniformI32, 5, 900, {}, [](uint64_t s, size_t, size_t, uint64_t i) {
         return bits_of(uniform_i32(s, i, 5, 900)); }},
      {Source::kUniformBF16, -1, 1, {}, [](uint64_t s, size_t, size_t, uint64_t i) {
         return bits_of(uniform_16(s, i, -1.0f, 1.0f, true)); }},
      {rd::kSourceF32, 0, 0, {}, [](uint64_t s, size_t n, size_t, uint64_t i) {
         return bits_of(rd::reduce_value(rd::make_reduce_dist(s, n), i)); }},
      {sp::kSourceX, -1, 1, {}, [](uint64_t s, size_t n, size_t, uint64_t i) {
         return bits_of(sp::spmv_x_value(sp::make_spmv_x(s, n, -1.0f, 1.0f), i)); }},
      {sp::kSourceRowPtrEven, 0, 123457, {}, [](uint64_t, size_t n, size_t, uint64_t i) {
         return bits_of(static_cast<int32_t>(i * 123457 / (n - 1))); }},
      {cv::kSourceX, 0, 0, {3, 4, 61, 83}, [](uint64_t s, size_t n, size_t plane, uint64_t i) {
         return bits_of(cv::conv_value(cv::make_conv_dist(cv::Tensor::kX, s, n, plane), i)); }},
      {cv::kSourceW, 0, 0, {16, 4, 3, 3}, [](uint64_t s, size_t n, size_t plane, uint64_t i) {
         return bits_of(cv::conv_value(cv::make_conv_dist(cv::Tensor::kW, s, n, plane), i)); }},
      {hg::kSourceU8, hg::kHot, 256, {}, [](uint64_t s, size_t, size_t, uint64_t i) {
         return bits_of(static_cast<uint8_t>(
             hg::histogram_value(hg::make_histogram_dist(s, hg::kHot, 256), i))); }},
      {hg::kSourceI32, hg::kRuns, 4096, {}, [](uint64_t s, size_t, size_t, uint64_t i) {
         return bits_of(static_cast<int32_t>(
             hg::histogram_value(hg::make_histogram_dist(s, hg::kRuns, 4096), i))); }},
  };
  std::set<uint32_t> covered;
  for (const HostDraw& d : draws) {
    const SourceKind& k = *find_source(d.id);
    covered.insert(static_cast<uint32_t>(d.id));
    size_t n = 100003;
    if (!d.dims.empty()) {
      n = 1;
      for (uint64_t v : d.dims) n *= v;
    }
    const size_t plane = k.plane == nullptr ? 0 : k.plane(d.dims, "in");
    const uint64_t seed = 0x5EED0000u + static_cast<uint32_t>(d.id);
    DeviceBuffer<unsigned char> buf(n * k.elem_size);
    fill_source(buf.get(), d.id, n, seed, d.lo, d.hi, nullptr, plane);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> got = buf.download();
    size_t mismatches = 0;
    for (size_t i = 0; i < n && mismatches < 3; ++i) {
      uint64_t b = 0;
      std::memcpy(&b, got.data() + i * k.elem_size, k.elem_size);
      if (b != d.bits(seed, n, plane, i)) {
        ++mismatches;
        ADD_FAILURE() << k.name << ": element " << i << " of " << n << " is " << b
                      << " on the GPU, " << d.bits(seed, n, plane, i) << " on the CPU";
      }
    }
    EXPECT_EQ(count_not_source(buf.get(), d.id, n, seed, d.lo, d.hi, nullptr, plane), 0u)
        << k.name;
    got[(n / 2) * k.elem_size] ^= 0x01;  // one element, one bit
    CUDA_CHECK(cudaMemcpy(buf.get(), got.data(), got.size(), cudaMemcpyHostToDevice));
    EXPECT_EQ(count_not_source(buf.get(), d.id, n, seed, d.lo, d.hi, nullptr, plane), 1u)
        << k.name;
  }
  for (const SourceKind* k : family_sources()) {
    EXPECT_TRUE(covered.count(static_cast<uint32_t>(k->id))) << k->name << " is not drawn here";
  }
}

}  // namespace
}  // namespace labkit
