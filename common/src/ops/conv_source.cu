// The conv family's generated sources (labkit/source.hpp; labkit/ops/conv_dist.hpp): x, its
// shift's segment H*W (the buffer's last two dims), and w, the segment K*K. Drawn by the
// executor (unshifted: it has no dims) and the judges.
#include <stdexcept>

#include "labkit/elementwise_fill.cuh"
#include "labkit/ops/conv_dist.hpp"
#include "labkit/source.hpp"

namespace labkit::ops::conv {

struct InputValues {
  using value_type = float;
  ConvDist d;
  __device__ float operator()(uint64_t i) const { return conv_value(d, i); }
};

namespace {

template <Tensor t>
InputValues values(const SourceArgs& a) {
  return {make_conv_dist(t, a.seed, a.count, a.plane)};
}

// The last two dims of an NCHW tensor (x) or of w's {C_out, C_in, K, K}.
size_t plane(const std::vector<uint64_t>& dims, const std::string& buffer) {
  if (dims.size() != 4) {
    throw std::invalid_argument("the conv input " + buffer + " needs its 4 dims (NCHW)");
  }
  return static_cast<size_t>(dims[2] * dims[3]);
}

}  // namespace

extern const SourceKind kXKind =
    generated_source<&values<Tensor::kX>>(kSourceX, "conv x", 4, plane);
extern const SourceKind kWKind =
    generated_source<&values<Tensor::kW>>(kSourceW, "conv w", 4, plane);

}  // namespace labkit::ops::conv
