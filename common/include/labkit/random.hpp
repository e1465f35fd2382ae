// Seeded random inputs. The generator is our own (splitmix64), so a seed gives the same
// numbers on every compiler and platform: a failure can be replayed anywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace labkit {

// Uniform floats in [lo, hi), never all zero, reproducible from `seed`.
std::vector<float> random_floats(size_t count, uint64_t seed, float lo = -1.0f, float hi = 1.0f);

// Uniform integers in [lo, hi].
std::vector<int> random_ints(size_t count, uint64_t seed, int lo, int hi);

// The seed hidden tests draw from: LABKIT_SEED from the environment (the grader sets a
// fresh one per grading and records it), else a fixed default so local runs repeat.
uint64_t test_seed();
inline constexpr uint64_t kDefaultSeed = 20261121;

// Mixes a base seed with a per-test value so each test draws its own inputs.
uint64_t mix_seed(uint64_t seed, uint64_t salt);

}  // namespace labkit
