// The spmv family's generated sources (labkit/source.hpp; labkit/ops/spmv_dist.hpp): x, uniform
// in [lo, hi) but for one planted column; and a row_ptr of count - 1 rows sharing hi entries
// evenly. Drawn by the executor and the judges.
#include <stdexcept>

#include "labkit/elementwise_fill.cuh"
#include "labkit/ops/spmv_dist.hpp"
#include "labkit/source.hpp"

namespace labkit::ops::spmv {

struct XValues {
  using value_type = float;
  SpmvX d;
  __device__ float operator()(uint64_t i) const { return spmv_x_value(d, i); }
};

// out[i] = floor(i * nnz / rows).
struct RowPtrEven {
  using value_type = int32_t;
  uint64_t rows, nnz;
  __device__ int32_t operator()(uint64_t i) const { return static_cast<int32_t>(i * nnz / rows); }
};

namespace {

XValues x_values(const SourceArgs& a) {
  return {make_spmv_x(a.seed, a.count, static_cast<float>(a.lo), static_cast<float>(a.hi))};
}

RowPtrEven row_ptr_even(const SourceArgs& a) {
  if (a.count < 2) throw std::invalid_argument("the even row_ptr source: no rows");
  return {a.count - 1, static_cast<uint64_t>(a.hi)};
}

}  // namespace

extern const SourceKind kXKind = generated_source<&x_values>(kSourceX, "spmv x", 4);
extern const SourceKind kRowPtrEvenKind =
    generated_source<&row_ptr_even>(kSourceRowPtrEven, "spmv even row_ptr", 4);

}  // namespace labkit::ops::spmv
