#include "labkit/ops/spmv_cases.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "labkit/check.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::spmv {

namespace {

enum class Type { kSize, kLength, kNnz, kNumber, kFlag, kText, kRowOrDrawn };

struct FieldSpec {
  const char* name;
  Type type;
  bool required;
};

struct KindSpec {
  const char* name;
  std::vector<FieldSpec> fields;  // with `description`, and for a generator of spmv_matrix.hpp
  bool generated;                 // `duplicates` and `shuffled`
};

const std::vector<KindSpec>& kinds() {
  // kSize: 1..2^31 - 1; kLength: 0..2^31 - 1; kNnz: 0..kMaxNnz.
  const FieldSpec rows{"rows", Type::kSize, true}, cols{"cols", Type::kSize, true};
  const FieldSpec min_len{"min_len", Type::kLength, true}, max_len{"max_len", Type::kLength, true};
  static std::vector<KindSpec> all = {
      {"laplacian_2d",
       {{"nx", Type::kSize, true}, {"ny", Type::kSize, true}, {"jitter", Type::kSize, false}},
       true},
      {"uniform_random", {rows, cols, min_len, max_len}, true},
      {"power_law", {rows, cols, {"alpha", Type::kNumber, true}, min_len, max_len}, true},
      {"with_empty_rows",
       {rows, cols, min_len, max_len, {"empty_fraction", Type::kNumber, true}}, true},
      {"one_dense_row",
       {rows, cols, min_len, max_len, {"dense_row", Type::kRowOrDrawn, true},
        {"dense_len", Type::kLength, true}},
       true},
      {"single_row", {cols, {"len", Type::kLength, true}}, true},
      {"no_entries", {rows, cols}, true},
      {"device_uniform", {rows, cols, {"nnz", Type::kNnz, true}}, false},
      {"matrix_market", {{"file", Type::kText, true}}, false},
  };
  // (Built on first use: the lab's tests are registered while the program's statics start.)
  static const bool completed = [] {
    for (KindSpec& k : all) {
      if (k.generated) {
        k.fields.push_back({"duplicates", Type::kNumber, false});
        k.fields.push_back({"shuffled", Type::kFlag, false});
      }
      k.fields.push_back({"description", Type::kText, false});
    }
    return true;
  }();
  (void)completed;
  return all;
}

std::string key(const std::string& field) { return "matrix." + field; }

// A number field: decimal, finite ("2.1", "0.25", "3").
double number(const cases::Row& row, const std::string& field) {
  const std::string& v = row.text(key(field));
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || std::isspace(static_cast<unsigned char>(v[0])) || end != v.c_str() + v.size() ||
      !std::isfinite(x)) {
    throw std::invalid_argument("'" + key(field) + "' is not a number: '" + v + "'");
  }
  return x;
}

int32_t i32(const cases::Row& row, const std::string& field) {
  return static_cast<int32_t>(row.u64(key(field), 0));
}

// The field's value, checked against its type; throws std::invalid_argument naming it.
void check_field(const cases::Row& row, const FieldSpec& spec) {
  const std::string k = key(spec.name);
  switch (spec.type) {
    case Type::kSize:
    case Type::kLength:
    case Type::kNnz: {
      const uint64_t v = row.u64(k, 0);
      const uint64_t lo = spec.type == Type::kSize ? 1 : 0;
      const uint64_t hi = spec.type == Type::kNnz ? static_cast<uint64_t>(kMaxNnz) : INT32_MAX;
      if (v < lo || v > hi) {
        throw std::invalid_argument("'" + k + "' must be in " + std::to_string(lo) + ".." +
                                    std::to_string(hi) + ", not " + std::to_string(v));
      }
      break;
    }
    case Type::kNumber:
      number(row, spec.name);
      break;
    case Type::kFlag:
      row.flag(k, false);
      break;
    case Type::kText:
      if (row.text(k).empty()) throw std::invalid_argument("'" + k + "' is empty");
      break;
    case Type::kRowOrDrawn:
      if (row.text(k) != "drawn") {
        try {
          check_field(row, {spec.name, Type::kLength, true});
        } catch (const std::invalid_argument&) {
          throw std::invalid_argument("'" + k + "' is neither a row nor \"drawn\": '" +
                                      row.text(k) + "'");
        }
      }
      break;
  }
}

const KindSpec& kind_of(const cases::Row& row) {
  const std::string& kind = row.text("matrix.kind");
  for (const KindSpec& k : kinds()) {
    if (kind == k.name) return k;
  }
  std::string known;
  for (const KindSpec& k : kinds()) known += (known.empty() ? "" : ", ") + std::string(k.name);
  throw std::invalid_argument("unknown kind '" + kind + "' (" + known + ")");
}

// What the generators would refuse, said before any test runs.
void check_sizes(const cases::Row& row, const std::string& kind) {
  const auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
  };
  const auto has = [&row](const char* f) { return row.has(key(f)); };
  if (has("min_len")) {
    require(i32(row, "min_len") <= i32(row, "max_len"), "'matrix.min_len' above 'matrix.max_len'");
    require(i32(row, "max_len") <= i32(row, "cols"), "'matrix.max_len' above 'matrix.cols'");
  }
  if (has("len")) require(i32(row, "len") <= i32(row, "cols"), "'matrix.len' above 'matrix.cols'");
  if (has("dense_len")) {
    require(i32(row, "dense_len") <= i32(row, "cols"), "'matrix.dense_len' above 'matrix.cols'");
    require(row.text(key("dense_row")) == "drawn" || i32(row, "dense_row") < i32(row, "rows"),
            "'matrix.dense_row' is not a row of the matrix");
  }
  if (has("jitter")) {
    require(i32(row, "jitter") <= i32(row, "nx") && i32(row, "jitter") <= i32(row, "ny"),
            "'matrix.jitter' above 'matrix.nx' or 'matrix.ny'");
  }
  if (kind == "power_law") {
    const double alpha = number(row, "alpha");
    require(alpha > 1 && alpha <= 4, "'matrix.alpha' outside (1, 4]");
    require(i32(row, "min_len") >= 1, "'matrix.min_len' of a power law below 1");
  }
  for (const char* f : {"empty_fraction", "duplicates"}) {
    if (has(f)) {
      const double x = number(row, f);
      require(x >= 0 && x <= 1, "'matrix." + std::string(f) + "' outside [0, 1]");
    }
  }
}

}  // namespace

std::vector<std::string> matrix_kinds() {
  std::vector<std::string> out;
  for (const KindSpec& k : kinds()) out.push_back(k.name);
  return out;
}

void check_matrix(const cases::Row& row) {
  if (!row.has("matrix")) {
    throw std::invalid_argument("no 'matrix' (a named value [matrix.<name>])");
  }
  const std::string where = "matrix '" + row.text("matrix") + "'";
  try {
    if (!row.has("matrix.kind")) {
      throw std::invalid_argument("no 'kind' (is it declared as [matrix." + row.text("matrix") +
                                  "] in the cases file?)");
    }
    const KindSpec& kind = kind_of(row);
    const std::vector<FieldSpec>& fields = kind.fields;
    for (const FieldSpec& f : fields) {
      if (row.has(key(f.name))) {
        check_field(row, f);
      } else if (f.required) {
        throw std::invalid_argument("no '" + std::string(f.name) + "' (a " + kind.name +
                                    " matrix needs it)");
      }
    }
    for (const auto& [k, v] : row.values()) {
      if (k.rfind("matrix.", 0) != 0 || k == "matrix.kind") continue;
      const std::string field = k.substr(7);
      bool known = false;
      std::string names;
      for (const FieldSpec& f : fields) {
        known = known || field == f.name;
        names += (names.empty() ? "" : ", ") + std::string(f.name);
      }
      if (!known) {
        throw std::invalid_argument("a " + std::string(kind.name) + " matrix has no field '" +
                                    field + "' (" + names + ")");
      }
    }
    check_sizes(row, kind.name);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + ": " + e.what());
  }
}

bool on_device(const cases::Row& row) { return row.text("matrix.kind") == "device_uniform"; }

DeviceMatrix device_matrix(const cases::Row& row) {
  if (!on_device(row)) throw std::invalid_argument("not a matrix drawn on the GPU");
  return {i32(row, "rows"), i32(row, "cols"), static_cast<int64_t>(row.u64(key("nnz"), 0))};
}

Csr make_matrix(const cases::Row& row, uint64_t s, const std::string& lab_dir) {
  check_matrix(row);
  const std::string& kind = row.text("matrix.kind");
  if (kind == "matrix_market") {
    return read_matrix_market_file(lab_dir + "/" + row.text(key("file")));
  }
  if (kind == "device_uniform") {
    throw std::invalid_argument("a device_uniform matrix is drawn on the GPU");
  }
  const auto n = [&row](const char* f) { return i32(row, f); };
  Csr m;
  if (kind == "laplacian_2d") {
    int32_t nx = n("nx"), ny = n("ny");
    if (row.has(key("jitter"))) {
      const uint64_t j = row.u64(key("jitter"), 1);
      nx -= static_cast<int32_t>(s % j);
      ny -= static_cast<int32_t>((s >> 8) % j);
    }
    m = laplacian_2d(nx, ny);
  } else if (kind == "uniform_random") {
    m = uniform_random(n("rows"), n("cols"), n("min_len"), n("max_len"), s);
  } else if (kind == "power_law") {
    m = power_law(n("rows"), n("cols"), number(row, "alpha"), n("min_len"), n("max_len"), s);
  } else if (kind == "with_empty_rows") {
    m = with_empty_rows(n("rows"), n("cols"), n("min_len"), n("max_len"),
                        number(row, "empty_fraction"), s);
  } else if (kind == "one_dense_row") {
    const int32_t dense = row.text(key("dense_row")) == "drawn"
                              ? static_cast<int32_t>(s % static_cast<uint64_t>(n("rows")))
                              : n("dense_row");
    m = one_dense_row(n("rows"), n("cols"), n("min_len"), n("max_len"), dense, n("dense_len"), s);
  } else if (kind == "single_row") {
    m = single_row(n("cols"), n("len"), s);
  } else {
    m = no_entries(n("rows"), n("cols"));
  }
  // Then, in this order, each from the next seed: repeated entries, columns out of order.
  uint64_t next = s;
  if (row.has(key("duplicates"))) m = with_duplicates(m, number(row, "duplicates"), ++next);
  if (row.flag(key("shuffled"), false)) m = shuffled_within_rows(m, ++next);
  return m;
}

namespace {

// The seed of the row's pattern: from the matrix's name, so that every version of the lab gets
// the same matrix (made once, kept for the next), and from the judge's seed where the test's
// inputs are (labkit::cases::shared_seed).
uint64_t pattern_seed(const std::string& matrix) {
  return cases::shared_seed("matrix." + matrix);
}

// The matrices made so far, the most recently used first, up to kCacheBytes in all (the newest
// is kept whatever its size): the versions of a lab, and the suites, share them.
constexpr size_t kCacheBytes = size_t{512} << 20;

std::shared_ptr<const Csr> cached(const cases::Row& row, uint64_t seed, const std::string& dir) {
  struct Entry {
    std::string name;
    uint64_t seed;
    std::shared_ptr<const Csr> matrix;
    size_t bytes;
  };
  static std::mutex mu;
  static std::list<Entry> entries;
  static size_t total = 0;
  std::lock_guard<std::mutex> lock(mu);
  const std::string& name = row.text("matrix");
  for (auto it = entries.begin(); it != entries.end(); ++it) {
    if (it->name == name && it->seed == seed) {
      entries.splice(entries.begin(), entries, it);
      return entries.front().matrix;
    }
  }
  auto m = std::make_shared<const Csr>(make_matrix(row, seed, dir));
  const size_t bytes = (m->row_ptr.size() + m->col_idx.size()) * 4 + m->values.size() * 4;
  entries.push_front({name, seed, m, bytes});
  total += bytes;
  while (total > kCacheBytes && entries.size() > 1) {
    total -= entries.back().bytes;
    entries.pop_back();
  }
  return m;
}

}  // namespace

cases::Family family(const LabInfo& lab) {
  if (lab.workspace_bytes == nullptr) {
    throw std::invalid_argument("the spmv family needs the lab's workspace size");
  }
  cases::Family f;
  f.name = "spmv";
  f.parts = {{"matrix", ""}};
  f.scalars = {"calls", "capture"};
  f.check = [](const cases::Row& row) {
    check_matrix(row);
    cases::calls_of(row);
  };
  f.run = [lab](const std::string& variant, const cases::Row& row, uint64_t seed) {
    Case c;
    c.seed = seed;
    const cases::Calls calls = cases::calls_of(row);
    c.calls = calls.calls;
    c.capture = calls.capture;
    const bool market = row.text("matrix.kind") == "matrix_market";
    c.name = row.has(key("description")) ? row.text(key("description"))
             : market                     ? row.text(key("file"))
                                          : row.text("matrix");
    if (on_device(row)) {
      c.device = device_matrix(row);
      c.workspace_bytes = lab.workspace_bytes(static_cast<size_t>(c.device.rows),
                                              static_cast<size_t>(c.device.nnz));
    } else {
      // A file that does not read is the instructor's problem, not the student's: it is
      // reported as an error of the test itself, with the reader's message.
      try {
        c.matrix = cached(row, pattern_seed(row.text("matrix")), lab.dir);
      } catch (const MatrixMarketError& e) {
        FAIL() << "the instructor's matrix file does not read (not your code's fault): "
               << e.what();
      }
      c.workspace_bytes = lab.workspace_bytes(static_cast<size_t>(c.matrix->rows),
                                              static_cast<size_t>(c.matrix->nnz()));
    }
    cases::expect_ok(calls, [&] { return spec(variant, c); });
  };
  return f;
}

bool register_cases(const std::vector<std::string>& variants, const LabInfo& lab) {
  return cases::at_start(
      [&] { cases::register_suites(cases::lab_suites(), variants, family(lab)); });
}

}  // namespace labkit::ops::spmv
