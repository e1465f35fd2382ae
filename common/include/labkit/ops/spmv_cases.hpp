// The spmv family's tests as data (labkit/cases.hpp): what a row of lab 06's cases files means.
//   matrix    a named value of the file, [matrix.<name>]     in the name as <name>  (required)
//   calls     calls on the same buffers, fresh values, x and workspace garbage each (default 1)
//   capture   record the launcher under stream capture and replay it (default false)
// A matrix's fields (in the row as matrix.<field>): `kind`, the generator of
// labkit/ops/spmv_matrix.hpp, and its arguments; counts are whole numbers, fractions numbers.
//   laplacian_2d      nx, ny; jitter (optional): nx and ny each less by a number below it,
//                     drawn from the seed
//   uniform_random    rows, cols, min_len, max_len
//   power_law         rows, cols, alpha, min_len, max_len
//   with_empty_rows   rows, cols, min_len, max_len, empty_fraction
//   one_dense_row     rows, cols, min_len, max_len, dense_row (a row, or "drawn": from the
//                     seed), dense_len
//   single_row        cols, len
//   no_entries        rows, cols
//   any of these, optional: duplicates (fraction of the entries repeated in their row, then)
//                     shuffled (true: the columns of each row in random order)
//   device_uniform    rows, cols, nnz: drawn on the GPU (rows share the entries evenly, columns
//                     uniform in any order), for sizes that must not pass through the host
//   matrix_market     file: a Matrix Market file, its path from the lab's folder
// and, for every kind, `description` (optional): the matrix in failure messages. A generated
// pattern is drawn from the matrix's name (and the judge's seed in a seeded suite): the same
// for every version of the lab; values and x from the test's own seed.
// A matrix of an unknown kind, without a field its kind needs, with a field it does not know or
// a value that is not of the field's type stops the program before any test runs, naming the
// cases file and line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "labkit/cases.hpp"
#include "labkit/ops/spmv.hpp"
#include "labkit/ops/spmv_matrix.hpp"

namespace labkit::ops::spmv {

// What the driver needs of the lab.
struct LabInfo {
  std::string dir;  // the lab's folder (matrix_market files are found from it)
  size_t (*workspace_bytes)(size_t rows, size_t nnz) = nullptr;  // spmv_workspace_bytes
};

// The kinds, in the order above.
std::vector<std::string> matrix_kinds();

// Throws std::invalid_argument, naming the matrix and the field, unless the row's matrix is
// one of the kinds above with its fields.
void check_matrix(const cases::Row& row);

// True for the kinds the GPU draws (device_uniform): device_matrix(row) then says their size.
bool on_device(const cases::Row& row);
DeviceMatrix device_matrix(const cases::Row& row);

// The row's matrix, on the host: generated from `pattern_seed`, or read from its file under
// `lab_dir` (throws MatrixMarketError when it does not read).
Csr make_matrix(const cases::Row& row, uint64_t pattern_seed, const std::string& lab_dir);

// The family (its keys, its check of every row, its runner).
cases::Family family(const LabInfo& lab);

// Registers the lab's suites (labkit::cases::lab_suites()) for `variants`. Returns true, for a
// static initializer in the lab's test program.
bool register_cases(const std::vector<std::string>& variants, const LabInfo& lab);

}  // namespace labkit::ops::spmv
