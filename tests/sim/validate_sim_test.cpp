// SPDX-License-Identifier: Apache-2.0
// `validate --engine sim` on a subset of the version-1 shared suites: the simulator's MAPE is
// no worse than the cost model's by more than 1 percentage point (the full run is
// bench/sim_bench.sh). Skips when ../shared/validation is absent (a user's fresh clone).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <yaml-cpp/yaml.h>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "predictor.hpp"
#include "sim_report.hpp"
#include "validation_suite.hpp"

namespace hetsim::sim {
namespace {

// A suite of every `stride`-th row (at most max_rows), cut at the YAML level and written to a
// temporary file, so that only those rows are loaded.
models::Suite subset(const std::string& path, std::size_t stride, std::size_t max_rows, const models::Catalog& catalog) {
  YAML::Node doc = YAML::LoadFile(path);
  YAML::Node rows(YAML::NodeType::Sequence);
  for (std::size_t i = 0; i < doc["rows"].size() && rows.size() < max_rows; i += stride) rows.push_back(doc["rows"][i]);
  doc["rows"] = rows;
  const std::string tmp = ::testing::TempDir() + "/hetsim_sim_subset_" + std::filesystem::path(path).filename().string();
  {
    std::ofstream out(tmp);
    out << YAML::Dump(doc) << '\n';
  }
  models::Suite suite = models::load_suite(tmp, catalog);
  std::filesystem::remove(tmp);
  return suite;
}

TEST(ValidateSim, NoWorseThanTheCostModelOnASubsetOfTheV1Suites) {
  const std::string dir = HETSIM_SHARED_VALIDATION_DIR;
  if (!std::filesystem::exists(dir + "/megatron-sc21-table1.yaml")) GTEST_SKIP() << "no shared validation suites at " << dir;
  const models::Catalog& catalog = models::Catalog::builtin();
  const models::PredictFn analytic = [](const models::Cluster& c, const models::Workload& w, const models::Plan& p) {
    return models::predict(c, w, p);
  };
  const models::PredictFn simulated = [](const models::Cluster& c, const models::Workload& w, const models::Plan& p) {
    return simulate_report_in_child(c, w, p, SimOptions{});
  };
  for (const auto& [file, stride, rows] : {std::tuple{"megatron-sc21-table1.yaml", 1, 5}, std::tuple{"vtrain-a100-multi.yaml", 18, 6},
                                           std::tuple{"vtrain-a100-single.yaml", 180, 8}}) {
    const models::Suite suite = subset(dir + "/" + file, stride, rows, catalog);
    const auto t0 = std::chrono::steady_clock::now();
    const auto a = models::validate_suite(suite, catalog, analytic);
    const auto t1 = std::chrono::steady_clock::now();
    const auto s = models::validate_suite(suite, catalog, simulated);
    std::printf("%s: analytic %.2f s, sim %.2f s wall\n", file, std::chrono::duration<double>(t1 - t0).count(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
    ASSERT_TRUE(a.mape.has_value() && s.mape.has_value()) << file;
    std::printf("%s (%zu rows): MAPE analytic %.4f, sim %.4f\n", file, suite.rows.size(), *a.mape, *s.mape);
    EXPECT_LE(*s.mape, *a.mape + 0.01) << file;
    EXPECT_EQ(s.rows_failed, a.rows_failed) << file;
  }
}

}  // namespace
}  // namespace hetsim::sim
