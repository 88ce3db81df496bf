// SPDX-License-Identifier: Apache-2.0
// Cheap estimate of a concrete plan from the planner's unit costs and link estimates.
#include "planner_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hetsim::models::planner {

Knobs knobs_of(const Plan& plan) {
  Knobs k;
  k.micro_batch = plan.micro_batch;
  k.recompute = plan.recompute;
  k.sequence_parallel = plan.sequence_parallel;
  k.interleave = plan.schedule == Schedule::kInterleaved ? std::max(1, plan.interleave) : 1;
  k.zero = plan.zero;
  return k;
}

double stage_grad_bytes(const Workload& w, int layers, int tp, bool first) {
  const double params = layers * w.model.params_per_layer() + (first ? w.model.params_embedding() : 0.0);
  return params / std::max(1, tp) * dtype_bytes(w.training.dtype);
}

double tokens_per_step(const Workload& w) {
  return static_cast<double>(w.training.global_batch) * w.model.seq_len;
}

Estimate estimate_plan(const Cluster& cluster, const Workload& workload, const Plan& plan, UnitCostTable& costs,
                       double memory_fraction, bool spot) {
  Estimate e;
  const Knobs k = knobs_of(plan);
  const int v = k.interleave;
  const double act_bytes = static_cast<double>(workload.model.seq_len) * plan.micro_batch * workload.model.hidden *
                           dtype_bytes(workload.training.dtype);  // s*b*h per boundary (SC'21 sec. 4.1)
  const double weight_scale = 1.0 - zero_sharded_fraction(plan.zero) +
                              zero_sharded_fraction(plan.zero) / std::max(1, plan.dp());
  double slowest = 0;
  std::vector<int> gpus_used;
  for (const Replica& r : plan.replicas) {
    const int stages = static_cast<int>(r.stages.size());
    ReplicaTiming t;
    for (int s = 0; s < stages; ++s) {
      const Stage& st = r.stages[s];
      gpus_used.insert(gpus_used.end(), st.gpus.begin(), st.gpus.end());
      const int type = cluster.nodes[cluster.node_of_gpu(st.gpus[0])].node_type;
      const UnitCost& u = costs.get(type, st.tp(), k);
      if (!u.ok) {
        e.reason = u.reason;
        return e;
      }
      SlotCost slot{&u, weight_scale, 0.0};
      if (s + 1 < stages) {
        const Stage& next = r.stages[s + 1];
        slot.send_s = v * p2p_estimate_s(cluster, st.gpus[0], st.tp(), next.gpus[0], next.tp(), act_bytes, plan.dp());
      }
      const double time = st.layers * u.layer_s + u.fixed_s + (s == 0 ? u.first_s : 0) + (s == stages - 1 ? u.last_s : 0);
      t.bottleneck_s = std::max({t.bottleneck_s, time, slot.send_s});
      t.sum_s += time + 2 * slot.send_s;
      const double f = inflight_factor(s, stages, r.micro_batches, v);
      const double mem = st.layers * (u.weight_bytes * weight_scale + f * u.act_bytes) + u.fixed_bytes +
                         (s == 0 ? u.first_bytes : 0) + (s == stages - 1 ? u.last_bytes : 0);
      e.min_headroom_fraction = std::min(e.min_headroom_fraction, 1.0 - mem / u.capacity_bytes);
    }
    slowest = std::max(slowest, replica_time_s(t, r.micro_batches, v));
  }
  if (e.min_headroom_fraction < 1.0 - memory_fraction) {
    e.reason = "estimated memory exceeds the GPU's";
    return e;
  }
  // Gradient sync: the first stage of every replica (it holds the embedding too) as representative.
  double sync_s = 0;
  if (plan.dp() > 1) {
    std::vector<int> members;
    double bytes = 0;
    int rings = std::numeric_limits<int>::max();
    for (const Replica& r : plan.replicas) {
      members.push_back(r.stages[0].gpus[0]);
      int gpus = 0;
      for (const Stage& st : r.stages) {
        gpus += st.tp();
        bytes = std::max(bytes, stage_grad_bytes(workload, st.layers, st.tp(), &st == &r.stages[0]));
      }
      rings = std::min(rings, gpus);
    }
    sync_s = allreduce_estimate_s(cluster, members, bytes, rings) * (plan.zero >= 3 ? 1.5 : 1.0);
  }
  e.step_s = slowest + sync_s;
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
