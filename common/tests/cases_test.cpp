// labkit/cases.hpp: a lab's tests as data, registered as GoogleTest tests. CPU only: the names,
// the rows each test gets, the seeds, and the errors a wrong cases file stops at. The suites
// below stand in for a lab's generated lab_suites(); the tests they register skip without a
// GPU and, with one, only record their row. The matmul family's driver
// (labkit/ops/matmul_cases.hpp) is checked through test_names, which registers nothing: its
// shapes, names and size promise; so is the spmv family's (labkit/ops/spmv_cases.hpp): its named
// matrices, the ones it refuses, and the matrices each kind builds.
#include "labkit/cases.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/ops/matmul_cases.hpp"
#include "labkit/random.hpp"
#include "labkit/ops/spmv_cases.hpp"

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
namespace sp = labkit::ops::spmv;

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

// Case by case, each case's versions in a row (a judge keeps what they share for the next), and
// each test lists its version as its value parameter (the grader gives a case's versions to one
// judge: grader/gtest.py, case_of).
TEST(Cases, EveryVariantTimesEveryCombinationNamedAsParameterizedTests) {
  ASSERT_TRUE(registered);
  EXPECT_EQ(registered_names(),
            (std::vector<std::string>{
                "Sizes/DemoPublic.Matches/v1_a_f32_n1", "Sizes/DemoPublic.Matches/v2_b_f32_n1",
                "Sizes/DemoPublic.Matches/v1_a_f32_n1025", "Sizes/DemoPublic.Matches/v2_b_f32_n1025",
                "Sizes/DemoPublic.Matches/v1_a_i32_n1", "Sizes/DemoPublic.Matches/v2_b_i32_n1",
                "Sizes/DemoPublic.Matches/v1_a_i32_n1025", "Sizes/DemoPublic.Matches/v2_b_i32_n1025",
                // scalars are not in the name
                "Variants/DemoRepeat.Fresh/v1_a", "Variants/DemoRepeat.Fresh/v2_b"}));
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  int checked = 0;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    if (std::string(suite.name()).find("Demo") == std::string::npos) continue;
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const ::testing::TestInfo& t = *suite.GetTestInfo(j);
      ASSERT_NE(t.value_param(), nullptr) << t.name();
      const std::string name = t.name(), variant = t.value_param();
      EXPECT_EQ(name.substr(name.rfind('/') + 1, variant.size()), variant) << name;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 10);
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

TEST(Cases, HowACaseIsCalledReadsAlikeInEveryFamily) {
  using Values = std::vector<std::pair<std::string, std::string>>;
  auto calls_of = [](Values values) { return labkit::cases::calls_of(Row(std::move(values))); };
  const labkit::cases::Calls plain = calls_of(Values{{"n", "4"}});
  EXPECT_EQ(plain.calls, 1);  // absent: the defaults
  EXPECT_FALSE(plain.capture);
  EXPECT_FALSE(plain.race);
  const labkit::cases::Calls asked = calls_of(Values{{"calls", "3"}, {"capture", "true"}});
  EXPECT_EQ(asked.calls, 3);
  EXPECT_TRUE(asked.capture);
  const labkit::cases::Calls race = calls_of(Values{{"race", "true"}});
  EXPECT_TRUE(race.race);
  EXPECT_EQ(race.calls, 1);
  // A race check replays the one graded call's plan: a race row of several calls is refused.
  EXPECT_THROW(calls_of(Values{{"calls", "2"}, {"race", "true"}}), std::invalid_argument);
  for (const char* calls : {"0", "1001", "4294967297", "-1", "two"}) {
    EXPECT_THROW(calls_of(Values{{"calls", calls}}), std::invalid_argument) << calls;
  }
  EXPECT_THROW(calls_of(Values{{"capture", "maybe"}}), std::invalid_argument);
  EXPECT_THROW(calls_of(Values{{"race", "1x"}}), std::invalid_argument);
}

// The seeds the judges derive go through a keyed pseudo-random function (SipHash-2-4): the
// reference's test vector, and a derived seed that no invertible mix of its parent gives.
TEST(Seeds, DerivedSeedsAreSipHashOfTheSaltKeyedByTheParent) {
  // SipHash-2-4, key 00 01 .. 0f, message 00 01 .. 07: the reference implementation's vector
  // for 8 bytes (62 24 93 9a 79 f5 f5 93, the output's bytes in little-endian order).
  EXPECT_EQ(labkit::siphash24(0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull, 0x0706050403020100ull),
            0x93f5f5799a932462ull);
  EXPECT_EQ(labkit::mix_seed(20261121, 7), labkit::siphash24(20261121, 0x6C61626B69742D73ull, 7));
  EXPECT_NE(labkit::mix_seed(20261121, 7), labkit::mix_seed(20261121, 8));
  EXPECT_NE(labkit::mix_seed(20261121, 7), labkit::mix_seed(20261122, 7));
  // The step is not splitmix64 of seed ^ salt * constant (invertible given the salt), as it was.
  uint64_t z = 20261121ull ^ (7ull * 0xD1B54A32D192ED03ull);
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  EXPECT_NE(labkit::mix_seed(20261121, 7), z ^ (z >> 31));
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
                                      "Sizes/DemoLabel.Matches/v2_b_f32_x1y",
                                      "Sizes/DemoLabel.Matches/v1_a_f32_x25y",
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

// A refused cases file, found as the test program starts, ends it with the message and status 2
// (not an uncaught exception's abort); an accepted one lets it go on.
TEST(Cases, ARefusedFileEndsTheProgramAtStartWithItsMessage) {
  EXPECT_EXIT(labkit::cases::at_start(
                  [] { throw std::invalid_argument("demo.toml:7: the demo family has no 'x'"); }),
              ::testing::ExitedWithCode(2),
              "the lab's tests cannot start: demo.toml:7: the demo family has no 'x'");
  bool ran = false;
  EXPECT_TRUE(labkit::cases::at_start([&ran] { ran = true; }));
  EXPECT_TRUE(ran);
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
            "f.toml:4: 'calls' must be 1 to 1000");
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

// ---- the spmv family: matrices as named values ([matrix.<name>] in the cases file).

size_t fake_workspace(size_t rows, size_t) { return 8 * rows; }
const sp::LabInfo kSpmvLab{"/nonexistent", &fake_workspace};

using Fields = labkit::cases::Fields;

const Fields kPowerlaw = {{"kind", "power_law"}, {"rows", "20000"}, {"cols", "20000"},
                          {"alpha", "2.1"},      {"min_len", "1"},  {"max_len", "20000"},
                          {"description", "power-law row lengths (alpha 2.1), 20000 x 20000"}};
const Fields kNoEntries = {{"kind", "no_entries"}, {"rows", "77"}, {"cols", "55"}};

// One suite of matrix `name` with `fields` (a list: in the test's name), and `more` keys.
std::vector<Suite> spmv_suite(const std::string& name, const Fields& fields, int line = 12,
                              std::vector<labkit::cases::Param> more = {}) {
  std::vector<labkit::cases::Param> params = {{"matrix", {name}, true, {fields}}};
  params.insert(params.end(), more.begin(), more.end());
  return {{"Matrices", "SpmvHidden", "MatchesReference", true, "labs/06/hidden/cases.toml", line,
           params}};
}

// `fields` with `field` set to `value` ("" removes it).
Fields with(Fields fields, const std::string& field, const std::string& value) {
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    if (it->first == field) {
      if (value.empty()) {
        fields.erase(it);
      } else {
        it->second = value;
      }
      return fields;
    }
  }
  if (!value.empty()) fields.emplace_back(field, value);
  return fields;
}

TEST(SpmvCases, TestsAreNamedByTheirMatrixAsTheCxxTestsWere) {
  const std::vector<Suite> suites = {
      {"Matrices", "SpmvPublic", "MatchesReference", false, "cases.toml", 3,
       {{"matrix", {"powerlaw", "no_entries"}, true, {kPowerlaw, kNoEntries}}}},
      // A matrix given as a scalar is not in the name.
      {"Variants", "SpmvPublicStream", "LaunchesOnTheGivenStream", false, "cases.toml", 9,
       {{"matrix", {"powerlaw"}, false, {kPowerlaw}}, {"capture", {"true"}, false}}},
      {"Matrices", "SpmvHiddenRepeat", "FreshInputsAndGarbageWorkspace", true, "h.toml", 4,
       {{"matrix", {"powerlaw"}, true, {kPowerlaw}}, {"calls", {"3"}, false}}}};
  EXPECT_EQ(labkit::cases::test_names(suites, {"v1_scalar", "v3_best"}, sp::family(kSpmvLab)),
            (std::vector<std::string>{
                "Matrices/SpmvPublic.MatchesReference/v1_scalar_powerlaw",
                "Matrices/SpmvPublic.MatchesReference/v3_best_powerlaw",
                "Matrices/SpmvPublic.MatchesReference/v1_scalar_no_entries",
                "Matrices/SpmvPublic.MatchesReference/v3_best_no_entries",
                "Variants/SpmvPublicStream.LaunchesOnTheGivenStream/v1_scalar",
                "Variants/SpmvPublicStream.LaunchesOnTheGivenStream/v3_best",
                "Matrices/SpmvHiddenRepeat.FreshInputsAndGarbageWorkspace/v1_scalar_powerlaw",
                "Matrices/SpmvHiddenRepeat.FreshInputsAndGarbageWorkspace/v3_best_powerlaw"}));
  EXPECT_EQ(sp::matrix_kinds().size(), 9u);
}

TEST(SpmvCases, AMatrixOfAnUnknownKindOrWithoutItsFieldsStopsTheProgramNamingItsPlace) {
  const Family f = sp::family(kSpmvLab);
  EXPECT_EQ(refusal(spmv_suite("pl", kPowerlaw), f), "");
  EXPECT_EQ(refusal(spmv_suite("pl", with(kPowerlaw, "kind", "power_lw"), 14), f),
            "labs/06/hidden/cases.toml:14: matrix 'pl': unknown kind 'power_lw' (laplacian_2d, "
            "uniform_random, power_law, with_empty_rows, one_dense_row, single_row, no_entries, "
            "device_uniform, matrix_market)");
  EXPECT_EQ(refusal(spmv_suite("pl", with(kPowerlaw, "alpha", ""), 15), f),
            "labs/06/hidden/cases.toml:15: matrix 'pl': no 'alpha' (a power_law matrix needs it)");
  EXPECT_EQ(refusal(spmv_suite("pl", with(kPowerlaw, "alpha", "steep")), f),
            "labs/06/hidden/cases.toml:12: matrix 'pl': 'matrix.alpha' is not a number: 'steep'");
  EXPECT_EQ(refusal(spmv_suite("pl", with(kPowerlaw, "rows", "2.5")), f),
            "labs/06/hidden/cases.toml:12: matrix 'pl': 'matrix.rows' is not a count: '2.5'");
  EXPECT_EQ(refusal(spmv_suite("pl", with(kPowerlaw, "alfa", "2.1")), f),
            "labs/06/hidden/cases.toml:12: matrix 'pl': a power_law matrix has no field 'alfa' "
            "(rows, cols, alpha, min_len, max_len, duplicates, shuffled, description)");
  EXPECT_EQ(refusal(spmv_suite("pl", with(kPowerlaw, "shuffled", "yes")), f),
            "labs/06/hidden/cases.toml:12: matrix 'pl': 'matrix.shuffled' is not true or false: "
            "'yes'");
  EXPECT_EQ(refusal(spmv_suite("pl", with(kPowerlaw, "rows", "2147483648")), f),
            "labs/06/hidden/cases.toml:12: matrix 'pl': 'matrix.rows' must be in 1..2147483647, "
            "not 2147483648");
  EXPECT_EQ(refusal(spmv_suite("pl", with(kPowerlaw, "max_len", "20001")), f),
            "labs/06/hidden/cases.toml:12: matrix 'pl': 'matrix.max_len' above 'matrix.cols'");
  // A plain word (no [matrix.<name>] in the file), a matrix that is no row's, a bad scalar.
  EXPECT_EQ(refusal({{"M", "S", "T", false, "f.toml", 3, {{"matrix", {"band"}, true}}}}, f),
            "f.toml:3: matrix 'band': no 'kind' (is it declared as [matrix.band] in the cases "
            "file?)");
  EXPECT_EQ(refusal({{"M", "S", "T", false, "f.toml", 5, {{"calls", {"3"}, false}}}}, f),
            "f.toml:5: no 'matrix' (a named value [matrix.<name>])");
  EXPECT_EQ(refusal(spmv_suite("pl", kPowerlaw, 7, {{"calls", {"0"}, false}}), f),
            "labs/06/hidden/cases.toml:7: 'calls' must be 1 to 1000");
  // A dense row is a row of the matrix, or "drawn" from the seed.
  const Fields dense = {{"kind", "one_dense_row"}, {"rows", "40"},      {"cols", "50"},
                        {"min_len", "1"},          {"max_len", "4"},    {"dense_row", "drawn"},
                        {"dense_len", "50"}};
  EXPECT_EQ(refusal(spmv_suite("d", dense), f), "");
  EXPECT_EQ(refusal(spmv_suite("d", with(dense, "dense_row", "39")), f), "");
  EXPECT_NE(refusal(spmv_suite("d", with(dense, "dense_row", "40")), f), "");
  EXPECT_EQ(refusal(spmv_suite("d", with(dense, "dense_row", "last")), f),
            "labs/06/hidden/cases.toml:12: matrix 'd': 'matrix.dense_row' is neither a row nor "
            "\"drawn\": 'last'");
  // On the GPU: nnz up to 2^31 - 1, no generator's fields.
  const Fields device = {{"kind", "device_uniform"}, {"rows", "2097153"}, {"cols", "1048583"},
                         {"nnz", "2147483647"}};
  EXPECT_EQ(refusal(spmv_suite("n", device), f), "");
  EXPECT_NE(refusal(spmv_suite("n", with(device, "nnz", "2147483648")), f), "");
  EXPECT_NE(refusal(spmv_suite("n", with(device, "shuffled", "true")), f), "");
  EXPECT_NE(refusal(spmv_suite("f", {{"kind", "matrix_market"}}), f), "");
}

Row matrix_row(const std::string& name, const Fields& fields) {
  std::vector<std::pair<std::string, std::string>> values = {{"matrix", name}};
  for (const auto& [k, v] : fields) values.emplace_back("matrix." + k, v);
  return Row(values);
}

void expect_same(const sp::Csr& got, const sp::Csr& want, const std::string& what) {
  EXPECT_EQ(got.rows, want.rows) << what;
  EXPECT_EQ(got.cols, want.cols) << what;
  EXPECT_EQ(got.row_ptr, want.row_ptr) << what;
  EXPECT_EQ(got.col_idx, want.col_idx) << what;
  EXPECT_EQ(got.values, want.values) << what;
}

// Each kind builds what the lab's C++ catalog (labs/06_spmv/tests/cases.hpp, before its tests
// were data) built from the same seed: its sizes where they are cheap, smaller ones of the same
// form where not (the benchmark-sized Laplacian and dense row, the long rows).
TEST(SpmvCases, EachKindBuildsTheMatrixTheCxxCatalogBuilt) {
  const uint64_t s = 0x9E3779B97F4A7C15ull;
  const auto build = [s](const Fields& fields) {
    return sp::make_matrix(matrix_row("m", fields), s, "");
  };
  const Fields uniform = {{"kind", "uniform_random"}, {"rows", "1500"}, {"cols", "1500"},
                          {"min_len", "1"}, {"max_len", "70"}};
  expect_same(build({{"kind", "laplacian_2d"}, {"nx", "31"}, {"ny", "17"}}),
              sp::laplacian_2d(31, 17), "laplacian_31x17");
  expect_same(build(uniform), sp::uniform_random(1500, 1500, 1, 70, s), "uniform");
  expect_same(build(kPowerlaw), sp::power_law(20000, 20000, 2.1, 1, 20000, s), "powerlaw");
  expect_same(build({{"kind", "with_empty_rows"}, {"rows", "2000"}, {"cols", "2000"},
                     {"min_len", "1"}, {"max_len", "40"}, {"empty_fraction", "0.3"}}),
              sp::with_empty_rows(2000, 2000, 1, 40, 0.3, s), "empty_rows");
  expect_same(build({{"kind", "one_dense_row"}, {"rows", "4000"}, {"cols", "4000"},
                     {"min_len", "1"}, {"max_len", "8"}, {"dense_row", "1777"},
                     {"dense_len", "4000"}}),
              sp::one_dense_row(4000, 4000, 1, 8, 1777, 4000, s), "dense_row");
  expect_same(build({{"kind", "single_row"}, {"cols", "10000"}, {"len", "3001"}}),
              sp::single_row(10000, 3001, s), "single_row");
  expect_same(build(kNoEntries), sp::no_entries(77, 55), "no_entries");
  expect_same(build(with(uniform, "shuffled", "true")),
              sp::shuffled_within_rows(sp::uniform_random(1500, 1500, 1, 70, s), s + 1),
              "unsorted");
  expect_same(build(with(uniform, "duplicates", "0.1")),
              sp::with_duplicates(sp::uniform_random(1500, 1500, 1, 70, s), 0.1, s + 1),
              "duplicates");
  // long_rows_unsorted_dups's form: duplicates first, then the shuffle, each its next seed.
  expect_same(build({{"kind", "uniform_random"}, {"rows", "11"}, {"cols", "20003"},
                     {"min_len", "1000"}, {"max_len", "10000"}, {"duplicates", "0.25"},
                     {"shuffled", "true"}}),
              sp::shuffled_within_rows(
                  sp::with_duplicates(sp::uniform_random(11, 20003, 1000, 10000, s), 0.25, s + 1),
                  s + 2),
              "long_rows_unsorted_dups");
  // laplacian_bench's: a grid of about nx x ny, less by a jitter drawn from the seed.
  expect_same(build({{"kind", "laplacian_2d"}, {"nx", "200"}, {"ny", "190"}, {"jitter", "64"},
                     {"shuffled", "true"}}),
              sp::shuffled_within_rows(
                  sp::laplacian_2d(200 - static_cast<int32_t>(s % 64),
                                   190 - static_cast<int32_t>((s >> 8) % 64)),
                  s + 1),
              "laplacian_bench");
  // denserow_bench's: the dense row's place drawn from the seed.
  const int32_t n = 5003;
  expect_same(build({{"kind", "one_dense_row"}, {"rows", "5003"}, {"cols", "5003"},
                     {"min_len", "1"}, {"max_len", "16"}, {"dense_row", "drawn"},
                     {"dense_len", "5003"}, {"shuffled", "true"}}),
              sp::shuffled_within_rows(
                  sp::one_dense_row(n, n, 1, 16, static_cast<int32_t>(s % n), n, s), s + 1),
              "denserow_bench");
  // Another seed, another matrix (the pattern is the seed's).
  EXPECT_NE(sp::make_matrix(matrix_row("m", uniform), s + 7, "").col_idx, build(uniform).col_idx);
}

TEST(SpmvCases, DeviceAndFileMatricesAreTheirsToDraw) {
  const Row device = matrix_row("rows_past_2p26", {{"kind", "device_uniform"},
                                                   {"rows", "68157440"},
                                                   {"cols", "1000"},
                                                   {"nnz", "102236160"}});
  ASSERT_TRUE(sp::on_device(device));
  EXPECT_EQ(sp::device_matrix(device).rows, 68157440);
  EXPECT_EQ(sp::device_matrix(device).nnz, 102236160);
  EXPECT_THROW(sp::make_matrix(device, 1, ""), std::invalid_argument);
  EXPECT_FALSE(sp::on_device(matrix_row("p", kPowerlaw)));

  // A Matrix Market file, found from the lab's folder; one that is not there does not read.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("labkit_spmv_cases_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "hidden");
  std::ofstream(dir / "hidden" / "a.mtx") << "%%MatrixMarket matrix coordinate real general\n"
                                             "2 3 2\n1 3 1.5\n2 1 -2\n";
  const Row file = matrix_row("a", {{"kind", "matrix_market"}, {"file", "hidden/a.mtx"}});
  const sp::Csr m = sp::make_matrix(file, 1, dir.string());
  EXPECT_EQ(m.rows, 2);
  EXPECT_EQ(m.cols, 3);
  EXPECT_EQ(m.col_idx, (std::vector<int32_t>{2, 0}));
  EXPECT_THROW(sp::make_matrix(file, 1, (dir / "elsewhere").string()), sp::MatrixMarketError);
  std::filesystem::remove_all(dir);
}

}  // namespace
