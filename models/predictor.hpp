// SPDX-License-Identifier: Apache-2.0
// The analytic predictor: iteration time and Report of any Plan in microseconds of CPU.
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "plan_work.hpp"
#include "report.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// Op costs and memory of every stage of the plan (shared with the simulator).
PlanWork build_plan_work(const Cluster& cluster, const Workload& workload, const Plan& plan);

/// Closed-form iteration time and the full Report. Infeasible plans give
/// Report{feasible=false, infeasible_reason=...}; never throws for a plan that passed check_plan().
Report predict(const Cluster& cluster, const Workload& workload, const Plan& plan);

/// predict()'s figure with the pipeline sends of one parity sharing NICs in every slot, and the
/// nodes where they do (predictor_parity.cpp, Evaluation::fold_same_parity_loads).
struct LockstepParityFigure {
  Report report;           ///< predict()'s Report with those sends sharing
  std::vector<int> nodes;  ///< indices into Cluster::nodes, ascending
};
/// In 1F1B's steady state the pipeline boundaries of one parity exchange at once (SC'21 §2.2.1:
/// stages of one parity run the same pass at once), so a node holding stages b + 1 and b + 2
/// sends boundary b's gradient and boundary b + 2's activation through its NIC together.
/// predict() prices each boundary's sends alone: the simulator shows the sends staggering where
/// the stages leave slack and colliding where they do not, so the step lies between the two
/// figures. nullopt when no node carries sends of two boundaries of one parity, the schedule is
/// not 1F1B without interleaving, or the plan is infeasible.
std::optional<LockstepParityFigure> lockstep_parity_figure(const Cluster& cluster, const Workload& workload,
                                                           const Plan& plan);

/// A prediction engine with predict()'s signature: predict itself, the simulator
/// (cli/engines.hpp registers engines by name), or either with a profile applied.
using PredictFn = std::function<Report(const Cluster&, const Workload&, const Plan&)>;

}  // namespace hetsim::models
