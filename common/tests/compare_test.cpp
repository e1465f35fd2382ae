// Host-only tests of the tolerance rule and the mismatch report (no GPU needed).
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "labkit/check.hpp"
#include "labkit/compare.hpp"
#include "labkit/half.hpp"
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
  EXPECT_EQ(r.map, (std::vector<std::string>{"..", "??"}));
  EXPECT_NE(report.find("..\n    ??\n"), std::string::npos) << report;
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
  EXPECT_EQ(r.map, std::vector<std::string>(4, "...X"));
}

TEST(Compare, MapStaysSmallForLargeOutputs) {
  Fixture f = exact(4096, 3);
  f.got[4095 * 3] += 1.0f;
  const CompareResult r = compare_matrix(f.got, f.ref, f.bound, 4096, 3);
  EXPECT_EQ(r.map_cell_rows, 64u);
  EXPECT_EQ(r.map_cell_cols, 32u);
  ASSERT_EQ(r.map.size(), 64u);
  EXPECT_EQ(r.map.back(), "x");
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

// The canary report the judge writes for a buffer (labkit::describe_guard, check.hpp).
BufferSpec output_c(uint64_t rows, uint64_t cols) {
  return {"C", protocol::Role::kOutput, 4, rows * cols, {rows, cols}};
}

TEST(Guards, DescribesWritesPastTheEnd) {
  protocol::GuardInfo g;
  g.after = 5;
  g.first_after = 0;
  const std::string text = describe_guard(output_c(127, 129), g);
  EXPECT_NE(text.find("past the end of C"), std::string::npos) << text;
  EXPECT_NE(text.find("row 127, col 0"), std::string::npos) << text;
  EXPECT_EQ(describe_guard(output_c(1, 1), protocol::GuardInfo{}), "");
}

TEST(Guards, DescribesWritesBeforeTheStart) {
  protocol::GuardInfo g;
  g.before = 1;
  g.nearest_before = 3;
  EXPECT_NE(describe_guard(output_c(4, 4), g).find("C[-3]"), std::string::npos);
}

// ---- generic comparisons: any element type, 1D and NCHW "where" maps

std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(CompareVector, LocatesTheLostTailAndNamesGroups) {
  const size_t n = 1000;
  std::vector<float> got = random_floats(n, 3);
  std::vector<double> ref(got.begin(), got.end());
  for (size_t i = 990; i < n; ++i) got[i] = bits_as<float>(kPoisonBits);
  VectorLayout layout{n, 256, [](size_t i) { return i < 512 ? std::string("short rows") : std::string("long rows"); }, "y"};
  const CompareResult r = compare_vector(observe(bytes_of(got), DType::kF32), ref,
                                         uniform_bounds(ref, 1e-6, 1e-6), layout);
  EXPECT_EQ(r.wrong, 10u);
  EXPECT_EQ(r.never_written, 10u);
  const std::string report = r.report();
  EXPECT_NE(report.find("y[990]: never written"), std::string::npos) << report;
  EXPECT_NE(report.find("wrong 256-element segments: 3 (1 of 4)"), std::string::npos) << report;
  EXPECT_NE(report.find("long rows: 10 of 488 wrong"), std::string::npos) << report;
  EXPECT_NE(report.find("short rows: 0 of 512 wrong"), std::string::npos) << report;
}

TEST(CompareVector, IntegersAreExactEvenPastDoublePrecision) {
  const int64_t big = (int64_t{1} << 60) + 1;  // not representable as a double
  std::vector<uint8_t> bytes(16);
  const int64_t got[2] = {big, big - 1};
  std::memcpy(bytes.data(), got, 16);
  const CompareResult r =
      compare_vector_exact(observe(bytes, DType::kI64), {big, big}, VectorLayout{2, 1, {}, "sum"});
  EXPECT_EQ(r.wrong, 1u);
  EXPECT_NE(r.report().find("sum[1]: 1152921504606846976 / 1152921504606846977"), std::string::npos)
      << r.report();
}

// 16-bit outputs (lab 11): each element is read in its type, and one still holding its half of
// the 32-bit poison word (low half first) was never written, in either type.
TEST(CompareVector, SixteenBitPoisonIsNeverWritten) {
  for (const DType type : {DType::kF16, DType::kBF16}) {
    const bool bf16 = type == DType::kBF16;
    const uint16_t elems[4] = {static_cast<uint16_t>(kPoisonBits),
                               static_cast<uint16_t>(kPoisonBits >> 16), to_16_bits(0.5f, bf16),
                               to_16_bits(-0.25f, bf16)};
    std::vector<uint8_t> bytes(8);
    std::memcpy(bytes.data(), elems, 8);
    const Observed got = observe(bytes, type);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got.unwritten, (std::vector<uint8_t>{1, 1, 0, 0})) << dtype_name(type);
    EXPECT_EQ(got.values[2], 0.5);
    EXPECT_EQ(got.values[3], -0.25);
    const CompareResult r =
        compare_vector(got, {0, 0, 0.5, -0.25}, {1e-3, 1e-3, 1e-3, 1e-3}, VectorLayout{4, 2});
    EXPECT_EQ(r.never_written, 2u) << r.report();
    EXPECT_EQ(r.wrong, 2u) << r.report();
  }
}

TEST(CompareVector, Int32PoisonIsNeverWritten) {
  std::vector<uint8_t> bytes(8);
  const uint32_t words[2] = {kPoisonBits, 5};
  std::memcpy(bytes.data(), words, 8);
  const CompareResult r = compare_vector_exact(observe(bytes, DType::kI32), {0, 5}, VectorLayout{2});
  EXPECT_EQ(r.never_written, 1u);
  EXPECT_EQ(r.wrong, 1u);
  // An int holds no NaN: the report names the pattern.
  EXPECT_NE(r.report().find("still the poison pattern 0x7FC0DEAD"), std::string::npos)
      << r.report();
  EXPECT_EQ(r.report().find("NaN"), std::string::npos) << r.report();
}

// A (2, 3, 8, 10) output, stride 2, whose image 1, channel 2 has its top row and its left
// column wrong (a padding bug).
CompareResult padding_bug() {
  const size_t N = 2, C = 3, H = 8, W = 10;
  std::vector<float> got = random_floats(N * C * H * W, 9);
  std::vector<double> ref(got.begin(), got.end());
  for (size_t x = 0; x < W; ++x) got[((1 * C + 2) * H + 0) * W + x] += 1.0f;
  for (size_t y = 1; y < H; ++y) got[((1 * C + 2) * H + y) * W + 0] += 1.0f;
  return compare_nchw(observe(bytes_of(got), DType::kF32), ref, uniform_bounds(ref, 1e-6, 1e-6),
                      NchwLayout{N, C, H, W, 1, 2, "y"});
}

TEST(CompareNchw, SeparatesBordersChannelsAndStridePhases) {
  const CompareResult r = padding_bug();
  EXPECT_EQ(r.wrong, 10u + 8u - 1u);
  const std::string report = r.report();
  EXPECT_NE(report.find("wrong images (n): 1 (1 of 2)"), std::string::npos) << report;
  EXPECT_NE(report.find("wrong channels (c): 2 (1 of 3)"), std::string::npos) << report;
  EXPECT_NE(report.find("17 wrong within 1 of an edge"), std::string::npos) << report;
  EXPECT_NE(report.find(" 0 in the interior"), std::string::npos) << report;
  // Top row: x even -> (0,0) 5, x odd -> (0,1) 5; left column y = 1..7: (1,0) 4, (0,0) 3.
  EXPECT_NE(report.find("(0,0) 8 (0,1) 5 (1,0) 4 (1,1) 0"), std::string::npos) << report;
  EXPECT_NE(report.find("y[1][2][0][0]"), std::string::npos) << report;
  EXPECT_NE(report.find("map of image 1, channel 2"), std::string::npos) << report;
}

TEST(CompareNchw, RejectsAWrongSize) {
  EXPECT_THROW(compare_nchw(observe(std::vector<uint8_t>(8), DType::kF32), {0, 0}, {0, 0},
                            NchwLayout{1, 1, 2, 2}),
               std::invalid_argument);
}

// ---- the where data: the same failure as JSON, for the grader's pictures

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CompareWhere, MatrixNamesTheWrongCoordinatesAndTheTileMap) {
  Fixture f = exact(100, 70);  // 4 x 3 tiles of 32, the last ones partial
  for (size_t i = 0; i < 32; ++i) {
    for (size_t j = 32; j < 64; ++j) f.got[i * 70 + j] += 1.0f;  // one whole tile: 'X'
  }
  f.got[40 * 70 + 5] = 2.5f;                                 // one element: 'x'
  f.ref[40 * 70 + 5] = 2.0;
  f.got[99 * 70 + 69] = bits_as<float>(kPoisonBits);         // never written: '?'
  const CompareResult r = compare_matrix(f.got, f.ref, f.bound, 100, 70, 32, 1000);
  const std::string j = r.where_json();
  EXPECT_EQ(j.front(), '{');
  EXPECT_EQ(j.back(), '}');
  EXPECT_TRUE(has(j, R"("kind":"matrix","name":"C","shape":[100,70],"exact":false,)"
                     R"("checked":7000,"wrong":1026,"never_written":1,"nonfinite":0,)")) << j;
  // The first ten of the 1000 listed, in row-major order.
  EXPECT_TRUE(has(j, R"("first":[{"index":32,"at":[0,32],"got":)")) << j;
  EXPECT_TRUE(has(j, R"({"index":41,"at":[0,41],"got":)")) << j;
  EXPECT_FALSE(has(j, R"("at":[0,42])")) << j;
  EXPECT_TRUE(has(j, R"("map":{"cell":[32,32],"rows":[".X.","x..","...","..?"]})")) << j;
  EXPECT_TRUE(has(j, R"("wrong_rows":{"ranges":[[0,31],[40,40],[99,99]],"ranges_total":3,)"
                     R"("count":34,"of":100})")) << j;
  EXPECT_TRUE(has(j, R"("wrong_cols":{"ranges":[[5,5],[32,63],[69,69]],)")) << j;
}

TEST(CompareWhere, NothingWhenRightAndTheVerdictCarriesBoth) {
  Fixture f = exact(3, 3);
  const CompareResult right = compare_matrix(f.got, f.ref, f.bound, 3, 3);
  EXPECT_EQ(right.where_json(), "");
  EXPECT_TRUE(verdict(right, "C is wrong: ").ok());
  EXPECT_EQ(verdict(right, "C is wrong: ").where, "");
  f.got[4] += 1.0f;
  const CompareResult wrong = compare_matrix(f.got, f.ref, f.bound, 3, 3);
  const Verdict v = verdict(wrong, "C is wrong: ");
  EXPECT_EQ(v.message, "C is wrong: " + wrong.report());
  EXPECT_EQ(v.where, wrong.where_json());
  EXPECT_TRUE(has(v.where, R"("at":[1,1])")) << v.where;
}

TEST(CompareWhere, EachKindOfWrongElement) {
  Fixture f = exact(1, 4);
  f.got[0] = std::numeric_limits<float>::quiet_NaN();
  f.got[1] = -std::numeric_limits<float>::infinity();
  f.got[2] = bits_as<float>(kPoisonBits);
  f.got[3] = 2.5f;
  f.ref[3] = 2.0;
  f.bound[3] = 0.25;
  const std::string j = compare_matrix(f.got, f.ref, f.bound, 1, 4).where_json();
  EXPECT_TRUE(has(j, R"({"index":0,"at":[0,0],"got":"NaN","expected":)")) << j;  // JSON has no NaN
  EXPECT_TRUE(has(j, R"({"index":1,"at":[0,1],"got":"-Infinity","expected":)")) << j;
  EXPECT_TRUE(has(j, R"({"index":2,"at":[0,2],"never_written":true,"expected":)")) << j;
  EXPECT_TRUE(has(j, R"({"index":3,"at":[0,3],"got":2.5,"expected":2,"bound":0.25})")) << j;
  EXPECT_TRUE(has(j, R"("wrong":4,"never_written":1,"nonfinite":2,"worst_ratio":2,)")) << j;
}

TEST(CompareWhere, VectorSegmentsGroupsAndExactIntegers) {
  const size_t n = 1000;
  std::vector<float> got = random_floats(n, 3);
  std::vector<double> ref(got.begin(), got.end());
  for (size_t i = 256; i < 512; ++i) got[i] += 1.0f;
  got[999] = bits_as<float>(kPoisonBits);
  const auto length = [](size_t i) {
    return std::string(i < 600 ? "rows of length 1-32" : "rows of length 33-64");
  };
  VectorLayout layout{n, 256, length, "y"};
  const std::string j = compare_vector(observe(bytes_of(got), DType::kF32), ref,
                                       uniform_bounds(ref, 1e-6, 1e-6), layout).where_json();
  EXPECT_TRUE(has(j, R"("kind":"vector","name":"y","shape":[1000],)")) << j;
  EXPECT_TRUE(has(j, R"({"index":256,"at":[256],"got":)")) << j;
  EXPECT_TRUE(has(j, R"("map":{"cell":[1,256],"rows":[".X.?"]})")) << j;
  EXPECT_TRUE(has(j, R"("segment":256,"wrong_segments":{"ranges":[[1,1],[3,3]],)")) << j;
  EXPECT_TRUE(has(j, R"("groups":[{"name":"rows of length 1-32","wrong":256,"total":600},)"
                     R"({"name":"rows of length 33-64","wrong":1,"total":400}],"groups_total":2)"))
      << j;

  const int64_t big = (int64_t{1} << 60) + 1;
  std::vector<uint8_t> bytes(16);
  const int64_t ints[2] = {big, big - 1};
  std::memcpy(bytes.data(), ints, 16);
  const std::string e =
      compare_vector_exact(observe(bytes, DType::kI64), {big, big}, VectorLayout{2, 1, {}, "sum"})
          .where_json();
  EXPECT_TRUE(has(e, R"("exact":true)")) << e;
  EXPECT_TRUE(has(e, R"("first":[{"index":1,"at":[1],"got":1152921504606846976,)"
                     R"("expected":1152921504606846977}])")) << e;
}

TEST(CompareWhere, NchwNamesImageChannelRowColumnAndThePlaneMapped) {
  const std::string j = padding_bug().where_json();
  EXPECT_TRUE(has(j, R"("kind":"nchw","name":"y","shape":[2,3,8,10],)")) << j;
  EXPECT_TRUE(has(j, R"({"index":400,"at":[1,2,0,0],"got":)")) << j;
  EXPECT_TRUE(has(j, R"("map":{"cell":[1,1],"rows":["XXXXXXXXXX","X.........",)")) << j;
  EXPECT_TRUE(has(j, R"("image":1,"channel":2})")) << j;
  EXPECT_TRUE(has(j, R"("wrong_images":{"ranges":[[1,1]],"ranges_total":1,"count":1,"of":2})"))
      << j;
  // 32 of each 8 x 10 plane's pixels are within 1 of an edge; 6 planes.
  EXPECT_TRUE(has(j, R"("border":{"width":1,"wrong":17,"total":192},"interior_wrong":0,)"
                     R"("stride":2,"phase_wrong":[8,5,4,0])")) << j;
}

TEST(CompareWhere, StaysSmallWhateverTheOutputsSize) {
  const size_t n = size_t{1} << 20;
  std::vector<float> got(n, 1.0f);
  std::vector<double> ref(n, 1.0);
  for (size_t i = 0; i < n; i += 2) got[i] = 2.0f;  // every other element: 2^19 ranges
  VectorLayout layout{n, 1, [](size_t i) { return "group " + std::to_string(i % 100); }, "y"};
  const std::string j = compare_vector(observe(bytes_of(got), DType::kF32), ref,
                                       uniform_bounds(ref, 1e-6, 1e-6), layout).where_json();
  EXPECT_LT(j.size(), size_t{8192}) << j.size();
  EXPECT_TRUE(has(j, R"("ranges_total":524288,"count":524288,"of":1048576})")) << j;
  EXPECT_TRUE(has(j, R"("groups_total":100)")) << j;
  EXPECT_FALSE(has(j, R"("group 32")")) << j;  // 32 groups listed: 0 to 31
  EXPECT_TRUE(has(j, R"("group 31")")) << j;
}

// labkit::check records a wrong output's where data on the test (check.cpp); the first stays.
TEST(CompareWhere, RecordWhereKeepsTheFirstOnTheTest) {
  record_where("");
  record_where(R"({"kind":"vector","first":1})");
  record_where(R"({"kind":"matrix","second":1})");
  const ::testing::TestResult* r =
      ::testing::UnitTest::GetInstance()->current_test_info()->result();
  std::vector<std::string> values;
  for (int i = 0; i < r->test_property_count(); ++i) {
    if (std::string(r->GetTestProperty(i).key()) == kWhereProperty) {
      values.push_back(r->GetTestProperty(i).value());
    }
  }
  EXPECT_EQ(values, std::vector<std::string>{R"({"kind":"vector","first":1})"});
}

}  // namespace
}  // namespace labkit
