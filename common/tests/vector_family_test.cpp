// labkit/ops/vector_family.hpp: what the reduce and scan families share. CPU only: a case's
// description, its inputs (fresh each call, the same for the same seed, garbage in the
// workspace), the device draws a spec names, and the cases files a family refuses.
#include "labkit/ops/vector_family.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/cases.hpp"
#include "labkit/ops/reduce.hpp"
#include "labkit/ops/reduce_dist.hpp"

namespace {

using labkit::DType;
using labkit::ops::VectorCase;

VectorCase small_case(DType dtype) {
  VectorCase c;
  c.n = 1000;
  c.dtype = dtype;
  c.seed = 42;
  c.workspace = 64;
  c.in_offset = 3;
  return c;
}

TEST(VectorFamily, DescribesTheVariantSizeOffsetAndSeed) {
  EXPECT_EQ(labkit::ops::describe("v2_strided", small_case(DType::kI32)),
            "v2_strided (i32) on n=1000, `in` 3 elements past a 16-byte boundary [seed 42]");
}

TEST(VectorFamily, InputsAreFreshEachCallAndRepeatForTheSameSeed) {
  for (const DType dtype : {DType::kF32, DType::kI32}) {
    const VectorCase c = small_case(dtype);
    const auto first = labkit::ops::draw_inputs(c, 0);
    EXPECT_EQ(first.in.size(), 4 * c.n);
    EXPECT_EQ(first.workspace.size(), 4 * c.workspace);
    EXPECT_EQ(labkit::ops::draw_inputs(c, 0).in, first.in);
    EXPECT_NE(labkit::ops::draw_inputs(c, 1).in, first.in) << "call 1 repeats call 0's input";
    VectorCase other = c;
    other.seed = 43;
    EXPECT_NE(labkit::ops::draw_inputs(other, 0).in, first.in);
  }
}

TEST(VectorFamily, IntsAreInTheirRangeAndTheWorkspaceIsGarbage) {
  const auto v = labkit::ops::draw_inputs(small_case(DType::kI32), 0);
  std::vector<int32_t> in(v.in.size() / 4), ws(v.workspace.size() / 4);
  std::memcpy(in.data(), v.in.data(), v.in.size());
  std::memcpy(ws.data(), v.workspace.data(), v.workspace.size());
  for (const int32_t x : in) {
    ASSERT_GE(x, labkit::ops::reduce::kIntLo);
    ASSERT_LE(x, labkit::ops::reduce::kIntHi);
  }
  for (const int32_t x : ws) ASSERT_GE(x, labkit::ops::reduce::kGarbageI32Lo);
}

TEST(VectorFamily, DeviceDrawsAreNamedWithTheirOwnSeeds) {
  VectorCase c = small_case(DType::kF32);
  c.device_inputs = true;
  const labkit::CheckSpec s = labkit::ops::start_spec<labkit::ops::reduce::Sig>("v1", c);
  const auto& in = s.call.buffers[labkit::ops::reduce::Sig::kIn];
  const auto& ws = s.call.buffers[labkit::ops::reduce::Sig::kWorkspace];
  EXPECT_EQ(in.source, labkit::ops::reduce::kSourceF32);
  EXPECT_EQ(ws.source, labkit::protocol::Source::kUniformF32);
  EXPECT_EQ(in.seed, labkit::ops::device_in_seed(c));
  EXPECT_NE(in.seed, ws.seed);
  EXPECT_EQ(in.offset, 12u);  // 3 elements of 4 bytes
  EXPECT_EQ(s.call.params, (std::vector<int64_t>{1000, labkit::ops::reduce::Sig::kF32Param}));
}

size_t workspace(size_t n) { return n / 8 + 1; }

std::string refusal(const std::vector<labkit::cases::Param>& params) {
  const std::vector<labkit::cases::Suite> suites = {
      {"Sizes", "VectorBad", "Matches", false, "lab/tests/cases.toml", 12, params}};
  try {
    labkit::ops::register_vector_suites(suites, {"v1"},
                                        {"reduce", labkit::ops::reduce::spec, workspace});
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(VectorFamily, ACasesFileWithoutSizeOrTypeOrWithAWrongValueStopsTheProgram) {
  EXPECT_EQ(refusal({{"dtype", {"f32"}, true}}),
            "lab/tests/cases.toml:12: no 'n'");
  EXPECT_EQ(refusal({{"n", {"7"}, true}}),
            "lab/tests/cases.toml:12: no 'dtype'");
  EXPECT_EQ(refusal({{"dtype", {"f64"}, true}, {"n", {"7"}, true}}),
            "lab/tests/cases.toml:12: dtype 'f64' is neither f32 nor i32");
  EXPECT_EQ(refusal({{"dtype", {"f32"}, true}, {"n", {"7"}, true}, {"calls", {"two"}, false}}),
            "lab/tests/cases.toml:12: 'calls' is not a count: 'two'");
  EXPECT_EQ(refusal({{"dtype", {"f32"}, true}, {"n", {"7"}, true}, {"calls", {"0"}, false}}),
            "lab/tests/cases.toml:12: 'calls' must be 1 to 1000");
  EXPECT_EQ(refusal({{"dtype", {"f32"}, true}, {"n", {"7"}, true}, {"race", {"yes"}, false}}),
            "lab/tests/cases.toml:12: 'race' is not true or false: 'yes'");
  EXPECT_EQ(refusal({{"dtype", {"f32"}, true}, {"n", {"7"}, true}, {"shape", {"7"}, false}}),
            "lab/tests/cases.toml:12: the reduce family has no 'shape'");
}

}  // namespace
