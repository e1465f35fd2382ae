// Benchmarks. A lab declares what to time; the framework owns how.
//
//   labkit::bench::Spec: the op call (variant, parameters, buffers whose inputs are drawn
//   fresh for every call), the work (FLOP, minimum bytes), and the baseline: the vendor
//   library, or a measured-bandwidth roof, run in the judge's own process on the same inputs.
//
// The worker allocates a benchmark's device buffers (its launcher runs on its own memory) and
// hands them to the judge by CUDA IPC; the judge checks their sizes and writes the canaries.
// For each timed call the framework, in the judge: poisons the outputs and fills the in-out
// buffers (workspaces: scratch) with fresh garbage; then, ON ITS OWN CLOCK, writes the fresh
// inputs (a new seed each call, so no result can be cached or replayed), flushes L2, asks the
// worker for one launcher call (a fresh nonce; the worker synchronises the device and answers),
// and copies the outputs into its own memory; the clock stops there. The time is that window
// minus the same window measured on a calibration worker that holds no student code (median,
// resampled beside every call); the worker's own events can only make it longer. Work the
// worker defers past its answer is either inside the window or missing from the copied output.
// Then it checks the canaries and that every input is as it wrote it, verifies the copied
// output against the baseline on the same inputs (a wrong call is an error, never a time), and
// times the baseline after its own L2 flush. It stops when the ratio's 95% interval is narrow,
// and reports Google Benchmark counters:
//   ratio, ratio_lo, ratio_hi   baseline time / student time (medians) and its interval
//   GFLOPS, baseline_GFLOPS, GBps, baseline_GBps, student_ms, baseline_ms, *_iqr, samples,
//   overhead_ms (the calibrated window), judged_ms (the window less it), worker_event_ms (the
//   worker's events), untimed_work_calls (calls whose window held clearly more than the
//   worker's events: work off the stream or on the CPU)
// Smoke mode (--smoke) runs few calls at small sizes; without a GPU the program exits 77.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "labkit/device_buffer.hpp"
#include "labkit/judge.hpp"

namespace labkit {

// Times work enqueued on one stream with a pair of events.
class EventTimer {
 public:
  explicit EventTimer(cudaStream_t stream);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Enqueues `work` between two events and returns its device time in milliseconds.
  // Checks the launch and the run: a failing kernel throws instead of reporting a time.
  double time_ms(const std::function<void()>& work);

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Before every timed run (the student's call, the vendor's): every persisting line back to
// normal (reset_persisting_l2), then a read of a buffer twice the size of L2, so that the run
// starts with a cold cache holding no line of anyone's data and no dirty line to write back
// (device_fill.hpp: read_through).
class L2Flusher {
 public:
  L2Flusher();
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer<int> scratch_;
};

double median(std::vector<double> values);

// Relative spread of the middle half: (q3 - q1) / median.
double relative_iqr(std::vector<double> values);

// A 95% interval for the median of `values` from order statistics (no distribution assumed).
std::pair<double, double> median_interval(std::vector<double> values);

namespace bench {

// The race audit's counter `race_audit` (--labkit-race-audit): clean, or no verdict (no tool, or
// racecheck past kRaceAuditLimitS); hazards fail the benchmark instead. Absent: not asked.
inline constexpr double kRaceAuditNotAsked = -2, kRaceAuditNoVerdict = -1, kRaceAuditClean = 1;
inline constexpr double kRaceAuditLimitS = 300;

// The baseline's side of one benchmark, in the judge's process and CUDA context.
class Baseline {
 public:
  virtual ~Baseline() = default;
  // Draws the inputs the worker draws from `seed` (protocol::buffer_seed per buffer).
  virtual void prepare(uint64_t seed, cudaStream_t stream) = 0;
  // The timed work.
  virtual void run(cudaStream_t stream) = 0;
  // "" when the student's outputs ([buffer] bytes) are right for the inputs of the last
  // prepare(); else what is wrong and where. Right means what it means in the tests: within
  // the tests' bound of a double-precision reference of those inputs (computed on the GPU),
  // never a wider bound around the vendor library's float result.
  virtual std::string verify(const std::vector<Bytes>& outputs, cudaStream_t stream) = 0;
  // The same check where the outputs are, for the common case: `outputs` are the judge's device
  // copies ([buffer], nullptr for all but the outputs). true: every element right (verify() is
  // not called); false: not known to be right, and verify() decides and says what is wrong.
  // A family whose outputs are large answers here (labkit/device_compare.hpp), so that a right
  // call costs no download of gigabytes.
  virtual bool right_on_device(const std::vector<const void*>& outputs, cudaStream_t stream) {
    (void)outputs;
    (void)stream;
    return false;
  }
};

struct Spec {
  std::string name;          // "matmul/v1_naive/4096": what grading.toml names
  OpCall call;               // buffers with generated sources; inputs[0] for constant ones
  // Or the constant inputs made when the benchmark runs, not when it is listed (a program lists
  // every variant's benchmarks, and the grader runs a few: lab 06's matrices are gigabytes).
  std::function<std::vector<std::vector<Bytes>>()> make_inputs;
  double flop = 0;           // the work, for GFLOP/s
  double bytes = 0;          // the minimum bytes moved, for GB/s
  std::vector<std::pair<std::string, double>> counters;  // extra counters, reported as given
  std::string baseline_name = "baseline";
  std::function<std::unique_ptr<Baseline>()> baseline;
  int warmup = 2;            // calls checked but not recorded
  int min_samples = 7;
  int max_samples = 15;
  double target_interval = 0.02;  // stop when (ratio_hi - ratio_lo) / ratio <= this
  double budget_s = 6;            // stop sampling after this long (min_samples permitting)
};

// main() of a lab's benchmark program: the labkit flags, --smoke, Google Benchmark's flags;
// results (Google Benchmark JSON) also to --labkit-results-fd. `specs(smoke)` lists the
// benchmarks. Exit: 0 all ran and were right, 1 an error, 2 bad flags, 77 no GPU.
int main(int argc, char** argv, const std::function<std::vector<Spec>(bool smoke)>& specs);

// "3.0.1": a vendor library's version, as a baseline's name states it ("CUB
// DeviceScan::ExclusiveSum (CCCL 3.0.1)"): the benchmark's label, which the grader keeps beside
// every ratio (a ratio to a library means little without its version).
std::string version_text(int major, int minor, int patch);

}  // namespace bench
}  // namespace labkit
