// SPDX-License-Identifier: Apache-2.0
// Inputs of the repository (clusters/, workloads/, plans/) for the simulator tests that set the
// two engines side by side.
#pragma once
#include <string>
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "report.hpp"
#include "workload.hpp"

namespace hetsim::sim::testing {

struct Inputs {
  models::Cluster cluster;
  models::Workload workload;
  models::Plan plan;
};

/// The repository's cluster and workload, and a plan of plans/ (none when `plan` is empty: the
/// test builds its own).
Inputs load(const std::string& cluster, const std::string& workload, const std::string& plan = "");

/// GPT-3 1.3B on the A100 + L4 PCIe cluster (one Ethernet NIC per node), at a global batch of
/// `global_batch` sequences.
Inputs a100_l4_mix(int global_batch);

/// A plan of one-sequence micro-batches at a ZeRO stage.
models::Plan plan_of(std::string name, int zero, std::vector<models::Replica> replicas);

/// The plan predicted and simulated (in a child process); both feasible (fails the test
/// otherwise). Prints both times.
struct BothEngines {
  models::Report analytic, sim;
};
BothEngines both_feasible(const models::Cluster& c, const models::Workload& w, const models::Plan& p);

/// The DP sync is at least `sync_share` of the simulated step (what the test is about), and the
/// engines agree on it within `sync_tolerance` and on the step within `step_tolerance` (relative
/// to the simulated figures).
void expect_syncs_agree(const BothEngines& e, double sync_share, double sync_tolerance, double step_tolerance);

}  // namespace hetsim::sim::testing
