// The one check protocol every lab's tests use. A lab describes an op call (its inputs, its
// buffers) and how to verify one call's outputs; the protocol does the rest, the same way for
// every lab:
//   - the call runs in the worker, on guarded buffers with poisoned outputs;
//   - optionally under stream capture (all of the launcher's work must go onto `stream`);
//   - several calls on fresh inputs in one request (nothing may be cached between calls);
//   - inputs must come back unchanged, canary zones intact;
//   - a launch error, a fault, a crash or a hang fails this test only, with what happened;
//   - a failing call is re-run under compute-sanitizer memcheck when the judge has one, and
//     the finding (kind, kernel, source line) goes into the message;
//   - every failure ends with the line that replays it;
//   - a wrong output's comparison is also recorded as data on the test (record_where), which
//     the judge's results stream carries to the grader beside the message.
#pragma once

#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/judge.hpp"

namespace labkit {

struct CheckSpec {
  std::string what;  // "v1_naive on M=127 N=129 K=33 [seed 5]"
  OpCall call;
  // Verifies call `c`'s outputs ([buffer] bytes, empty for inputs): ok when right, else the
  // mismatch report (what is wrong and where) and, for a comparison, its where data
  // (labkit::verdict(compare_result, lead) makes both).
  std::function<Verdict(int c, const std::vector<Bytes>& outputs)> verify;
  // Optional, with call.keep_on_device (one call): checks the outputs where they are, on the GPU
  // ([buffer] device pointers, nullptr for inputs), with the judge's own reference computed
  // there: true when right. A wrong answer brings the outputs to the host, where `verify`
  // writes the report. For outputs of gigabytes, which would otherwise cross the host twice.
  std::function<bool(const std::vector<const void*>& outputs)> right_on_device;
  // Optional, with right_on_device: the report of a wrong answer, written from the outputs where
  // they are (a window of them to the host, not gigabytes), in place of bringing every output to
  // the host for `verify`. A wrong answer of a 2^32-element scan costs seconds, not minutes.
  std::function<Verdict(const std::vector<const void*>& outputs)> report_on_device;
  // Lab-specific advice appended to a launch error and to a fault.
  std::string launch_hint =
      "check the grid and block shape your launcher computes for this size (at most 1024 "
      "threads per block, every grid dimension >= 1, grid.y and grid.z <= 65535)";
  std::string fault_hint =
      "an illegal address usually means an index past the end of a buffer (bounds guard, "
      "row/col mix-up, loop bounds)";
};

::testing::AssertionResult check(const CheckSpec& spec);

// A graded race check: checks `spec` like check() (a wrong or crashing call fails here too),
// then runs its call once more under compute-sanitizer racecheck (slow: keep it small). Fails
// with the hazards found (errors and warnings alike), or when the run under racecheck did not
// complete. Tests call it only when sanitizer_available(), and skip visibly otherwise.
::testing::AssertionResult check_races(const CheckSpec& spec);
bool sanitizer_available();

// A call with more than this many bytes of buffers is large: it holds the memory lock.
inline constexpr uint64_t kLargeCallBytes = uint64_t{4} << 30;

// Holds the GPU's memory lock (WorkerOptions::memory_lock) while it lives, when `large` and a
// lock was given: large calls of all gradings on this GPU take turns. Never fails: without the
// lock file the retries below still apply.
class MemoryLock {
 public:
  explicit MemoryLock(bool large);
  ~MemoryLock();
  MemoryLock(const MemoryLock&) = delete;
  MemoryLock& operator=(const MemoryLock&) = delete;

 private:
  int fd_ = -1;
};

// Runs `fn`, the judge's own work on the GPU (a reference over inputs drawn on the device,
// gigabytes), and again after a pause while the GPU's memory is taken by other gradings' tests
// (cudaMalloc failing), for up to a minute; then the error goes on.
template <typename Fn>
auto retry_out_of_memory(Fn&& fn) -> decltype(fn()) {
  for (int attempt = 0;; ++attempt) {
    try {
      return fn();
    } catch (const CudaError& e) {
      if (e.code() != cudaErrorMemoryAllocation || attempt >= 12) throw;
      cudaGetLastError();
      ::sleep(5);
    }
  }
}

// retry_out_of_memory, holding the memory lock when the work needs more than kLargeCallBytes of
// the GPU's memory (`bytes`, the judge's own allocations) (not to be nested: a second lock of
// the same file from this process would wait for the first). Smaller work takes no lock: every
// judge of every grading would otherwise queue behind the tests of many gigabytes (lab 05's
// public tests at 2^20 elements waited 5 to 7 s each among eleven labs on an H200).
template <typename Fn>
auto with_gpu_memory(uint64_t bytes, Fn&& fn) -> decltype(fn()) {
  const MemoryLock lock(bytes > kLargeCallBytes);
  return retry_out_of_memory(fn);
}

// How a failed check ended, for the results stream: "failed", "crashed" or "timeout".
// Reset at the start of every test by the judge's listener.
const std::string& last_failure_kind();
void reset_failure_kind();

// The test property that holds a failed comparison's where data (CompareResult::where_json):
// GoogleTest keeps it with the test's result, the judge's results stream sends it to the grader
// as the test's "where" (gtest_main.cpp), and --gtest_output=json writes it too.
inline constexpr const char* kWhereProperty = "labkit_where";

// Records `where_json` as the current test's kWhereProperty; the first one a test records
// stays (it belongs with the first failure of its message). Nothing when `where_json` is "".
void record_where(const std::string& where_json);

// "  replay: LABKIT_SEED=<seed> <this judge> --gtest_filter='<current test>'"
std::string replay_hint();

// The canary report for buffer `b` of a call, "" when intact.
std::string describe_guard(const BufferSpec& buffer, const protocol::GuardInfo& g);

}  // namespace labkit

// Records a failure with just the check's own message (no "Value of: ... Actual: false").
#define LABKIT_EXPECT_OK(check_expr)                                    \
  do {                                                                  \
    const ::testing::AssertionResult labkit_result_ = (check_expr);     \
    if (!labkit_result_) ADD_FAILURE() << labkit_result_.message();     \
  } while (0)
