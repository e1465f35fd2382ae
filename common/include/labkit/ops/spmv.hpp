// The spmv op family, judge side (lab 06): y = A x, A a CSR matrix (spmv_matrix.hpp); its
// buffers are declared once, in spmv_signature.hpp.
//
// The matrix's pattern (row_ptr, col_idx) comes from the Case; its values and x are drawn
// fresh for every call from the seed: values uniform in [-1, 2), x uniform in [-0.5, 1.5)
// (both with a non-zero mean and both signs, so a swapped index or a missing term shows).
// y is poisoned (NaN) before every call: a kernel that adds into y instead of writing it
// reads NaN. The workspace is filled with garbage before every call.
//
// The rule, per row r of length len_r (entries, duplicates counted):
//   |y_r - ref_r| <= min(2 * len_r, 8 * sqrt(len_r)) * 2^-24 * sum_e |a_e x_col(e)|,
// with ref_r in double, in the tests and the benchmark alike. 2 * len_r is the worst case of
// any order (a rounded product and a rounded add per entry); above 16 entries, where
// 8 * sqrt(len_r) is smaller, rounding errors add up like a random walk in every honest order
// (sequential, a tree, lanes then a tree, atomics): common/tests/spmv_bound_test.cpp checks
// them up to the benchmark's 2^22-entry row. The worst case alone would be wider than y itself
// from about 2^21 entries, and hide a half-summed row. An empty row's bound is 0: its y_r must
// be exactly 0. The "where" report groups the rows by
// length ("rows of length 0", "1-8", "9-32", "33-256", ">256"), so a failure reads as "wrong
// only on rows longer than 32" or "only on the empty rows".
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "labkit/check.hpp"
#include "labkit/ops/spmv_matrix.hpp"
#include "labkit/ops/spmv_signature.hpp"

namespace labkit::ops::spmv {

inline constexpr double kSpmvBoundC = 2.0;   // per entry, the worst case
inline constexpr double kSpmvWalkC = 8.0;    // times sqrt(len), the random walk
inline constexpr float kValueLo = -1.0f, kValueHi = 2.0f;
inline constexpr float kXLo = -0.5f, kXHi = 1.5f;

// A matrix drawn on the device, for sizes that must not pass through the host (nnz up to
// 2^31 - 1: 16 GiB of col_idx and values): `rows` rows sharing `nnz` entries evenly
// (row_ptr[r] = floor(r * nnz / rows)), columns uniform in [0, cols), in any order, repeats
// allowed. The worker draws it; the judge draws it again on its own GPU memory and multiplies
// in double there for the reference.
struct DeviceMatrix {
  int32_t rows = 0, cols = 0;
  int64_t nnz = 0;
};

struct Case {
  std::shared_ptr<const Csr> matrix;  // or, when null, `device`
  DeviceMatrix device;
  std::string name;            // the matrix in messages: "uniform 1000 x 1000, 8-24 per row"
  uint64_t seed = 1;           // values and x of call c: mix_seed(seed, c)
  size_t workspace_bytes = 0;  // the lab's spmv_workspace_bytes(rows, nnz)
  int calls = 1;               // > 1: same buffers, fresh values, x and garbage each call
  bool capture = false;        // record the launcher under stream capture
};

// The length class a row of `len` entries is reported in.
std::string length_class(int64_t len);

// The per-row bounds for `ref_abs` = sum_e |a_e x_col(e)| of each row.
double row_bound(int64_t len, double abs_sum);

CheckSpec spec(const std::string& variant, const Case& c);

}  // namespace labkit::ops::spmv
