// SPDX-License-Identifier: Apache-2.0
// The project's own ground-truth suites (validation/*.yaml, typed from published tables;
// see validation/README.md): every file loads strictly and every row is predicted by the
// same path `hetsim validate` takes (load_suite + validate_suite with the built-in catalog
// and the analytic engine). No accuracy target is asserted here: these suites are a blind
// generalisation check and their error is reported by `hetsim validate`, not tuned for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "predictor.hpp"
#include "validation_suite.hpp"

namespace hetsim::models {
namespace {

namespace fs = std::filesystem;

fs::path suites_dir() { return fs::path(HETSIM_SOURCE_DIR) / "validation"; }

std::vector<std::string> suite_files() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(suites_dir(), ec))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(PublishedSuites, FolderHoldsSuites) {
  // Guards the parametrised test below against passing on an empty or missing folder.
  EXPECT_FALSE(suite_files().empty()) << "no *.yaml in " << suites_dir();
}

class PublishedSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(PublishedSuite, LoadsAndEveryRowIsPredicted) {
  const Catalog& catalog = Catalog::builtin();
  const Suite suite = load_suite((suites_dir() / GetParam()).string(), catalog);
  EXPECT_FALSE(suite.source.empty()) << "a suite cites where its numbers come from";
  ASSERT_FALSE(suite.rows.empty());
  const PredictFn analytic = [](const Cluster& c, const Workload& w, const Plan& p) { return predict(c, w, p); };
  const SuiteResult result = validate_suite(suite, catalog, analytic);
  EXPECT_EQ(result.rows_total, static_cast<int>(suite.rows.size()));
  EXPECT_EQ(result.rows_failed, 0);
  for (const RowResult& row : result.rows) {
    EXPECT_EQ(row.status, "ok") << row.id << ": " << row.reason;
    EXPECT_GT(row.measured, 0.0) << row.id;
    ASSERT_TRUE(row.predicted.has_value()) << row.id;
    EXPECT_TRUE(std::isfinite(*row.predicted) && *row.predicted > 0.0) << row.id;
    EXPECT_GE(row.micro, 1) << row.id;
  }
  ASSERT_TRUE(result.mape.has_value());
  EXPECT_TRUE(std::isfinite(*result.mape));
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).stem().string();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Validation, PublishedSuite, ::testing::ValuesIn(suite_files()), test_name);
// The folder being empty is reported by FolderHoldsSuites, not as an uninstantiated suite.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PublishedSuite);

}  // namespace
}  // namespace hetsim::models
