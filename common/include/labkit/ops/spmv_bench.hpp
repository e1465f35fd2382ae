// The spmv op family, benchmark side: cuSPARSE's generic cusparseSpMV (CSR, FP32, 32-bit
// indices) on the same matrix and the same fresh values and x as every timed student call,
// and the check of each call's y against it.
//
// What stays and what changes between timed calls: the pattern (row_ptr, col_idx) is uploaded
// once (a real solver multiplies by the same matrix many times); values and x are drawn fresh
// on the device before every call (protocol::Source::kUniformF32), so no result can be cached.
// Minimum bytes: 4 nnz (values) + 4 nnz (col_idx) + 4 (rows + 1) (row_ptr) + 4 cols (x, read
// once) + 4 rows (y); FLOP: 2 nnz.
#pragma once

#include <memory>
#include <string>

#include "labkit/bench.hpp"
#include "labkit/ops/spmv_matrix.hpp"

namespace labkit::ops::spmv {

// "spmv/<variant>/<matrix>"; `workspace_bytes` of garbage are handed to the launcher.
bench::Spec benchmark(const std::string& variant, const std::string& matrix_name,
                      std::shared_ptr<const Csr> matrix, size_t workspace_bytes);

// The minimum bytes an SpMV on `m` moves (above).
double min_bytes(const Csr& m);

}  // namespace labkit::ops::spmv
