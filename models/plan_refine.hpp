// SPDX-License-Identifier: Apache-2.0
// Re-ranking the planner's best plans with a second prediction engine (the SimGrid simulator
// for `plan --refine K` and `sweep --refine K`). The planner ranks by the analytic model; the
// simulator adds flow-level contention, so its order of close plans is the one to trust.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "planner.hpp"
#include "predictor.hpp"

namespace hetsim::models {

struct RefineResult {
  /// Per plan of `top` after re-ranking: the engine's Report, or none when the plan was not
  /// refined (beyond the first k) or the engine gave no feasible figure.
  std::vector<std::optional<Report>> refined;
  std::string note;  ///< why a refined plan has no figure (the last such reason); empty when all did
};

/// Predicts the first `k` plans of `result.top` with `engine` and re-orders those k by the
/// engine's figures under the result's objective (objective_score: tokens/s, or $/Mtok for
/// kCost); plans the engine cannot predict go after the ones it can, in their analytic order.
/// Plans beyond k keep their places. An engine that throws counts as "no figure", with its
/// message in the note.
RefineResult refine_top_plans(PlannerResult& result, const Cluster& cluster, const Workload& workload,
                              const PredictFn& engine, int k);

}  // namespace hetsim::models
