// Whole-struct reads and writes on the judge-worker pipes, shared by both ends.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace labkit {

// Reads exactly `size` bytes; false when the pipe closes or fails first.
inline bool read_full(int fd, void* data, size_t size) {
  auto* out = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, out, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Writes exactly `size` bytes; false when the pipe closes or fails first.
inline bool write_full(int fd, const void* data, size_t size) {
  const auto* in = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, in, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    in += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace labkit
