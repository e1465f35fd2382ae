// What the public and hidden tests of lab 06 share: the variant names, the matrices by name,
// and the test naming.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/ops/spmv.hpp"
#include "labkit/ops/spmv_matrix.hpp"
#include "labkit/worker.hpp"
#include "spmv.h"

namespace lab06 {

namespace sp = labkit::ops::spmv;

// The variant names of spmv.h (the judge never links the launchers: the worker runs them).
inline const std::vector<std::string> kVariants = {SPMV_VARIANTS(LABKIT_VARIANT_NAME)};

// A matrix of the tests: its name (part of the test's name) and how to make it from a seed.
struct MatrixDef {
  const char* name;
  const char* description;  // for messages
  std::function<sp::Csr(uint64_t seed)> make;
};

// Every matrix a test may name. Sizes are small enough for a CPU reference, and never a
// multiple of a warp or a block.
inline const std::vector<MatrixDef>& matrices() {
  static const std::vector<MatrixDef> all = {
      {"laplacian_31x17", "the 2D 5-point Laplacian of a 31 x 17 grid",
       [](uint64_t) { return sp::laplacian_2d(31, 17); }},
      {"laplacian_300x301", "the 2D 5-point Laplacian of a 300 x 301 grid",
       [](uint64_t) { return sp::laplacian_2d(300, 301); }},
      {"uniform_len8to24", "uniform 1000 x 1000, 8-24 entries per row",
       [](uint64_t s) { return sp::uniform_random(1000, 1000, 8, 24, s); }},
      {"uniform_len32", "uniform 2001 x 3001, 32 entries per row",
       [](uint64_t s) { return sp::uniform_random(2001, 3001, 32, 32, s); }},
      {"uniform_len1to3", "uniform 50003 x 40000, 1-3 entries per row",
       [](uint64_t s) { return sp::uniform_random(50003, 40000, 1, 3, s); }},
      {"uniform_len33to300", "uniform 3001 x 5000, 33-300 entries per row (all longer than a warp)",
       [](uint64_t s) { return sp::uniform_random(3001, 5000, 33, 300, s); }},
      {"uniform_len100to400", "uniform 100003 x 300007, 100-400 entries per row",
       [](uint64_t s) { return sp::uniform_random(100003, 300007, 100, 400, s); }},
      {"rect_tall", "tall 3001 x 257, 0-12 entries per row",
       [](uint64_t s) { return sp::uniform_random(3001, 257, 0, 12, s); }},
      {"rect_wide", "wide 129 x 50000, 20-2000 entries per row",
       [](uint64_t s) { return sp::uniform_random(129, 50000, 20, 2000, s); }},
      {"powerlaw", "power-law row lengths (alpha 2.1), 20000 x 20000",
       [](uint64_t s) { return sp::power_law(20000, 20000, 2.1, 1, 20000, s); }},
      {"powerlaw_large", "power-law row lengths (alpha 2.2), 500000 x 500000",
       [](uint64_t s) { return sp::power_law(500000, 500000, 2.2, 2, 200000, s); }},
      {"empty_rows", "uniform 2000 x 2000, 1-40 per row, 30% of the rows empty (first and last too)",
       [](uint64_t s) { return sp::with_empty_rows(2000, 2000, 1, 40, 0.3, s); }},
      {"mostly_empty", "uniform 100003 x 1000, 1-3 per row, 95% of the rows empty",
       [](uint64_t s) { return sp::with_empty_rows(100003, 1000, 1, 3, 0.95, s); }},
      {"dense_row", "4000 x 4000, 1-8 per row, row 1777 dense (4000 entries)",
       [](uint64_t s) { return sp::one_dense_row(4000, 4000, 1, 8, 1777, 4000, s); }},
      {"dense_last_row", "100000 x 250000, 1-4 per row, the last row holds 250000 entries",
       [](uint64_t s) { return sp::one_dense_row(100000, 250000, 1, 4, 99999, 250000, s); }},
      {"single_row", "1 x 10000, one row of 3001 entries",
       [](uint64_t s) { return sp::single_row(10000, 3001, s); }},
      {"single_entry", "1 x 1, one entry",
       [](uint64_t s) { return sp::single_row(1, 1, s); }},
      {"single_short_row", "1 x 100, one row of 7 entries",
       [](uint64_t s) { return sp::single_row(100, 7, s); }},
      {"no_entries", "77 x 55 with nnz = 0",
       [](uint64_t) { return sp::no_entries(77, 55); }},
      {"unsorted", "uniform 1500 x 1500, 1-70 per row, columns in random order within each row",
       [](uint64_t s) { return sp::shuffled_within_rows(sp::uniform_random(1500, 1500, 1, 70, s), s + 1); }},
      {"duplicates", "uniform 1500 x 1500, 1-70 per row, 10% of the entries repeated in their row",
       [](uint64_t s) { return sp::with_duplicates(sp::uniform_random(1500, 1500, 1, 70, s), 0.1, s + 1); }},
      // Long rows whose columns come in any order and repeat: a kernel that splits a long row
      // among threads, blocks or bins must still add every entry once, duplicates included,
      // whatever the order (one that merges sorted runs, skips a repeated column, or stops at
      // the first column below the previous one is wrong on every row). About 7 million
      // entries.
      {"long_rows_unsorted_dups", "101 x 200003, 10000-100000 entries per row, 25% of them repeated in their row, columns in random order",
       [](uint64_t s) {
         return sp::shuffled_within_rows(
             sp::with_duplicates(sp::uniform_random(101, 200003, 10000, 100000, s), 0.25, s + 1),
             s + 2);
       }},
      // The benchmark's other classes at its size, drawn from the seed, columns in any order: a
      // path taken only at the benchmark's size, or one that assumes the sorted stencil or a
      // dense row holding columns 0..cols-1 in order, is checked here with the tests' bound.
      {"laplacian_bench", "the 2D 5-point Laplacian of a grid of about 2048 x 2048, columns in random order",
       [](uint64_t s) {
         return sp::shuffled_within_rows(
             sp::laplacian_2d(2048 - static_cast<int32_t>(s % 64), 2048 - static_cast<int32_t>((s >> 8) % 64)),
             s + 1);
       }},
      {"denserow_bench", "4194304 x 4194304, 1-16 per row, one row holding every column, in random order",
       [](uint64_t s) {
         const int32_t n = 1 << 22;
         return sp::shuffled_within_rows(
             sp::one_dense_row(n, n, 1, 16, static_cast<int32_t>(s % n), n, s), s + 1);
       }},
  };
  return all;
}

// Matrices drawn on the GPU (sp::DeviceMatrix: rows share the entries evenly, columns uniform in
// any order): sizes where drawing on the host and passing a gigabyte or two through the arena
// for every variant would cost seconds, and whose point is the size, not the pattern.
struct DeviceMatrixDef {
  const char* name;
  const char* description;
  sp::DeviceMatrix matrix;
};

inline const std::vector<DeviceMatrixDef>& device_matrices() {
  static const std::vector<DeviceMatrixDef> all = {
      // 2^26 + 2^20 rows of 1-2 entries: at one warp per row the thread number passes 2^31.
      {"rows_past_2p26", "67108864 + 1048576 rows x 1000, 1-2 entries per row",
       {(1 << 26) + (1 << 20), 1000, int64_t{3} * ((1 << 26) + (1 << 20)) / 2}},
      // 2^27 entries: half a gigabyte of col_idx.
      {"uniform_2p22_len32", "uniform 4194304 x 4194304, 32 entries per row",
       {1 << 22, 1 << 22, int64_t{1} << 27}},
  };
  return all;
}

// The matrix called `name` drawn from `seed`, made once per judge process. The large ones
// (hundreds of megabytes) are kept one at a time.
inline bool is_large(const std::string& name) {
  return name == "laplacian_bench" || name == "denserow_bench" || name == "long_rows_unsorted_dups";
}

inline std::shared_ptr<const sp::Csr> matrix(const std::string& name, uint64_t seed,
                                             std::string* description = nullptr) {
  static std::mutex mu;
  static std::map<std::pair<std::string, uint64_t>, std::shared_ptr<const sp::Csr>> cache;
  static std::pair<std::pair<std::string, uint64_t>, std::shared_ptr<const sp::Csr>> large;
  for (const MatrixDef& d : matrices()) {
    if (name != d.name) continue;
    if (description != nullptr) *description = d.description;
    const auto key = std::make_pair(name, seed);
    std::lock_guard<std::mutex> lock(mu);
    if (is_large(name)) {
      if (large.second == nullptr || large.first != key) {
        large.second.reset();  // free the previous one first
        large = {key, std::make_shared<const sp::Csr>(d.make(seed))};
      }
      return large.second;
    }
    auto& slot = cache[key];
    if (!slot) slot = std::make_shared<const sp::Csr>(d.make(seed));
    return slot;
  }
  throw std::invalid_argument("lab06: no matrix named " + name);
}

inline sp::Case make_case(std::shared_ptr<const sp::Csr> m, const std::string& description,
                          uint64_t seed, int calls = 1) {
  sp::Case c;
  c.workspace_bytes = spmv_workspace_bytes(static_cast<size_t>(m->rows), static_cast<size_t>(m->nnz()));
  c.matrix = std::move(m);
  c.name = description;
  c.seed = seed;
  c.calls = calls;
  return c;
}

// The case for matrix `name`: pattern from `seed`, values and x from `seed` too.
inline sp::Case make_case(const std::string& name, uint64_t seed, int calls = 1) {
  for (const DeviceMatrixDef& d : device_matrices()) {
    if (name != d.name) continue;
    sp::Case c;
    c.device = d.matrix;
    c.name = d.description;
    c.seed = seed;
    c.calls = calls;
    c.workspace_bytes = spmv_workspace_bytes(static_cast<size_t>(d.matrix.rows),
                                             static_cast<size_t>(d.matrix.nnz));
    return c;
  }
  std::string description;
  auto m = matrix(name, seed, &description);
  return make_case(std::move(m), description, seed, calls);
}

using Param = std::tuple<std::string, std::string>;  // variant, matrix

// "v2_vector_dense_row"
inline std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param);
}

}  // namespace lab06
