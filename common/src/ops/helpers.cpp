// The op families' helpers (labkit/helper.hpp): the one list a family with a helper adds it to.
// Linked into the executor only (the helpers' libraries are the executor's, never a planner's).
#include "labkit/helper.hpp"

namespace labkit {
namespace ops::conv {
extern const plan::HelperKind kSgemmHelper, kSgemmBatchedHelper;
}

const std::vector<const plan::HelperKind*>& plan::family_helpers() {
  static const std::vector<const HelperKind*> kinds = {&ops::conv::kSgemmHelper,
                                                       &ops::conv::kSgemmBatchedHelper};
  return kinds;
}

}  // namespace labkit
