// A lab's tests as data: the suites of its cases files (labs/<lab>/tests/cases.toml, and
// hidden/cases.toml where the hidden tests are in the build), read at configure time by the
// grader's reader (grader/cases.py, through cmake/lab_config.py), which writes them into the
// lab's test program as lab_suites(). An op family turns one row into a check (its driver, e.g.
// labkit/ops/vector_family.hpp, labkit/ops/matmul_cases.hpp); this header registers every row of
// every suite for every variant as a GoogleTest test, named as a parameterized test would be:
//   <instance>/<suite>.<test>/<variant>[_<part>...]
// where the parts are the row's values of the suite's list-valued keys, in the family's order,
// each after its prefix ("f32", "n1025", "off3") or, where the family gives a part a label
// function, as it writes the value ("127x129x33" -> "M127_N129_K33"); a named value is its
// name, or its part's name field where it has one. A scalar key is the same in every row and
// not in the name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace labkit {
struct CheckSpec;
}  // namespace labkit

namespace labkit::cases {

// A named value's fields ([matrix.powerlaw] kind = "power_law" ...), as text.
using Fields = std::vector<std::pair<std::string, std::string>>;

struct Param {
  std::string key;
  std::vector<std::string> values;  // as written in the file (numbers in decimal)
  bool in_name = false;             // a list in the file: one test per value
  // For a key with named values: each value's fields, in the values' order (else empty). A
  // test's row holds them as "<key>.<field>" ("matrix.kind") beside "<key>" (its name).
  std::vector<Fields> records = {};
};

struct Suite {
  std::string instance;  // "Sizes"
  std::string suite;     // "ScanPublic": what grading.toml's filters select
  std::string test;      // "MatchesReference"
  bool seeded = false;   // inputs from the judge's seed (hidden tests) or fixed (public)
  std::string file;      // where it is declared, for failure messages
  int line = 0;
  std::vector<Param> params;
};

// One test's values: key -> value. Accessors throw std::invalid_argument naming the key.
class Row {
 public:
  explicit Row(std::vector<std::pair<std::string, std::string>> values)
      : values_(std::move(values)) {}
  bool has(const std::string& key) const;
  const std::string& text(const std::string& key) const;
  uint64_t u64(const std::string& key, uint64_t fallback) const;
  bool flag(const std::string& key, bool fallback) const;
  const std::vector<std::pair<std::string, std::string>>& values() const { return values_; }

 private:
  std::vector<std::pair<std::string, std::string>> values_;
};

// How a family runs one row: `seed` is the test's own (from its full name, and the judge's
// seed for a seeded suite). It checks with GoogleTest assertions (LABKIT_EXPECT_OK).
using Runner = std::function<void(const std::string& variant, const Row& row, uint64_t seed)>;

// How a case is called, read alike by every family from its scalar keys: calls (at least 1,
// default 1: the same buffers, fresh inputs each call), capture (record the launcher under
// stream capture and replay it; default false) and race (compute-sanitizer racecheck instead of
// the plain check; default false, in the families that list "race" among their scalars).
struct Calls {
  int calls = 1;
  bool capture = false;
  bool race = false;
};

// Reads them from a row; throws std::invalid_argument for a value they cannot take (a family's
// RowCheck calls it, so a bad row stops the program at start).
Calls calls_of(const Row& row);

// The test's check of one case, as the row asks: under racecheck when calls.race (the test
// skips, saying why, when no compute-sanitizer was given), the plain check otherwise. `spec`
// makes the case's CheckSpec (labkit/check.hpp), only when it is to run.
void expect_ok(const Calls& calls, const std::function<CheckSpec()>& spec);

// A key that may be a list, and how its value goes into a test's name.
struct Part {
  std::string key;     // "n"
  std::string prefix;  // "n": the name's part is prefix + value ("n1025")
  // Optional: the name's part is label(value) instead ("127x129x33" -> "M127_N129_K33"). It
  // throws std::invalid_argument for a value it cannot read.
  std::function<std::string(const std::string& value)> label = nullptr;
  // Optional, for a key with named values: a field that, where a value has it, stands for the
  // value's name in the test's name (letters, digits and '_'). Two values of one name, one in
  // the public file and one in the hidden file, are declared under two names and name their
  // tests alike: [shape.k1_hidden] with name = "k1".
  std::string name_field = "";
};

// A family's own check of a row, when the tests are registered (a malformed value, a size
// outside a lab's promise): it throws std::invalid_argument saying what is wrong.
using RowCheck = std::function<void(const Row& row)>;

struct Family {
  std::string name;                  // "scan", for messages
  std::vector<Part> parts;           // in-name keys, in name order
  std::vector<std::string> scalars;  // keys allowed only as scalars
  Runner run;
  RowCheck check = nullptr;          // optional: run on every row of every suite
};

// Registers every suite x variant x combination of list values; each test begins with
// LABKIT_REQUIRE_GPU. Throws std::invalid_argument naming the suite's file and line (the program
// stops before any test runs) for a key the family does not know, a list-valued key it cannot
// put in a name, a value its label or check refuses, or two tests of one name; then it
// registers none of the tests.
void register_suites(const std::vector<Suite>& suites, const std::vector<std::string>& variants,
                     const Family& family);

// The full names register_suites would give the tests ("<instance>/<suite>.<test>/<variant>..."),
// in its order, registering none; throws as it does.
std::vector<std::string> test_names(const std::vector<Suite>& suites,
                                    const std::vector<std::string>& variants, const Family& family);

// The lab's suites (generated at configure time into the lab's test program).
const std::vector<Suite>& lab_suites();

// Runs a lab's registration as its test program starts (a static initializer of its
// tests/cases.cpp): a refused cases file (std::invalid_argument, naming the file and line) ends
// the program with that message and exit status 2, before any test runs. Returns true.
bool at_start(const std::function<void()>& registration);

// A stable 64-bit hash of a test's full name (FNV-1a): its fixed seed.
uint64_t name_seed(const std::string& full_name);

// Inside a running test: a seed that every test naming `what` shares (one matrix for all of a
// lab's versions), name_seed(what), mixed with the judge's seed when the test's suite is seeded.
uint64_t shared_seed(const std::string& what);

}  // namespace labkit::cases
