// The spmv op family's signature (lab 06): y = A x, A a CSR matrix (rows x cols, nnz entries,
// 32-bit indices, float values); the launcher is fn(rows, cols, nnz, row_ptr, col_idx, values, x,
// y, workspace, stream). The one declaration of its buffers and parameters
// (labkit/signature.hpp): the worker, the judge and the benchmark derive theirs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "labkit/signature.hpp"

namespace labkit::ops::spmv {

struct Sig {
  struct Param {
    enum : int { kRows, kCols, kNnz, kCount };
  };
  enum Buf : int { kRowPtr, kColIdx, kValues, kX, kY, kWorkspace, kCount };
  struct Sizes {
    uint64_t rows, cols, nnz;
    uint64_t workspace_bytes;  // the lab's spmv_workspace_bytes(rows, nnz), in whole words
  };
  static constexpr BufDecl<Sizes> kBufs[] = {
      {kRowPtr, "row_ptr", protocol::Role::kInput, DType::kI32,
       [](const Sizes& s) { return Dims{s.rows + 1}; }},
      {kColIdx, "col_idx", protocol::Role::kInput, DType::kI32,
       [](const Sizes& s) { return Dims{s.nnz}; }},
      {kValues, "values", protocol::Role::kInput, DType::kF32,
       [](const Sizes& s) { return Dims{s.nnz}; }},
      {kX, "x", protocol::Role::kInput, DType::kF32, [](const Sizes& s) { return Dims{s.cols}; }},
      {kY, "y", protocol::Role::kOutput, DType::kF32, [](const Sizes& s) { return Dims{s.rows}; }},
      {kWorkspace, "workspace", protocol::Role::kInOut, DType::kF32,
       [](const Sizes& s) { return Dims{(s.workspace_bytes + 3) / 4}; }},
  };
  static std::vector<int64_t> params(int64_t rows, int64_t cols, int64_t nnz) {
    return {rows, cols, nnz};
  }
};
static_assert(signature_ok(Sig::kBufs, Sig::kCount), "spmv: one row per buffer, in enum order");

}  // namespace labkit::ops::spmv
