// SPDX-License-Identifier: Apache-2.0
// Per-stage unit costs for the planner, measured with the analytic predictor on probe pipelines.
#pragma once
#include <map>
#include <shared_mutex>
#include <tuple>

#include "planner_space.hpp"

namespace hetsim::models::planner {

/// Memoised UnitCost per (node type, TP degree, knobs that change stage cost).
/// Each entry costs three models::predict() calls on 5-, 4- and 1-stage probe pipelines
/// of a one-node-type probe cluster; everything else the search needs is arithmetic.
class UnitCostTable {
 public:
  UnitCostTable(const Cluster& cluster, const Workload& workload) : cluster_(cluster), workload_(workload) {}
  const UnitCost& get(int node_type, int tp, const Knobs& knobs);
  long get_probe_count() const { return probes_; }

 private:
  UnitCost measure(int node_type, int tp, const Knobs& knobs);
  const Cluster& cluster_;
  const Workload& workload_;
  std::map<std::tuple<int, int, decltype(Knobs{}.key())>, UnitCost> cache_;
  std::shared_mutex mutex_;  ///< get() is called from the search's threads
  long probes_ = 0;
};

}  // namespace hetsim::models::planner
