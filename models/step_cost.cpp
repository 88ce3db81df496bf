// SPDX-License-Identifier: Apache-2.0
// The data-parallel part of a training step.
#include "step_cost.hpp"

#include <algorithm>
#include <cstdio>

#include "comm_cost.hpp"
#include "memory_cost.hpp"
#include "topology.hpp"

namespace hetsim::models {

double optimizer_bytes_per_param(Dtype dtype, Optimizer optimizer) {
  const bool fp32 = dtype == Dtype::kFp32 || dtype == Dtype::kTf32;
  const double update = optimizer == Optimizer::kAdam ? 28.0 : 20.0;
  return fp32 ? update + 4.0 : update + 20.0;
}

double grad_sync_bytes_per_param(Dtype dtype) { return dtype == Dtype::kFp16 ? 2.0 : 4.0; }

double grad_sync_bytes_per_param(const TrainingSpec& training) {
  return training.fp32_grad_allreduce ? 4.0 : grad_sync_bytes_per_param(training.dtype);
}

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

/// Per-GPU figures of a node type that the optimizer, MFU and memory checks need.
struct TypeFigures {
  const NodeType* type = nullptr;
  double peak = 0;       ///< dense peak in the training dtype, 0 when unsupported
  double capacity = 0;   ///< memory bytes
  double bandwidth = 0;  ///< achieved memory bandwidth
};

TypeFigures type_figures(const NodeType& nt, Dtype dtype) {
  return {&nt, nt.gpu.supports(dtype) ? nt.gpu.peak(dtype) : 0, nt.gpu.memory_bytes,
          nt.gpu.memory_bandwidth_Bps * nt.gpu.efficiency.memory_efficiency};
}

/// The last DP group's figures and what they depend on when its members sit on strictly
/// increasing nodes (one member per node): group_cost() is then a function of the members'
/// node types and zones alone, so the groups of a uniform plan's stages share one evaluation.
struct DpGroupMemo {
  std::vector<int> signature;  ///< node type, zone per member; empty when nothing is kept
  std::vector<int> next;       ///< scratch for the current group's signature
  GroupCost cost;
};

const GroupCost& dp_group_cost(const Cluster& c, const std::vector<int>& members, DpGroupMemo& memo) {
  memo.next.clear();
  bool increasing = true;
  int prev_node = -1;
  for (int g : members) {
    const int node = c.gpus[g].node;
    increasing = increasing && node > prev_node;
    prev_node = node;
    memo.next.push_back(c.nodes[node].node_type);
    memo.next.push_back(c.nodes[node].zone);
  }
  if (increasing && !memo.signature.empty() && memo.next == memo.signature) return memo.cost;
  memo.cost = group_cost(c, members);
  if (increasing) memo.signature.swap(memo.next);
  else memo.signature.clear();
  return memo.cost;
}

}  // namespace

StepCost step_cost(const StepInput& in, PlanWork* work) {
  const Cluster& c = in.cluster;
  const Plan& plan = in.plan;
  const Workload& w = in.workload;
  const Dtype dtype = w.training.dtype;
  const int dp = plan.dp();
  const int v = std::max(1, plan.interleave);
  const double grad_bpp = grad_sync_bytes_per_param(w.training);
  const double weight_bpp = dtype == Dtype::kFp32 || dtype == Dtype::kTf32 ? 4.0 : 2.0;
  StepCost out;
  const std::size_t slots = static_cast<std::size_t>(dp) * in.max_pp;
  out.stage_memory_bytes.assign(slots, 0);
  out.stage_capacity_bytes.assign(slots, 0);

  const StageTimes* slow = &in.times[in.slowest_replica * in.max_pp];
  const int pp_slow = static_cast<int>(plan.replicas[in.slowest_replica].stages.size());
  const double mb_slow = plan.replicas[in.slowest_replica].micro_batches;

  // Gradient sync, one group per (stage index, TP rank) across replicas. When every replica's
  // stage s sits in one node, all TP ranks see the same node sequence: one ring walk serves all.
  std::vector<int> members;
  members.reserve(dp);
  DpGroupMemo group_memo;
  for (int s = 0; s < in.max_pp; ++s) {
    int max_tp = 0;
    bool symmetric = true;
    int first_tp = -1;
    for (int r = 0; r < dp; ++r) {
      if (s >= static_cast<int>(plan.replicas[r].stages.size())) continue;
      const int tp = plan.replicas[r].stages[s].tp();
      if (first_tp < 0) first_tp = tp;
      symmetric = symmetric && tp == first_tp && in.tp_in_one_node[r * in.max_pp + s];
      max_tp = std::max(max_tp, tp);
    }
    if (max_tp == 0) continue;
    double params = 0;
    for (int r = 0; r < dp; ++r)
      if (s < static_cast<int>(plan.replicas[r].stages.size()))
        params = std::max(params, in.costs[in.shape_of[r * in.max_pp + s]].params);
    const double grad_bytes = params * grad_bpp;
    const double gather_bytes = plan.zero >= 1 ? params * weight_bpp : 0;
    const double offset = s < pp_slow ? backward_finish_offset(slow, s) : 0;
    const double hidden = plan.overlap_grad_sync && s < pp_slow ? slow[s].backward_s : 0;
    double worst = 0;
    const int ranks = symmetric && !work ? 1 : max_tp;
    for (int j = 0; j < ranks; ++j) {
      members.clear();
      for (int r = 0; r < dp; ++r) {
        if (s >= static_cast<int>(plan.replicas[r].stages.size())) continue;
        const Stage& st = plan.replicas[r].stages[s];
        members.push_back(st.gpus[j % st.tp()]);
      }
      double t = 0;
      if (members.size() > 1) {
        const GroupCost& g = dp_group_cost(c, members, group_memo);
        if (plan.zero == 0) {
          t = collective_time(CollectiveKind::kAllReduce, grad_bytes, g, plan.grad_sync);
        } else if (plan.zero <= 2) {
          // ZeRO-1/2: reduce-scatter gradients, all-gather updated weights (ZeRO §5.1-5.2).
          t = collective_time(CollectiveKind::kReduceScatter, grad_bytes, g, plan.grad_sync) +
              collective_time(CollectiveKind::kAllGather, gather_bytes, g, plan.grad_sync);
        } else {
          // ZeRO-3: every micro-batch's passes gather the weights and reduce-scatter the
          // gradients (zero3_traffic), prefetched so that the pass's compute hides them: a
          // pass lasts max(compute, traffic). Nothing is left for the end of the step.
          const Zero3Traffic z = zero3_traffic(plan.recompute);
          const double ag = zero3_collective_time(CollectiveKind::kAllGather, gather_bytes, g);
          const double rs = zero3_collective_time(CollectiveKind::kReduceScatter, grad_bytes, g);
          const double f = s < pp_slow ? slow[s].forward_s : 0, b = s < pp_slow ? slow[s].backward_s : 0;
          const double exposed = std::max(0.0, z.forward_gathers * ag - f) +
                                 std::max(0.0, z.backward_gathers * ag + z.backward_reduce_scatters * rs - b);
          out.dp_exposed_s = std::max(out.dp_exposed_s, mb_slow * exposed);
        }
      }
      worst = std::max(worst, t);
      if (work && members.size() > 1) {
        DpGroup dg;
        dg.gpus = members;
        dg.size_bytes = grad_bytes;
        dg.stage = s;
        dg.gather_bytes = gather_bytes;
        dg.time_s = t;
        work->dp_groups.push_back(std::move(dg));
      }
    }
    out.dp_exposed_s = std::max(out.dp_exposed_s, worst - offset - hidden);
  }

  // Tied embeddings with pp > 1: the first and last stage all-reduce the word-embedding
  // gradient after the DP sync (Megatron-LM _allreduce_embedding_grads; Shoeybi et al. 2019).
  const ModelSpec& m = w.model;
  if (m.tied_embeddings) {
    // Every (replica, TP rank) pair runs its embedding all-reduce at once, so a node's NICs are
    // shared by the first- and last-stage GPUs it holds, not by all its GPUs (which the default
    // concurrency of group_cost assumes for the DP sync, where every GPU takes part).
    std::vector<int> embedding_gpus_on_node(c.nodes.size(), 0);
    for (const Replica& rep : plan.replicas) {
      if (rep.stages.size() < 2) continue;
      for (int g : rep.stages.front().gpus) ++embedding_gpus_on_node[c.gpus[g].node];
      for (int g : rep.stages.back().gpus) ++embedding_gpus_on_node[c.gpus[g].node];
    }
    double worst = 0;
    for (int r = 0; r < dp; ++r) {
      const Replica& rep = plan.replicas[r];
      if (rep.stages.size() < 2) continue;
      const Stage& a = rep.stages.front();
      const Stage& b = rep.stages.back();
      const double bytes = static_cast<double>(m.vocab) * m.hidden / a.tp() * grad_bpp;
      const std::vector<int> pair = {a.gpus.front(), b.gpus.front()};
      const int concurrent = std::max(embedding_gpus_on_node[c.gpus[pair[0]].node],
                                      embedding_gpus_on_node[c.gpus[pair[1]].node]);
      const double t =
          collective_time(CollectiveKind::kAllReduce, bytes, group_cost(c, pair, concurrent), plan.grad_sync);
      worst = std::max(worst, t);
      if (work) {
        DpGroup dg;
        dg.gpus = pair;
        dg.size_bytes = bytes;
        dg.embedding = true;
        dg.time_s = t;
        work->dp_groups.push_back(std::move(dg));
      }
      if (!work) break;  // equal for every replica of a uniform plan; exact in build mode
    }
    out.dp_exposed_s += worst;
  }
  out.dp_exposed_s = std::max(0.0, out.dp_exposed_s);

  // Optimizer step (memory-bound, sharded by ZeRO >= 1), memory, FLOPs, peaks, price.
  const double opt_bpp = optimizer_bytes_per_param(dtype, w.training.optimizer);
  std::vector<char> node_used(c.nodes.size(), 0);
  struct MemoryMemo {
    int shape, stage, pp, micro_batches;
    double bytes;
  };
  std::vector<MemoryMemo> memo;
  TypeFigures figures;  // of the node type met last by a one-node stage
  for (int r = 0; r < dp; ++r) {
    const Replica& rep = plan.replicas[r];
    const int pp = static_cast<int>(rep.stages.size());
    for (int s = 0; s < pp; ++s) {
      const std::size_t k = r * in.max_pp + s;
      const Stage& st = rep.stages[s];
      const StageCost& sc = in.costs[in.shape_of[k]];
      double capacity = 0, peaks = 0, bw = 0;
      // GPUs are numbered node by node: a contiguous range whose ends share a node is one node.
      const int tp = st.tp();
      bool one_node = c.gpus[st.gpus.front()].node == c.gpus[st.gpus.back()].node;
      int gaps = 0;  // no early exit: the compiler vectorises the whole check
      for (int i = 1; i < tp; ++i) gaps |= st.gpus[i] ^ (st.gpus[0] + i);
      one_node = one_node && gaps == 0;
      if (one_node) {
        // One node, one type: its figures are looked up once per type over all stages.
        const int node = c.gpus[st.gpus.front()].node;
        node_used[node] = 1;
        const NodeType& nt = c.node_types[c.nodes[node].node_type];
        if (&nt != figures.type) figures = type_figures(nt, dtype);
        peaks = tp * figures.peak;
        capacity = figures.capacity;
        bw = figures.bandwidth;
      } else {
        const NodeType* last = nullptr;
        double last_peak = 0;
        int prev_node = -1, run = 0;  // GPUs of the current type not yet added to `peaks`
        for (int g : st.gpus) {
          const int node = c.gpus[g].node;
          if (node == prev_node) {  // same node, same type: nothing new to look up
            ++run;
            continue;
          }
          prev_node = node;
          node_used[node] = 1;
          const NodeType& nt = c.node_types[c.nodes[node].node_type];
          if (&nt != last) {  // GPUs of a stage are usually of one type: look its figures up once
            peaks += run * last_peak;
            run = 0;
            last = &nt;
            const TypeFigures f = type_figures(nt, dtype);
            last_peak = f.peak;
            capacity = capacity == 0 ? f.capacity : std::min(capacity, f.capacity);
            bw = bw == 0 ? f.bandwidth : std::min(bw, f.bandwidth);
          }
          ++run;
        }
        peaks += run * last_peak;
      }
      out.peak_sum_flops += peaks;
      out.hardware_flop += rep.micro_batches * (sc.forward.flop + sc.backward.flop) * st.tp();
      const double opt_params = sc.params / (plan.zero >= 1 ? dp : 1);
      const double opt_s = opt_params * opt_bpp / bw;
      out.optimizer_s = std::max(out.optimizer_s, opt_s);

      // Stages of equal shape, position and micro-batch count have equal memory.
      double mem = -1;
      for (const MemoryMemo& mm : memo)
        if (mm.shape == in.shape_of[k] && mm.stage == s && mm.pp == pp && mm.micro_batches == rep.micro_batches) {
          mem = mm.bytes;  // keys are unique: the first match is the only one
          break;
        }
      if (mem < 0) {
        StageMemoryInput mi;
        mi.model = &m;
        mi.dtype = dtype;
        mi.optimizer = w.training.optimizer;
        mi.flash = w.training.flash_attention;
        mi.layers = st.layers;
        mi.tp = st.tp();
        mi.stage = s;
        mi.pp = pp;
        mi.dp = dp;
        mi.micro_batches = rep.micro_batches;
        mi.interleave = v;
        mi.zero = plan.zero;
        mi.micro = plan.micro_batch;
        mi.schedule = plan.schedule;
        mi.recompute = plan.recompute;
        mi.sequence_parallel = plan.sequence_parallel && st.tp() > 1;
        mi.params = sc.params;
        mem = stage_memory(mi).total();
        memo.push_back({in.shape_of[k], s, pp, rep.micro_batches, mem});
      }
      out.stage_memory_bytes[k] = mem;
      out.stage_capacity_bytes[k] = capacity;
      out.memory_peak_bytes = std::max(out.memory_peak_bytes, mem);
      if (mem > capacity && out.memory_reason.empty()) {
        out.memory_reason = "stage " + std::to_string(s) + (dp > 1 ? " of replica " + std::to_string(r) : "") +
                            " needs " + gib(mem) + " GiB of " + gib(capacity) + " GiB";
      }
      if (work) {
        StageWork* sw = nullptr;
        for (StageWork& x : work->replicas[r])
          if (x.stage == s) sw = &x;
        if (sw) {
          sw->param_count = sc.params;
          sw->grad_sync_bytes = sc.params * grad_bpp;
          sw->optimizer_s = opt_s;
          sw->memory_bytes = mem;
          sw->memory_capacity_bytes = capacity;
          sw->forward_s = in.times[k].forward_s;
          sw->backward_s = in.times[k].backward_s;
        }
      }
    }
  }
  for (std::size_t n = 0; n < node_used.size(); ++n)
    if (node_used[n]) out.cost_per_hour += c.node_types[c.nodes[n].node_type].price_per_hour;
  return out;
}

}  // namespace hetsim::models
