// Start-up shared by the judges (the test and the benchmark programs): reads the labkit flags
// (--labkit-worker, --labkit-worker-for, --labkit-results-fd, --labkit-seed-stdin,
// --labkit-ready-fd, --labkit-call-timeout, --labkit-test-budget, --labkit-sanitizer, --labkit-profiler,
// --labkit-list-benchmarks) out of argv, hardens the process, and sets the seed.
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
  // --labkit-ready-fd=N: the grader starts this judge before it may use the GPU alone; the
  // judge gets ready (its GPU context, its workers, its benchmarks' instances), says so on N
  // and waits for the line 'go' on standard input, which the grader sends once the GPU is
  // this judge's (judge_ready).
  int ready_fd = -1;
};

// Removes the labkit flags from argv. Throws std::invalid_argument with a usage message.
JudgeArgs parse_judge_args(int& argc, char** argv);

// With --labkit-ready-fd: writes one line to that descriptor, closes it, then waits for the
// line 'go' on standard input (after the seed, with --labkit-seed-stdin). Without: nothing.
// Throws std::invalid_argument when something else, or nothing, comes.
void judge_ready(JudgeArgs& args);

// Writes all of `text` to `fd` (results are small); false on failure.
bool write_all(int fd, const std::string& text);

}  // namespace labkit
