// RAII device memory. DeviceBuffer<T> is move-only and frees on destruction;
// GuardedBuffer<T> surrounds the data with canary zones to catch writes past either end.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "labkit/cuda_check.hpp"

namespace labkit {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count_ > 0) CUDA_CHECK(cudaMalloc(&ptr_, count_ * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);  // never throws from a destructor
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      if (ptr_ != nullptr) cudaFree(ptr_);
      ptr_ = std::exchange(other.ptr_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }

  T* get() { return ptr_; }
  const T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  // Returns once the data is on the device: a cudaMemcpy from pageable memory may return
  // earlier, and work on a non-blocking stream is not ordered after it.
  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
    if (count_ > 0) {
      CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) {
      CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    }
    return host;
  }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// The bit pattern written to outputs before every launch: a quiet NaN with a payload that
// arithmetic never produces, so "still poison" means "never written".
inline constexpr uint32_t kPoisonBits = 0x7FC0DEADu;
// The bit pattern of the canary zones around guarded buffers.
inline constexpr uint32_t kCanaryBits = 0x7FC0CA11u;

template <typename T>
T bits_as(uint32_t bits) {
  static_assert(sizeof(T) == sizeof(uint32_t), "poison patterns are 32-bit");
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

template <typename T>
uint32_t bits_of(T value) {
  static_assert(sizeof(T) == sizeof(uint32_t), "poison patterns are 32-bit");
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

// What a canary check found: elements changed in the zone before and after the data.
struct GuardReport {
  size_t before = 0;           // changed elements in the zone before element 0
  size_t after = 0;            // changed elements in the zone after the last element
  size_t first_after = 0;      // offset past the end of the first changed element after it
  size_t nearest_before = 0;   // distance before element 0 of the nearest changed element (1 = [-1])
  bool intact() const { return before == 0 && after == 0; }
};

// A 32-bit element buffer with `guard` canary elements on each side.
template <typename T>
class GuardedBuffer {
 public:
  static constexpr size_t kDefaultGuard = size_t{1} << 16;  // 256 KiB of canary on each side

  explicit GuardedBuffer(size_t count, size_t guard = kDefaultGuard)
      : count_(count), guard_(guard), storage_(count + 2 * guard) {
    std::vector<T> canary(guard_, bits_as<T>(kCanaryBits));
    CUDA_CHECK(cudaMemcpy(storage_.get(), canary.data(), guard_ * sizeof(T),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(storage_.get() + guard_ + count_, canary.data(), guard_ * sizeof(T),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  T* get() { return storage_.get() + guard_; }
  size_t size() const { return count_; }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::invalid_argument("GuardedBuffer::upload: size mismatch");
    if (count_ > 0) {
      CUDA_CHECK(cudaMemcpy(get(), host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaDeviceSynchronize());  // see DeviceBuffer::upload
    }
  }
  void poison() { upload(std::vector<T>(count_, bits_as<T>(kPoisonBits))); }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) {
      CUDA_CHECK(cudaMemcpy(host.data(), storage_.get() + guard_, count_ * sizeof(T),
                            cudaMemcpyDeviceToHost));
    }
    return host;
  }

  GuardReport check_guards() const {
    std::vector<T> all = storage_.download();
    GuardReport report;
    for (size_t i = 0; i < guard_; ++i) {
      if (bits_of(all[guard_ - 1 - i]) != kCanaryBits) {
        if (report.before == 0) report.nearest_before = i + 1;
        ++report.before;
      }
      if (bits_of(all[guard_ + count_ + i]) != kCanaryBits) {
        if (report.after == 0) report.first_after = i;
        ++report.after;
      }
    }
    return report;
  }

 private:
  size_t count_;
  size_t guard_;
  DeviceBuffer<T> storage_;
};

}  // namespace labkit
