// SPDX-License-Identifier: Apache-2.0
// hetsim::sim public API: replay a plan's work (models::PlanWork) on a SimGrid platform
// built from the cluster, and return the timeline-derived figures.
// One SimGrid Engine per process: call simulate_work / simulate_phases once per process.
#pragma once
#include <string>
#include <vector>

#include "cluster.hpp"
#include "collective_flows.hpp"
#include "plan.hpp"
#include "plan_work.hpp"

namespace hetsim::sim {

struct SimOptions {
  bool fold = true;          ///< fold congruent DP replica blocks and link-disjoint flows (DESIGN "Simulator")
  int grad_buckets = 0;      ///< gradient buckets when the plan overlaps DP sync (0: the cost model's, models::grad_bucket_count)
  bool record_trace = false; ///< keep per-op and per-link intervals for a Chrome trace
};
/// One interval of the timeline.
struct TraceSpan {
  int track = 0;             ///< index into SimResult::tracks
  std::string name;          ///< e.g. "F mb3 c0", "tp_ar_attn", "dp_sync"
  std::string category;      ///< compute | tp | pp | dp | optimizer | flow
  double start_s = 0;
  double end_s = 0;
};

struct LinkStat {
  std::string name;
  std::string kind;
  double bytes = 0;          ///< bytes carried in the step (folded flows counted once per represented flow)
  double utilisation = 0;    ///< bytes / (bandwidth · iteration time)
};

struct StageTiming {
  int replica = 0;
  int stage = 0;
  double compute_s = 0;      ///< executions
  double tp_comm_s = 0;      ///< time inside TP collectives
  double pp_wait_s = 0;      ///< time waiting for activations/gradients to arrive
  double pp_send_s = 0;      ///< time sending activations/gradients (blocking sends)
  double dp_wait_s = 0;      ///< time waiting for gradient sync (+ ZeRO gathers) after the last backward
  double optimizer_s = 0;
  double end_s = 0;          ///< when the stage finished the step
  /// Of the weights' all-gather at the end, what the next step's first forward pass hides
  /// (plan.overlap_grad_sync): the step ends that much before the gather does.
  double hidden_tail_s = 0;
};

struct SimResult {
  bool ok = true;
  std::string error;
  double iteration_time_s = 0;
  std::vector<StageTiming> stages;   ///< simulated stages only
  std::vector<LinkStat> links;       ///< links that carried traffic, by name
  std::vector<std::string> tracks;   ///< trace tracks: "gpu N (...)" and link names
  std::vector<TraceSpan> spans;      ///< when record_trace
  int replicas_total = 0;
  int replicas_simulated = 0;
  bool folded = false;
  long long flows = 0;               ///< flows SimGrid moved
  long long executions = 0;          ///< compute executions
  double wall_s = 0;
};

/// Simulates one training step of `plan` whose op costs are `work` (from models::build_plan_work).
/// The cluster must be finalized. Never throws for a routable plan; routing problems come back in error.
SimResult simulate_work(const models::Cluster& cluster, const models::Plan& plan, const models::PlanWork& work,
                        const SimOptions& options);

/// Runs phases of flows one after the other (a collective, or a single p2p transfer) and
/// returns the simulated time. For closed-form tests.
double simulate_phases(const models::Cluster& cluster, const std::vector<Phase>& phases);

}  // namespace hetsim::sim
