#include "labkit/ops/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/half.hpp"
#include "labkit/parallel.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::attention {

// Why the bound has these terms. A version computes each score s = q.k in FP32 from products
// that are exact there (16-bit times 16-bit), subtracts the row's maximum, exponentiates and
// sums in FP32; where it multiplies P by V on tensor cores it rounds each p (in [0, 1]) to the
// type first, and it rounds the output to the type last. So, per output element:
//   - P's rounding: sum_j p_j d_j v_j with |d_j| <= u independent: a random walk of size
//     u sqrt(sum_j p_j^2 v_j^2) (the walk term), and u |O| where the row sum is taken from the
//     unrounded p;
//   - the output's rounding: u |O|;
//   - the scores' FP32 sums of d products: each off by at most d 2^-24 sum_k |q_k k_k| / sqrt(d)
//     (linear in d: tensor cores truncate), which moves O by at most that times sum_j p_j |v_j|
//     (the score term). Zero-mean inputs of unit scale make it a few percent of the rest; at
//     scores past 88 it is the largest term.
// A softmax without the maximum subtracted overflows to inf or NaN at the large scale; a dropped
// key, a tail tile not masked, or a causal mask off by one moves O by p_j |v_j|, tens to hundreds
// of times the bound at the tests' sizes; scores summed in 16 bits err by u |s| per step.

std::vector<double> bounds(const Reference& r, int dim, DType dtype) {
  std::vector<double> b(r.out.size());
  for (size_t i = 0; i < b.size(); ++i) b[i] = bound(r.out[i], r.walk[i], r.score[i], dim, dtype == DType::kBF16);
  return b;
}

Reference reference(const std::vector<float>& q, const std::vector<float>& k,
                    const std::vector<float>& v, int heads, int seq, int dim, bool causal) {
  const size_t S = seq, D = dim, rows = static_cast<size_t>(heads) * S;
  Reference r;
  r.out.assign(rows * D, 0.0);
  r.walk.assign(rows * D, 0.0);
  r.score.assign(rows * D, 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  const double work = static_cast<double>(rows) * S * D;
  parallel_for(rows, work < 1e7 ? SIZE_MAX : 2, [&](size_t begin, size_t end) {
    std::vector<double> s(S), a(S);
    for (size_t row = begin; row < end; ++row) {
      const size_t head = row / S, i = row % S, keys = causal ? i + 1 : S;
      const float* qi = &q[row * D];
      const float* kh = &k[head * S * D];
      const float* vh = &v[head * S * D];
      double max = -std::numeric_limits<double>::infinity();
      for (size_t j = 0; j < keys; ++j) {
        double dot = 0, abs_dot = 0;
        for (size_t c = 0; c < D; ++c) {
          const double p = static_cast<double>(qi[c]) * kh[j * D + c];
          dot += p;
          abs_dot += std::fabs(p);
        }
        s[j] = dot * scale;
        a[j] = abs_dot * scale;
        max = std::max(max, s[j]);
      }
      double sum = 0;
      for (size_t j = 0; j < keys; ++j) sum += (s[j] = std::exp(s[j] - max));
      double* out = &r.out[row * D];
      double* walk = &r.walk[row * D];
      double* score = &r.score[row * D];
      for (size_t j = 0; j < keys; ++j) {
        const double p = s[j] / sum, pa = p * a[j];
        const float* vj = &vh[j * D];
        for (size_t c = 0; c < D; ++c) {
          const double x = vj[c];
          out[c] += p * x;
          walk[c] += p * p * x * x;
          score[c] += pa * std::fabs(x);
        }
      }
      for (size_t c = 0; c < D; ++c) walk[c] = std::sqrt(walk[c]);
    }
  });
  return r;
}

namespace {

// `count` values uniform in [lo, hi] rounded to the type: as the reference reads them
// (widened back exactly) and as the worker gets them.
Bytes draw(std::vector<float>& values, size_t count, uint64_t seed, float lo, float hi,
           bool bf16) {
  values = random_floats(count, seed, lo, hi);
  Bytes bytes(count * 2);
  for (size_t i = 0; i < count; ++i) {
    const uint16_t h = to_16_bits(values[i], bf16);
    values[i] = from_16_bits(h, bf16);
    std::memcpy(bytes.data() + 2 * i, &h, 2);
  }
  return bytes;
}

}  // namespace

CheckSpec spec(const std::string& variant, const Case& c) {
  if (c.heads < 1 || c.seq < 1) throw std::invalid_argument("attention: heads and seq from 1");
  CheckSpec s;
  std::ostringstream what;
  what << variant << " " << dtype_name(c.dtype) << " on " << c.heads << " head"
       << (c.heads == 1 ? "" : "s") << ", seq=" << c.seq << ", d=" << c.dim
       << (c.causal ? ", causal" : "") << (c.large ? ", scores past 88" : "") << " [seed "
       << c.seed << "]";
  s.what = what.str();
  const uint64_t H = c.heads, S = c.seq, D = c.dim;
  s.call.variant = variant;
  s.call.params = Sig::params(c.heads, c.seq, c.dim, c.causal, c.dtype);
  s.call.capture = c.capture;
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{H, S, D, c.dtype});
  const bool bf16 = c.dtype == DType::kBF16;
  const float qk_lo = c.large ? kLargeLo : -kUnitRange, qk_hi = c.large ? kLargeHi : kUnitRange;
  // The inputs stay here, in the judge, for the reference: the worker gets copies.
  struct Inputs {
    std::vector<float> q, k, v;
  };
  auto inputs = std::make_shared<std::vector<Inputs>>(c.calls);
  for (int call = 0; call < c.calls; ++call) {
    const uint64_t seed = mix_seed(c.seed, static_cast<uint64_t>(call));
    Inputs& in = (*inputs)[call];
    std::vector<Bytes>& bytes = s.call.inputs.emplace_back(Sig::kCount);
    bytes[Sig::kQ] = draw(in.q, H * S * D, mix_seed(seed, 1), qk_lo, qk_hi, bf16);
    bytes[Sig::kK] = draw(in.k, H * S * D, mix_seed(seed, 2), qk_lo, qk_hi, bf16);
    bytes[Sig::kV] = draw(in.v, H * S * D, mix_seed(seed, 3), -kUnitRange, kUnitRange, bf16);
  }
  s.verify = [inputs, c](int call, const std::vector<Bytes>& outputs) {
    const Inputs& in = (*inputs)[call];
    const Reference r = reference(in.q, in.k, in.v, c.heads, c.seq, c.dim, c.causal);
    const Observed got = observe(outputs[Sig::kO], c.dtype);
    // One segment per query row; where the last tile of 64 queries is partial, its rows are a
    // group of their own (a tail a version forgot to mask or to store).
    VectorLayout layout{r.out.size(), static_cast<size_t>(c.dim), {}, "O"};
    const size_t full = static_cast<size_t>(c.seq) / 64 * 64;
    if (full != static_cast<size_t>(c.seq)) {
      const size_t S = c.seq, D = c.dim;
      layout.group = [S, D, full](size_t e) {
        return (e / D) % S < full ? std::string("queries in full tiles of 64")
                                  : std::string("queries past the last full tile of 64");
      };
    }
    const CompareResult cmp = compare_vector(got, r.out, bounds(r, c.dim, c.dtype), layout);
    std::ostringstream lead;
    lead << "O is wrong (segments are query rows of " << c.dim << " elements, head h's rows "
         << "h*" << c.seq << " to h*" << c.seq << "+" << c.seq - 1 << ")";
    if (c.large) lead << "; scores reach past 88, where expf overflows: subtract the row's max";
    lead << ": ";
    return verdict(cmp, lead.str());
  };
  s.fault_hint =
      "an illegal address usually means a row past seq (the last tile of queries or keys is "
      "partial: guard its loads and its stores), a head's offset computed in 32 bits, or "
      "head_dim mixed up with seq";
  s.launch_hint =
      "check the grid (query tiles x heads: gridDim.y and z stop at 65535) and the dynamic shared "
      "memory your launcher asks for (at most 48 KiB without cudaFuncSetAttribute's opt-in, 227 "
      "KiB with it)";
  return s;
}

}  // namespace labkit::ops::attention
