// SPDX-License-Identifier: Apache-2.0
#include "planner_ranking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plan_notes.hpp"
#include "predictor.hpp"
#include "units.hpp"

namespace hetsim::models::planner {

namespace {
constexpr double kBudgetSlackPerHour = 1e-9;
}  // namespace

bool over_budget(double price_per_hour, const PlannerOptions& o) {
  return price_per_hour > o.budget_per_hour + kBudgetSlackPerHour;
}

bool over_node_budget(double nodes_price_per_hour, const PlannerOptions& o) {
  const double limit = o.node_budget_per_hour > 0 ? std::min(o.node_budget_per_hour, o.budget_per_hour) : o.budget_per_hour;
  return nodes_price_per_hour > limit + kBudgetSlackPerHour;
}

std::string knob_summary(const Plan& p) {
  std::string s = "micro " + std::to_string(p.micro_batch) + ", " + to_string(p.recompute) + ", ";
  s += p.schedule == Schedule::kInterleaved ? "interleaved x" + std::to_string(p.interleave) : to_string(p.schedule);
  if (p.overlap_p2p_comm) s += " p2p-overlap";
  if (p.sequence_parallel) s += p.tp_comm_overlap ? ", sp+overlap" : ", sp";
  s += ", zero " + std::to_string(p.zero);
  if (p.zero >= 2 && p.sharded_collectives == ShardedCollectives::kNodeNics) s += " over node NICs";
  if (!p.overlap_grad_sync && p.dp() > 1) s += ", sync after backward";
  return s;
}

/// Takes the candidate's plan (a 131,072-replica plan is tens of MB: copies of it and of its
/// Report were most of a planning run's time at that size).
RankedPlan rank(const Cluster& cluster, const Workload& workload, Candidate&& c, bool spot) {
  RankedPlan r;
  r.plan = std::move(c.plan);
  r.shape = c.shape + " (" + knob_summary(r.plan) + ")";
  r.estimated_tokens_per_s = c.estimated_tokens_per_s;
  r.joins_vendors = joins_vendors(cluster, r.plan);
  r.report = predict(cluster, workload, r.plan);
  // An overlapped gradient sync runs in Megatron-Core's buckets, a collective each: where its
  // groups cross a high-latency link (a WAN) the buckets' latencies can outweigh what the overlap
  // hides, and the plan is faster with the sync after the backward pass.
  if (r.plan.overlap_grad_sync && r.plan.dp() > 1) {
    Plan after = r.plan;
    after.overlap_grad_sync = false;
    Report alt = predict(cluster, workload, after);
    if (alt.feasible && r.report.feasible && alt.iteration_time_s < r.report.iteration_time_s) {
      r.plan = std::move(after);
      r.report = std::move(alt);
      r.shape = c.shape + " (" + knob_summary(r.plan) + ")";
    }
  }
  // The predictor prices on demand; --spot asks for spot prices, and counts the preemptions.
  if (spot && r.report.tokens_per_s > 0) r.spot = price_at_spot(cluster, workload, r.plan, r.report);
  // Headroom of the tightest stage (smallest free fraction of its GPU's memory).
  r.memory_headroom_bytes = std::numeric_limits<double>::infinity();
  r.memory_headroom_fraction = 1;
  for (const StageReport& s : r.report.stages) {
    if (s.memory_capacity_bytes <= 0) continue;
    const double fraction = 1.0 - s.memory_bytes / s.memory_capacity_bytes;
    if (fraction < r.memory_headroom_fraction || !std::isfinite(r.memory_headroom_bytes)) {
      r.memory_headroom_fraction = fraction;
      r.memory_headroom_bytes = s.memory_capacity_bytes - s.memory_bytes;
    }
  }
  if (!std::isfinite(r.memory_headroom_bytes)) r.memory_headroom_bytes = 0;
  if (r.memory_headroom_bytes < 0) {  // never hand out a plan the predictor says does not fit
    r.report.feasible = false;
    if (r.report.infeasible_reason.empty()) r.report.infeasible_reason = "a stage exceeds its GPU memory";
  }
  return r;
}

std::vector<RankedPlan> top_plans(std::vector<RankedPlan> all, const PlannerOptions& options) {
  const PlanObjective obj = options.objective;
  std::vector<RankedPlan> eligible;
  for (RankedPlan& r : all) {
    if (obj == PlanObjective::kBudget && over_budget(r.report.cost_per_hour, options)) continue;
    eligible.push_back(std::move(r));
  }
  std::stable_sort(eligible.begin(), eligible.end(), [&](const RankedPlan& a, const RankedPlan& b) {
    const double sa = objective_score(obj, a.report, a.spot.goodput_fraction);
    const double sb = objective_score(obj, b.report, b.spot.goodput_fraction);
    if (sa != sb) return sa > sb;
    return a.goodput_tokens_per_s() > b.goodput_tokens_per_s();  // equally cheap (e.g. free): the faster first
  });
  std::vector<RankedPlan> top;
  for (RankedPlan& r : eligible) {
    if (static_cast<int>(top.size()) >= options.top) break;
    // The same plan found twice (a uniform shape and the Megatron baseline of the same split,
    // or ZeRO 0 and 1 with one replica): equal predictions to the last bit, GPUs and price. Or
    // two plans the listing cannot tell apart, whose shapes read the same: copies that differ in
    // which of them runs the extra micro-batch (dgx-a100 gpt3-13b --zero 0: 65,335 and 65,332
    // tokens/s, both "5x[dgx-a100 tp1 x6 L6,7,7,7,7,6] m205-204"); the faster, first, stays.
    const bool duplicate = std::any_of(top.begin(), top.end(), [&](const RankedPlan& t) {
      const bool same_figures = t.report.tokens_per_s == r.report.tokens_per_s &&
                                t.report.memory_peak_bytes == r.report.memory_peak_bytes;
      return (same_figures || t.shape == r.shape) && t.report.cost_per_hour == r.report.cost_per_hour &&
             t.plan.gpu_count() == r.plan.gpu_count();
    });
    if (!duplicate) top.push_back(std::move(r));
  }
  return top;
}

std::string single_gpu_beats_note(const Cluster& cluster, const Workload& workload, const PlannerOptions& options,
                                  double best_tokens_per_s) {
  double best_single = 0;
  std::string what;
  std::vector<int> seen_types;
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    const int type = cluster.nodes[cluster.gpus[g].node].node_type;
    if (std::find(seen_types.begin(), seen_types.end(), type) != seen_types.end()) continue;
    seen_types.push_back(type);
    for (const int micro : options.micro_batches) {
      if (micro < 1 || workload.training.global_batch % micro != 0) continue;
      for (const Recompute recompute : options.recomputes) {
        Plan p;
        p.name = "one-gpu";
        p.micro_batch = micro;
        p.recompute = recompute;
        Replica r;
        r.micro_batches = workload.training.global_batch / micro;
        r.stages.push_back(Stage{workload.model.layers, {g}});
        p.replicas.push_back(std::move(r));
        const Report report = predict(cluster, workload, p);
        if (!report.feasible || report.tokens_per_s <= best_single) continue;
        best_single = report.tokens_per_s;
        what = "one " + cluster.gpu_type(g).name + " alone (GPU " + std::to_string(g) + ", micro-batch " +
               std::to_string(micro) + ", recompute " + to_string(recompute) + ")";
      }
    }
  }
  if (!(best_single > best_tokens_per_s)) return "";
  char ratio[64];
  std::snprintf(ratio, sizeof ratio, "%.2fx", best_single / best_tokens_per_s);
  return what + " predicts " + format_tokens_per_s(best_single) + " tokens/s, " + ratio + " the best plan's " +
         format_tokens_per_s(best_tokens_per_s) +
         ": the search places whole nodes, and this workload gains less from a node's GPUs than their links "
         "cost (a small model or batch, or slow links; `hetsim predict --plan` prices a plan on part of a node)";
}

}  // namespace hetsim::models::planner
