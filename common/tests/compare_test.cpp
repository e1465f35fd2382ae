// Host-only tests of the tolerance rule and the mismatch report (no GPU needed).
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "labkit/compare.hpp"
#include "labkit/ops/matmul_reference.hpp"
#include "labkit/random.hpp"

namespace labkit {
namespace {

struct Fixture {
  size_t rows, cols;
  std::vector<double> ref;
  std::vector<float> got;
  std::vector<double> bound;
};

Fixture exact(size_t rows, size_t cols) {
  Fixture f{rows, cols, {}, {}, {}};
  const std::vector<float> values = random_floats(rows * cols, 7);
  f.ref.assign(values.begin(), values.end());
  f.got = values;
  f.bound = uniform_bounds(f.ref, 1e-6, 1e-6);
  return f;
}

TEST(Compare, IdenticalPasses) {
  Fixture f = exact(40, 70);
  const CompareResult r = compare_matrix(f.got, f.ref, f.bound, f.rows, f.cols);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_TRUE(r.map.empty());
}

TEST(Compare, ErrorAtTheBoundPassesJustAboveFails) {
  Fixture f = exact(1, 2);
  f.ref = {1.0, 1.0};
  f.bound = {0.5, 0.5};
  f.got = {1.5f, 1.5000001f};
  const CompareResult r = compare_matrix(f.got, f.ref, f.bound, 1, 2);
  EXPECT_EQ(r.wrong, 1u);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].col, 1u);
}

TEST(Compare, NanAndInfNeverPassEvenWithAHugeBound) {
  Fixture f = exact(2, 2);
  f.bound.assign(4, 1e300);
  f.got[1] = std::numeric_limits<float>::quiet_NaN();
  f.got[2] = std::numeric_limits<float>::infinity();
  const CompareResult r = compare_matrix(f.got, f.ref, f.bound, 2, 2);
  EXPECT_EQ(r.wrong, 2u);
  EXPECT_EQ(r.nonfinite, 2u);
  EXPECT_EQ(r.never_written, 0u);
}

TEST(Compare, PoisonIsReportedAsNeverWritten) {
  Fixture f = exact(64, 64);
  for (size_t j = 0; j < 64; ++j) f.got[63 * 64 + j] = bits_as<float>(kPoisonBits);
  const CompareResult r = compare_matrix(f.got, f.ref, f.bound, 64, 64);
  EXPECT_EQ(r.never_written, 64u);
  EXPECT_EQ(format_ranges(r.wrong_rows), "63");
  EXPECT_EQ(format_ranges(r.wrong_cols), "0-63");
  const std::string report = r.report();
  EXPECT_NE(report.find("never written"), std::string::npos) << report;
  EXPECT_NE(report.find("(63, 0)"), std::string::npos) << report;
  // Two tiles of 32 x 32 in each direction; only the bottom row of tiles is touched.
  EXPECT_NE(r.map.find("..\n    ??\n"), std::string::npos) << r.map;
}

TEST(Compare, MapLocatesTheLastPartialTileColumn) {
  Fixture f = exact(100, 100);  // tiles: 4 x 4, the last ones partial (4 wide)
  for (size_t i = 0; i < 100; ++i) {
    for (size_t j = 96; j < 100; ++j) f.got[i * 100 + j] += 1.0f;
  }
  const CompareResult r = compare_matrix(f.got, f.ref, f.bound, 100, 100);
  EXPECT_EQ(r.wrong, 400u);
  EXPECT_EQ(format_ranges(r.wrong_cols), "96-99");
  EXPECT_EQ(format_ranges(r.wrong_rows), "0-99");
  EXPECT_EQ(r.map, "    ...X\n    ...X\n    ...X\n    ...X\n");
}

TEST(Compare, MapStaysSmallForLargeOutputs) {
  Fixture f = exact(4096, 3);
  f.got[4095 * 3] += 1.0f;
  const CompareResult r = compare_matrix(f.got, f.ref, f.bound, 4096, 3);
  EXPECT_EQ(r.map_cell_rows, 64u);
  EXPECT_EQ(r.map_cell_cols, 32u);
  size_t lines = 0;
  for (char c : r.map) lines += c == '\n';
  EXPECT_EQ(lines, 64u);
  EXPECT_EQ(r.map.substr(r.map.size() - 2), "x\n");
}

TEST(Compare, ListsAtMostFiveButCountsAll) {
  Fixture f = exact(10, 10);
  for (auto& g : f.got) g += 1.0f;
  const CompareResult r = compare_matrix(f.got, f.ref, f.bound, 10, 10);
  EXPECT_EQ(r.wrong, 100u);
  EXPECT_EQ(r.first.size(), 5u);
  EXPECT_NE(r.report().find("100 of 100 elements wrong"), std::string::npos);
}

TEST(Compare, RejectsMismatchedSizes) {
  Fixture f = exact(3, 3);
  EXPECT_THROW(compare_matrix(f.got, f.ref, f.bound, 3, 4), std::invalid_argument);
}

TEST(Guards, DescribesWritesPastTheEnd) {
  GuardReport g;
  g.after = 5;
  g.first_after = 0;
  const std::string text = describe_guards(g, "C", 127, 129);
  EXPECT_NE(text.find("past the end of C"), std::string::npos) << text;
  EXPECT_NE(text.find("row 127, col 0"), std::string::npos) << text;
  EXPECT_EQ(describe_guards(GuardReport{}, "C", 1, 1), "");
}

TEST(Guards, DescribesWritesBeforeTheStart) {
  GuardReport g;
  g.before = 1;
  g.nearest_before = 3;
  EXPECT_NE(describe_guards(g, "C", 4, 4).find("C[-3]"), std::string::npos);
}

}  // namespace
}  // namespace labkit
