#include "labkit/ops/conv.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/keep_last.hpp"
#include "labkit/ops/conv_dist.hpp"
#include "labkit/parallel.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::conv {

std::string Shape::describe() const {
  std::ostringstream os;
  os << "N=" << n << " C_in=" << c_in << " " << h << "x" << w << " -> C_out=" << c_out
     << " K=" << k << " S=" << stride << " P=" << pad;
  // The output's size divides by the stride: none to give for an invalid one (validate's
  // message describes the shape too).
  if (stride >= 1) os << " (out " << h_out() << "x" << w_out() << ")";
  return os.str();
}

void Shape::validate() const {
  if (n < 1 || c_in < 1 || h < 1 || w < 1 || c_out < 1 || k < 1 || stride < 1 || pad < 0 ||
      k > h + 2 * pad || k > w + 2 * pad) {
    throw std::invalid_argument("conv: not a valid shape: " + describe());
  }
}

void reference(const Shape& s, const std::vector<float>& x, const std::vector<float>& w,
               const std::vector<float>& bias, std::vector<double>* y, std::vector<double>* sq) {
  s.validate();
  if (x.size() != s.x_count() || w.size() != s.w_count() ||
      (!bias.empty() && bias.size() != size_t(s.c_out))) {
    throw std::invalid_argument("conv::reference: buffer sizes do not match " + s.describe());
  }
  const int64_t ho = s.h_out(), wo = s.w_out(), plane = ho * wo, kk = s.k * s.k;
  y->assign(s.y_count(), 0.0);
  sq->assign(s.y_count(), 0.0);
  // One (image, output channel) plane per task, each output accumulated on its own in double;
  // over the cores from 4 million terms.
  const int64_t planes = s.n * s.c_out;
  const double plane_work = double(plane) * double(s.c_in * kk);
  const size_t serial_below = static_cast<size_t>(std::ceil(4e6 / std::max(1.0, plane_work)));
  parallel_for(size_t(planes), serial_below, [&](size_t first, size_t last) {
    for (int64_t p = int64_t(first); p < int64_t(last); ++p) {
      const int64_t img = p / s.c_out, co = p % s.c_out;
      double* out = y->data() + p * plane;
      double* out_sq = sq->data() + p * plane;
      const double b = bias.empty() ? 0.0 : double(bias[co]);
      for (int64_t oh = 0; oh < ho; ++oh) {
        for (int64_t ow = 0; ow < wo; ++ow) {
          double acc = b, acc_sq = b * b;
          for (int64_t ci = 0; ci < s.c_in; ++ci) {
            const float* xc = x.data() + (img * s.c_in + ci) * s.h * s.w;
            const float* wc = w.data() + (co * s.c_in + ci) * kk;
            for (int64_t i = 0; i < s.k; ++i) {
              const int64_t ih = oh * s.stride - s.pad + i;
              if (ih < 0 || ih >= s.h) continue;  // zero padding
              for (int64_t j = 0; j < s.k; ++j) {
                const int64_t iw = ow * s.stride - s.pad + j;
                if (iw < 0 || iw >= s.w) continue;
                const double term = double(wc[i * s.k + j]) * double(xc[ih * s.w + iw]);
                acc += term;
                acc_sq += term * term;
              }
            }
          }
          out[oh * wo + ow] = acc;
          out_sq[oh * wo + ow] = acc_sq;
        }
      }
    }
  });
}

double conv_bound_scale(const Shape& s, double c) {
  return c * std::sqrt(double(s.c_in * s.k * s.k)) * std::ldexp(1.0, -24);
}

std::vector<double> conv_bounds(const std::vector<double>& y, const std::vector<double>& sq,
                                const Shape& s, double c) {
  if (y.size() != sq.size()) throw std::invalid_argument("conv_bounds: y and sq differ in size");
  const double scale = conv_bound_scale(s, c);
  std::vector<double> bound(y.size());
  for (size_t i = 0; i < y.size(); ++i) bound[i] = scale * (std::sqrt(sq[i]) + std::fabs(y[i]));
  return bound;
}

namespace {

Bytes to_bytes(const std::vector<float>& v) {
  Bytes b(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<float> uniform(size_t count, uint64_t seed, float lo, float hi) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = uniform_f32(seed, i, lo, hi);
  return v;
}

struct Expected {
  std::vector<double> y, bound;
};

// The inputs and references of one case's calls.
struct Generated {
  std::vector<std::vector<Bytes>> inputs;  // [call][Sig::Buf]: x, w, bias, workspace garbage
  std::shared_ptr<const std::vector<Expected>> expected;
};

// What a case's inputs and references depend on (not its capture).
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       bool, uint64_t, size_t, int>;
Key key(const Case& c) {
  const Shape& s = c.shape;
  return {s.n, s.c_in, s.h, s.w, s.c_out, s.k, s.stride, s.pad, c.bias, c.seed, c.workspace,
          c.calls};
}

Generated generate(const Case& c) {
  Generated g;
  auto expected = std::make_shared<std::vector<Expected>>();
  const Shape& s = c.shape;
  for (int call = 0; call < c.calls; ++call) {
    const uint64_t seed = mix_seed(c.seed, static_cast<uint64_t>(call));
    // The family's distribution (conv_dist.hpp): the benchmark draws the same on the GPU.
    const ConvDist dx = make_conv_dist(Tensor::kX, mix_seed(seed, 1), s.x_count(), uint64_t(s.h * s.w));
    const ConvDist dw = make_conv_dist(Tensor::kW, mix_seed(seed, 2), s.w_count(), uint64_t(s.k * s.k));
    std::vector<float> x = draw_conv(dx), w = draw_conv(dw);
    std::vector<float> bias = draw_conv_bias(mix_seed(seed, 3), uint64_t(s.c_out), dx.scale, dw.scale);
    // Garbage of the size of real data: a kernel that reads the workspace before writing it
    // gets plausible-looking but wrong numbers, not only NaN.
    std::vector<float> garbage = uniform(c.workspace, mix_seed(seed, 4), -100.0f, 100.0f);
    Expected e;
    std::vector<double> sq;
    reference(s, x, w, c.bias ? bias : std::vector<float>{}, &e.y, &sq);
    e.bound = conv_bounds(e.y, sq, s);
    expected->push_back(std::move(e));
    std::vector<Bytes>& in = g.inputs.emplace_back(Sig::kCount);
    in[Sig::kX] = to_bytes(x);
    in[Sig::kW] = to_bytes(w);
    in[Sig::kBias] = to_bytes(bias);
    in[Sig::kWorkspace] = to_bytes(garbage);
  }
  g.expected = std::move(expected);
  return g;
}

KeepLast<Key, Generated> last_case;

}  // namespace

CheckSpec spec(const std::string& variant, const Case& c) {
  const Shape& s = c.shape;
  s.validate();
  CheckSpec sp;
  std::ostringstream what;
  what << variant << " on " << s.describe() << (c.bias ? " with bias" : " without bias")
       << " [seed " << c.seed << "]";
  sp.what = what.str();
  sp.call.variant = variant;
  sp.call.params = Sig::params(s, c.bias);
  sp.call.capture = c.capture;
  sp.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{s, c.workspace});
  const uint64_t n = s.n, co = s.c_out, ho = s.h_out(), wo = s.w_out();
  const std::shared_ptr<const Generated> g = last_case.get(key(c), [&] { return generate(c); });
  sp.call.inputs = g->inputs;
  const auto expected = g->expected;
  // The border of the map: outputs whose window reaches into the padding.
  const size_t border = size_t((s.pad + s.stride - 1) / s.stride);
  const NchwLayout layout{size_t(n), size_t(co), size_t(ho), size_t(wo), border,
                          size_t(s.stride), "y"};
  const std::string shape = s.describe();
  sp.verify = [expected, layout, shape](int call, const std::vector<Bytes>& outputs) {
    const Expected& e = (*expected)[call];
    return verdict(compare_nchw(observe(outputs[Sig::kY], DType::kF32), e.y, e.bound, layout),
                   "y is wrong for " + shape + ": ");
  };
  sp.fault_hint =
      "an illegal address usually means an input index outside the image (padding must be "
      "read as zero, never loaded: check ih and iw against 0 and H, W), an unrolled index past "
      "C_in*K*K rows or H_out*W_out columns, or a workspace use beyond conv_workspace_size()";
  return sp;
}

}  // namespace labkit::ops::conv
