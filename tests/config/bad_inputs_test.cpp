// SPDX-License-Identifier: Apache-2.0
// Every file under tests/config/bad/ must fail to load with exactly the diagnostics its leading
// `# expect: <text>` lines announce (text starting with ':' follows the file name, as in
// ":5:10: error: field: what"), every diagnostic in compiler format, and nothing else crashing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <regex>

#include "diagnostics.hpp"
#include "input_test_support.hpp"

namespace {

const std::string kBadDir = std::string(HETSIM_CONFIG_TEST_DIR) + "/bad";

std::vector<std::string> expectations(const std::string& path, bool* only = nullptr) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> out;
  std::string line;
  const std::string tag = "# expect: ";
  // `# expect-only` among them: the announced diagnostics are all there are (no follow-on error).
  while (std::getline(in, line) && (line.rfind(tag, 0) == 0 || line == "# expect-only")) {
    if (line == "# expect-only") {
      if (only) *only = true;
    } else {
      out.push_back(line.substr(tag.size()));
    }
  }
  return out;
}

class BadInput : public ::testing::TestWithParam<std::string> {};

TEST_P(BadInput, ReportsTheAnnouncedDiagnostics) {
  const std::string path = GetParam();
  bool only = false;
  const auto expected = expectations(path, &only);
  ASSERT_FALSE(expected.empty()) << path << " does not start with '# expect: ...'";
  try {
    hetsim::test::load_any(path);
    FAIL() << path << " loaded without error";
  } catch (const hetsim::models::ConfigError& e) {
    const std::string what = e.what();
    for (const auto& x : expected) {
      const std::string full = path + (x.rfind(':', 0) == 0 ? x : ": " + x);
      EXPECT_THAT(what, ::testing::HasSubstr(full));
    }
    // Every line is `file[:line:col]: error: ...` and every diagnostic names this file.
    const std::regex format("^" + std::regex_replace(path, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                            R"((:[1-9][0-9]*:[1-9][0-9]*)?: error: .+$)");
    std::istringstream lines(what);
    std::string line;
    while (std::getline(lines, line)) EXPECT_TRUE(std::regex_match(line, format)) << "badly formatted: " << line;
    for (const auto& d : e.get_diagnostics()) EXPECT_EQ(d.file, path);
    if (only) {
      EXPECT_EQ(e.get_diagnostics().size(), expected.size()) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Files, BadInput, ::testing::ValuesIn(hetsim::test::list_files(kBadDir)),
                         [](const auto& info) { return hetsim::test::test_name_of(info.param); });

TEST(BadInputs, AtLeastFortyFiles) { EXPECT_GE(hetsim::test::list_files(kBadDir).size(), 40u); }

}  // namespace
