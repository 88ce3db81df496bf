// SPDX-License-Identifier: Apache-2.0
// The planner's final ranking: a candidate predicted into a RankedPlan, and the top plans by the
// objective (planner.cpp runs them over the searches' candidates and the baselines).
#pragma once
#include <string>
#include <vector>

#include "planner.hpp"
#include "planner_megatron.hpp"

namespace hetsim::models::planner {

/// Whether a price per hour is over the budget. The slack keeps a sum of node prices that
/// equals the budget (rounded in another order) within it.
bool over_budget(double price_per_hour, const PlannerOptions& o);
/// Whether nodes of this price exceed what the search may spend on nodes under a budget
/// (PlannerOptions::node_budget_per_hour, or the budget itself).
bool over_node_budget(double nodes_price_per_hour, const PlannerOptions& o);

/// "micro 1, selective, 1f1b, sp, zero 1": the plan-wide settings, for the shape column.
std::string knob_summary(const Plan& p);

/// The candidate predicted (with spot pricing when asked) and its memory headroom; infeasible
/// when a stage exceeds its GPU's memory. Takes the candidate's plan.
RankedPlan rank(const Cluster& cluster, const Workload& workload, Candidate&& c, bool spot);

/// The `options.top` best of the predicted plans by the objective (within the budget for
/// kBudget), each plan once.
std::vector<RankedPlan> top_plans(std::vector<RankedPlan> all, const PlannerOptions& options);

/// The search places whole nodes (docs/planner.md), so for a workload too small for a node (tiny-gpt
/// on a DGX) or on links that cost more than they give (a node joined at 10 MB/s) its best plan can
/// be slower than one GPU alone. A note saying so when
/// one GPU of some node type (the first of its type; the options' micro-batch sizes and
/// recompute modes) predicts more tokens/s than `best_tokens_per_s`; "" otherwise.
std::string single_gpu_beats_note(const Cluster& cluster, const Workload& workload, const PlannerOptions& options,
                                  double best_tokens_per_s);

}  // namespace hetsim::models::planner
