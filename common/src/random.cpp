#include "labkit/random.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace labkit {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<float> random_floats(size_t count, uint64_t seed, float lo, float hi) {
  std::vector<float> out(count);
  uint64_t state = seed;
  const double span = static_cast<double>(hi) - lo;
  for (auto& v : out) {
    const double unit = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
    v = static_cast<float>(lo + span * unit);
  }
  return out;
}

std::vector<int> random_ints(size_t count, uint64_t seed, int lo, int hi) {
  std::vector<int> out(count);
  uint64_t state = seed;
  const uint64_t span = static_cast<uint64_t>(static_cast<int64_t>(hi) - lo) + 1;
  for (auto& v : out) v = static_cast<int>(lo + static_cast<int64_t>(splitmix64(state) % span));
  return out;
}

uint64_t mix_seed(uint64_t seed, uint64_t salt) {
  uint64_t state = seed ^ (salt * 0xD1B54A32D192ED03ull);
  return splitmix64(state);
}

namespace {
bool g_seed_set = false;
uint64_t g_seed = 0;
}  // namespace

void set_test_seed(uint64_t seed) {
  g_seed = seed;
  g_seed_set = true;
}

uint64_t test_seed() {
  if (g_seed_set) return g_seed;
  const char* env = std::getenv("LABKIT_SEED");
  if (env == nullptr || *env == '\0') return kDefaultSeed;
  try {
    size_t used = 0;
    const unsigned long long value = std::stoull(env, &used, 0);
    if (used != std::string(env).size()) throw std::invalid_argument("trailing characters");
    return value;
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string("LABKIT_SEED is not an integer: '") + env + "'");
  }
}

}  // namespace labkit
