// Start-up shared by the judges (the test and the benchmark programs): reads the labkit flags
// (--labkit-worker, --labkit-worker-for, --labkit-results-fd, --labkit-seed-stdin,
// --labkit-call-timeout, --labkit-test-budget, --labkit-sanitizer, --labkit-list-benchmarks)
// out of argv, hardens the process, and sets the seed.
#pragma once

#include <string>

#include "labkit/json.hpp"  // json_quote, for the results lines

namespace labkit {

struct JudgeArgs {
  int results_fd = -1;  // where results go (-1: console only)
  bool smoke = false;   // benchmarks: --smoke
  // Benchmarks: --labkit-list-benchmarks prints the names of the benchmarks this program has
  // (one per line, those --smoke would run with it) and runs nothing: no GPU needed.
  bool list = false;
};

// Removes the labkit flags from argv. Throws std::invalid_argument with a usage message.
JudgeArgs parse_judge_args(int& argc, char** argv);

// Writes all of `text` to `fd` (results are small); false on failure.
bool write_all(int fd, const std::string& text);

}  // namespace labkit
