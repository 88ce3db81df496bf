// SPDX-License-Identifier: Apache-2.0
// Every bundled input loads: the GPU catalog, clusters/, workloads/, plans/ (each plan against
// the cluster and workload its header comment names) and the test fixtures.
#include <gtest/gtest.h>

#include <filesystem>

#include "catalog.hpp"
#include "diagnostics.hpp"
#include "input_loader.hpp"
#include "input_test_support.hpp"

namespace {

const std::string kSource = HETSIM_SOURCE_DIR;

std::vector<std::string> good_files() {
  std::vector<std::string> all;
  for (const char* dir : {"/clusters", "/clusters/catalog", "/workloads", "/plans", "/sweeps"}) {
    const auto files = hetsim::test::list_files(kSource + dir);
    all.insert(all.end(), files.begin(), files.end());
  }
  const auto fixtures = hetsim::test::list_files(std::string(HETSIM_CONFIG_TEST_DIR) + "/fixtures");
  all.insert(all.end(), fixtures.begin(), fixtures.end());
  return all;
}

class GoodInput : public ::testing::TestWithParam<std::string> {};

TEST_P(GoodInput, Loads) {
  try {
    hetsim::test::load_any(GetParam());
  } catch (const hetsim::models::ConfigError& e) {
    FAIL() << e.what();
  }
}

// Every plan's leading comments name the inputs it was written for ("# cluster: NAME",
// "# workload: NAME"), so tests and `hetsim describe` can cross-check it.
class PlanFile : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanFile, NamesItsClusterAndWorkload) {
  const auto h = hetsim::models::read_plan_header(GetParam());
  EXPECT_FALSE(h.cluster.empty()) << "no '# cluster: NAME' header line";
  EXPECT_FALSE(h.workload.empty()) << "no '# workload: NAME' header line";
}

// Test names carry the folder: clusters_dgx_a100, plans_local_cpu_tp1_pp1_dp2, ...
INSTANTIATE_TEST_SUITE_P(Files, GoodInput, ::testing::ValuesIn(good_files()), [](const auto& info) {
  const std::string dir = std::filesystem::path(info.param).parent_path().filename().string();
  return dir + "_" + hetsim::test::test_name_of(info.param);
});

INSTANTIATE_TEST_SUITE_P(Files, PlanFile, ::testing::ValuesIn(hetsim::test::list_files(kSource + "/plans")),
                         [](const auto& info) { return hetsim::test::test_name_of(info.param); });

TEST(GoodInputs, FoldersAreNotEmpty) {
  for (const char* dir : {"/clusters", "/clusters/catalog", "/workloads", "/plans", "/sweeps"}) {
    EXPECT_FALSE(hetsim::test::list_files(kSource + dir).empty()) << dir;
  }
}

// The device names DESIGN.md promises to the ground-truth suites and tests.
TEST(GoodInputs, CatalogHasTheDesignedDeviceNames) {
  const auto& catalog = hetsim::models::Catalog::builtin();
  for (const char* name : {"v100-sxm2-16gb", "v100-sxm2-32gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb",
                           "h200-sxm-141gb", "gh200", "l40s", "a10", "t4", "rtx4090", "rtx3090", "rtx2080ti",
                           "titan-rtx", "mi100", "mi210", "mi250x-gcd", "mi300x"}) {
    EXPECT_NE(catalog.by_name_or_null(name), nullptr) << name;
  }
}

}  // namespace
