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

}  // namespace

extern const SourceKind kF32Kind{
    kSourceF32, "reduce f32", 4,
    [](void* out, const SourceArgs& a, cudaStream_t s) {
      fill_elementwise(out, a.count, F32Values{make_reduce_dist(a.seed, a.count)}, s);
    },
    [](const void* x, const SourceArgs& a, cudaStream_t s) {
      return count_not_elementwise(x, a.count, F32Values{make_reduce_dist(a.seed, a.count)}, s);
    }};

}  // namespace labkit::ops::reduce
