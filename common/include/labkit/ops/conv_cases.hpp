// The conv family's tests as data (labkit/cases.hpp): what a row of a lab's cases file means.
//   shape     a named shape, declared as a table of the cases file:
//               [shape.pad1_bias]
//               n = 2         images
//               c_in = 3      input channels
//               h = 9         input height
//               w = 9         input width
//               c_out = 4     output channels (filters)
//               k = 3         filter size (K x K)
//               stride = 1
//               pad = 1       zero padding on every side
//               bias = true   the launcher gets a bias (else nullptr)
//             all nine required, counts up to INT_MAX (the lab's shape struct holds ints), and
//             a valid shape (Shape::validate: sizes >= 1, K <= H + 2P, W + 2P). In the name as
//             its table's name (v1_im2col_pad1_bias), or as its optional field `name` (a hidden
//             shape with a name the public file already gives another: [shape.k1_hidden] with
//             name = "k1")
//   calls     calls on the same buffers, fresh inputs and workspace garbage each (default 1)
//   capture   record the launcher under stream capture and replay it (default false)
// A row outside these stops the program before any test runs, naming the cases file and line.
// Each call's workspace is the lab's conv_workspace_size(shape), through its binding.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "labkit/cases.hpp"
#include "labkit/ops/conv_signature.hpp"

namespace labkit::ops::conv {

// The lab's workspace size in floats (its conv_workspace_size on its own shape struct).
using WorkspaceSize = size_t (*)(const Shape& shape);

// The row's shape (its fields shape.n ... shape.pad), checked as above. Throws
// std::invalid_argument saying what is wrong.
Shape row_shape(const cases::Row& row);

// The family (its keys, its check of every row, its runner).
cases::Family family(WorkspaceSize workspace);

// Registers the lab's suites (labkit::cases::lab_suites()) for `variants`. Returns true, for a
// static initializer in the lab's test program.
bool register_cases(const std::vector<std::string>& variants, WorkspaceSize workspace);

}  // namespace labkit::ops::conv
