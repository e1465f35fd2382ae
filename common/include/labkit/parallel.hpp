// The judge's CPU work on large inputs (drawing them, the double reference, the comparison)
// split over the CPU's cores: the one parallel-for of the harness.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace labkit {

// Calls body(begin, end) on consecutive ranges that cover [0, n), on up to 16 threads (the
// caller's own among them); n below `serial_below` runs as one range on the caller's thread.
// The ranges are disjoint: body may write its own part of a shared output without locks.
// An exception thrown by body ends the program (std::terminate), as from any std::thread.
template <typename Body>
void parallel_for(size_t n, size_t serial_below, Body&& body) {
  const size_t cores = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  const size_t threads = n < serial_below ? 1 : std::max<size_t>(1, std::min(cores, n));
  if (threads == 1) {
    if (n > 0) body(size_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) {
    pool.emplace_back([&body, n, t, threads] { body(n * t / threads, n * (t + 1) / threads); });
  }
  body(size_t{0}, n / threads);
  for (std::thread& th : pool) th.join();
}

}  // namespace labkit
