// Seeded random inputs. The generators are our own (splitmix64), so a seed gives the same
// numbers on every compiler and platform, and on the GPU: a failure can be replayed anywhere.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__CUDACC__)
#define LABKIT_HD __host__ __device__
#else
#define LABKIT_HD
#endif

namespace labkit {

// Uniform floats in [lo, hi), never all zero, reproducible from `seed`.
std::vector<float> random_floats(size_t count, uint64_t seed, float lo = -1.0f, float hi = 1.0f);

// Uniform integers in [lo, hi].
std::vector<int> random_ints(size_t count, uint64_t seed, int lo, int hi);

// The seed hidden tests draw from: set by the judge's --labkit-seed-stdin (the grader sends a
// seed drawn afresh for each grading), else LABKIT_SEED from the environment (local replays),
// else a fixed default so local runs repeat.
uint64_t test_seed();
void set_test_seed(uint64_t seed);
inline constexpr uint64_t kDefaultSeed = 20261121;

// Mixes a base seed with a per-test (per-call, per-buffer) value so each draws its own inputs:
// SipHash-2-4 of `salt` keyed by `seed`, a one-way step. Every seed the judges derive (a test's
// from the grading's, a benchmark's from the test seed, each timed call's from the benchmark's,
// the workspace garbage's from the call's) goes through it, so inverting the generators on what
// a kernel can read leads back to that one draw, never to the seed above it.
uint64_t mix_seed(uint64_t seed, uint64_t salt);

// SipHash-2-4 of the 8 little-endian bytes of `m` under the key (k0, k1).
uint64_t siphash24(uint64_t k0, uint64_t k1, uint64_t m);

// Counter-based generators: element i of a stream depends only on (seed, i), so the GPU fills
// a buffer in parallel with exactly the numbers the CPU would draw (fmaf is exactly rounded
// on both). Benchmarks draw fresh inputs per timed call with these.
LABKIT_HD inline uint64_t hash64(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

LABKIT_HD inline float uniform_f32(uint64_t seed, uint64_t i, float lo, float hi) {
  const float unit = static_cast<float>(hash64(seed, i) >> 40) * 0x1.0p-24f;  // exact, [0, 1)
  return fmaf(hi - lo, unit, lo);
}

LABKIT_HD inline int32_t uniform_i32(uint64_t seed, uint64_t i, int32_t lo, int32_t hi) {
  const uint64_t span = static_cast<uint64_t>(static_cast<int64_t>(hi) - lo) + 1;
  return static_cast<int32_t>(lo + static_cast<int64_t>(hash64(seed, i) % span));
}

}  // namespace labkit
