// SPDX-License-Identifier: Apache-2.0
// Where a stage's time goes, op by op: the cost model's ops of each distinct stage of a plan,
// per micro-batch (hetsim predict --ops). The same ops both engines run (plan_work.hpp).
#pragma once
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "plan_work.hpp"
#include "report.hpp"

namespace hetsim::models {

/// One StageOps per group of stages that run the same ops (GPU type, layers, TP degree and the
/// ops' times all equal), in the order of their first stage; each group's ops are summed over
/// its layers and chunks by name (the forward op, its recompute and its "_bwd" on one line),
/// longest first. `work` is build_plan_work(cluster, workload, plan).
std::vector<StageOps> op_breakdown(const Cluster& cluster, const Plan& plan, const PlanWork& work);

/// "replicas 0-15, stages 1-6" for a full grid of (replica, stage) pairs, else the first few
/// pairs ("replica 0 stage 2, replica 3 stage 1, +4 more"). `members` in any order.
std::string stage_set_label(std::vector<std::pair<int, int>> members);

}  // namespace hetsim::models
