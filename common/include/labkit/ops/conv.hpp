// The conv op family, judge side (lab 07): forward 2D convolution, NCHW float32.
//
//   y[n][co][oh][ow] = bias[co] + sum over ci, i, j of
//                      w[co][ci][i][j] * x[n][ci][oh*S - P + i][ow*S - P + j]
//
// with zero where the input index falls outside the image (padding), H_out = (H + 2P - K)/S + 1
// and W_out likewise. The bias is optional (the launcher gets nullptr when there is none).
// The reference is a direct convolution accumulated in double, over the CPU's cores. An
// element passes when
//
//   |got - ref| <= 6 * sqrt(D) * 2^-24 * (sqrt(bias^2 + sum (w x)^2) + |ref|),  D = C_in*K*K:
//
// a float32 sum of D products in any honest order (a direct loop over (ci, i, j) in any order,
// with or without FMA; im2col + a tiled GEMM, split-K included; an implicit GEMM) errs by a
// random walk of D roundings, each at most 2^-24 of the running sum: about sqrt(D) times the
// terms' size for zero-mean terms, |ref| for terms with a mean (the matmul labs' bound,
// matmul_reference.hpp). What it lets through and what it does not: docs/threat-model.md,
// "Detection power (conv)"; common/tests/conv_dist_test.cpp measures it. The comparison is
// compare_nchw: which images and channels are wrong, the border (the padding width) against
// the interior, and the stride phase.
//
// Inputs (conv_dist.hpp, the same in the tests and the benchmark): per call, power-of-two
// scales, x with an offset of random sign and a shift per (image, channel), w nearly zero-mean
// (a |ref|-relative bound widens with a mean), a bias the size of one term, and two planted
// values in x and in w far larger than the rest. The workspace holds fresh garbage before every
// call. The buffers, and the Shape, are declared once, in conv_signature.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "labkit/check.hpp"
#include "labkit/ops/conv_signature.hpp"

namespace labkit::ops::conv {

inline constexpr double kConvBoundC = 6.0;

struct Case {
  Shape shape;
  bool bias = true;
  uint64_t seed = 1;
  size_t workspace = 0;  // float elements (the lab's conv_workspace_size(shape))
  int calls = 1;         // > 1: same buffers, fresh inputs and fresh garbage each call
  bool capture = false;  // record the launcher under stream capture
};

// The reference in double: y (N x C_out x H_out x W_out) and, per output, bias^2 + sum (w x)^2
// (bias may be empty: none). Uses up to 16 threads for large shapes.
void reference(const Shape& s, const std::vector<float>& x, const std::vector<float>& w,
               const std::vector<float>& bias, std::vector<double>* y, std::vector<double>* sq);

// Per-element bounds: c * sqrt(C_in*K*K) * 2^-24 * (sqrt(sq) + |y|).
// c sqrt(C_in K K) 2^-24: bound_i = scale (sqrt(sq_i) + |y_i|) (also checked on the GPU, in
// the benchmark: labkit/device_compare.hpp).
double conv_bound_scale(const Shape& s, double c = kConvBoundC);
std::vector<double> conv_bounds(const std::vector<double>& y, const std::vector<double>& sq,
                                const Shape& s, double c = kConvBoundC);

CheckSpec spec(const std::string& variant, const Case& c);

}  // namespace labkit::ops::conv
