// SPDX-License-Identifier: Apache-2.0
#include "engine_inputs.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "predictor.hpp"
#include "sim_report.hpp"

namespace hetsim::sim::testing {

Inputs load(const std::string& cluster, const std::string& workload, const std::string& plan) {
  const std::string root = HETSIM_SOURCE_DIR;
  const auto catalog = models::load_catalog_dir(root + "/clusters/catalog");
  Inputs in{models::load_cluster(root + "/clusters/" + cluster, catalog), models::load_workload(root + "/workloads/" + workload), {}};
  if (!plan.empty()) in.plan = models::load_plan(root + "/plans/" + plan, in.cluster, in.workload);
  return in;
}

Inputs a100_l4_mix(int global_batch) {
  Inputs in = load("pcie-a100-l4-mix.yaml", "gpt3-1.3b.yaml");
  in.workload.training.global_batch = global_batch;
  return in;
}

models::Plan plan_of(std::string name, int zero, std::vector<models::Replica> replicas) {
  models::Plan p;
  p.name = std::move(name);
  p.micro_batch = 1;
  p.zero = zero;
  p.replicas = std::move(replicas);
  return p;
}

BothEngines both_feasible(const models::Cluster& c, const models::Workload& w, const models::Plan& p) {
  BothEngines e{models::predict(c, w, p), simulate_report_in_child(c, w, p, SimOptions{})};
  EXPECT_TRUE(e.analytic.feasible && e.sim.feasible) << e.analytic.infeasible_reason << e.sim.infeasible_reason;
  std::printf("%s: analytic %.3f s (dp %.3f s), simulated %.3f s (dp %.3f s)\n", p.name.c_str(),
              e.analytic.iteration_time_s, e.analytic.breakdown.dp_comm_s, e.sim.iteration_time_s,
              e.sim.breakdown.dp_comm_s);
  return e;
}

void expect_syncs_agree(const BothEngines& e, double sync_share, double sync_tolerance, double step_tolerance) {
  EXPECT_GT(e.sim.breakdown.dp_comm_s, sync_share * e.sim.iteration_time_s) << "the sync is what this test is about";
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, e.sim.breakdown.dp_comm_s, sync_tolerance * e.sim.breakdown.dp_comm_s);
  EXPECT_NEAR(e.analytic.iteration_time_s, e.sim.iteration_time_s, step_tolerance * e.sim.iteration_time_s);
}

}  // namespace hetsim::sim::testing
