// SPDX-License-Identifier: Apache-2.0
// The planner's Megatron baseline: Megatron-LM's (tp, pp, dp) plans over all GPUs in rank order.
#pragma once
#include <string>
#include <vector>

#include "planner.hpp"
#include "planner_stage_cost.hpp"

namespace hetsim::models::planner {

/// A plan waiting for predict(): where it came from and what the estimator said.
struct Candidate {
  Plan plan;
  std::string shape;
  double estimated_tokens_per_s = 0;
};

/// GPUs [first, first + count) of the cluster's rank order; count 0: all of them.
struct GpuRange {
  int first = 0, count = 0;
};

/// Megatron's (tp, pp, dp) plans over the GPUs of `range` in rank order (uniform splits, every
/// knob of the options), estimated, the best `options.predict_candidates` kept; `evaluated` and
/// `pruned` count what was tried and what did not fit. Bounded by `options.time_limit_s` as each
/// shape search is, once `options.predict_candidates` configurations are kept: past it, the best
/// so far, and `*stopped` (when given) set.
std::vector<Candidate> megatron_candidates(const Cluster& cluster, const Workload& workload,
                                           const PlannerOptions& options, UnitCostTable& costs, long* evaluated,
                                           long* pruned, GpuRange range = {}, bool* stopped = nullptr);

/// The GPUs of type `gpu_type`, when they are one run of the cluster's rank order (count 0: not,
/// or none).
GpuRange gpus_of_type(const Cluster& cluster, const std::string& gpu_type);

}  // namespace hetsim::models::planner
