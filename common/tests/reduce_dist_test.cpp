// The reduce family's float inputs and bound (labkit/ops/reduce_dist.hpp), on the CPU: every
// honest summation order stays within the bound, and every shortcut that does not read and add
// every element leaves it, by the margin the threat model states (docs/threat-model.md,
// "Approximation, prediction and stale state").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "labkit/ops/reduce_dist.hpp"

namespace {

using labkit::ops::reduce::kPlanted;
using labkit::ops::reduce::kReduceBoundC;
using labkit::ops::reduce::make_reduce_dist;
using labkit::ops::reduce::reduce_ordinary_bound;
using labkit::ops::reduce::reduce_value;
using labkit::ops::reduce::ReduceDist;

struct Drawn {
  std::vector<float> x;
  double sum = 0, abs_sum = 0;
  double bound() const {
    return kReduceBoundC * std::sqrt(static_cast<double>(x.size())) * std::ldexp(1.0, -24) *
           abs_sum;
  }
};

Drawn draw(uint64_t seed, size_t n) {
  const ReduceDist d = make_reduce_dist(seed, n);
  Drawn r;
  r.x.resize(n);
  for (size_t i = 0; i < n; ++i) {
    r.x[i] = reduce_value(d, i);
    r.sum += r.x[i];
    r.abs_sum += std::fabs(static_cast<double>(r.x[i]));
  }
  return r;
}

// Honest float orders, as kernels sum.
float pairwise(const float* x, size_t n) {
  if (n == 0) return 0.0f;
  if (n == 1) return x[0];
  const size_t half = n / 2;
  return pairwise(x, half) + pairwise(x + half, n - half);
}

float sequential(const std::vector<float>& x) {
  float s = 0;
  for (float v : x) s += v;
  return s;
}

float kahan(const std::vector<float>& x) {
  volatile float s = 0, c = 0;   // volatile: no reassociation
  for (float v : x) {
    const float y = v - c;
    const float t = s + y;
    c = (t - s) - y;
    s = t;
  }
  return s;
}

// threads of a grid-stride loop each sum their elements in order; blocks of 256 sum their
// threads as a tree; the block sums are added one by one in a random order (atomics).
float grid_stride_tree_atomics(const std::vector<float>& x, size_t threads, uint64_t seed) {
  std::vector<float> per_thread(threads, 0.0f);
  for (size_t i = 0; i < x.size(); ++i) per_thread[i % threads] += x[i];
  std::vector<float> blocks;
  for (size_t b = 0; b < threads; b += 256) {
    blocks.push_back(pairwise(per_thread.data() + b, std::min<size_t>(256, threads - b)));
  }
  std::mt19937_64 rng(seed);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  float s = 0;
  for (float v : blocks) s += v;
  return s;
}

// each thread sums a contiguous chunk (float4 loads, 4 running sums), then a tree.
float chunks_of_four(const std::vector<float>& x, size_t chunk) {
  std::vector<float> partial;
  for (size_t c = 0; c < x.size(); c += chunk) {
    float lanes[4] = {0, 0, 0, 0};
    for (size_t i = c; i < std::min(x.size(), c + chunk); ++i) lanes[(i - c) % 4] += x[i];
    partial.push_back((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]));
  }
  return pairwise(partial.data(), partial.size());
}

class HonestOrders : public ::testing::TestWithParam<size_t> {};

TEST_P(HonestOrders, StayWithinTheBound) {
  const size_t n = GetParam();
  for (uint64_t seed : {1ull, 2ull, 20261124ull}) {
    const Drawn d = draw(seed, n);
    const double bound = d.bound();
    const std::vector<std::pair<const char*, float>> sums = {
        {"pairwise", pairwise(d.x.data(), n)},
        {"sequential", sequential(d.x)},
        {"kahan", kahan(d.x)},
        {"grid-stride, tree, atomics (8192 threads)", grid_stride_tree_atomics(d.x, 8192, seed)},
        {"grid-stride, tree, atomics (132 * 2048 threads)",
         grid_stride_tree_atomics(d.x, 132 * 2048, seed + 1)},
        {"chunks of 4096, 4 lanes, tree", chunks_of_four(d.x, 4096)}};
    for (const auto& [order, s] : sums) {
      EXPECT_LE(std::fabs(s - d.sum), bound)
          << order << ", n=" << n << ", seed " << seed << ": error " << std::fabs(s - d.sum)
          << " against the bound " << bound;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, HonestOrders,
                         ::testing::Values(size_t{1}, size_t{3}, size_t{33}, size_t{1025},
                                           size_t{100003}, (size_t{1} << 22) + 5));

// What a shortcut computes instead of the sum, and that it is off by more than the bound on
// every call: each one loses the planted element or counts it more than once, or (5% of the
// ordinary elements skipped, another call's sum) misses by a multiple of n |offset| scale.
TEST(Shortcuts, LeaveTheBound) {
  const size_t n = (size_t{1} << 22) + 5;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    const ReduceDist dist = make_reduce_dist(seed, n);
    const Drawn d = draw(seed, n);
    const double bound = d.bound();
    auto sum_range = [&](size_t begin, size_t end, size_t step = 1) {
      double s = 0;
      for (size_t i = begin; i < end; i += step) s += d.x[i];
      return s;
    };
    double ordinary_tail = 0;   // the last 5% of the elements, the planted one kept
    for (size_t i = n - n / 20; i < n; ++i) ordinary_tail += i == dist.pos[0] ? 0.0 : d.x[i];
    const std::vector<std::pair<const char*, double>> shortcuts = {
        {"the planted element lost", d.sum - d.x[dist.pos[0]]},
        {"the last 5% of the ordinary elements skipped", d.sum - ordinary_tail},
        {"the previous call's sum", draw(seed + 1000, n).sum},
        {"the first half, doubled", 2 * sum_range(0, n / 2)},
        {"every other element, doubled", 2 * sum_range(0, n, 2)},
        {"a 1-in-64 sample, times 64", 64 * sum_range(0, n, 64)},
        {"n times the mean of the first 4096", static_cast<double>(n) * sum_range(0, 4096) / 4096}};
    for (const auto& [what, value] : shortcuts) {
      EXPECT_GT(std::fabs(value - d.sum), bound)
          << what << " passes (seed " << seed << "): off by " << std::fabs(value - d.sum)
          << ", the bound is " << bound;
    }
  }
}

// The detection power at the benchmark's size (2^28) and at the largest size the interface
// takes in an 80 GB GPU (2^31 floats): the bound computed from the largest |x| the distribution
// draws, planted elements included, against the smallest planted element.
TEST(Shortcuts, APlantedElementOutweighsTheBoundAtEverySize) {
  for (uint64_t n : {uint64_t{1}, uint64_t{1000}, uint64_t{1} << 20, uint64_t{1} << 28,
                     uint64_t{1} << 31}) {
    for (uint64_t seed = 0; seed < 64; ++seed) {
      const ReduceDist d = make_reduce_dist(seed, n);
      double planted_abs = 0, smallest = INFINITY;
      for (int p = 0; p < kPlanted; ++p) {
        planted_abs += std::fabs(d.planted[p]);
        smallest = std::min(smallest, static_cast<double>(std::fabs(d.planted[p])));
      }
      const double worst_bound = reduce_ordinary_bound(n, d.scale) +
                                 kReduceBoundC * std::sqrt(static_cast<double>(n)) *
                                     std::ldexp(1.0, -24) * planted_abs;
      EXPECT_GE(smallest, 3.0 * worst_bound) << "n=" << n << ", seed " << seed;
      if (n == (uint64_t{1} << 28)) EXPECT_GE(smallest, 4.0 * worst_bound) << "seed " << seed;
    }
  }
}

TEST(Distribution, VariesWhereItMust) {
  const size_t n = 1 << 20;
  std::vector<double> sums;
  for (uint64_t seed = 0; seed < 32; ++seed) {
    const ReduceDist d = make_reduce_dist(seed, n);
    EXPECT_GE(std::fabs(d.offset), 0.25f);
    EXPECT_LT(std::fabs(d.offset), 1.0f);
    EXPECT_GE(d.seg_shift, 10u);
    EXPECT_LE(d.seg_shift, 16u);
    for (int p = 0; p < kPlanted; ++p) EXPECT_LT(d.pos[p], n);
    sums.push_back(draw(seed, n).sum);
  }
  // both signs, and scales spread over several powers of two
  EXPECT_TRUE(std::any_of(sums.begin(), sums.end(), [](double s) { return s < 0; }));
  EXPECT_TRUE(std::any_of(sums.begin(), sums.end(), [](double s) { return s > 0; }));
  const auto [lo, hi] = std::minmax_element(sums.begin(), sums.end(), [](double a, double b) {
    return std::fabs(a) < std::fabs(b);
  });
  EXPECT_GT(std::fabs(*hi), 16 * std::fabs(*lo));
  // one seed, one stream: the same numbers twice
  EXPECT_EQ(draw(7, 1000).x, draw(7, 1000).x);
}

}  // namespace
