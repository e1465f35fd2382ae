// Whole-struct reads and writes on the judge-worker pipes, shared by both ends.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
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

// Polls `fd` without sleeping until it is readable or `seconds` have passed: a wake-up from a
// blocking read costs tens of microseconds, too much inside a timed window.
inline bool spin_until_readable(int fd, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 0) != 0) return true;  // readable, closed, or an error: read now
  }
  return false;
}

}  // namespace labkit
