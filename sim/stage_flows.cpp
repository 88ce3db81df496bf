// SPDX-License-Identifier: Apache-2.0
// The flows the schedule actors start, cached per actor and op, and a run's size (stage_flows.hpp).
#include "stage_flows.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace hetsim::sim {

const std::vector<FoldedPhase>& tp_phases(StageFlows& w, int actor, const models::Op& op) {
  auto key = std::make_tuple(actor, static_cast<int>(op.kind), op.size_bytes);
  auto it = w.tp_cache.find(key);
  if (it != w.tp_cache.end()) return it->second;
  const auto& spec = w.lay.actors[actor];
  const auto& gpus = w.work.replicas[spec.replica][spec.stage].gpus;
  models::CollectiveKind kind = models::CollectiveKind::kAllReduce;
  if (op.kind == models::OpKind::kTpAllGather) kind = models::CollectiveKind::kAllGather;
  if (op.kind == models::OpKind::kTpReduceScatter) kind = models::CollectiveKind::kReduceScatter;
  // TP collectives use the algorithm NCCL's tuner would pick, as the cost model does (kAuto).
  // A group across nodes shares each node's NICs with that node's cross-node TP members.
  return w.tp_cache
      .emplace(key, folded_collective(w.topo, kind, models::GradSyncAlgorithm::kAuto, gpus, op.size_bytes, w.fold,
                                      &w.lay.tp_senders_on_node))
      .first->second;
}

const FoldedPhase& transfer(StageFlows& w, int replica, int from, int to, bool forward) {
  auto key = std::make_tuple(replica, from, to, forward ? 0 : 1);
  auto it = w.transfer_cache.find(key);
  if (it != w.transfer_cache.end()) return it->second;
  const auto& stages = w.work.replicas[replica];
  // Each rank of the sending stage sends its 1/t slice: the activation forward, its gradient back
  // (the cost model's price_pipeline_sends). Between TP degrees the whole tensor crosses once.
  const double bytes = stages[from].activation_send_bytes;
  return w.transfer_cache.emplace(key, fold_phase(w.topo, group_transfer(stages[from].gpus, stages[to].gpus, bytes), w.fold))
      .first->second;
}

int sync_buckets(const models::Plan& plan, const SimOptions& options, const DpSyncClass& spec) {
  if (!plan.overlap_grad_sync) return 1;
  if (options.grad_buckets <= 0) return spec.buckets;
  // A bucket holds whole gradients (Megatron-Core cuts buckets at parameter boundaries): no more
  // buckets than 2-byte gradient elements. --grad-buckets 4096 over a 20-parameter model paid
  // 4096 collective latencies, a step 530 times the unbucketed one (s60 hunt).
  const double most = std::max(1.0, std::floor(spec.min_group_bytes / 2.0));
  return spec.min_group_bytes > 0 ? static_cast<int>(std::min<double>(options.grad_buckets, most)) : options.grad_buckets;
}

namespace {

double flows_of(const std::vector<FoldedPhase>& phases) {
  double n = 0;
  for (const auto& ph : phases) n += static_cast<double>(ph.simulated.size());
  return n;
}

}  // namespace

RunSize size_of_run(StageFlows& w, const SimOptions& options) {
  const bool count_links = options.record_trace;
  RunSize size;
  std::vector<bool> link_used(w.topo.get_links().size(), false);
  std::set<std::pair<int, int>> pairs;  // (src, dst) whose paths are marked
  const auto mark = [&](const std::vector<FoldedPhase>& phases) {
    if (!count_links) return;
    for (const auto& ph : phases)
      for (const Phase* flows : {&ph.simulated, &ph.shadows})
        for (const auto& f : *flows)
          if (pairs.insert({f.src, f.dst}).second)
            for (int l : w.topo.path(f.src, f.dst)) link_used[l] = true;
  };
  for (int a = 0; a < static_cast<int>(w.lay.actors.size()); ++a) {
    const auto& spec = w.lay.actors[a];
    const auto& stages = w.work.replicas[spec.replica];
    const auto& sw = stages[spec.stage];
    const double mbs = w.plan.replicas[spec.replica].micro_batches;
    const double tp = static_cast<double>(sw.gpus.size());
    for (std::size_t c = 0; c < sw.chunks().size(); ++c)
      for (const auto* ops : {&sw.chunks()[c].forward, &sw.chunks()[c].backward})
        for (const auto& op : *ops) {
          if (op.kind == models::OpKind::kCompute) continue;
          const auto& phases = tp_phases(w, a, op);
          size.flows += mbs * flows_of(phases);
          mark(phases);
        }
    const double passes = 2 * mbs * static_cast<double>(sw.chunks().size());
    // Each pass sends to a neighbouring stage (the last stage's last chunk sends nothing forward,
    // the first stage's first nothing back: counted all the same, an estimate).
    for (int to : {spec.stage + 1, spec.stage - 1}) {
      if (to < 0 || to >= static_cast<int>(stages.size())) continue;
      const std::vector<FoldedPhase> t{transfer(w, spec.replica, spec.stage, to, to > spec.stage)};
      size.flows += passes / 2 * flows_of(t);
      mark(t);
    }
    const std::vector<FoldedPhase> zero{w.lay.zero3_forward[a], w.lay.zero3_backward[a]};
    size.flows += mbs * static_cast<double>(sw.chunks().size()) * flows_of(zero);
    mark(zero);
    // Spans (Runtime::span): each pass its receive, ZeRO traffic, compute and send; then the
    // DP sync, embedding sync, the wait for every stage, optimizer and parameter gather. On every GPU of the stage.
    size.gpu_spans += tp * (4 * passes + 5);
    size.gpu_tracks += tp;
  }
  for (std::size_t c = 0; c < w.lay.components.size(); ++c) {
    const auto& comp = w.lay.components[c];
    for (std::size_t k = 0; k < comp.classes.size(); ++k) {
      size.flows += sync_buckets(w.plan, options, comp.classes[k]) * flows_of(comp.classes[k].grad_phases);
      mark(comp.classes[k].grad_phases);
    }
    for (const auto& cls : comp.classes) {
      size.flows += flows_of(cls.param_phases);
      mark(cls.param_phases);
    }
  }
  for (const auto& e : w.lay.embeddings) {
    size.flows += flows_of(e.phases);
    mark(e.phases);
  }
  for (bool used : link_used) size.links += used ? 1 : 0;
  return size;
}

}  // namespace hetsim::sim
