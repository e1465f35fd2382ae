// labkit/cases.hpp: a lab's tests as data, registered as GoogleTest tests. CPU only: the names,
// the rows each test gets, the seeds, and the errors a wrong cases file stops at. The suites
// below stand in for a lab's generated lab_suites(); the tests they register skip without a
// GPU and, with one, only record their row.
#include "labkit/cases.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

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

}  // namespace
