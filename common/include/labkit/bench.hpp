// Benchmark helpers: event timing on the launch stream, an L2 flush between timed runs,
// medians, and the interleaved student-vs-baseline loop every lab's benchmark uses.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "labkit/device_buffer.hpp"

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

// Writes a buffer twice the size of L2 so the next timed run starts with a cold cache.
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

struct PairTimes {
  std::vector<double> student_ms, baseline_ms;
};

// Alternates student and baseline runs (each after an L2 flush; the student run also after
// `before_each`, e.g. a re-poison of its output) `iterations` times after `warmup` rounds.
PairTimes time_interleaved(cudaStream_t stream, const std::function<void()>& student,
                           const std::function<void()>& baseline,
                           const std::function<void()>& before_each, int warmup, int iterations,
                           L2Flusher* flusher);

}  // namespace labkit
