// The reduce family's float inputs as a generated source (labkit/source.hpp): reduce_value of
// labkit/ops/reduce_dist.hpp, n = the buffer's count. Drawn by the executor and the judges.
#include "labkit/elementwise_fill.cuh"
#include "labkit/ops/reduce_dist.hpp"
#include "labkit/source.hpp"

namespace labkit::ops::reduce {

struct F32Values {
  using value_type = float;
  ReduceDist d;
  __device__ float operator()(uint64_t i) const { return reduce_value(d, i); }
};

namespace {

F32Values f32_values(const SourceArgs& a) { return {make_reduce_dist(a.seed, a.count)}; }

}  // namespace

extern const SourceKind kF32Kind = generated_source<&f32_values>(kSourceF32, "reduce f32", 4);

}  // namespace labkit::ops::reduce
