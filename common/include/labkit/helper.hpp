// A lab's helper: a library call the executor makes on a variant's behalf (lab 07 gives its
// im2col variant cuBLAS's SGEMM). In the planner a family's recording stub turns the student's
// call into a helper op (plan::record_helper, under the family's identifier); the executor runs
// it only where the judge says the variant is given it (--helpers), after checking that every
// matrix it reads or writes lies inside the call's buffers. The core knows no helper: each
// family brings its own as an entry of this table (common/src/ops/helpers.cpp, linked into the
// executor only).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace labkit::plan {

// Throws unless the matrix at ints[arg] (batch matrices `stride` elements apart, each rows x
// cols, of 4-byte elements) lies inside one of the call's buffers.
using InsideCheck = std::function<void(int arg, int64_t batch, int64_t stride, int64_t rows,
                                       int64_t cols)>;

struct HelperKind {
  uint32_t id = 0;           // HelperOp::helper
  uint32_t n_ints = 0;       // its arguments (addresses already mapped to the call's buffers)
  // Why a variant that is not given it cannot call it: every such call fails with this.
  const char* refusal = "";
  void (*setup)() noexcept = nullptr;  // once, after CUDA is up (null: nothing to start)
  // Checks every matrix with `inside`, then runs on `stream`.
  void (*run)(const int64_t* ints, const InsideCheck& inside, cudaStream_t stream) = nullptr;
};

// The families' helpers (common/src/ops/helpers.cpp).
const std::vector<const HelperKind*>& family_helpers();

inline const HelperKind* find_helper(uint32_t id) {
  for (const HelperKind* k : family_helpers()) {
    if (k->id == id) return k;
  }
  return nullptr;
}

}  // namespace labkit::plan
