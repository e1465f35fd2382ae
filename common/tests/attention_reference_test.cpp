// Tests of lab 11's reference and bound (host-only): the reference against cases worked by hand,
// and the bound (labkit/ops/attention.hpp) against emulations of honest FP32 orders (a three-pass
// softmax, a tiled online softmax with P rounded to the type) and of the mistakes the lab's tests
// must catch: a softmax without the maximum, a dropped tail key, a causal mask off by one,
// scores summed in 16 bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/half.hpp"
#include "labkit/ops/attention.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::attention {
namespace {

struct Problem {
  int heads = 2, seq = 1, dim = 64;
  bool causal = false, bf16 = false;
  std::vector<float> q, k, v;  // rounded to the type
};

std::vector<float> rounded(size_t n, uint64_t seed, float lo, float hi, bool bf16) {
  std::vector<float> x = random_floats(n, seed, lo, hi);
  for (float& f : x) f = from_16_bits(to_16_bits(f, bf16), bf16);
  return x;
}

Problem make(int heads, int seq, int dim, bool causal, bool bf16, bool large, uint64_t seed) {
  Problem p{heads, seq, dim, causal, bf16, {}, {}, {}};
  const size_t n = size_t(heads) * seq * dim;
  const float lo = large ? kLargeLo : -kUnitRange, hi = large ? kLargeHi : kUnitRange;
  p.q = rounded(n, mix_seed(seed, 1), lo, hi, bf16);
  p.k = rounded(n, mix_seed(seed, 2), lo, hi, bf16);
  p.v = rounded(n, mix_seed(seed, 3), -kUnitRange, kUnitRange, bf16);
  return p;
}

// What a version might do, in float32, the way a GPU would.
enum class Way {
  kThreePass,     // v1: max, sum, weighted sum; P not rounded
  kTiledOnline,   // v3: tiles of 64 keys, online softmax, P rounded to the type for P V
  kNoMax,         // exp(s) without the maximum subtracted
  kDropLastKey,   // the last key (a tail) never seen
  kCausalOffByOne,  // query i sees keys j < i only (or j <= 0 at i = 0)
  kScores16,      // the dot products summed in the 16-bit type
};

float round16(float x, bool bf16) { return from_16_bits(to_16_bits(x, bf16), bf16); }

// O in the type, as a version would return it.
std::vector<float> emulate(const Problem& p, Way way) {
  const size_t S = p.seq, D = p.dim;
  std::vector<float> out(size_t(p.heads) * S * D);
  const float scale = 1.0f / std::sqrt(static_cast<float>(p.dim));
  for (int h = 0; h < p.heads; ++h) {
    for (size_t i = 0; i < S; ++i) {
      const float* qi = &p.q[(h * S + i) * D];
      size_t keys = p.causal ? i + 1 : S;
      if (way == Way::kDropLastKey && keys == S && S > 1) keys = S - 1;
      if (way == Way::kCausalOffByOne && p.causal) keys = std::max<size_t>(i, 1);
      std::vector<float> s(keys);
      for (size_t j = 0; j < keys; ++j) {
        const float* kj = &p.k[(h * S + j) * D];
        float dot = 0;
        for (size_t c = 0; c < D; ++c) {
          dot = std::fma(qi[c], kj[c], dot);
          if (way == Way::kScores16) dot = round16(dot, p.bf16);
        }
        s[j] = dot * scale;
      }
      std::vector<float> acc(D, 0.0f);
      float l = 0;
      if (way == Way::kTiledOnline) {
        float m = -std::numeric_limits<float>::infinity();
        for (size_t t = 0; t < keys; t += 64) {
          const size_t end = std::min(keys, t + 64);
          float tile_max = m;
          for (size_t j = t; j < end; ++j) tile_max = std::max(tile_max, s[j]);
          const float alpha = std::exp(m - tile_max);
          l *= alpha;
          for (float& a : acc) a *= alpha;
          for (size_t j = t; j < end; ++j) {
            const float e = std::exp(s[j] - tile_max);
            l += e;
            const float pr = round16(e, p.bf16);
            const float* vj = &p.v[(h * S + j) * D];
            for (size_t c = 0; c < D; ++c) acc[c] = std::fma(pr, vj[c], acc[c]);
          }
          m = tile_max;
        }
      } else {
        float m = -std::numeric_limits<float>::infinity();
        if (way != Way::kNoMax) {
          for (size_t j = 0; j < keys; ++j) m = std::max(m, s[j]);
        } else {
          m = 0;
        }
        for (size_t j = 0; j < keys; ++j) l += std::exp(s[j] - m);
        for (size_t j = 0; j < keys; ++j) {
          const float e = std::exp(s[j] - m);
          const float* vj = &p.v[(h * S + j) * D];
          for (size_t c = 0; c < D; ++c) acc[c] = std::fma(e, vj[c], acc[c]);
        }
      }
      for (size_t c = 0; c < D; ++c) out[(h * S + i) * D + c] = round16(acc[c] / l, p.bf16);
    }
  }
  return out;
}

// The largest |o - ref| / bound over the output (NaN: infinity).
double worst_ratio(const Problem& p, const std::vector<float>& o) {
  const Reference r = reference(p.q, p.k, p.v, p.heads, p.seq, p.dim, p.causal);
  double worst = 0;
  for (size_t e = 0; e < o.size(); ++e) {
    const double b = bound(r.out[e], r.walk[e], r.score[e], p.dim, p.bf16);
    const double err = std::fabs(static_cast<double>(o[e]) - r.out[e]);
    if (!(err <= std::numeric_limits<double>::max())) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, err / b);
  }
  return worst;
}

TEST(AttentionReference, OneKeyIsItsValue) {
  // seq = 1: every query sees one key, whose weight is 1: O = V, the walk is |V|.
  const Problem p = make(3, 1, 64, false, false, true, 7);
  const Reference r = reference(p.q, p.k, p.v, p.heads, p.seq, p.dim, p.causal);
  for (size_t e = 0; e < p.v.size(); ++e) {
    EXPECT_DOUBLE_EQ(r.out[e], p.v[e]) << e;
    EXPECT_DOUBLE_EQ(r.walk[e], std::fabs(p.v[e])) << e;
  }
}

TEST(AttentionReference, CausalFirstRowIsTheFirstValue) {
  const Problem p = make(2, 50, 128, true, true, false, 9);
  const Reference r = reference(p.q, p.k, p.v, p.heads, p.seq, p.dim, p.causal);
  for (int h = 0; h < p.heads; ++h) {
    for (int c = 0; c < p.dim; ++c) {
      const size_t e = size_t(h) * p.seq * p.dim + c;
      EXPECT_DOUBLE_EQ(r.out[e], p.v[e]) << "head " << h << " dim " << c;
    }
  }
}

TEST(AttentionReference, EqualScoresAverageTheValues) {
  // Q = 0: every score is 0, so O is the mean of V's rows (the first i + 1 when causal).
  Problem p = make(1, 40, 64, true, false, false, 11);
  std::fill(p.q.begin(), p.q.end(), 0.0f);
  const Reference r = reference(p.q, p.k, p.v, p.heads, p.seq, p.dim, p.causal);
  for (int i = 0; i < p.seq; ++i) {
    for (int c = 0; c < p.dim; ++c) {
      double mean = 0;
      for (int j = 0; j <= i; ++j) mean += p.v[size_t(j) * p.dim + c];
      EXPECT_NEAR(r.out[size_t(i) * p.dim + c], mean / (i + 1), 1e-12) << i << " " << c;
    }
  }
}

struct Shape {
  int seq, dim;
  bool causal, bf16, large;
};
const Shape kShapes[] = {{1, 64, false, false, false},  {65, 128, false, false, false},
                         {200, 64, true, false, false}, {333, 128, false, true, false},
                         {300, 64, true, true, false},  {150, 128, false, false, true},
                         {150, 128, true, true, true},  {513, 64, false, true, true}};

std::string label(const Shape& s) {
  return "seq " + std::to_string(s.seq) + " d " + std::to_string(s.dim) +
         (s.causal ? " causal" : "") + (s.bf16 ? " bf16" : " f16") + (s.large ? " large" : "");
}

// Honest orders stay well inside the bound (measured: printed), at every shape the tests use.
TEST(AttentionBound, HonestOrdersPass) {
  for (const Shape& s : kShapes) {
    const Problem p = make(2, s.seq, s.dim, s.causal, s.bf16, s.large, 100 + s.seq);
    for (const Way way : {Way::kThreePass, Way::kTiledOnline}) {
      const double worst = worst_ratio(p, emulate(p, way));
      EXPECT_LT(worst, 0.5) << label(s) << (way == Way::kThreePass ? " three-pass" : " tiled");
      std::printf("%-28s %-10s worst %.3f of the bound\n", label(s).c_str(),
                  way == Way::kThreePass ? "three-pass" : "tiled", worst);
    }
  }
}

// The mistakes the lab's tests are there to catch land outside it.
TEST(AttentionBound, MistakesFail) {
  // No maximum subtracted: scores past 88 overflow expf, in every row at the large scale (any
  // seed, either head dimension, a causal row of one key too).
  for (const bool bf16 : {false, true}) {
    for (const int dim : {64, 128}) {
      for (const uint64_t seed : {21, 22, 23}) {
        const Problem p = make(2, 97, dim, true, bf16, true, seed);
        const std::vector<float> o = emulate(p, Way::kNoMax);
        for (size_t row = 0; row < o.size() / dim; ++row) {
          EXPECT_FALSE(std::isfinite(o[row * dim])) << "row " << row << " d " << dim;
        }
      }
    }
  }
  // A dropped tail key, a causal mask off by one: at the public tests' sizes.
  for (const bool bf16 : {false, true}) {
    const Problem p = make(2, 200, 64, false, bf16, false, 22);
    const double worst = worst_ratio(p, emulate(p, Way::kDropLastKey));
    EXPECT_GT(worst, 2.0) << (bf16 ? "bf16" : "f16");
    std::printf("dropped key, seq 200, %s: %.1f of the bound\n", bf16 ? "bf16" : "f16", worst);
    const Problem c = make(2, 200, 64, true, bf16, false, 23);
    EXPECT_GT(worst_ratio(c, emulate(c, Way::kCausalOffByOne)), 2.0) << (bf16 ? "bf16" : "f16");
  }
  // Scores summed in 16 bits: far outside at the large scale (a score of 100 carries 2^-11 of
  // it at every step).
  for (const bool bf16 : {false, true}) {
    const Problem p = make(2, 150, 128, false, bf16, true, 24);
    const double worst = worst_ratio(p, emulate(p, Way::kScores16));
    EXPECT_GT(worst, 2.0) << (bf16 ? "bf16" : "f16");
    std::printf("scores in 16 bits, large, %s: %.1f of the bound\n", bf16 ? "bf16" : "f16",
                worst);
  }
}

}  // namespace
}  // namespace labkit::ops::attention
