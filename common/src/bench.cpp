#include "labkit/bench.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "labkit/cuda_check.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/gpu.hpp"

namespace labkit {

EventTimer::EventTimer(cudaStream_t stream) : stream_(stream) {
  CUDA_CHECK(cudaEventCreate(&start_));
  CUDA_CHECK(cudaEventCreate(&stop_));
}

EventTimer::~EventTimer() {
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (stop_ != nullptr) cudaEventDestroy(stop_);
}

double EventTimer::time_ms(const std::function<void()>& work) {
  CUDA_CHECK(cudaEventRecord(start_, stream_));
  work();
  LABKIT_CHECK_LAUNCH();
  CUDA_CHECK(cudaEventRecord(stop_, stream_));
  CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

L2Flusher::L2Flusher()
    : scratch_(std::max<size_t>(2 * gpu_status().l2_bytes, size_t{8} << 20) / sizeof(int)) {
  fill_pattern32(scratch_.get(), scratch_.bytes(), 0x5A5A5A5Au, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
}

void L2Flusher::flush(cudaStream_t stream) {
  reset_persisting_l2();
  read_through(scratch_.get(), scratch_.bytes(), stream);
}

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of no values");
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double relative_iqr(std::vector<double> values) {
  if (values.size() < 4) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double q1 = values[n / 4], q3 = values[(3 * n) / 4];
  const double mid = median(values);
  return mid > 0 ? (q3 - q1) / mid : 0.0;
}

std::pair<double, double> median_interval(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median_interval of no values");
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  // Ranks n/2 -+ 0.98 sqrt(n) (normal approximation to the binomial), clamped to the ends.
  const double half = 0.98 * std::sqrt(n);
  const long lo = std::max<long>(0, static_cast<long>(std::floor(n / 2 - half)));
  const long hi = std::min<long>(static_cast<long>(n) - 1, static_cast<long>(std::ceil(n / 2 + half)) - 1);
  return {values[static_cast<size_t>(lo)], values[static_cast<size_t>(std::max(lo, hi))]};
}

}  // namespace labkit
