// SPDX-License-Identifier: Apache-2.0
// What a workload can keep busy on a cluster's nodes, and why the planner finds no plan: the
// planner driver's (planner.cpp) limits of the node-by-node search and its "no plan" messages.
#pragma once
#include <string>

#include "cluster.hpp"
#include "planner.hpp"
#include "workload.hpp"

namespace hetsim::models::planner {

/// The widest TP group the planner may give a node type (1 when none is valid).
int widest_tp(const Workload& w, int gpus_per_node, const PlannerOptions& o);

/// GPUs a workload can keep busy: every GPU needs a sequence, a layer and a TP rank of its own,
/// so at most global_batch x layers x the widest TP group take part.
long busy_gpus(const Workload& w, int widest);

/// Why no plan was found: a search space restricted to nothing (search_space_reason), the
/// budget, or the most specific of "no GPU type computes in the dtype", "one whole node is too
/// small" and "the model does not fit".
std::string no_plan_reason(const Cluster& cluster, const Workload& workload, const PlannerOptions& options);

}  // namespace hetsim::models::planner
