// The attention op family, judge side (lab 11): O = softmax(Q K^T / sqrt(d)) V per head, causal or
// not, in IEEE half or bfloat16 with FP32 arithmetic (attention_signature.hpp). The inputs are
// drawn here, on the judge's CPU, rounded to the type, and sent to the worker; the reference is
// the same product in double. Tests as data (labkit/cases.hpp), the keys of a row:
//   dtype     "f16" | "bf16"                                  in the name as is    (required)
//   heads     batch x heads: independent problems             in the name as h<H>  (required)
//   seq       queries = keys, from 1                          in the name as s<S>  (required)
//   dim       the head dimension, 64 or 128                   in the name as d<D>  (required)
//   causal    query i sees keys j <= i only                   in the name as causal (default no)
//   scale     "unit": Q, K uniform in [-1, 1] (scores of order 1); "large": in [1, 8] (every
//             row's largest score past 88, where expf overflows, at both head dimensions: only
//             a softmax that subtracts the maximum passes)
//                                                             in the name as is (default unit)
//   calls, capture, race   as in every family (labkit/cases.hpp)
// V is uniform in [-1, 1] always.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "labkit/check.hpp"
#include "labkit/dtype.hpp"
#include "labkit/random.hpp"
#include "labkit/ops/attention_signature.hpp"

namespace labkit::ops::attention {

struct Case {
  int heads = 1, seq = 1, dim = 64;
  bool causal = false;
  bool large = false;        // Q and K in [1, 8]: scores past expf's range
  DType dtype = DType::kF16;
  uint64_t seed = 1;
  int calls = 1;             // > 1: call again on fresh inputs each time (same buffers)
  bool capture = false;      // record the launcher under stream capture and replay it
};

// The inputs' ranges: V and (unit) Q, K in [-1, 1]; large Q, K in [kLargeLo, kLargeHi]: a
// score's mean is 20.25 sqrt(d) (229 at d = 128, 162 at 64), so every row's largest is past 88.
inline constexpr float kUnitRange = 1.0f, kLargeLo = 1.0f, kLargeHi = 8.0f;

// The reference in double of inputs already rounded to the type, per output element
// [head][query][dim]: the output; the walk sqrt(sum_j p_ij^2 v_jc^2); and the scores' size
// sum_j p_ij a_ij |v_jc|, a_ij = sum_k |q_ik k_jk| / sqrt(d).
struct Reference {
  std::vector<double> out, walk, score;
};
Reference reference(const std::vector<float>& q, const std::vector<float>& k,
                    const std::vector<float>& v, int heads, int seq, int dim, bool causal);

// The bound of one output element (attention.cpp says why): c u (walk + |out|) for rounding P to
// the type on its way into the tensor cores and the output to the type (u: the type's unit
// roundoff, 2^-11 for half, 2^-8 for bfloat16), plus c_s d 2^-24 score for the scores' FP32 sums
// of d products (linear in d: tensor cores truncate), plus half's subnormal spacing 2^-24 (an
// output below 2^-14 rounds to a multiple of it: an absolute error, not a relative one).
inline constexpr double kAttentionC = 4.0, kAttentionScoreC = 2.0;
LABKIT_HD inline double unit_roundoff(bool bf16) {
  return bf16 ? 0.00390625 /* 2^-8 */ : 0.00048828125 /* 2^-11 */;
}
LABKIT_HD inline double bound(double out, double walk, double score, int dim, bool bf16) {
  return kAttentionC * unit_roundoff(bf16) * (walk + (out < 0 ? -out : out)) +
         kAttentionScoreC * dim * 5.9604644775390625e-08 /* 2^-24 */ * score +
         (bf16 ? 0.0 : 5.9604644775390625e-08 /* half's subnormal spacing */);
}
std::vector<double> bounds(const Reference& r, int dim, DType dtype);

// The check of variant `variant` on the case's inputs: every element of O, the canaries, and
// that Q, K and V are unchanged.
CheckSpec spec(const std::string& variant, const Case& c);

// Registers the lab's own suites (labkit::cases::lab_suites()) for `variants`; true, for a
// static initializer in the lab's tests/cases.cpp.
bool register_cases(const std::vector<std::string>& variants);

}  // namespace labkit::ops::attention
