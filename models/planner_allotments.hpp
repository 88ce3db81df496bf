// SPDX-License-Identifier: Apache-2.0
// Which nodes of each pool the planner's search may use (its "allotments"): every node count
// per pool where they are few, else subsets of whole pools; under a budget, the affordable ones.
#pragma once
#include <vector>

#include "cluster.hpp"
#include "gpu_type.hpp"
#include "planner.hpp"
#include "planner_space.hpp"
#include "workload.hpp"

namespace hetsim::models::planner {

/// Nodes of a pool the workload can keep busy (more leave the whole-node search nothing to place).
int useful_nodes(const Cluster& cluster, const Pool& pool, const Workload& w, const PlannerOptions& o);

/// The vendor of each pool's GPUs.
std::vector<Vendor> pool_vendors(const Cluster& cluster, const std::vector<Pool>& pools);

/// `nodes` cut to the pools of each vendor in turn (those that use none dropped): one allotment
/// per vendor, in the order of the vendors' first pools; an allotment of one vendor comes back
/// as it is.
std::vector<std::vector<int>> split_by_vendor(const std::vector<int>& nodes, const std::vector<Vendor>& vendors);

/// Which nodes of each pool the search may use: per pool a node count (0: the pool unused), for
/// the objective of `o` (every_allotment in planner_allotments.cpp), each of one vendor's pools
/// only under PlannerOptions::one_vendor, in one zone under PlannerOptions::one_zone.
std::vector<std::vector<int>> allotments(const Cluster& cluster, const std::vector<Pool>& pools,
                                         const Workload& workload, const PlannerOptions& o);

}  // namespace hetsim::models::planner
