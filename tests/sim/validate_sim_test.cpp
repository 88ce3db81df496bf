// SPDX-License-Identifier: Apache-2.0
// `validate --engine sim` on a subset of the version-1 shared suites: the simulator's MAPE is
// no worse than the cost model's by more than 1 percentage point (the full run is
// bench/sim_validate.sh). Skips when ../shared/validation is absent (a user's fresh clone).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "predictor.hpp"
#include "sim_report.hpp"
#include "validation_suite.hpp"

namespace hetsim::sim {
namespace {

models::Suite subset(const models::Suite& suite, std::size_t stride, std::size_t max_rows) {
  models::Suite out = suite;
  out.rows.clear();
  for (std::size_t i = 0; i < suite.rows.size() && out.rows.size() < max_rows; i += stride) out.rows.push_back(suite.rows[i]);
  return out;
}

TEST(ValidateSim, NoWorseThanTheCostModelOnASubsetOfTheV1Suites) {
  const std::string dir = HETSIM_SHARED_VALIDATION_DIR;
  if (!std::filesystem::exists(dir + "/megatron-sc21-table1.yaml")) GTEST_SKIP() << "no shared validation suites at " << dir;
  const auto catalog = models::load_catalog_dir(std::string(HETSIM_SOURCE_DIR) + "/clusters/catalog");
  const models::PredictFn analytic = [](const models::Cluster& c, const models::Workload& w, const models::Plan& p) {
    return models::predict(c, w, p);
  };
  const models::PredictFn simulated = [](const models::Cluster& c, const models::Workload& w, const models::Plan& p) {
    return simulate_report_in_child(c, w, p, SimOptions{});
  };
  for (const auto& [file, stride, rows] : {std::tuple{"megatron-sc21-table1.yaml", 1, 3}, std::tuple{"vtrain-a100-multi.yaml", 36, 3},
                                           std::tuple{"vtrain-a100-single.yaml", 360, 4}}) {
    const models::Suite suite = subset(models::load_suite(dir + "/" + file, catalog), stride, rows);
    const auto a = models::validate_suite(suite, catalog, analytic);
    const auto s = models::validate_suite(suite, catalog, simulated);
    ASSERT_TRUE(a.mape.has_value() && s.mape.has_value()) << file;
    std::printf("%s (%zu rows): MAPE analytic %.4f, sim %.4f\n", file, suite.rows.size(), *a.mape, *s.mape);
    EXPECT_LE(*s.mape, *a.mape + 0.01) << file;
    EXPECT_EQ(s.rows_failed, a.rows_failed) << file;
  }
}

}  // namespace
}  // namespace hetsim::sim
