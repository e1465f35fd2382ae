#include "labkit/cases.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "labkit/gpu.hpp"
#include "labkit/random.hpp"

namespace labkit::cases {

bool Row::has(const std::string& key) const {
  return std::any_of(values_.begin(), values_.end(), [&](const auto& kv) { return kv.first == key; });
}

const std::string& Row::text(const std::string& key) const {
  for (const auto& [k, v] : values_) {
    if (k == key) return v;
  }
  throw std::invalid_argument("the case has no '" + key + "'");
}

uint64_t Row::u64(const std::string& key, uint64_t fallback) const {
  if (!has(key)) return fallback;
  const std::string& v = text(key);
  size_t used = 0;
  unsigned long long x = 0;
  try {
    x = std::stoull(v, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (v.empty() || used != v.size() || v[0] == '-') {
    throw std::invalid_argument("'" + key + "' is not a count: '" + v + "'");
  }
  return x;
}

bool Row::flag(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const std::string& v = text(key);
  if (v == "true") return true;
  if (v == "false") return false;
  throw std::invalid_argument("'" + key + "' is not true or false: '" + v + "'");
}

uint64_t name_seed(const std::string& full_name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : full_name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

namespace {

class CaseTest : public ::testing::Test {
 public:
  CaseTest(Runner run, std::string variant, Row row, uint64_t seed, bool seeded)
      : run_(std::move(run)), variant_(std::move(variant)), row_(std::move(row)), seed_(seed),
        seeded_(seeded) {}
  void TestBody() override {
    LABKIT_REQUIRE_GPU();
    run_(variant_, row_, seeded_ ? mix_seed(test_seed(), seed_) : seed_);
  }

 private:
  Runner run_;
  std::string variant_;
  Row row_;
  uint64_t seed_;
  bool seeded_;
};

std::string where(const Suite& s) { return s.file + ":" + std::to_string(s.line); }

}  // namespace

void register_suites(const std::vector<Suite>& suites, const std::vector<std::string>& variants,
                     const Family& family) {
  for (const Suite& s : suites) {
    // The keys in name order, each with its values; then the scalars.
    std::vector<const Param*> named;
    for (const auto& [key, prefix] : family.parts) {
      for (const Param& p : s.params) {
        if (p.key == key && p.in_name) named.push_back(&p);
      }
    }
    for (const Param& p : s.params) {
      const bool part = std::any_of(family.parts.begin(), family.parts.end(),
                                    [&](const auto& kp) { return kp.first == p.key; });
      const bool scalar = std::find(family.scalars.begin(), family.scalars.end(), p.key) !=
                          family.scalars.end();
      if (!part && !scalar) {
        throw std::invalid_argument(where(s) + ": the " + family.name + " family has no '" +
                                    p.key + "'");
      }
      if (p.in_name && !part) {
        throw std::invalid_argument(where(s) + ": '" + p.key + "' cannot be a list (the " +
                                    family.name + " family does not name tests by it)");
      }
      if (p.values.empty()) throw std::invalid_argument(where(s) + ": '" + p.key + "' is empty");
    }
    // Every combination of the named keys' values, the first key slowest.
    std::vector<std::vector<size_t>> combos;
    for (std::vector<size_t> at(named.size(), 0);;) {
      combos.push_back(at);
      size_t k = named.size();
      while (k-- > 0 && ++at[k] == named[k]->values.size()) at[k] = 0;
      if (k == static_cast<size_t>(-1)) break;
    }
    const std::string suite_name = s.instance + "/" + s.suite;
    for (const std::string& variant : variants) {
      for (const std::vector<size_t>& at : combos) {
        std::vector<std::pair<std::string, std::string>> values;
        std::string name = s.test + "/" + variant;
        for (size_t k = 0; k < named.size(); ++k) {
          const std::string& v = named[k]->values[at[k]];
          values.emplace_back(named[k]->key, v);
          for (const auto& [key, prefix] : family.parts) {
            if (key == named[k]->key) name += "_" + prefix + v;
          }
        }
        for (const Param& p : s.params) {
          if (!p.in_name) values.emplace_back(p.key, p.values.front());
        }
        const uint64_t seed = name_seed(suite_name + "." + name);
        Row row(std::move(values));
        ::testing::RegisterTest(suite_name.c_str(), name.c_str(), nullptr, nullptr,
                                s.file.c_str(), s.line,
                                [run = family.run, variant, row, seed, seeded = s.seeded]()
                                    -> ::testing::Test* {
                                  return new CaseTest(run, variant, row, seed, seeded);
                                });
      }
    }
  }
}

}  // namespace labkit::cases
