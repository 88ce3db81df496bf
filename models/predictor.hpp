// SPDX-License-Identifier: Apache-2.0
// The analytic predictor: iteration time and Report of any Plan in microseconds of CPU.
#pragma once
#include <functional>

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

/// A prediction engine with predict()'s signature: predict itself, the simulator
/// (cli/engines.hpp registers engines by name), or either with a profile applied.
using PredictFn = std::function<Report(const Cluster&, const Workload&, const Plan&)>;

}  // namespace hetsim::models
