// SPDX-License-Identifier: Apache-2.0
// Cheap estimate of a concrete plan from the planner's unit costs and link estimates.
#include "planner_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "dp_segments.hpp"
#include "memory_cost.hpp"
#include "pipeline_time.hpp"
#include "step_cost.hpp"

namespace hetsim::models::planner {

Knobs knobs_of(const Plan& plan) {
  Knobs k;
  k.micro_batch = plan.micro_batch;
  k.recompute = plan.recompute;
  k.sequence_parallel = plan.sequence_parallel;
  k.interleave = plan.schedule == Schedule::kInterleaved ? std::max(1, plan.interleave) : 1;
  k.zero = plan.zero;
  k.tp_comm_overlap = plan.tp_comm_overlap;
  k.overlap_p2p_comm = plan.overlap_p2p_comm;
  return k;
}

double stage_grad_bytes(const Workload& w, int layers, int tp, bool first) {
  const double params = layers * w.model.params_per_layer() + (first ? w.model.params_embedding() : 0.0);
  return params / std::max(1, tp) * grad_sync_bytes_per_param(w.training);
}

double tokens_per_step(const Workload& w) {
  return static_cast<double>(w.training.global_batch) * w.model.seq_len;
}

double grad_sync_estimate_s(const Cluster& cluster, const Workload& workload, const Plan& plan,
                            const std::vector<std::vector<StageRef>>& replicas, int slowest) {
  if (replicas.size() <= 1) return 0;
  const DpSegments segments(plan, workload.model);
  const double bpp = grad_sync_bytes_per_param(workload.training);
  const auto exposed_of = [&](const SyncEstimate& sync, double stage_s, double before_s) {
    return plan.overlap_grad_sync ? exposed_sync_s(sync, stage_s, before_s) : sync.reduce_s + sync.gather_s;
  };
  // [replica][stage]: the first forward passes (a third of each stage's time) of the replica's
  // stages before it, which hide its gather when the gather starts the step; else zeros.
  const bool gathers_lead = gathers_lead_the_step(plan);
  std::vector<std::vector<double>> forwards_before(replicas.size());
  for (std::size_t r = 0; r < replicas.size(); ++r) {
    forwards_before[r].assign(replicas[r].size(), 0.0);
    for (std::size_t s = 1; gathers_lead && s < replicas[r].size(); ++s)
      forwards_before[r][s] = forwards_before[r][s - 1] + replicas[r][s - 1].time_s / 3.0;
  }
  const auto& slow = replicas[slowest];
  double exposed = 0;
  std::vector<int> members;
  // Not aligned: per (replica, stage), the sum of its segments' collectives.
  std::vector<std::vector<SyncEstimate>> stage_sum;
  if (!segments.aligned())
    for (const auto& r : replicas) stage_sum.emplace_back(r.size());
  for (int k = 0; k < segments.count(); ++k) {
    members.clear();
    double bytes = 0;
    for (std::size_t r = 0; r < replicas.size(); ++r) {
      const int s = segments.stage_of(k, static_cast<int>(r));
      if (s < 0) continue;
      const StageRef& ref = replicas[r][s];
      members.push_back(ref.gpu);
      bytes = std::max(bytes, segments.aligned() ? stage_grad_bytes(workload, ref.layers, ref.tp, s == 0)
                                                 : segments.params(k, static_cast<int>(r), workload.model) * bpp);
    }
    const SyncEstimate sync = sync_estimate(cluster, members, bytes, plan.zero, workload.training, plan.overlap_grad_sync);
    if (segments.aligned()) {
      const int s_slow = segments.stage_of(k, slowest);
      exposed = std::max(exposed, exposed_of(sync, s_slow >= 0 ? slow[s_slow].time_s : 0.0,
                                             s_slow >= 0 ? forwards_before[slowest][s_slow] : 0.0));
      continue;
    }
    for (std::size_t r = 0; r < replicas.size(); ++r) {
      SyncEstimate& sum = stage_sum[r][segments.stage_of(k, static_cast<int>(r))];
      sum.reduce_s += sync.reduce_s;
      sum.gather_s += sync.gather_s;
      sum.bucketed_reduce_s += sync.bucketed_reduce_s;
      sum.buckets = std::max(sum.buckets, sync.buckets);
    }
  }
  for (std::size_t r = 0; r < stage_sum.size(); ++r)
    for (std::size_t s = 0; s < stage_sum[r].size(); ++s)
      exposed = std::max(exposed, exposed_of(stage_sum[r][s], replicas[r][s].time_s, forwards_before[r][s]));
  return std::max(0.0, exposed);
}

double tied_embedding_sync_estimate_s(const Cluster& cluster, const Workload& workload, const Plan& plan) {
  if (!workload.model.tied_embeddings) return 0;
  const auto zone_of = [&](int gpu) { return cluster.nodes[cluster.node_of_gpu(gpu)].zone; };
  const auto crosses = [&](const Replica& r) {
    return r.stages.size() > 1 && zone_of(r.stages.front().gpus[0]) != zone_of(r.stages.back().gpus[0]);
  };
  const int crossing_replicas = static_cast<int>(std::count_if(plan.replicas.begin(), plan.replicas.end(), crosses));
  double worst = 0;
  for (const Replica& r : plan.replicas) {
    if (r.stages.size() < 2) continue;
    const Stage& a = r.stages.front();
    const Stage& b = r.stages.back();
    // Every GPU of each node takes part (a uniform plan fills its nodes): senders 0.
    worst = std::max(worst, tied_embedding_estimate_s(cluster, workload, a.gpus[0], a.tp(), b.gpus[0], b.tp(), 0,
                                                      crosses(r) ? crossing_replicas : 0));
  }
  return worst;
}

Estimate estimate_plan(const Cluster& cluster, const Workload& workload, const Plan& plan, UnitCostTable& costs,
                       double memory_fraction, bool spot) {
  Estimate e;
  const Knobs k = knobs_of(plan);
  const int v = k.interleave;
  const double boundary_bytes = boundary_activation_bytes(workload.model, plan.micro_batch, workload.training.dtype);
  const double weight_scale = zero_weight_scale(plan.zero, plan.dp(), workload.training);
  double slowest = 0;
  int slowest_replica = 0;
  std::vector<int> gpus_used;
  std::vector<std::vector<StageRef>> refs;
  // The pipelines whose boundary s crosses from zone a to zone b share that WAN link (p2p_estimate_s).
  const auto zone_of = [&](const Stage& st) { return cluster.nodes[cluster.node_of_gpu(st.gpus[0])].zone; };
  std::map<std::tuple<int, int, int>, int> wan_pipelines;  // (boundary, from zone, to zone)
  // The pipelines whose boundary s leaves / enters a node share its NICs (the predictor's
  // count_pipeline_nic_senders: a send's own flows, not the other boundaries').
  const auto node_of = [&](const Stage& st) { return cluster.node_of_gpu(st.gpus[0]); };
  std::map<std::pair<int, int>, int> leaving, entering;  // (boundary, node) -> pipelines
  for (const Replica& r : plan.replicas)
    for (std::size_t s = 0; s + 1 < r.stages.size(); ++s) {
      const Stage& a = r.stages[s];
      const Stage& b = r.stages[s + 1];
      if (zone_of(a) != zone_of(b)) ++wan_pipelines[{static_cast<int>(s), zone_of(a), zone_of(b)}];
      if (node_of(a) != node_of(b)) {
        ++leaving[{static_cast<int>(s), node_of(a)}];
        ++entering[{static_cast<int>(s), node_of(b)}];
      }
    }
  const auto crossing = [&](int s, const Stage& a, const Stage& b) {
    const auto it = wan_pipelines.find({s, zone_of(a), zone_of(b)});
    return it == wan_pipelines.end() ? 1 : it->second;
  };
  const auto count = [](const std::map<std::pair<int, int>, int>& m, int s, int node) {
    const auto it = m.find({s, node});
    return it == m.end() ? 0 : it->second;
  };
  for (const Replica& r : plan.replicas) {
    const int stages = static_cast<int>(r.stages.size());
    std::vector<SlotCost> slots;
    for (int s = 0; s < stages; ++s) {
      const Stage& st = r.stages[s];
      gpus_used.insert(gpus_used.end(), st.gpus.begin(), st.gpus.end());
      const int type = cluster.nodes[cluster.node_of_gpu(st.gpus[0])].node_type;
      const UnitCost& u = costs.get(type, st.tp(), k);
      if (!u.ok) {
        e.reason = u.reason;
        return e;
      }
      SlotCost slot{&u, weight_scale, 0.0, 0.0};
      if (s + 1 < stages) {
        const Stage& next = r.stages[s + 1];
        const int wan = crossing(s, st, next);
        const int out = count(leaving, s, node_of(st)), in = count(entering, s, node_of(next));
        slot.send_s = v * p2p_estimate_s(cluster, st.gpus[0], st.tp(), next.gpus[0], next.tp(), boundary_bytes, wan, out, in);
        slot.back_send_s =
            v * p2p_estimate_s(cluster, next.gpus[0], next.tp(), st.gpus[0], st.tp(), boundary_bytes, wan, in, out);
      }
      slots.push_back(slot);
    }
    ReplicaTiming t;
    std::vector<StageRef> ref;
    for (int s = 0; s < stages; ++s) {
      const UnitCost& u = *slots[s].unit;
      const double time = with_sends(r.stages[s].layers * u.layer_s + u.extra_s(s, stages),
                                     slots[s].send_s + (s > 0 ? slots[s - 1].back_send_s : 0), k.overlap_p2p_comm);
      t.bottleneck_s = std::max(t.bottleneck_s, time);
      t.sum_s += time;
      const double f = inflight_factor(s, stages, r.micro_batches, v);
      const double mem = r.stages[s].layers * (u.weight_bytes * weight_scale + f * u.act_bytes) +
                         u.extra_bytes(s, stages, weight_scale);
      e.min_headroom_fraction = std::min(e.min_headroom_fraction, 1.0 - mem / u.capacity_bytes);
      ref.push_back(StageRef{r.stages[s].gpus[0], r.stages[s].layers, r.stages[s].tp(), time});
    }
    refs.push_back(std::move(ref));
    const double rt = replica_time_s(t, r.micro_batches, v);
    if (rt > slowest) slowest = rt, slowest_replica = static_cast<int>(refs.size()) - 1;
  }
  if (e.min_headroom_fraction < 1.0 - memory_fraction) {
    e.reason = "estimated memory exceeds the GPU's";
    return e;
  }
  e.step_s = slowest + std::max(grad_sync_estimate_s(cluster, workload, plan, refs, slowest_replica),
                                 tied_embedding_sync_estimate_s(cluster, workload, plan));
  if (!std::isfinite(e.step_s) || e.step_s <= 0) {
    e.reason = "no route between some of the plan's GPUs";
    return e;
  }
  e.tokens_per_s = tokens_per_step(workload) / e.step_s;
  e.price_per_hour = nodes_price_per_hour(cluster, gpus_used, spot);
  e.ok = true;
  return e;
}

}  // namespace hetsim::models::planner
