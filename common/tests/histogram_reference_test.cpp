// The histogram family's inputs and check, on the CPU: the four distributions do what
// histogram_dist.hpp says (values in range, the hot bin's share, one value, runs), the judge's
// counts are the counts, and verify() passes the exact counts and names what is wrong otherwise
// (a bin off by one, counts that do not add up to n, a bin never written).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/ops/histogram.hpp"
#include "labkit/ops/histogram_dist.hpp"

namespace labkit::ops::histogram {
namespace {

std::vector<int64_t> naive_counts(const HistogramDist& d, size_t n) {
  std::vector<int64_t> counts(d.bins, 0);
  for (size_t i = 0; i < n; ++i) ++counts.at(histogram_value(d, i));
  return counts;
}

Bytes as_bytes(const std::vector<int64_t>& counts) {
  Bytes out(4 * counts.size());
  for (size_t b = 0; b < counts.size(); ++b) {
    const uint32_t v = static_cast<uint32_t>(counts[b]);
    std::memcpy(out.data() + 4 * b, &v, 4);
  }
  return out;
}

TEST(HistogramDist, ValuesInRangeAndCountsExact) {
  for (uint32_t bins : {1u, 2u, 7u, 256u, 12289u, kMaxBins}) {
    for (uint32_t kind = 0; kind < kDistCount; ++kind) {
      const HistogramDist d = make_histogram_dist(0xC0FFEEu + bins * 7 + kind, kind, bins);
      const size_t n = 200003;
      const std::vector<int64_t> counts = count_draw(d, n);
      EXPECT_EQ(counts, naive_counts(d, n)) << dist_name(kind) << ", " << bins << " bins";
      int64_t sum = 0;
      for (int64_t c : counts) sum += c;
      EXPECT_EQ(sum, static_cast<int64_t>(n));
    }
  }
}

TEST(HistogramDist, EachDistributionLoadsTheAtomicsAsDocumented) {
  const size_t n = 1 << 20;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const HistogramDist uniform = make_histogram_dist(seed, kUniform, 256);
    const std::vector<int64_t> u = count_draw(uniform, n);
    // Six standard deviations of a bin count (sqrt(n / 256) = 64): a bin never out by chance.
    for (int64_t c : u) EXPECT_NEAR(static_cast<double>(c), n / 256.0, 6 * 64.0);

    const HistogramDist hot = make_histogram_dist(seed, kHot, 256);
    const std::vector<int64_t> h = count_draw(hot, n);
    const double share = static_cast<double>(h[hot.special]) / n;
    EXPECT_GE(share, 0.49) << "seed " << seed;
    EXPECT_LT(share, 0.91) << "seed " << seed;

    const HistogramDist same = make_histogram_dist(seed, kSame, 256);
    EXPECT_EQ(count_draw(same, n)[same.special], static_cast<int64_t>(n));

    const HistogramDist runs = make_histogram_dist(seed, kRuns, 256);
    ASSERT_GE(runs.run_shift, 3u);
    ASSERT_LE(runs.run_shift, 12u);
    const size_t run = size_t{1} << runs.run_shift;
    for (size_t i = 0; i < 4 * run; ++i) {
      EXPECT_EQ(histogram_value(runs, i), histogram_value(runs, i / run * run));
    }
  }
  // The hot bin and the constant move with the seed: no fixed guess is right.
  std::set<uint32_t> hot_bins;
  for (uint64_t seed = 1; seed <= 64; ++seed) {
    hot_bins.insert(make_histogram_dist(seed, kHot, 256).special);
  }
  EXPECT_GT(hot_bins.size(), 30u);
}

Case small_case(DType dtype, uint32_t bins, uint32_t dist) {
  Case c;
  c.n = 100003;
  c.dtype = dtype;
  c.bins = bins;
  c.dist = dist;
  c.seed = 42;
  c.calls = 2;
  return c;
}

TEST(HistogramVerify, ExactCountsPassAndEachMistakeIsNamed) {
  const Case c = small_case(DType::kI32, 1024, kHot);
  const CheckSpec s = spec("v", c);
  // The bins begin every call as fresh garbage drawn by the executor, not as the poison.
  const BufferSpec& bins = s.call.buffers[Sig::kBins];
  EXPECT_EQ(bins.source, protocol::Source::kUniformI32);
  EXPECT_EQ(bins.seed, bins_seed(c));
  for (int call = 0; call < c.calls; ++call) {
    const HistogramDist d = make_histogram_dist(
        protocol::source_seed(in_seed(c), static_cast<uint32_t>(call)), c.dist, c.bins);
    std::vector<int64_t> counts = naive_counts(d, c.n);
    EXPECT_TRUE(s.verify(call, {Bytes{}, as_bytes(counts)}).ok()) << "call " << call;

    // One element lost in bin 5: named, with the sum.
    std::vector<int64_t> lost = counts;
    lost[d.special] -= 1;
    const Verdict v = s.verify(call, {Bytes{}, as_bytes(lost)});
    EXPECT_FALSE(v.ok());
    EXPECT_NE(v.message.find("add up to " + std::to_string(c.n - 1)), std::string::npos)
        << v.message;
    EXPECT_NE(v.message.find("the hot bin"), std::string::npos) << v.message;

    // The other call's counts (a stale histogram) are wrong.
    const HistogramDist other = make_histogram_dist(
        protocol::source_seed(in_seed(c), static_cast<uint32_t>(1 - call)), c.dist, c.bins);
    EXPECT_FALSE(s.verify(call, {Bytes{}, as_bytes(naive_counts(other, c.n))}).ok());

    // Bins not zeroed: the counts on top of the garbage the call began with, or a bin left as
    // that garbage. Each is named.
    const uint64_t garbage_seed =
        protocol::source_seed(bins_seed(c), static_cast<uint32_t>(call));
    std::vector<int64_t> on_top = counts, untouched = counts;
    for (size_t b = 0; b < counts.size(); ++b) {
      const int32_t before = uniform_i32(garbage_seed, b, kGarbageLo, kGarbageHi);
      on_top[b] = static_cast<uint32_t>(before) + static_cast<uint32_t>(counts[b]);
    }
    const size_t hot = d.special;
    untouched[hot] = static_cast<uint32_t>(uniform_i32(garbage_seed, hot, kGarbageLo, kGarbageHi));
    const Verdict v_on_top = s.verify(call, {Bytes{}, as_bytes(on_top)});
    EXPECT_NE(v_on_top.message.find("added to the garbage"), std::string::npos) << v_on_top.message;
    const Verdict v_untouched = s.verify(call, {Bytes{}, as_bytes(untouched)});
    EXPECT_NE(v_untouched.message.find("1 bin is still the garbage"), std::string::npos)
        << v_untouched.message;
  }
}

TEST(HistogramVerify, RowsTheFamilyRefuses) {
  Case c = small_case(DType::kU8, 255, kUniform);
  EXPECT_THROW(spec("v", c), std::invalid_argument);  // bytes have 256 bins
  c = small_case(DType::kI32, kMaxBins + 1, kUniform);
  EXPECT_THROW(spec("v", c), std::invalid_argument);
  c = small_case(DType::kI32, 0, kUniform);
  EXPECT_THROW(spec("v", c), std::invalid_argument);
  EXPECT_THROW(dist_of("zipf"), std::invalid_argument);
  EXPECT_EQ(dist_of("runs"), kRuns);
}

}  // namespace
}  // namespace labkit::ops::histogram
