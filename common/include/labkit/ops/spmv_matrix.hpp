// Sparse matrices for the spmv op family (lab 06): CSR on the host, the generators the tests
// and the benchmark draw their matrices from, and a Matrix Market reader so that an instructor
// can drop in real matrices. Plain C++, no CUDA: the CPU tests of all of this run anywhere.
//
// CSR as the lab (and cuSPARSE) takes it, 32-bit indices:
//   row_ptr[rows + 1], non-decreasing, row_ptr[0] = 0, row_ptr[rows] = nnz;
//   col_idx[nnz], each in [0, cols); values[nnz].
// Row r holds the entries row_ptr[r] .. row_ptr[r + 1] - 1. Within a row the columns may come
// in any order, and one column may appear more than once: duplicate entries ADD UP (y_r gets
// a * x_c for each of them), which is what cuSPARSE computes for such a matrix too.
#pragma once

#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

namespace labkit::ops::spmv {

struct Csr {
  int32_t rows = 0, cols = 0;
  std::vector<int32_t> row_ptr{0};  // rows + 1
  std::vector<int32_t> col_idx;     // nnz
  std::vector<float> values;        // nnz (generators: 1.0f; the tests draw their own values)
  int64_t nnz() const { return static_cast<int64_t>(col_idx.size()); }
  int32_t row_length(int32_t r) const { return row_ptr[r + 1] - row_ptr[r]; }
};

// "" when `m` is a well-formed CSR matrix as above (rows, cols >= 1), else the first problem.
std::string validate(const Csr& m);

// The largest nnz this lab handles: 32-bit indices, so nnz <= 2^31 - 1; the generators and
// the reader refuse more.
inline constexpr int64_t kMaxNnz = 2147483647;

// ---- generators: deterministic from their arguments (seed included), values all 1.0f.
// Each throws std::invalid_argument on impossible arguments (a row longer than cols, ...).

// The 2D 5-point Laplacian of an nx x ny grid: rows = cols = nx * ny; row (i, j) holds the
// centre (4.0) and its up to four neighbours (-1.0), columns sorted. Boundary rows are shorter.
Csr laplacian_2d(int32_t nx, int32_t ny);

// Every row r gets a length drawn uniformly from [min_len, max_len] (min_len == max_len: a
// fixed length), its columns distinct, uniform in [0, cols), sorted.
Csr uniform_random(int32_t rows, int32_t cols, int32_t min_len, int32_t max_len, uint64_t seed);

// Power-law row lengths: P(len >= k) ~ (k / min_len)^-(alpha - 1), cut at max_len (<= cols);
// columns distinct, uniform, sorted. alpha in (1, 4]: 2.0-2.5 looks like web and social graphs.
Csr power_law(int32_t rows, int32_t cols, double alpha, int32_t min_len, int32_t max_len,
              uint64_t seed);

// Uniform rows of [min_len, max_len] entries where each row is empty with probability
// `empty_fraction`; the first and the last rows are always empty (the ends are where a kernel
// that skips empty rows, or runs one past the last row, goes wrong).
Csr with_empty_rows(int32_t rows, int32_t cols, int32_t min_len, int32_t max_len,
                    double empty_fraction, uint64_t seed);

// Short uniform rows of [min_len, max_len] entries and one dense row at `dense_row` holding
// `dense_len` distinct sorted columns (dense_len == cols: every column).
Csr one_dense_row(int32_t rows, int32_t cols, int32_t min_len, int32_t max_len, int32_t dense_row,
                  int32_t dense_len, uint64_t seed);

// One row of `len` distinct sorted columns in [0, cols).
Csr single_row(int32_t cols, int32_t len, uint64_t seed);

// rows x cols with no entry at all: nnz = 0, every y_r = 0.
Csr no_entries(int32_t rows, int32_t cols);

// The same matrix with the columns of each row in a random order (values moved with them).
Csr shuffled_within_rows(const Csr& m, uint64_t seed);

// The same matrix with about `fraction` of its entries repeated in their row (same column,
// same value: the row's sum gains that term again), at random places in the row.
Csr with_duplicates(const Csr& m, double fraction, uint64_t seed);

// ---- Matrix Market (https://math.nist.gov/MatrixMarket/formats.html), coordinate format:
//   %%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric>
//   % comments (and blank lines) anywhere before the size line
//   rows cols entries
//   i j [value]        (1-based), `entries` lines
// Symmetric files list the lower triangle; the reader adds the mirror of every off-diagonal
// entry. Pattern files get value 1.0. Entries become CSR rows in file order within a row
// (unsorted, duplicates kept: they add up). Anything else (array format, complex, hermitian,
// skew-symmetric, a bad header, an index out of range, a wrong entry count, a truncated file,
// a non-numeric field, a symmetric entry above the diagonal) throws MatrixMarketError whose
// message names the source and the line.
class MatrixMarketError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `source` names the input in messages ("a.mtx").
Csr read_matrix_market(std::istream& in, const std::string& source);
Csr read_matrix_market_file(const std::string& path);

}  // namespace labkit::ops::spmv
