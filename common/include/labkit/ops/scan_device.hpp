// The scan family's reference on the GPU (scan.hpp): the exclusive scan of inputs already on
// the device, by CUB, in double with the prefix of the squares (floats: the tests' bound) or as
// uint32 (ints: exact modulo 2^32), and how many elements of an output it does not accept. The
// benchmark checks every timed call with it; the tests whose inputs were drawn on the device
// check their outputs with it where they are (check_on_device), so gigabytes never cross the
// host: a wrong output's report needs only the piece that holds its first wrong element.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "labkit/device_buffer.hpp"
#include "labkit/judge.hpp"
#include "labkit/ops/scan.hpp"

namespace labkit::ops::scan {

class DeviceReference {
 public:
  DeviceReference(DType dtype, size_t n);
  // The reference of `in`: n floats, or n ints (as their bits), on the device.
  void compute(const void* in, cudaStream_t s);
  // How many elements of `out` (n, on the device) the last compute() does not accept.
  uint64_t count_wrong(const void* out, cudaStream_t s) const;
  // The last compute()'s reference on the host: floats' prefixes and bounds, ints' prefixes.
  void download(std::vector<double>* ref, std::vector<double>* bound) const;
  void download(std::vector<int64_t>* ref) const;

 private:
  double scale() const;
  DType dtype_;
  size_t n_;
  DeviceBuffer<double> x_, ref_, sq_, peak_;  // peak_: the running max of |ref_|
  DeviceBuffer<uint32_t> iref_;
  size_t temp_bytes_ = 0;
  DeviceBuffer<char> temp_;
};

// The check of one test call whose `in` was drawn on the device (`in` describes how: source,
// seed, range): the judge draws the same numbers on its own memory, scans them and counts, a
// piece of kCheckPiece elements at a time, each piece's scan started from the carry of those
// before it (exact for ints, in double for floats). Its memory is the piece's, whatever n: 4
// GiB for floats (the piece, its prefixes, the prefixes of its squares and the running maximum
// of |prefix|, in double), 1 GiB
// for ints, beside the worker's `in`, `out` and workspace on the same GPU (n = 2^32 + 2^20 + 7:
// 32.1 GiB).
inline constexpr size_t kCheckPiece = size_t{1} << 27;

// What the check on the device found: how many elements are wrong and, when some are, the first
// piece that holds one with the reference's exact state at that piece's start (the carry its
// scan started from), so that a report needs only that piece on the host, not n elements.
struct DeviceCheck {
  uint64_t wrong = 0;
  size_t piece_lo = 0;        // the first piece with a wrong element (when wrong > 0)
  size_t piece_size = 0;      // kCheckPiece, or n when n is smaller
  double sum = 0, sumsq = 0;  // floats: the exclusive prefixes of x and x^2 at piece_lo
  double peak = 0;            // floats: the largest |prefix| before piece_lo
  uint32_t isum = 0;          // ints: the exclusive prefix at piece_lo, modulo 2^32
};
DeviceCheck check_on_device(DType dtype, size_t n, const BufferSpec& in, const void* out);

}  // namespace labkit::ops::scan
