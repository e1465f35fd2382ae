// The conv family's tests as data (labkit/ops/conv_cases.hpp), CPU only, through test_names
// (which registers nothing): tests named by their named shapes, rows read into a Shape, and the
// shapes it refuses, naming the cases file and line. Also the generic part of it
// (labkit/cases.hpp): a named value's name field, and two tests of one name refused.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/cases.hpp"
#include "labkit/ops/conv_cases.hpp"

namespace {

using labkit::cases::Fields;
using labkit::cases::Param;
using labkit::cases::Row;
using labkit::cases::Suite;
namespace cv = labkit::ops::conv;

size_t workspace(const cv::Shape& s) { return size_t(s.n * s.c_out); }

// [shape.<name>] with {n, c_in, h, w, c_out, k, stride, pad} and bias.
Fields shape(int n, int c_in, int h, int w, int c_out, int k, int stride, int pad, bool bias) {
  return {{"n", std::to_string(n)},         {"c_in", std::to_string(c_in)},
          {"h", std::to_string(h)},         {"w", std::to_string(w)},
          {"c_out", std::to_string(c_out)}, {"k", std::to_string(k)},
          {"stride", std::to_string(stride)}, {"pad", std::to_string(pad)},
          {"bias", bias ? "true" : "false"}};
}

Fields with(Fields f, const std::string& field, const std::string& text) {
  for (auto& [k, v] : f) {
    if (k == field) {
      v = text;
      return f;
    }
  }
  f.emplace_back(field, text);
  return f;
}

Fields without(Fields f, const std::string& field) {
  Fields out;
  for (const auto& kv : f) {
    if (kv.first != field) out.push_back(kv);
  }
  return out;
}

// One suite at f.toml:<line> of one shape (listed: in the name) and the given scalars.
std::vector<Suite> one(int line, const std::string& name, const Fields& fields,
                       std::vector<Param> scalars = {}) {
  std::vector<Param> params = {{"shape", {name}, true, {fields}}};
  for (Param& p : scalars) params.push_back(std::move(p));
  return {{"Shapes", "ConvHidden", "MatchesReference", true, "f.toml", line, params}};
}

// The message register_suites stops at for `suites`, or "" when it accepts them.
std::string refusal(const std::vector<Suite>& suites) {
  try {
    labkit::cases::test_names(suites, {"v1_im2col"}, cv::family(workspace));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

const Fields kPad1Bias = shape(2, 3, 9, 9, 4, 3, 1, 1, true);

TEST(ConvCases, TestsAreNamedByTheirShapesNameAsTheCxxTestsWere) {
  const std::vector<Suite> suites = {
      {"Shapes", "ConvPublic", "MatchesReference", false, "cases.toml", 3,
       {{"shape", {"tiny_3x3_pad1", "no_padding"}, true,
         {shape(1, 3, 8, 8, 4, 3, 1, 1, true), shape(2, 4, 10, 10, 8, 3, 1, 0, false)}}}},
      {"Variants", "ConvPublicStream", "LaunchesOnTheGivenStream", false, "cases.toml", 9,
       {{"shape", {"capture"}, false, {shape(2, 8, 14, 14, 16, 3, 1, 1, true)}},
        {"capture", {"true"}, false}}},
      {"Variants", "ConvHiddenRepeat", "FreshInputsAndGarbageWorkspace", true, "cases.toml", 14,
       {{"shape", {"repeat"}, false, {shape(3, 16, 19, 17, 24, 3, 1, 1, true)}},
        {"calls", {"3"}, false}}}};
  EXPECT_EQ(labkit::cases::test_names(suites, {"v1_im2col", "v2_implicit_gemm"},
                                      cv::family(workspace)),
            (std::vector<std::string>{
                "Shapes/ConvPublic.MatchesReference/v1_im2col_tiny_3x3_pad1",
                "Shapes/ConvPublic.MatchesReference/v2_implicit_gemm_tiny_3x3_pad1",
                "Shapes/ConvPublic.MatchesReference/v1_im2col_no_padding",
                "Shapes/ConvPublic.MatchesReference/v2_implicit_gemm_no_padding",
                "Variants/ConvPublicStream.LaunchesOnTheGivenStream/v1_im2col",
                "Variants/ConvPublicStream.LaunchesOnTheGivenStream/v2_implicit_gemm",
                "Variants/ConvHiddenRepeat.FreshInputsAndGarbageWorkspace/v1_im2col",
                "Variants/ConvHiddenRepeat.FreshInputsAndGarbageWorkspace/v2_implicit_gemm"}));
}

// The hidden k1 is not the public k1: declared as k1_hidden, it names its tests k1.
TEST(ConvCases, ANameFieldNamesTheTestInsteadOfTheTable) {
  const Fields k1 = with(shape(3, 24, 9, 7, 40, 1, 1, 0, true), "name", "k1");
  EXPECT_EQ(labkit::cases::test_names(
                {{"Shapes", "ConvHidden", "MatchesReference", true, "f.toml", 3,
                  {{"shape", {"pad1_bias", "k1_hidden"}, true, {kPad1Bias, k1}}}}},
                {"v1_im2col"}, cv::family(workspace)),
            (std::vector<std::string>{"Shapes/ConvHidden.MatchesReference/v1_im2col_pad1_bias",
                                      "Shapes/ConvHidden.MatchesReference/v1_im2col_k1"}));
  EXPECT_EQ(refusal(one(5, "k1_hidden", with(k1, "name", "k 1"))),
            "f.toml:5: 'shape': 'k1_hidden' has name = 'k 1' (a test's name takes letters, "
            "digits and '_')");
  // Two values of one suite that would name two tests alike.
  EXPECT_EQ(refusal({{"Shapes", "ConvHidden", "MatchesReference", true, "f.toml", 7,
                      {{"shape", {"k1", "k1_hidden"}, true,
                        {shape(2, 16, 7, 9, 8, 1, 1, 0, true), k1}}}}}),
            "f.toml:7: two tests named Shapes/ConvHidden.MatchesReference/<variant>_k1");
}

TEST(ConvCases, ARowsShapeIsItsFields) {
  const Row row({{"shape", "odd"},      {"shape.n", "5"},      {"shape.c_in", "17"},
                 {"shape.h", "27"},     {"shape.w", "21"},     {"shape.c_out", "37"},
                 {"shape.k", "5"},      {"shape.stride", "2"}, {"shape.pad", "2"},
                 {"shape.bias", "false"}});
  const cv::Shape s = cv::row_shape(row);
  EXPECT_EQ(s.n, 5);
  EXPECT_EQ(s.c_in, 17);
  EXPECT_EQ(s.h, 27);
  EXPECT_EQ(s.w, 21);
  EXPECT_EQ(s.c_out, 37);
  EXPECT_EQ(s.k, 5);
  EXPECT_EQ(s.stride, 2);
  EXPECT_EQ(s.pad, 2);
}

TEST(ConvCases, AShapeMissingAFieldStopsTheProgramNamingItsPlace) {
  EXPECT_EQ(refusal(one(7, "pad1_bias", kPad1Bias)), "");
  EXPECT_EQ(refusal(one(7, "pad1_bias", without(kPad1Bias, "pad"))),
            "f.toml:7: shape 'pad1_bias' has no 'pad' ([shape.pad1_bias] needs n, c_in, h, w, "
            "c_out, k, stride, pad and bias)");
  EXPECT_EQ(refusal(one(8, "pad1_bias", without(kPad1Bias, "bias"))),
            "f.toml:8: shape 'pad1_bias' has no 'bias' ([shape.pad1_bias] needs n, c_in, h, w, "
            "c_out, k, stride, pad and bias)");
  // A word with no [shape.<name>] anywhere: no fields at all.
  EXPECT_EQ(refusal({{"Variants", "S", "T", false, "f.toml", 9, {{"shape", {"big"}, false}}}}),
            "f.toml:9: shape 'big' has no 'n' ([shape.big] needs n, c_in, h, w, c_out, k, "
            "stride, pad and bias)");
  EXPECT_EQ(refusal({{"Variants", "S", "T", false, "f.toml", 10, {{"calls", {"3"}, false}}}}),
            "f.toml:10: no 'shape' (a named shape [shape.<name>] with n, c_in, h, w, c_out, k, "
            "stride, pad and bias)");
  EXPECT_EQ(refusal(one(11, "pad1_bias", with(kPad1Bias, "strides", "2"))),
            "f.toml:11: shape 'pad1_bias' has a field 'strides' the conv family does not know "
            "(n, c_in, h, w, c_out, k, stride, pad and bias, and name)");
}

TEST(ConvCases, ANonCountStopsTheProgram) {
  EXPECT_EQ(refusal(one(12, "x", with(kPad1Bias, "h", "9.5"))),
            "f.toml:12: shape 'x': 'shape.h' is not a count: '9.5'");
  EXPECT_EQ(refusal(one(13, "x", with(kPad1Bias, "pad", "-1"))),
            "f.toml:13: shape 'x': 'shape.pad' is not a count: '-1'");
  EXPECT_EQ(refusal(one(14, "x", with(kPad1Bias, "w", "2147483648"))),
            "f.toml:14: shape 'x': 'shape.w' is past 2147483647 (the lab's shape holds ints)");
  EXPECT_EQ(refusal(one(15, "x", with(kPad1Bias, "bias", "yes"))),
            "f.toml:15: shape 'x': 'shape.bias' is not true or false: 'yes'");
}

TEST(ConvCases, AnInvalidShapeStopsTheProgram) {
  // K = 5 > H + 2P = 4 + 0.
  const std::string big_k = refusal(one(16, "x", shape(1, 1, 4, 9, 1, 5, 1, 0, true)));
  EXPECT_EQ(big_k.rfind("f.toml:16: shape 'x': conv: not a valid shape: N=1 C_in=1 4x9", 0), 0u)
      << big_k;
  for (const char* field : {"n", "c_in", "h", "w", "c_out", "k", "stride"}) {
    const std::string zero = refusal(one(17, "x", with(kPad1Bias, field, "0")));
    EXPECT_EQ(zero.rfind("f.toml:17: shape 'x': conv: not a valid shape: ", 0), 0u)
        << field << ": " << zero;
  }
  EXPECT_EQ(refusal(one(18, "x", with(kPad1Bias, "pad", "0"))), "");  // no padding is a shape
}

TEST(ConvCases, ItsScalarsAreCallsAndCaptureOnly) {
  EXPECT_EQ(
      refusal(one(20, "x", kPad1Bias, {{"calls", {"3"}, false}, {"capture", {"true"}, false}})),
      "");
  EXPECT_EQ(refusal(one(21, "x", kPad1Bias, {{"calls", {"0"}, false}})),
            "f.toml:21: 'calls' must be 1 to 1000");
  EXPECT_EQ(refusal(one(22, "x", kPad1Bias, {{"capture", {"1"}, false}})),
            "f.toml:22: 'capture' is not true or false: '1'");
  EXPECT_EQ(refusal(one(23, "x", kPad1Bias, {{"race", {"true"}, false}})),
            "f.toml:23: the conv family has no 'race'");
  EXPECT_EQ(refusal(one(24, "x", kPad1Bias, {{"calls", {"1", "2"}, true}})),
            "f.toml:24: 'calls' cannot be a list (the conv family does not name tests by it)");
}

}  // namespace
