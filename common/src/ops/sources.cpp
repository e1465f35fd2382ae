// The op families' generated sources (labkit/source.hpp): the one list a new family adds its
// sources to. Each is defined beside its family (common/src/ops/<family>_source.cu), under an
// identifier of its own (labkit/ops/<family>_dist.hpp); labkit:Sources.* checks that no two
// collide.
#include "labkit/source.hpp"

namespace labkit {
namespace ops {
namespace reduce { extern const SourceKind kF32Kind; }
namespace spmv { extern const SourceKind kXKind, kRowPtrEvenKind; }
namespace conv { extern const SourceKind kXKind, kWKind; }
namespace histogram { extern const SourceKind kU8Kind, kI32Kind; }
}  // namespace ops

const std::vector<const SourceKind*>& family_sources() {
  static const std::vector<const SourceKind*> kinds = {
      &ops::reduce::kF32Kind,  &ops::spmv::kXKind,      &ops::spmv::kRowPtrEvenKind,
      &ops::conv::kXKind,      &ops::conv::kWKind,      &ops::histogram::kU8Kind,
      &ops::histogram::kI32Kind,
  };
  return kinds;
}

}  // namespace labkit
