#include "labkit/cases.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "labkit/check.hpp"
#include "labkit/gpu.hpp"
#include "labkit/random.hpp"

namespace labkit::cases {

bool Row::has(const std::string& key) const {
  return std::any_of(values_.begin(), values_.end(),
                     [&](const auto& kv) { return kv.first == key; });
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

namespace {
// Whether the running test's suite is seeded (shared_seed).
thread_local bool running_seeded = false;
}  // namespace

Calls calls_of(const Row& row) {
  Calls c;
  const uint64_t calls = row.u64("calls", 1);
  if (calls < 1 || calls > 1000) throw std::invalid_argument("'calls' must be 1 to 1000");
  c.calls = static_cast<int>(calls);
  c.capture = row.flag("capture", false);
  c.race = row.flag("race", false);
  // The race check replays the graded call's own plan, which the executor keeps for one call.
  if (c.race && c.calls != 1) throw std::invalid_argument("a race check ('race') makes one call");
  return c;
}

void expect_ok(const Calls& calls, const std::function<CheckSpec()>& spec) {
  if (!calls.race) {
    LABKIT_EXPECT_OK(check(spec()));
    return;
  }
  if (!sanitizer_available()) {
    GTEST_SKIP() << "no compute-sanitizer given (--labkit-sanitizer): the race check cannot run";
  }
  LABKIT_EXPECT_OK(check_races(spec()));
}

uint64_t shared_seed(const std::string& what) {
  const uint64_t own = name_seed(what);
  return running_seeded ? mix_seed(test_seed(), own) : own;
}

bool at_start(const std::function<void()>& registration) {
  try {
    registration();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "the lab's tests cannot start: %s\n", e.what());
    std::fflush(stderr);
    std::_Exit(2);
  }
  return true;
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
    struct Running {  // shared_seed's answer while the family runs the row, however it ends
      explicit Running(bool seeded) { running_seeded = seeded; }
      ~Running() { running_seeded = false; }
    } running(seeded_);
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

namespace {

// What stands for value i of `p` in a test's name: the value, or its part's name field.
std::string name_of(const Param& p, const Part& part, size_t i) {
  if (part.name_field.empty() || i >= p.records.size()) return p.values[i];
  for (const auto& [field, text] : p.records[i]) {
    if (field != part.name_field) continue;
    const bool word = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_';
    });
    if (!word) {
      throw std::invalid_argument("'" + p.values[i] + "' has " + field + " = '" + text +
                                  "' (a test's name takes letters, digits and '_')");
    }
    return text;
  }
  return p.values[i];
}

// One test to register.
struct Planned {
  const Suite* suite;
  std::string suite_name;  // "Sizes/ScanPublic"
  std::string name;        // "MatchesReference/v1_f32_n1"
  std::string variant;
  Row row;
};

// Every test of `suites`, checked whole before any is registered.
std::vector<Planned> plan(const std::vector<Suite>& suites,
                          const std::vector<std::string>& variants,
                          const Family& family) {
  std::vector<Planned> planned;
  for (const Suite& s : suites) {
    // The keys in name order, each with its values and its part; then the scalars.
    std::vector<std::pair<const Param*, const Part*>> named;
    for (const Part& part : family.parts) {
      for (const Param& p : s.params) {
        if (p.key == part.key && p.in_name) named.emplace_back(&p, &part);
      }
    }
    for (const Param& p : s.params) {
      const bool part = std::any_of(family.parts.begin(), family.parts.end(),
                                    [&](const Part& fp) { return fp.key == p.key; });
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
      if (!p.records.empty() && p.records.size() != p.values.size()) {
        throw std::invalid_argument(where(s) + ": '" + p.key + "' has " +
                                    std::to_string(p.values.size()) + " values but fields for " +
                                    std::to_string(p.records.size()));
      }
    }
    // Each value's part of the name, once per value.
    std::vector<std::vector<std::string>> labels(named.size());
    for (size_t k = 0; k < named.size(); ++k) {
      const auto& [param, part] = named[k];
      for (size_t i = 0; i < param->values.size(); ++i) {
        try {
          const std::string v = name_of(*param, *part, i);
          labels[k].push_back(part->label ? part->label(v) : part->prefix + v);
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(where(s) + ": '" + param->key + "': " + e.what());
        }
      }
    }
    // Every combination of the named keys' values, the first key slowest.
    std::vector<std::vector<size_t>> combos;
    for (std::vector<size_t> at(named.size(), 0);;) {
      combos.push_back(at);
      size_t k = named.size();
      while (k-- > 0 && ++at[k] == named[k].first->values.size()) at[k] = 0;
      if (k == static_cast<size_t>(-1)) break;
    }
    // The rows, each checked by the family once (they are the same for every variant).
    std::vector<std::pair<std::string, Row>> rows;  // name suffix, row
    for (const std::vector<size_t>& at : combos) {
      std::vector<std::pair<std::string, std::string>> values;
      std::string suffix;
      // A value, and a named value's fields after it.
      const auto add = [&values](const Param& p, size_t i) {
        values.emplace_back(p.key, p.values[i]);
        if (i < p.records.size()) {
          for (const auto& [field, text] : p.records[i]) {
            values.emplace_back(p.key + "." + field, text);
          }
        }
      };
      for (size_t k = 0; k < named.size(); ++k) {
        add(*named[k].first, at[k]);
        suffix += "_" + labels[k][at[k]];
      }
      for (const Param& p : s.params) {
        if (!p.in_name) add(p, 0);
      }
      Row row(std::move(values));
      if (family.check) {
        try {
          family.check(row);
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(where(s) + ": " + e.what());
        }
      }
      for (const auto& other : rows) {
        if (other.first == suffix) {
          throw std::invalid_argument(where(s) + ": two tests named " + s.instance + "/" +
                                      s.suite + "." + s.test + "/<variant>" + suffix);
        }
      }
      rows.emplace_back(std::move(suffix), std::move(row));
    }
    // Case by case, each case's versions in a row: a judge keeps what a case's versions share
    // (lab 06's matrices, spmv_cases.cpp) for the next one, and the grader gives all of a case's
    // versions to one judge (grader/gtest.py, shard_of, from the variant each test lists).
    const std::string suite_name = s.instance + "/" + s.suite;
    for (const auto& [suffix, row] : rows) {
      for (const std::string& variant : variants) {
        planned.push_back({&s, suite_name, s.test + "/" + variant + suffix, variant, row});
      }
    }
  }
  return planned;
}

}  // namespace

std::vector<std::string> test_names(const std::vector<Suite>& suites,
                                    const std::vector<std::string>& variants,
                                    const Family& family) {
  std::vector<std::string> names;
  for (const Planned& p : plan(suites, variants, family)) {
    names.push_back(p.suite_name + "." + p.name);
  }
  return names;
}

void register_suites(const std::vector<Suite>& suites, const std::vector<std::string>& variants,
                     const Family& family) {
  for (Planned& p : plan(suites, variants, family)) {
    const uint64_t seed = name_seed(p.suite_name + "." + p.name);
    // The variant as the test's value parameter: --gtest_list_tests names it ("value_param").
    ::testing::RegisterTest(p.suite_name.c_str(), p.name.c_str(), nullptr, p.variant.c_str(),
                            p.suite->file.c_str(), p.suite->line,
                            [run = family.run, variant = p.variant, row = p.row, seed,
                             seeded = p.suite->seeded]() -> ::testing::Test* {
                              return new CaseTest(run, variant, row, seed, seeded);
                            });
  }
}

}  // namespace labkit::cases
