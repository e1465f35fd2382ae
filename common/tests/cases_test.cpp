// labkit/cases.hpp: a lab's tests as data, registered as GoogleTest tests. CPU only: the names,
// the rows each test gets, the seeds, and the errors a wrong cases file stops at. The suites
// below stand in for a lab's generated lab_suites(); the tests they register skip without a
// GPU and, with one, only record their row. The matmul family's driver
// (labkit/ops/matmul_cases.hpp) is checked through test_names, which registers nothing: its
// shapes, names and size promise.
#include "labkit/cases.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/ops/matmul_cases.hpp"

namespace labkit::cases {

const std::vector<Suite>& lab_suites() {
  static const std::vector<Suite> suites = {
      {"Sizes", "DemoPublic", "Matches", false, "demo.toml", 3,
       {{"dtype", {"f32", "i32"}, true}, {"n", {"1", "1025"}, true}}},
      {"Variants", "DemoRepeat", "Fresh", true, "demo.toml", 9,
       {{"n", {"300007"}, false}, {"calls", {"3"}, false}}},
  };
  return suites;
}

}  // namespace labkit::cases

namespace {

using labkit::cases::Family;
using labkit::cases::Row;
using labkit::cases::Suite;
namespace mm = labkit::ops::matmul;

std::map<std::string, std::string>& seen() {
  static std::map<std::string, std::string> rows;
  return rows;
}

Family demo_family() {
  Family f;
  f.name = "demo";
  f.parts = {{"dtype", ""}, {"n", "n"}};
  f.scalars = {"calls"};
  f.run = [](const std::string& variant, const Row& row, uint64_t) {
    std::string text = variant;
    for (const auto& [k, v] : row.values()) text += " " + k + "=" + v;
    seen()[text] = text;
  };
  return f;
}

const bool registered = [] {
  labkit::cases::register_suites(labkit::cases::lab_suites(), {"v1_a", "v2_b"}, demo_family());
  return true;
}();

std::vector<std::string> registered_names() {
  std::vector<std::string> names;
  const auto* unit = ::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit->total_test_suite_count(); ++i) {
    const auto* suite = unit->GetTestSuite(i);
    for (int j = 0; j < suite->total_test_count(); ++j) {
      const std::string name = std::string(suite->name()) + "." + suite->GetTestInfo(j)->name();
      if (name.find("Demo") != std::string::npos) names.push_back(name);
    }
  }
  return names;
}

TEST(Cases, EveryVariantTimesEveryCombinationNamedAsParameterizedTests) {
  ASSERT_TRUE(registered);
  EXPECT_EQ(registered_names(),
            (std::vector<std::string>{
                "Sizes/DemoPublic.Matches/v1_a_f32_n1", "Sizes/DemoPublic.Matches/v1_a_f32_n1025",
                "Sizes/DemoPublic.Matches/v1_a_i32_n1", "Sizes/DemoPublic.Matches/v1_a_i32_n1025",
                "Sizes/DemoPublic.Matches/v2_b_f32_n1", "Sizes/DemoPublic.Matches/v2_b_f32_n1025",
                "Sizes/DemoPublic.Matches/v2_b_i32_n1", "Sizes/DemoPublic.Matches/v2_b_i32_n1025",
                // scalars are not in the name
                "Variants/DemoRepeat.Fresh/v1_a", "Variants/DemoRepeat.Fresh/v2_b"}));
}

TEST(Cases, RowsReadTheirValuesAndRefuseWrongOnes) {
  const Row row({{"n", "1025"}, {"capture", "true"}, {"bad", "-3"}, {"word", "yes"}});
  EXPECT_EQ(row.u64("n", 0), 1025u);
  EXPECT_EQ(row.u64("calls", 1), 1u);  // absent: the default
  EXPECT_TRUE(row.flag("capture", false));
  EXPECT_FALSE(row.flag("race", false));
  EXPECT_THROW(row.u64("bad", 0), std::invalid_argument);
  EXPECT_THROW(row.flag("word", false), std::invalid_argument);
  EXPECT_THROW(row.text("missing"), std::invalid_argument);
}

TEST(Cases, SeedsComeFromTheFullNameAndDiffer) {
  const uint64_t a = labkit::cases::name_seed("Sizes/DemoPublic.Matches/v1_a_f32_n1");
  EXPECT_EQ(a, labkit::cases::name_seed("Sizes/DemoPublic.Matches/v1_a_f32_n1"));
  EXPECT_NE(a, labkit::cases::name_seed("Sizes/DemoPublic.Matches/v2_b_f32_n1"));
  EXPECT_EQ(labkit::cases::name_seed(""), 0xcbf29ce484222325ull);  // FNV-1a's basis
}

TEST(Cases, AKeyTheFamilyDoesNotKnowStopsTheProgramNamingItsPlace) {
  const std::vector<labkit::cases::Suite> bad = {
      {"Sizes", "DemoBad", "Matches", false, "demo.toml", 17, {{"size", {"4"}, true}}}};
  try {
    labkit::cases::register_suites(bad, {"v1_a"}, demo_family());
    FAIL() << "an unknown key was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "demo.toml:17: the demo family has no 'size'");
  }
}

TEST(Cases, AScalarOnlyKeyGivenAsAListStopsTheProgram) {
  const std::vector<labkit::cases::Suite> bad = {
      {"Sizes", "DemoBad", "Matches", false, "demo.toml", 21, {{"calls", {"1", "2"}, true}}}};
  EXPECT_THROW(labkit::cases::register_suites(bad, {"v1_a"}, demo_family()),
               std::invalid_argument);
}

// The message register_suites stops at for `suites`, or "" when it accepts them.
std::string refusal(const std::vector<Suite>& suites, const Family& family) {
  try {
    labkit::cases::test_names(suites, {"v1_a"}, family);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// A part named by a function of its value, not prefix + value; a value it cannot read, or a row
// the family's check refuses, stops the program naming the suite's place.
Family labelled_family() {
  Family f = demo_family();
  f.parts = {{"dtype", ""},
             {"n", "n", [](const std::string& v) {
                if (v == "0") throw std::invalid_argument("zero elements");
                return "x" + v + "y";
              }}};
  f.check = [](const Row& row) {
    if (row.has("calls") && row.text("calls") == "7") throw std::invalid_argument("no 7 calls");
  };
  return f;
}

TEST(Cases, APartsLabelFunctionWritesItsNamePart) {
  const std::vector<Suite> suites = {
      {"Sizes", "DemoLabel", "Matches", false, "demo.toml", 30,
       {{"dtype", {"f32"}, true}, {"n", {"1", "25"}, true}}}};
  EXPECT_EQ(labkit::cases::test_names(suites, {"v1_a", "v2_b"}, labelled_family()),
            (std::vector<std::string>{"Sizes/DemoLabel.Matches/v1_a_f32_x1y",
                                      "Sizes/DemoLabel.Matches/v1_a_f32_x25y",
                                      "Sizes/DemoLabel.Matches/v2_b_f32_x1y",
                                      "Sizes/DemoLabel.Matches/v2_b_f32_x25y"}));
  // The prefix family names the same suite the old way.
  EXPECT_EQ(labkit::cases::test_names(suites, {"v1_a"}, demo_family()).back(),
            "Sizes/DemoLabel.Matches/v1_a_f32_n25");
}

TEST(Cases, ALabelOrCheckThatRefusesAValueStopsTheProgramNamingItsPlace) {
  EXPECT_EQ(refusal({{"Sizes", "DemoBad", "Matches", false, "demo.toml", 33,
                      {{"n", {"5", "0"}, true}}}},
                    labelled_family()),
            "demo.toml:33: 'n': zero elements");
  EXPECT_EQ(refusal({{"Sizes", "DemoBad", "Matches", false, "demo.toml", 35,
                      {{"n", {"5"}, true}, {"calls", {"7"}, false}}}},
                    labelled_family()),
            "demo.toml:35: no 7 calls");
  EXPECT_EQ(refusal({{"Sizes", "DemoBad", "Matches", false, "demo.toml", 35,
                      {{"n", {"5"}, true}, {"calls", {"6"}, false}}}},
                    labelled_family()),
            "");
}

// A key with named values ([matrix.band_3] in the file): the name goes into the test's name, the
// fields into its row as "<key>.<field>", after the name.
TEST(Cases, ANamedValuesFieldsReachItsRowBesideItsName) {
  Family f = demo_family();
  f.parts = {{"matrix", ""}};
  std::vector<std::string> rows;
  f.check = [&rows](const Row& row) {
    std::string text;
    for (const auto& [k, v] : row.values()) text += (text.empty() ? "" : " ") + k + "=" + v;
    rows.push_back(text);
  };
  const std::vector<Suite> suites = {
      {"Matrices", "DemoNamed", "Matches", false, "demo.toml", 50,
       {{"matrix", {"band_3", "dense"}, true,
         {{{"kind", "band"}, {"width", "3"}}, {{"kind", "dense"}}}},
        {"calls", {"2"}, false}}}};
  EXPECT_EQ(labkit::cases::test_names(suites, {"v1_a"}, f),
            (std::vector<std::string>{"Matrices/DemoNamed.Matches/v1_a_band_3",
                                      "Matrices/DemoNamed.Matches/v1_a_dense"}));
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "matrix=band_3 matrix.kind=band matrix.width=3 calls=2",
                      "matrix=dense matrix.kind=dense calls=2"}));
  const std::vector<Suite> short_fields = {
      {"Matrices", "DemoNamed", "Matches", false, "demo.toml", 52,
       {{"matrix", {"band_3", "dense"}, true, {{{"kind", "band"}}}}}}};
  EXPECT_EQ(refusal(short_fields, f), "demo.toml:52: 'matrix' has 2 values but fields for 1");
}

// A part's name field: where a named value has it, it names the tests instead of the value
// (a hidden value with a name the public file gives another). Two tests of one name are refused.
TEST(Cases, ANameFieldStandsForItsValueInTheName) {
  Family f = demo_family();
  f.parts = {{"matrix", "m_", nullptr, "name"}};
  const auto suite = [](std::vector<labkit::cases::Fields> fields) {
    return std::vector<Suite>{{"Matrices", "DemoNamed", "Matches", true, "demo.toml", 60,
                               {{"matrix", {"band_3", "band_3_hidden"}, true, fields}}}};
  };
  EXPECT_EQ(labkit::cases::test_names(suite({{{"kind", "band"}}, {{"name", "band_4"}}}),
                                      {"v1_a"}, f),
            (std::vector<std::string>{"Matrices/DemoNamed.Matches/v1_a_m_band_3",
                                      "Matrices/DemoNamed.Matches/v1_a_m_band_4"}));
  EXPECT_EQ(refusal(suite({{{"kind", "band"}}, {{"name", "band_3"}}}), f),
            "demo.toml:60: two tests named Matrices/DemoNamed.Matches/<variant>_m_band_3");
  EXPECT_EQ(refusal(suite({{{"kind", "band"}}, {{"name", "band-3"}}}), f),
            "demo.toml:60: 'matrix': 'band_3_hidden' has name = 'band-3' (a test's name takes "
            "letters, digits and '_')");
  // Without a name field in the family, a field called name is only a field.
  f.parts = {{"matrix", "m_"}};
  EXPECT_EQ(labkit::cases::test_names(suite({{{"kind", "band"}}, {{"name", "band_3"}}}),
                                      {"v1_a"}, f)
                .back(),
            "Matrices/DemoNamed.Matches/v1_a_m_band_3_hidden");
}

TEST(Cases, NothingIsRegisteredWhenALaterSuiteIsRefused) {
  const std::vector<Suite> suites = {
      {"Sizes", "DemoFirst", "Matches", false, "demo.toml", 40, {{"n", {"1"}, true}}},
      {"Sizes", "DemoSecond", "Matches", false, "demo.toml", 44, {{"size", {"1"}, true}}}};
  EXPECT_THROW(labkit::cases::register_suites(suites, {"v1_a"}, demo_family()),
               std::invalid_argument);
  for (const std::string& name : registered_names()) {
    EXPECT_EQ(name.find("DemoFirst"), std::string::npos) << name;
  }
}

TEST(MatmulCases, ShapesAreMxNxKAndNothingElse) {
  const mm::Shape s = mm::parse_shape("127x129x33");
  EXPECT_EQ(s.M, 127);
  EXPECT_EQ(s.N, 129);
  EXPECT_EQ(s.K, 33);
  EXPECT_EQ(mm::parse_shape("2147483647x1x1").M, 2147483647);
  for (const char* bad : {"127x129", "127x129x33x1", "0x1x1", "1x1x0", "01x1x1", "x1x1", "1xx1",
                          "1x1x", "127X129X33", "2147483648x1x1", "99999999999x1x1", "", "abc"}) {
    EXPECT_THROW(mm::parse_shape(bad), std::invalid_argument) << bad;
  }
}

TEST(MatmulCases, TestsAreNamedByTheirShapeAsTheCxxTestsWere) {
  const std::vector<Suite> suites = {
      {"Shapes", "MatmulPublic", "MatchesCpuReference", false, "cases.toml", 3,
       {{"shape", {"127x129x33", "1x200x50"}, true}}},
      {"Variants", "MatmulPublicStream", "LaunchesOnTheGivenStream", false, "cases.toml", 9,
       {{"shape", {"96x80x40"}, false}, {"capture", {"true"}, false}}},
      {"Variants", "MatmulHiddenRace", "NoSharedMemoryRaces", true, "cases.toml", 14,
       {{"shape", {"200x150x37"}, false}, {"race", {"true"}, false}, {"calls", {"1"}, false}}}};
  EXPECT_EQ(labkit::cases::test_names(suites, {"v1_naive"}, mm::family()),
            (std::vector<std::string>{
                "Shapes/MatmulPublic.MatchesCpuReference/v1_naive_M127_N129_K33",
                "Shapes/MatmulPublic.MatchesCpuReference/v1_naive_M1_N200_K50",
                "Variants/MatmulPublicStream.LaunchesOnTheGivenStream/v1_naive",
                "Variants/MatmulHiddenRace.NoSharedMemoryRaces/v1_naive"}));
}

TEST(MatmulCases, AMalformedShapeStopsTheProgramNamingItsPlace) {
  const std::string listed = refusal(
      {{"Shapes", "MatmulPublic", "T", false, "labs/x/tests/cases.toml", 12,
        {{"shape", {"64x64x64", "127x129"}, true}}}},
      mm::family());
  EXPECT_EQ(listed.rfind("labs/x/tests/cases.toml:12: 'shape': '127x129' is not a shape MxNxK", 0),
            0u)
      << listed;
  const std::string scalar = refusal(
      {{"Variants", "MatmulStream", "T", false, "labs/x/tests/cases.toml", 20,
        {{"shape", {"96x0x40"}, false}}}},
      mm::family());
  EXPECT_EQ(scalar.rfind("labs/x/tests/cases.toml:20: 'shape': '96x0x40' is not a shape", 0), 0u)
      << scalar;
  EXPECT_EQ(refusal({{"Variants", "MatmulStream", "T", false, "f.toml", 2,
                      {{"calls", {"3"}, false}}}},
                    mm::family()),
            "f.toml:2: no 'shape' (MxNxK)");
  EXPECT_EQ(refusal({{"Variants", "MatmulStream", "T", false, "f.toml", 4,
                      {{"shape", {"9x9x9"}, false}, {"calls", {"0"}, false}}}},
                    mm::family()),
            "f.toml:4: 'calls' must be at least 1");
  EXPECT_EQ(refusal({{"Variants", "MatmulStream", "T", false, "f.toml", 6,
                      {{"shape", {"9x9x9"}, false}, {"race", {"true", "false"}, true}}}},
                    mm::family()),
            "f.toml:6: 'race' cannot be a list (the matmul family does not name tests by it)");
}

TEST(MatmulCases, AShapeOutsideTheLabsSizePromiseStopsTheProgram) {
  const auto suite = [](const std::string& shape) {
    return std::vector<Suite>{{"Shapes", "MatmulHidden", "T", true, "labs/02/hidden/cases.toml", 17,
                               {{"shape", {"64x64x1", shape}, true}}}};
  };
  const mm::SizePromise lab02{64, 1}, lab03{128, 8};
  EXPECT_EQ(refusal(suite("192x128x7"), mm::family(lab02)), "");
  EXPECT_EQ(refusal(suite("96x64x1"), mm::family(lab02)),
            "labs/02/hidden/cases.toml:17: shape 96x64x1 breaks the lab's size promise (M and N "
            "multiples of 64, K of 1)");
  EXPECT_NE(refusal(suite("64x96x1"), mm::family(lab02)), "");
  EXPECT_EQ(refusal(suite("96x64x1"), mm::family()), "");  // lab 01: no promise
  // A scalar shape (the first value only) is checked too.
  EXPECT_NE(refusal({{"Variants", "S", "T", false, "f.toml", 3,
                     {{"shape", {"128x128x12"}, false}}}},
                    mm::family(lab03)),
            "");
  EXPECT_EQ(refusal({{"Variants", "S", "T", false, "f.toml", 3,
                     {{"shape", {"128x256x16"}, false}}}},
                    mm::family(lab03)),
            "");
  EXPECT_NE(refusal({{"Variants", "S", "T", false, "f.toml", 3, {{"shape", {"64x256x16"}, false}}}},
                    mm::family(lab03)),
            "");
  EXPECT_TRUE(mm::keeps(lab03, {256, 128, 8}));
  EXPECT_FALSE(mm::keeps(lab03, {256, 128, 12}));
}

}  // namespace
