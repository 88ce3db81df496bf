// SPDX-License-Identifier: Apache-2.0
// Re-ranking the planner's best plans with a second prediction engine (the SimGrid simulator
// for `plan --refine K` and `sweep --refine K`). The planner ranks by the analytic model; the
// simulator adds flow-level contention, so its order of close plans is the one to trust.
#pragma once
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "planner.hpp"
#include "predictor.hpp"

namespace hetsim::models {

/// A prediction engine told how many wall-clock seconds it may take (infinity: no bound). One
/// that cannot finish in time returns a Report with feasible false and the reason, instead of
/// running on: the simulator's child process is killed at the bound (sim::simulate_report_in_child).
using TimedPredictFn = std::function<Report(const Cluster&, const Workload&, const Plan&, double wall_limit_s)>;

/// `engine` with no bound on its time, for callers that have none (predict, validate).
inline PredictFn without_time_limit(TimedPredictFn engine) {
  return [engine = std::move(engine)](const Cluster& c, const Workload& w, const Plan& p) {
    return engine(c, w, p, std::numeric_limits<double>::infinity());
  };
}

struct RefineResult {
  /// Per plan of `top` after re-ranking: the engine's Report, or none when the plan was not
  /// refined (beyond the first k) or the engine gave no feasible figure.
  std::vector<std::optional<Report>> refined;
  /// Why a refined plan has no figure (the last such reason), and whether the time limit cut
  /// the refinement short; empty when every plan asked for was refined and has a figure.
  std::string note;
  /// The time limit cut the refinement short: a plan asked for was not simulated, or its
  /// engine ran out of time. Its order then depends on the machine's speed (a sweep plans such
  /// a row again when resumed, as one whose search the limit stopped).
  bool stopped_at_time_limit = false;
};

/// Predicts the first `k` plans of `result.top` with `engine` and re-orders those k by the
/// engine's figures under the result's objective (objective_score: tokens/s, or $/Mtok for
/// kCost); plans the engine cannot predict go after the ones it can, in their analytic order.
/// Plans beyond k keep their places. An engine that throws counts as "no figure", with its
/// message in the note. `time_limit_s` (wall clock; 0 or below: no limit, as the planner's)
/// bounds the whole refinement: each plan's engine is given what is left of it (a 1024-GPU
/// simulation can take half an hour, so a bound between plans alone was not one), and no plan
/// is started once it has passed: the plans refined by then are re-ordered, the rest keep their
/// places, and the note says how many were refined.
RefineResult refine_top_plans(PlannerResult& result, const Cluster& cluster, const Workload& workload,
                              const TimedPredictFn& engine, int k,
                              double time_limit_s = std::numeric_limits<double>::infinity());

}  // namespace hetsim::models
