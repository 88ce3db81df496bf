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
/// (replica_time_s), the slowest replica, plus what its gradient sync (or, if longer, the tied
/// embedding's all-reduce) leaves exposed
/// (grad_sync_estimate_s: per gradient segment, the collectives over the replicas less what the
/// stage's passes hide).
Estimate estimate_plan(const Cluster& cluster, const Workload& workload, const Plan& plan, UnitCostTable& costs,
                       double memory_fraction, bool spot);

/// One stage as the gradient-sync estimate sees it.
struct StageRef {
  int gpu = 0;         ///< first GPU of its TP group
  int layers = 0;
  int tp = 1;
  double time_s = 0;   ///< forward + backward per micro-batch
};

/// Exposed gradient sync as the predictor groups it: one group per DP segment (stage s of every
/// replica when they split the model alike; dp_segments.hpp), sized by its largest member's
/// gradients, its reduction hidden behind the last backward pass and its all-gather behind the
/// next first forward of the slowest replica's stage that holds it (exposed_sync_s; all of it
/// exposed without plan.overlap_grad_sync); a stage holding several segments pays for each.
double grad_sync_estimate_s(const Cluster& cluster, const Workload& workload, const Plan& plan,
                            const std::vector<std::vector<StageRef>>& replicas, int slowest);

/// The slowest of the plan's tied-embedding all-reduces between each replica's first and last
/// stage (tied_embedding_estimate_s), which follow the DP sync; 0 without tied embeddings.
double tied_embedding_sync_estimate_s(const Cluster& cluster, const Workload& workload, const Plan& plan);

/// Bytes of gradients per GPU of a stage of `layers` blocks at TP `tp` (+ embedding on stage 0).
double stage_grad_bytes(const Workload& workload, int layers, int tp, bool first);

/// Tokens per step of the workload.
double tokens_per_step(const Workload& workload);

}  // namespace hetsim::models::planner
