// RAII device memory. DeviceBuffer<T> is move-only and frees on destruction;
// GuardedBuffer surrounds device bytes with canary zones to catch writes past either end.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "labkit/cuda_check.hpp"
#include "labkit/protocol.hpp"

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

// Canary zones of `guard` bytes (a multiple of 4) on each side of `bytes` of data, the data
// rounded up to whole words, in the allocation at `base`: written, then checked after a call.
// `lead` (a multiple of 4) more bytes of canary before the data move its start off the
// allocation's alignment: the data start at base + guard + lead. `tail` (a multiple of 4, at
// least `guard`; default `guard`) is the canary after the data: the rest of the allocation.
inline size_t round_to_words(size_t bytes) { return (bytes + 3) / 4 * 4; }

// The driver maps device memory in pages of 2 MiB: an allocation of a whole number of them
// leaves no bytes past its end that a kernel could write unseen (a mark kept from one call to
// the next), so guarded buffers take whole pages and their tail canary runs to the end.
inline constexpr size_t kDevicePageBytes = size_t{2} << 20;

inline size_t guarded_allocation_bytes(size_t bytes, size_t guard, size_t lead = 0) {
  const size_t least = round_to_words(bytes) + 2 * guard + lead;
  if (guard == 0) return least;  // exact buffers (a memcheck replay): no canaries at all
  return (least + kDevicePageBytes - 1) / kDevicePageBytes * kDevicePageBytes;
}

inline void write_canaries(char* base, size_t bytes, size_t guard, size_t lead = 0,
                           size_t tail = SIZE_MAX) {
  if (tail == SIZE_MAX) tail = guard;
  const size_t front = guard + lead;
  if (front > 0) {
    const std::vector<uint32_t> canary(front / 4, kCanaryBits);
    CUDA_CHECK(cudaMemcpy(base, canary.data(), front, cudaMemcpyHostToDevice));
  }
  if (tail > 0) {
    const std::vector<uint32_t> canary(tail / 4, kCanaryBits);
    CUDA_CHECK(cudaMemcpy(base + front + round_to_words(bytes), canary.data(), tail,
                          cudaMemcpyHostToDevice));
  }
}

inline protocol::GuardInfo check_canaries(const char* base, size_t bytes, size_t guard,
                                          size_t lead = 0, size_t tail = SIZE_MAX) {
  if (tail == SIZE_MAX) tail = guard;
  protocol::GuardInfo r;
  const size_t front = guard + lead;
  std::vector<uint32_t> before(front / 4), after(tail / 4);
  if (front > 0) CUDA_CHECK(cudaMemcpy(before.data(), base, front, cudaMemcpyDeviceToHost));
  if (tail > 0) {
    CUDA_CHECK(cudaMemcpy(after.data(), base + front + round_to_words(bytes), tail,
                          cudaMemcpyDeviceToHost));
  }
  for (size_t i = 0; i < before.size(); ++i) {
    if (before[before.size() - 1 - i] != kCanaryBits) {
      if (r.before == 0) r.nearest_before = i + 1;
      ++r.before;
    }
  }
  for (size_t i = 0; i < after.size(); ++i) {
    if (after[i] != kCanaryBits) {
      if (r.after == 0) r.first_after = i;
      ++r.after;
    }
  }
  return r;
}

// Device bytes with a canary zone of `guard` bytes (a multiple of 4) on each side, the data
// rounded up to whole words. guard = 0: none (under compute-sanitizer, which then reports the
// first byte past the end itself). What the worker gives a launcher.
class GuardedBuffer {
 public:
  static constexpr size_t kDefaultGuard = size_t{1} << 16;  // 64 KiB of canary on each side

  // `lead` (a multiple of 4): the data start that many bytes past an aligned address, after a
  // canary zone of guard + lead bytes (a misaligned pointer, where an interface allows one).
  // The allocation is whole device pages (guarded_allocation_bytes): the canary after the data
  // is at least `guard` bytes and runs to the allocation's end.
  explicit GuardedBuffer(size_t bytes, size_t guard = kDefaultGuard, size_t lead = 0)
      : bytes_(bytes), guard_(guard / 4 * 4), lead_(lead / 4 * 4),
        storage_(guarded_allocation_bytes(bytes, guard_, lead_)),
        tail_(guarded_allocation_bytes(bytes, guard_, lead_) - guard_ - lead_ -
              round_to_words(bytes)) {
    write_canaries(storage_.get(), bytes_, guard_, lead_, tail_);
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  char* data() { return storage_.get() + guard_ + lead_; }
  size_t bytes() const { return bytes_; }
  // The whole allocation (canaries included) and the canary zone after the data.
  char* allocation() { return storage_.get(); }
  size_t guard() const { return guard_; }

  protocol::GuardInfo check() const {
    return check_canaries(storage_.get(), bytes_, guard_, lead_, tail_);
  }

 private:
  size_t bytes_;
  size_t guard_;
  size_t lead_;
  DeviceBuffer<char> storage_;
  size_t tail_;
};

}  // namespace labkit
