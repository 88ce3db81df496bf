// SPDX-License-Identifier: Apache-2.0
// The measured Report: the same keys as the predictors', filled from what the ranks timed.
#include <algorithm>
#include <set>
#include <vector>

#include "predictor.hpp"
#include "runner/run.hpp"
#include "type_utilisation.hpp"

namespace hetsim::exec {

int critical_rank(const RankLayout& layout, const std::vector<RankSummary>& ranks) {
  int slowest_replica = 0;
  double slowest_s = -1;
  for (int rep = 0; rep < layout.get_dp(); ++rep) {
    double pipeline_s = 0;
    for (int st = 0; st < layout.replica_pp(rep); ++st) {
      for (int t = 0; t < layout.stage_tp(rep, st); ++t) {
        pipeline_s = std::max(pipeline_s, ranks.at(layout.rank_of(rep, st, t)).pipeline_s);
      }
    }
    if (pipeline_s > slowest_s) {
      slowest_s = pipeline_s;
      slowest_replica = rep;
    }
  }
  int critical = layout.rank_of(slowest_replica, 0, 0);
  const auto busy = [&](int rank) {
    const RankSummary& s = ranks.at(rank);
    return s.compute_s + s.tp_comm_s + s.pp_comm_s;
  };
  for (int st = 0; st < layout.replica_pp(slowest_replica); ++st) {
    for (int t = 0; t < layout.stage_tp(slowest_replica, st); ++t) {
      const int rank = layout.rank_of(slowest_replica, st, t);
      if (busy(rank) > busy(critical)) critical = rank;
    }
  }
  return critical;
}

models::Report build_report(const RunSpec& spec, const RankLayout& layout, const std::vector<RankSummary>& ranks,
                            const std::vector<StepResult>& steps) {
  models::Report r;
  r.engine = "exec";
  r.micro_batch = spec.plan.micro_batch;
  const auto& model = spec.workload.model;
  double iteration = 0;
  for (const auto& s : ranks) iteration = std::max(iteration, s.step_time_s);
  r.iteration_time_s = iteration;
  const double sequences = static_cast<double>(layout.global_micro_batches()) * spec.plan.micro_batch;
  const int gpus = layout.get_world_size();
  if (iteration > 0) {
    r.samples_per_s = sequences / iteration;
    r.tokens_per_s = r.samples_per_s * model.seq_len;
  }
  const double model_flops_per_s = model.flops_per_token() * r.tokens_per_s;
  r.tflops_per_gpu = model_flops_per_s / gpus / 1e12;
  // MFU against the sum of the fp32 peaks of the devices used (DESIGN.md "Outputs"); HFU also
  // counts the recompute forward: full recompute runs 4 passes instead of 3 (Narayanan et al.
  // SC'21, eq. 3 vs. the 3-pass count), selective only the attention core (not counted).
  double peak_sum = 0;
  std::set<int> nodes;
  for (int rank = 0; rank < gpus; ++rank) {
    const int gpu = layout.place(rank).gpu;
    const auto& type = spec.cluster.gpu_type(gpu);
    if (type.supports(models::Dtype::kFp32)) peak_sum += type.utilisation_peak(models::Dtype::kFp32);
    nodes.insert(spec.cluster.node_of_gpu(gpu));
  }
  if (peak_sum > 0) r.mfu = model_flops_per_s / peak_sum;
  if (iteration > 0)
    r.by_gpu_type = models::utilisation_by_type(spec.cluster, spec.workload, spec.plan, iteration, models::Dtype::kFp32);
  // HFU counts what the ranks execute (Chowdhery et al., "PaLM", 2022, Appendix B): the cost
  // model's FLOPs of the plan as the engine runs it over the model's FLOPs. Full recompute reruns
  // the blocks but not the LM head (under SC'21 eq. 3's 4/3 for the blocks alone), selective the
  // attention core. Without a figure (a plan the memory model refuses), full recompute's 4/3.
  const Executed executed = as_executed(spec.workload, spec.plan);
  const models::Report priced = models::predict(spec.cluster, executed.workload, executed.plan);
  const double executed_over_model = priced.feasible && priced.mfu > 0 ? priced.hfu / priced.mfu
                                     : spec.plan.recompute == models::Recompute::kFull ? 4.0 / 3.0
                                                                                        : 1.0;
  r.hfu = r.mfu * executed_over_model;
  for (const auto& s : ranks) r.memory_peak_bytes = std::max(r.memory_peak_bytes, s.memory_peak_bytes);
  for (int node : nodes) r.cost_per_hour += spec.cluster.node_types[spec.cluster.nodes[node].node_type].price_per_hour;
  r.cost_per_million_tokens = models::cost_per_million_tokens(r.cost_per_hour, r.tokens_per_s);

  // Breakdown on the critical path, as the predictor defines it (models/report.hpp Breakdown):
  // the critical rank's compute, TP, p2p, gradient-sync and optimizer times; bubble is the rest
  // of the iteration time, so the categories sum to it. The rest holds the pipeline's idle time
  // (measured as waits for other ranks: ops of class bubble) and the runner's own overhead
  // (extra.runner_overhead_fraction).
  const RankSummary& c = ranks[static_cast<std::size_t>(critical_rank(layout, ranks))];
  r.breakdown.compute_s = c.compute_s;
  r.breakdown.tp_comm_s = c.tp_comm_s;
  r.breakdown.pp_comm_s = c.pp_comm_s;
  r.breakdown.dp_comm_s = c.dp_comm_s;
  r.breakdown.optimizer_s = c.optimizer_s;
  r.breakdown.bubble_s =
      std::max(0.0, iteration - c.compute_s - c.tp_comm_s - c.pp_comm_s - c.dp_comm_s - c.optimizer_s);

  for (int rep = 0; rep < layout.get_dp(); ++rep) {
    for (int st = 0; st < layout.replica_pp(rep); ++st) {
      models::StageReport sr;
      sr.replica = rep;
      sr.stage = st;
      sr.tp = layout.stage_tp(rep, st);
      const int first = layout.rank_of(rep, st, 0);
      // A TP group of several device types is labelled with all of them, as predict does (the
      // first one's name hid the slower device that sets the pace), its capacity the smallest.
      std::vector<int> group;
      for (int t = 0; t < sr.tp; ++t) group.push_back(layout.place(layout.rank_of(rep, st, t)).gpu);
      sr.gpu_type = spec.cluster.gpu_types_label(group);
      sr.memory_capacity_bytes = spec.cluster.gpu_type(group.front()).memory_bytes;
      for (int g : group) sr.memory_capacity_bytes = std::min(sr.memory_capacity_bytes, spec.cluster.gpu_type(g).memory_bytes);
      for (const auto& c : layout.chunks(rep, st)) sr.layers += c.layers;
      sr.forward_s = ranks[first].forward_per_micro_batch_s;
      sr.backward_s = ranks[first].backward_per_micro_batch_s;
      for (int t = 0; t < sr.tp; ++t) {
        sr.memory_bytes = std::max(sr.memory_bytes, ranks[layout.rank_of(rep, st, t)].memory_peak_bytes);
      }
      r.stages.push_back(sr);
    }
  }
  double overhead = 0;
  for (const auto& s : ranks) {
    if (s.step_time_s > 0) overhead = std::max(overhead, s.uncovered_s / s.step_time_s);
  }
  r.extra["runner_overhead_fraction"] = overhead;
  r.extra["critical_rank"] = critical_rank(layout, ranks);
  r.extra["steps_run"] = static_cast<double>(steps.size());  // the count; `run --format json` lists them under "steps"
  if (!steps.empty()) {
    r.extra["loss_first"] = steps.front().loss;
    r.extra["loss_last"] = steps.back().loss;
  }
  return r;
}

}  // namespace hetsim::exec
