// SPDX-License-Identifier: Apache-2.0
// hetsim::sim public API: replay a plan's work (models::PlanWork) on a SimGrid platform
// built from the cluster, and return the timeline-derived figures.
// One SimGrid Engine per process: call simulate_work / simulate_phases once per process.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "collective_flows.hpp"
#include "plan.hpp"
#include "plan_work.hpp"

namespace hetsim::sim {

/// Most events a trace may hold (trace_writer.hpp): about 100 bytes each in the JSON (some
/// 500 MB), and the GPU spans behind them about as much memory while the step is simulated (the
/// links' counters are BusyHistograms of bounded size). Past it,
/// `simulate --trace` simulates without recording and says so (6,144 GPUs built 4 GB in memory
/// and were killed before this bound).
inline constexpr double kMaxTraceEvents = 5e6;

/// Most flows one actor starts and waits for at once; a phase with more is spread over helper
/// actors (sim_runtime.hpp, Runtime::run_flows). SimGrid 3.32 keeps an actor's unfinished activities in a
/// std::list and removes each finished one by a linear search (CommImpl::finish), so an actor
/// with k flows in flight pays O(k) per flow: O(k^2) per phase. Unfolded DP rings put a flow per
/// replica and TP rank in each phase (8 x 192 for 192 replicas of TP8).
inline constexpr std::size_t kMaxFlowsPerActor = 64;

struct SimOptions {
  bool fold = true;          ///< fold congruent DP replica blocks and link-disjoint flows (DESIGN "Simulator")
  int grad_buckets = 0;      ///< gradient buckets when the plan overlaps DP sync (0: the cost model's, models::grad_bucket_count)
  bool record_trace = false; ///< keep per-op and per-link intervals for a Chrome trace
  /// A trace whose events could exceed this is not recorded (SimResult::trace_refused); the step
  /// is simulated all the same. Tests lower it.
  double max_trace_events = kMaxTraceEvents;
  /// Where long runs report: the run's size up front when large (sim_progress.hpp size_line),
  /// then a progress line every few seconds once a run has taken kProgressQuiet_s. Null: quiet.
  std::function<void(const std::string&)> progress;
  double estimate_s = 0;     ///< the step time progress lines measure against (the cost model's)
};
/// One interval of the timeline.
struct TraceSpan {
  int track = 0;             ///< index into SimResult::tracks
  std::string name;          ///< e.g. "F3" (chunk: "F3.1"), "send F3", "dp grad sync", "optimizer"
  std::string category;      ///< forward | backward | pp | dp | optimizer
  double start_s = 0;
  double end_s = 0;
};

/// Counter samples per link track of the trace: the busy fraction over this many bins of the
/// step (and one closing sample). A link carries thousands of short transfers; one span each
/// would make the file unusably large.
inline constexpr int kLinkBins = 1000;

/// A link's busy time on the trace: seconds it carried traffic in each of kLinkBins equal bins
/// of the step.
struct LinkBusy {
  int track = 0;                 ///< index into SimResult::tracks
  std::vector<double> busy_s;    ///< kLinkBins values, each at most iteration_time_s / kLinkBins
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
  /// The weights' all-gather at the end of the step (ZeRO-1/2), and of it what the next step
  /// hides (plan.overlap_grad_sync: hide_overlapped_gathers): the step ends that much before the
  /// gather does.
  double gather_tail_s = 0;
  double first_forward_s = 0;  ///< the stage's first forward pass, which runs beside the gather when overlapped
  double hidden_tail_s = 0;
  /// A step that starts with the gather (models::gathers_lead_the_step): what the stage's first
  /// forward pass waited for it (part of pass_dp_wait_s).
  double lead_gather_wait_s = 0;
  double pass_dp_wait_s = 0; ///< of dp_wait_s, the ZeRO-2/3 traffic the passes waited for
  double passes_end_s = 0;   ///< when the stage's last pass ended (before the DP sync)
};

/// How a simulation that could not finish (out of memory, an actor's exception) begins its
/// SimResult::error and its Report's infeasible_reason: the verb tells it from an infeasible plan.
inline constexpr const char* kSimulationFailed = "simulation failed: ";

struct SimResult {
  bool ok = true;
  std::string error;  ///< when !ok: kSimulationFailed and why
  double iteration_time_s = 0;
  std::vector<StageTiming> stages;   ///< simulated stages only
  std::vector<LinkStat> links;       ///< links that carried traffic, by name
  std::vector<std::string> tracks;   ///< trace tracks: "gpu N (...)" and link names
  std::vector<TraceSpan> spans;      ///< when record_trace: GPU tracks' intervals
  std::vector<LinkBusy> link_busy;   ///< when record_trace: link tracks' busy time
  int replicas_total = 0;
  int replicas_simulated = 0;
  bool folded = false;
  long long flows = 0;               ///< flows SimGrid moved
  long long executions = 0;          ///< compute executions
  double wall_s = 0;
  double flows_estimate = 0;         ///< flows counted from the layout before the run (about `flows`)
  double trace_events_estimate = 0;  ///< with record_trace: the most events the trace could hold
  std::string trace_refused;         ///< why no trace was recorded although asked for; empty otherwise
  /// Most flows one actor had in flight at once (kMaxFlowsPerActor bounds a phase's share).
  long long max_flows_per_actor = 0;
};

/// Simulates one training step of `plan` whose op costs are `work` (from models::build_plan_work).
/// The cluster must be finalized. Never throws for a routable plan; routing problems come back in error.
SimResult simulate_work(const models::Cluster& cluster, const models::Plan& plan, const models::PlanWork& work,
                        const SimOptions& options);

/// What the next step's first forward pass hides of each stage's overlapped weight gather
/// (StageTiming::hidden_tail_s), moving its end and DP wait back by it. In the steady state a
/// stage starts its next step's first forward with the gather; its replica, if it finished its
/// passes `slack` before the slowest replica did, can start its next step's passes that much
/// later without delaying the step: min(gather, first forward + slack). The cost model's
/// figure (models/grad_sync_cost.cpp overlapped_gather_exposed_s) is the same.
void hide_overlapped_gathers(std::vector<StageTiming>& stages);

/// Runs phases of flows one after the other (a collective, or a single p2p transfer) and
/// returns the simulated time. For closed-form tests.
/// `max_flows_per_actor`, when given, receives SimResult::max_flows_per_actor of the run.
double simulate_phases(const models::Cluster& cluster, const std::vector<Phase>& phases,
                       long long* max_flows_per_actor = nullptr);
/// `buckets` collectives of the phases (one run of equal steps that runs as a dataflow:
/// Runtime::one_dataflow_run), each 1/buckets of the bytes, all released at once, back to back
/// as the gradient sync runs them (Runtime::run_bucketed_dataflow); the simulated time. For tests.
double simulate_bucketed_ring(const models::Cluster& cluster, const std::vector<Phase>& phases, int buckets);

}  // namespace hetsim::sim
