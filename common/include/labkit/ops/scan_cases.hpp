// The scan family's tests as data (labkit/cases.hpp): what a row of a lab's cases file means.
//   dtype     "f32" | "i32"                        in the name as f32, i32
//   n         elements                             in the name as n<N>
//   offset    `in` this many elements past a 16-byte boundary (0..3)   in the name as off<O>
//   calls     calls on the same buffers, fresh inputs each (default 1)
//   capture   record the launcher under stream capture and replay it (default false)
//   race      compute-sanitizer racecheck instead of the plain check (default false; skipped,
//             visibly, when the judge was given no sanitizer)
// From kDeviceInputsFrom elements the inputs are drawn on the GPU (and a one-call output
// checked there): nothing that size goes through the host.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace labkit::ops::scan {

inline constexpr size_t kDeviceInputsFrom = size_t{1} << 26;

// Registers the lab's suites (labkit::cases::lab_suites()) for `variants`, the workspace of a
// call of n elements being workspace(n) elements (the lab's scan_workspace_size). Returns true,
// for a static initializer in the lab's test program.
bool register_cases(const std::vector<std::string>& variants, size_t (*workspace)(size_t n));

}  // namespace labkit::ops::scan
