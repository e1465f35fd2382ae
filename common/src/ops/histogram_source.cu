// The histogram family's generated sources (labkit/source.hpp; labkit/ops/histogram_dist.hpp):
// bytes and int32 values of distribution lo, in [0, hi). Drawn by the executor and the judges.
#include "labkit/elementwise_fill.cuh"
#include "labkit/ops/histogram_dist.hpp"
#include "labkit/source.hpp"

namespace labkit::ops::histogram {

template <typename T>
struct InputValues {
  using value_type = T;
  HistogramDist d;
  __device__ T operator()(uint64_t i) const { return static_cast<T>(histogram_value(d, i)); }
};

namespace {

template <typename T>
InputValues<T> values(const SourceArgs& a) {
  return {make_histogram_dist(a.seed, static_cast<uint32_t>(a.lo), static_cast<uint32_t>(a.hi))};
}

}  // namespace

extern const SourceKind kU8Kind =
    generated_source<&values<uint8_t>>(kSourceU8, "histogram u8", 1);
extern const SourceKind kI32Kind =
    generated_source<&values<int32_t>>(kSourceI32, "histogram i32", 4);

}  // namespace labkit::ops::histogram
