// SPDX-License-Identifier: Apache-2.0
// The heterogeneous planner: given a cluster and a workload, find how to train on it.
//
// Search (see planner_search.cpp): GPU pools (zone x node type) -> which pools, TP degree per
// pool -> replica kinds (pipelines whose stages may be of different pools) -> a non-uniform
// layer partition per kind (planner_partition.cpp) -> non-uniform micro-batch counts per
// replica so that unequal replicas finish together. Every shape is scored by a cheap
// estimator built from per-stage costs that the analytic predictor itself measured
// (planner_stage_cost.cpp); the best shapes are then ranked with models::predict(), so the
// reported figures are the predictor's and every returned plan is feasible.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "preemption.hpp"
#include "report.hpp"
#include "workload.hpp"

namespace hetsim::models {

class JsonOut;  // json_writer.hpp

enum class PlanObjective {
  kThroughput,  ///< maximise tokens/s
  kCost,        ///< minimise dollars per million tokens
  kBudget,      ///< maximise tokens/s with cost_per_hour <= budget_per_hour (chooses the GPUs too)
};
const char* to_string(PlanObjective o);  ///< "throughput" | "cost" | "budget"

struct PlannerOptions {
  PlanObjective objective = PlanObjective::kThroughput;
  double budget_per_hour = 0;       ///< dollars per hour (kBudget)
  bool spot = false;                ///< price nodes at their spot price where the cluster gives one
  int top = 5;                      ///< plans returned
  /// Knob values searched (those that do not apply to the workload are skipped).
  std::vector<int> micro_batches = {1, 2, 4, 8};
  std::vector<Recompute> recomputes = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  /// ZeRO-1 (Megatron's distributed optimizer) by default: in the cost model it is not slower
  /// than ZeRO-0 where bandwidth rules (reduce-scatter + all-gather move what the all-reduce
  /// moves; the optimizer step and its memory shrink by the DP degree; Rajbhandari et al., SC'20,
  /// sec. 5.1), so searching both only doubles the work; where latency rules (a small model over
  /// thousands of replicas) the baseline's ZeRO-0 plans are ranked too (rank_faster_zero0_baselines, below). ZeRO-3 (FSDP) is searched without pipeline parallelism, as
  /// DeepSpeed and FSDP run it: the one-stage shapes found under ZeRO-1 get ZeRO-3 twins with
  /// equal micro-batch counts (planner_zero3.cpp). ZeRO-2 is not searched: its ranks keep a shard
  /// of the gradients only, so they reduce them at every micro-batch (comm_cost.hpp pass_traffic),
  /// which predict() prices but the search's estimator does not. The uniform (Megatron) baseline
  /// still tries ZeRO-0, as the papers ran it.
  std::vector<int> zero_stages = {1};
  /// The uniform baseline's ZeRO-0 plans enter the final ranking when they beat every plan of the
  /// searched stages (`plan` without `--zero`, a sweep without `search.zero`; false where the
  /// stages were chosen): with a data-parallel group of thousands an all-reduce can run as a tree
  /// (latency log n) where ZeRO-1's reduce-scatter and all-gather are rings (n steps), and a small
  /// model then trains faster without ZeRO (131,072 H100s, a 64-wide model: 8.2x as fast).
  bool rank_faster_zero0_baselines = false;
  /// How the ZeRO-3 plans' per-pass collectives use the NICs (Plan::sharded_collectives): the
  /// stack's property, as tp_comm_overlap is; member_nic (DeepSpeed) by default.
  ShardedCollectives sharded_collectives = ShardedCollectives::kMemberNic;
  std::vector<int> interleaves = {1, 2};   ///< 1 = 1F1B, v > 1 = interleaved with v chunks
  std::vector<int> tp_degrees = {1, 2, 4, 8};
  /// Sequence parallelism (Korthikanti et al. 2022) wherever TP > 1; false for a stack without
  /// it (the Megatron baseline then tries plans without it only).
  bool sequence_parallel = true;
  /// How many of the best estimated shapes (per category) are evaluated with predict(). 48, not
  /// 24: at 24 the estimator's ranking left better plans unpredicted (geo-two-zones llama2-7b:
  /// 339,235 tokens/s where 358,767 was in the search space, found by --recompute none; gpt3-13b
  /// 170,545 against 173,606), for ~12% more search time (bench1024 gpt3-175b, one thread: 1.36 -> 1.52 s).
  int predict_candidates = 48;
  /// Fraction of a GPU's memory the estimator may plan for. 1: the predictor alone decides what
  /// fits (every returned plan is predicted feasible); lower it to keep a safety margin.
  double memory_fraction = 1.0;
  /// Memory every stage of a returned plan (baselines included) keeps free, as a fraction of its
  /// GPU's: allocator fragmentation, communicator buffers and whatever else the memory model
  /// does not count. 0: a plan may fill its GPUs to the predictor's last byte.
  double min_headroom_fraction = 0;
  /// Seconds each of the three searches (best plan, fastest-type-only and uniform baselines) may
  /// take; 0 = no limit. The searches run the most promising (knobs, TP) branches first, so a
  /// search stopped at its limit keeps the best shapes found so far (PlannerResult says so).
  double time_limit_s = 60;
  /// Threads of the search; 0 = one per CPU the process may use (its affinity mask). The plans
  /// found do not depend on it (only the time, and the evaluated / pruned counts, which depend
  /// on when bounds rise).
  int threads = 0;
  /// The training stack overlaps TP communication with the GEMMs (Plan::tp_comm_overlap,
  /// Megatron-Core --tp-comm-overlap): every plan with sequence parallelism, the baselines too,
  /// is built and priced with it.
  bool tp_comm_overlap = false;
  /// The stack overlaps pipeline sends with compute and does not synchronize the host at them
  /// (Plan::overlap_p2p_comm, Megatron-Core overlap_p2p_comm): every interleaved plan, the
  /// baselines too, is built and priced with it.
  bool overlap_p2p_comm = false;
  /// Every plan on GPUs of one vendor (`hetsim plan --one-vendor`): NCCL and RCCL build no
  /// communicator across vendors, so a plan whose pipeline sends or data-parallel groups join
  /// NVIDIA and AMD GPUs runs on hetsim's execution engine only. The baselines keep to it too:
  /// the uniform one is the best of each vendor's GPUs alone.
  bool one_vendor = false;
  /// Only allotments whose nodes lie in one zone. Set by plan_training's second pass under a
  /// budget when links between zones charge egress: the search prices a shape by its nodes, so
  /// its best shapes could all cross zones and exceed the budget once the predictor adds the
  /// egress, which left no plan at all where a one-zone plan fitted (s51 plausibility hunt F1).
  bool one_zone = false;
  /// Under a budget, what the nodes of an allotment or a shape may cost; 0: budget_per_hour. The
  /// search prices shapes by their nodes, the predictor adds egress between zones: plan_training's
  /// last pass lowers it by the egress of the plans the budget refused, so that plans across
  /// zones that fit with their egress are searched (PlannerResult::refused_egress_per_hour).
  double node_budget_per_hour = 0;
};

/// One plan with its prediction.
struct RankedPlan {
  Plan plan;
  Report report;                    ///< models::predict() of plan (feasible)
  std::string shape;                ///< e.g. "2x[dgx-a100 tp8 x2 | v100 tp4 x3] + 1x[v100 tp8 x4]"
  double memory_headroom_bytes = 0;     ///< capacity - peak of the tightest stage
  double memory_headroom_fraction = 0;  ///< the same as a fraction of its GPU's memory (smallest over stages)
  double estimated_tokens_per_s = 0;    ///< the search estimator's figure (before predict)
  bool joins_vendors = false;           ///< models::joins_vendors(): NVIDIA and AMD GPUs exchange data
  /// Preemptions of its nodes at spot prices (PlannerOptions::spot); nothing is preempted
  /// (goodput_fraction 1) when priced on demand.
  SpotOutlook spot;
  /// Tokens per second left after preemptions: what the throughput objective ranks by and what
  /// report.cost_per_million_tokens divides by (report.tokens_per_s is the uninterrupted rate).
  double goodput_tokens_per_s() const { return report.tokens_per_s * spot.goodput_fraction; }
};

struct PlannerBaseline {
  std::string name;                 ///< "uniform" | "fastest_type_only"
  bool found = false;
  std::string reason;               ///< why none was found
  RankedPlan best;
};

struct PlannerResult {
  PlanObjective objective = PlanObjective::kThroughput;
  std::vector<RankedPlan> top;      ///< best first; empty when nothing fits
  std::string reason;               ///< why top is empty
  /// Objective throughput: one GPU alone predicts more than the best plan (single_gpu_beats_note,
  /// planner_ranking.hpp), "" otherwise.
  std::string single_gpu_note;
  PlannerBaseline uniform;          ///< Megatron-style: uniform layers and batches over all GPUs
  PlannerBaseline fastest_type_only;
  std::string fastest_type;
  long plans_evaluated = 0;         ///< shapes scored by the estimator + plans predicted
  long plans_pruned = 0;            ///< shapes discarded by memory, budget or bound before scoring
  long plans_predicted = 0;
  long plans_feasible = 0;          ///< predicted plans that fit in memory (before a budget filter), of the last pass
  long plans_without_goodput = 0;   ///< predicted plans that fit but spot preemptions leave no goodput, of the last pass
  double search_time_s = 0;
  int threads = 1;                  ///< threads the searches ran on (search_threads(options), or fewer when some could not start)
  int searches_stopped = 0;         ///< searches cut by time_limit_s (0: every search ran to the end)
  /// Searches that kept only the most promising of their branches (ShapeSearch::kMaxTasks; many
  /// node types) and cannot prove that a dropped one would not have done better.
  int searches_truncated = 0;
  /// Candidates past the first few of their list left unpredicted once time_limit_s had passed
  /// in the final ranking (their estimates were below those predicted).
  long predictions_skipped = 0;
  /// Budget: the least egress ($/h) of a predicted plan that the budget refused only for its
  /// egress (its nodes fit); 0 when none was (plan_training's egress pass).
  double refused_egress_per_hour = 0;
};

/// The most (knobs, TP per node type) branches one search keeps, those of the highest bounds:
/// the branches multiply with the node types (4 TP degrees ^ types x 48 knob settings, 50 M for
/// ten types: 5 GB and minutes of enumeration before the first plan).
inline constexpr std::size_t kMaxSearchBranches = std::size_t{1} << 18;

/// The knobs whose values a user may restrict the search to (`hetsim plan --tp-degrees 1,2
/// --interleave 1 ...`, a sweep's `search:` map; docs/planner.md), the lists of PlannerOptions.
enum class SearchKnob { kTpDegrees, kMicroBatches, kInterleave, kZero };
/// Why `value` cannot be searched for `knob`, as "what is wrong (expected ...)"; "" when it can.
/// A value the model or the cluster rules out (a TP degree that divides no head count) is not
/// an error: the search skips it, and says so when nothing is left (search_space_reason).
std::string search_value_problem(SearchKnob knob, int value);
/// Why the restricted search space leaves nothing to search for this model and cluster ("" when
/// something is left): no TP degree of the list fits a node type and divides the model's heads,
/// or no micro-batch size divides the global batch, or no interleave factor divides the layers.
std::string search_space_reason(const Cluster& cluster, const Workload& workload, const PlannerOptions& options);

/// The search space of `options` as a JSON object {tp_degrees, micro_batches, interleave,
/// recompute, zero, sequence_parallel} (what `plan --format json` and `describe` of a sweep echo).
void write_search_space_json(JsonOut& j, const PlannerOptions& options);

/// The threads a search runs on: PlannerOptions::threads, or for 0 the CPUs in the process's
/// affinity mask (taskset, cgroup cpusets), not every CPU of the machine.
int search_threads(const PlannerOptions& options);

/// Runs the search. Never throws for a valid cluster/workload; an empty `top` carries a reason.
PlannerResult plan_training(const Cluster& cluster, const Workload& workload, const PlannerOptions& options);

/// The value an objective ranks by, larger is better: tokens/s, or -$/Mtok for kCost, of the
/// tokens left after preemptions (`goodput_fraction` of them, SpotOutlook).
double objective_score(PlanObjective objective, const Report& report, double goodput_fraction = 1.0);

}  // namespace hetsim::models
