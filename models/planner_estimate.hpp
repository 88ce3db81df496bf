// SPDX-License-Identifier: Apache-2.0
// The planner's cheap estimate of a concrete Plan (search guidance; predict() has the last word).
#pragma once
#include <string>

#include "planner_partition.hpp"
#include "planner_stage_cost.hpp"

namespace hetsim::models::planner {

struct Estimate {
  bool ok = false;
  std::string reason;
  double step_s = 0;
  double tokens_per_s = 0;
  double price_per_hour = 0;
  double min_headroom_fraction = 1;
};

/// Knobs of a plan (what UnitCostTable is keyed by).
Knobs knobs_of(const Plan& plan);

/// Step time of `plan` from the unit costs: per replica the pipeline time of its micro-batches
/// (replica_time_s), the slowest replica, plus the gradient all-reduce of the largest stage
/// over the replicas (allreduce_estimate_s, not overlapped: conservative).
Estimate estimate_plan(const Cluster& cluster, const Workload& workload, const Plan& plan, UnitCostTable& costs,
                       double memory_fraction, bool spot);

/// Bytes of gradients per GPU of a stage of `layers` blocks at TP `tp` (+ embedding on stage 0).
double stage_grad_bytes(const Workload& workload, int layers, int tp, bool first);

/// Tokens per step of the workload.
double tokens_per_step(const Workload& workload);

}  // namespace hetsim::models::planner
