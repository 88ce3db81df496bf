// SPDX-License-Identifier: Apache-2.0
// Re-ranking the planner's best plans with a second prediction engine (the SimGrid simulator
// for `plan --refine K` and `sweep --refine K`). The planner ranks by the analytic model; the
// simulator adds flow-level contention, so its order of close plans is the one to trust.
#pragma once
#include <limits>
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
  /// Why a refined plan has no figure (the last such reason), and whether the time limit cut
  /// the refinement short; empty when every plan asked for was refined and has a figure.
  std::string note;
};

/// Predicts the first `k` plans of `result.top` with `engine` and re-orders those k by the
/// engine's figures under the result's objective (objective_score: tokens/s, or $/Mtok for
/// kCost); plans the engine cannot predict go after the ones it can, in their analytic order.
/// Plans beyond k keep their places. An engine that throws counts as "no figure", with its
/// message in the note. No plan after the first is started once `time_limit_s` (wall clock;
/// 0 or below: no limit, as the planner's) has passed since the call: the plans refined by
/// then are re-ordered, the rest keep their places, and the note says how many were refined
/// (the planner's --time-limit bounds a search; a simulation takes about a second, so an
/// unbounded K ran for hours).
RefineResult refine_top_plans(PlannerResult& result, const Cluster& cluster, const Workload& workload,
                              const PredictFn& engine, int k,
                              double time_limit_s = std::numeric_limits<double>::infinity());

}  // namespace hetsim::models
