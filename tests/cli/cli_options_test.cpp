// SPDX-License-Identifier: Apache-2.0
// The option checks shared by the verbs (cli/cli_common.hpp): numbers that must be finite and
// positive, output files and folders checked before a verb starts its work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "cli_common.hpp"

namespace hetsim::cli {
namespace {

using ::testing::HasSubstr;

/// The error CLI11 reports for `--opt value` (empty when accepted).
template <class T>
std::string parse_error(const CLI::Validator& check, const std::string& value) {
  CLI::App app;
  T v{};
  app.add_option("--opt", v)->check(check);
  try {
    app.parse(std::vector<std::string>{value, "--opt"});  // CLI11 reads the vector back to front
    return {};
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
}

// CLI11's PositiveNumber let "nan" through: `plan --budget-per-hour nan` printed NaN costs
// and `run --lr nan` trained with a NaN learning rate (found by scripts/fuzz_inputs.py).
TEST(OptionChecks, NumbersMustBeFinite) {
  for (const std::string bad : {"nan", "NaN", "inf", "-inf", "1e400", "0", "-5", "abc", "", " 5", "5x"})
    EXPECT_THAT(parse_error<double>(positive_number(), bad), HasSubstr("expected a positive number, got '" + bad + "'"));
  EXPECT_EQ(parse_error<double>(positive_number(), "0.25"), "");
  EXPECT_EQ(parse_error<double>(positive_number(), "1e-3"), "");
  EXPECT_EQ(parse_error<double>(non_negative_number(), "0"), "");
  EXPECT_THAT(parse_error<double>(non_negative_number(), "-0.5"), HasSubstr("expected a non-negative number"));
}

// CLI11's range message printed 1.8e308 with all its digits; "-1" was read as 2^64-1 for the
// unsigned --seed.
TEST(OptionChecks, IntegersSayWhatWasExpected) {
  EXPECT_EQ(parse_error<int>(positive_integer(), "0"), "--opt: expected a positive integer, got '0'");
  for (const std::string bad : {"-1", "abc", "1.5", "nan", "2e3", "0x10"})
    EXPECT_THAT(parse_error<int>(positive_integer(), bad), HasSubstr("expected a positive integer")) << bad;
  EXPECT_EQ(parse_error<int>(positive_integer(), "8"), "");
  EXPECT_THAT(parse_error<std::uint64_t>(non_negative_integer(), "-1"), HasSubstr("expected a non-negative integer"));
  EXPECT_EQ(parse_error<std::uint64_t>(non_negative_integer(), "0"), "");
  EXPECT_THAT(parse_error<int>(positive_integer(), "99999999999"), HasSubstr("99999999999"));  // CLI11: cannot convert
}

class OutputChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(testing::TempDir()) / ("cli-options-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "a-file") << "x";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string at(const std::string& rel) const { return (dir_ / rel).string(); }
  std::filesystem::path dir_;
};

// `plan --emit-plan no/such/dir/p.yaml` searched first and failed at the end with exit 1,
// naming its temporary file; `validate --emit-dir a-file/sub` failed after predicting.
TEST_F(OutputChecks, OutputFileNeedsAnExistingFolder) {
  EXPECT_EQ(parse_error<std::string>(output_file_check(), at("p.yaml")), "");
  EXPECT_EQ(parse_error<std::string>(output_file_check(), "relative.yaml"), "");
  EXPECT_THAT(parse_error<std::string>(output_file_check(), at("no/such/p.yaml")),
              HasSubstr("folder '" + at("no/such") + "' does not exist"));
  EXPECT_THAT(parse_error<std::string>(output_file_check(), dir_.string()), HasSubstr("is a folder (expected a file name)"));
  EXPECT_THAT(parse_error<std::string>(output_file_check(), at("a-file/p.yaml")), HasSubstr("does not exist"));
}

TEST_F(OutputChecks, OutputFolderMustNotBeAFile) {
  EXPECT_EQ(parse_error<std::string>(output_dir_check(), at("new/nested")), "");
  EXPECT_EQ(parse_error<std::string>(output_dir_check(), dir_.string()), "");
  EXPECT_THAT(parse_error<std::string>(output_dir_check(), at("a-file")), HasSubstr("is a file (expected a folder)"));
  EXPECT_THAT(parse_error<std::string>(output_dir_check(), at("a-file/sub")), HasSubstr("is a file (expected a folder)"));
}

}  // namespace
}  // namespace hetsim::cli
