// SPDX-License-Identifier: Apache-2.0
// Egress cost of a step (egress_cost.hpp).
#include "egress_cost.hpp"

#include <algorithm>

#include "comm_cost.hpp"
#include "dp_segments.hpp"
#include "step_cost.hpp"
#include "topology.hpp"

namespace hetsim::models {

namespace {

/// Dollars per byte between the zones of two GPUs: 0 inside one zone or without a priced link.
double price_per_byte(const Cluster& c, int gpu_a, int gpu_b) {
  const int za = c.nodes[c.node_of_gpu(gpu_a)].zone, zb = c.nodes[c.node_of_gpu(gpu_b)].zone;
  if (za == zb) return 0;
  const InterZoneLink* link = c.link_between(za, zb);
  return link ? link->egress_price_per_byte : 0;
}

}  // namespace

double egress_dollars_per_step(const Cluster& c, const Workload& w, const Plan& plan,
                               const std::vector<double>& stage_params, int max_pp, double boundary) {
  bool priced = false;
  for (const InterZoneLink& l : c.links) priced = priced || l.egress_price_per_byte > 0;
  if (!priced || c.zones.size() < 2) return 0;
  const ModelSpec& m = w.model;
  const double weight_bpp = activation_bytes(w.training.dtype);
  const double grad_bpp = grad_sync_bytes_per_param(w.training);
  const int v = std::max(1, plan.interleave);
  double dollars = 0;

  // Pipeline: forward activations and backward gradients of every micro-batch and chunk.
  for (const Replica& rep : plan.replicas) {
    const int pp = static_cast<int>(rep.stages.size());
    for (int s = 0; s < pp; ++s) {
      const bool wrap = s == pp - 1;
      if (wrap && v == 1) continue;
      const int sends = wrap ? v - 1 : v;
      const double price = price_per_byte(c, rep.stages[s].gpus.front(), rep.stages[wrap ? 0 : s + 1].gpus.front());
      dollars += price * 2.0 * rep.micro_batches * sends * boundary;
    }
  }

  // Data parallelism: one ring per (segment, TP rank) over the replicas, in node order; a
  // segment is stage s of every replica when they split the model alike (dp_segments.hpp).
  const int dp = plan.dp();
  if (dp > 1) {
    const PassTraffic t = pass_traffic(plan.zero, plan.recompute);
    const DpSegments segments(plan, m);
    std::vector<int> members, stage;  // replicas holding segment k, and their stage holding it
    std::vector<int> ring;            // one shard's ring of GPUs
    for (int k = 0; k < segments.count(); ++k) {
      members.clear();
      stage.clear();
      for (int r = 0; r < dp; ++r)
        if (const int s = segments.stage_of(k, r); s >= 0) members.push_back(r), stage.push_back(s);
      const int n = static_cast<int>(members.size());
      if (n < 2) continue;
      GroupShard shard;  // one ring per shard, as step_cost prices them
      for (int i = 0; i < n; ++i) {
        const int r = members[i];
        shard.add(plan.replicas[r].stages[stage[i]].tp(),
                  segments.aligned() ? stage_params[static_cast<std::size_t>(r) * max_pp + stage[i]]
                                     : segments.params(k, r, m));
      }
      const double params = shard.params;
      const double share = (n - 1.0) / n;
      double bytes_per_hop = 2.0 * share * params * grad_bpp;  // ZeRO 0: all-reduce
      if (plan.zero >= 1) {
        // Every micro-batch's passes (pass_traffic), then at the end of the step the gradients'
        // reduce-scatter where no pass did it (ZeRO-1) and the updated weights' all-gather where
        // the weights stay whole (ZeRO-1/2).
        const double mb = plan.replicas[members.front()].micro_batches;
        const double per_pass =
            (t.forward_gathers + t.backward_gathers) * weight_bpp + t.backward_reduce_scatters * grad_bpp;
        const double end_of_step = (t.backward_reduce_scatters > 0 ? 0.0 : grad_bpp) + (plan.zero <= 2 ? weight_bpp : 0.0);
        bytes_per_hop = share * params * (mb * per_pass + end_of_step);
      }
      for (int j = 0; j < shard.shards; ++j) {
        // The ring NCCL builds, each node's members in a row, as the step's time prices it
        // (grad_sync_cost): in replica order, replicas alternating between zones crossed the
        // link at every hop, and the same GPUs listed in another order cost another figure.
        ring.clear();
        for (int i = 0; i < n; ++i) {
          const Stage& a = plan.replicas[members[i]].stages[stage[i]];
          ring.push_back(a.gpus[shard.member_rank(j, a.tp())]);
        }
        order_ring_by_node(c, ring.data(), n);
        for (int i = 0; i < n; ++i) dollars += price_per_byte(c, ring[i], ring[(i + 1) % n]) * bytes_per_hop;
      }
    }
  }

  // Tied embeddings: the first and the last stage all-reduce the embedding's gradients.
  if (m.tied_embeddings)
    for (const Replica& rep : plan.replicas) {
      if (rep.stages.size() < 2) continue;
      const double price = price_per_byte(c, rep.stages.front().gpus.front(), rep.stages.back().gpus.front());
      const double embedding = static_cast<double>(m.vocab) * m.hidden * grad_bpp;  // every TP rank's slice
      dollars += price * 2.0 * embedding;  // a two-member ring moves the whole gradient each way
    }
  return dollars;
}

}  // namespace hetsim::models
