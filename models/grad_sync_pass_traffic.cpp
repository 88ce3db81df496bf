// SPDX-License-Identifier: Apache-2.0
// ZeRO-2/3's data-parallel traffic inside the micro-batches' passes: how much it lengthens the
// step beyond the slowest replica's pipeline (grad_sync_cost.cpp GradSync adds it).
#include <algorithm>
#include <utility>
#include <vector>

#include "comm_cost.hpp"
#include "grad_sync_parts.hpp"
#include "step_cost.hpp"

namespace hetsim::models::grad_sync_detail {

namespace {

/// ZeRO-2, each stage in one group: each slot's reduce-scatter was priced with the node's sending
/// GPUs sharing its NICs evenly for all of its bytes (GradSync::add_slot_loads). The
/// node's stages reduce-scatter bytes of their own sizes, and under processor sharing a stage is
/// done once it has moved its bytes beside, from each other stage on the node, at most as many
/// (Kleinrock's processor sharing, jobs started together): its time over the node's NIC is the
/// sum over the node's stages of min(theirs, its own) at their GPUs' share of the node. Four
/// boxes each holding a two-stage TP-4 pipeline (14 | 10 layers, consumer-4090-a100, gpt3-1.3b,
/// 64 micro-batches): the larger stage took 2 T_0 for the NIC's T_0 + T_1 (66.3 s predicted
/// against 58.1 s simulated). Priced at the node of the stage's first GPU.
std::vector<double> shared_nic_scatter_s(const StepInput& in, const SlotLoad* load) {
  const Plan& plan = in.plan;
  const Cluster& c = in.cluster;
  const std::size_t slots = static_cast<std::size_t>(plan.dp()) * in.max_pp;
  std::vector<double> out(slots);
  for (std::size_t k = 0; k < slots; ++k) out[k] = load[k].rs_s;
  // The plan's GPUs by node (sorted: no table as long as the cluster's nodes), and each slot's
  // first GPU's node, where it is priced.
  std::vector<std::pair<int, std::size_t>> by_node;  // (node, slot) per GPU
  std::vector<int> front_node(slots, -1);
  for (int r = 0; r < plan.dp(); ++r)
    for (std::size_t s = 0; s < plan.replicas[r].stages.size(); ++s) {
      const std::size_t slot = static_cast<std::size_t>(r) * in.max_pp + s;
      const std::vector<int>& gpus = plan.replicas[r].stages[s].gpus;
      front_node[slot] = c.gpus[gpus.front()].node;
      for (int g : gpus) by_node.push_back({c.gpus[g].node, slot});
    }
  std::sort(by_node.begin(), by_node.end());
  std::vector<std::pair<std::size_t, int>> on_node;  // the current node's (slot, its GPUs there)
  for (std::size_t i = 0; i < by_node.size();) {
    const int node = by_node[i].first;
    on_node.clear();
    for (; i < by_node.size() && by_node[i].first == node; ++i) {
      if (on_node.empty() || on_node.back().first != by_node[i].second) on_node.push_back({by_node[i].second, 0});
      ++on_node.back().second;
    }
    if (on_node.size() < 2) continue;
    int gpus = 0;
    for (const auto& [slot, count] : on_node) gpus += count;
    for (const auto& [slot, count] : on_node) {
      if (front_node[slot] != node) continue;
      double time_s = 0;
      for (const auto& [other, other_count] : on_node) time_s += std::min(load[other].rs_s, load[slot].rs_s) * other_count / gpus;
      out[slot] = time_s;
    }
  }
  return out;
}

}  // namespace

/// ZeRO-2/3: the micro-batches' passes move the data-parallel traffic (pass_traffic: ZeRO-3
/// gathers the weights and reduce-scatters the gradients in every micro-batch, ZeRO-2
/// reduce-scatters the gradients in all but the last, whose reduction ends the step as
/// ZeRO-1's does), which the pass's compute hides when prefetched or overlapped
/// (pass_traffic_hidden): a stage's pass lasts max(compute, traffic), its pipeline send after
/// it, so its time per micro-batch grows from t = f + b (sends included) to c = max(f_c, forward
/// traffic) + (f - f_c) + max(b_c, backward traffic) + (b - b_c), f_c and b_c the passes' compute
/// (not hidden: c = f + b + all the traffic). In the steady state a pipeline moves at its
/// slowest stage, max_s c_s per micro-batch instead of max_s t_s: a stage whose passes,
/// lengthened by their traffic, still fit the bottleneck's cadence costs nothing (its slack
/// absorbs them). So the replica's step grows by m' * (max_s c_s - max_s t_s), m' the
/// micro-batches with pass traffic (micro_batches_with_pass_traffic), the fill and drain kept at
/// their compute times (an approximation: the simulator, which lengthens every pass, is a mean
/// 2.0% away on 31 ZeRO-3 stress plans, 8.4% at most). One stage: m' times the passes' excess.
/// The slowest replica sets the pace; ZeRO-3 leaves nothing for the end of the step, ZeRO-2 its
/// last reduction and its weights' all-gather (GradSync::sync_segment).
double pass_traffic_exposed_s(const StepInput& in, const PassTraffic& traffic, const SlotLoad* load, bool node_shared_by_all) {
  const Plan& plan = in.plan;
  const int dp = plan.dp();
  const int max_pp = in.max_pp;
  double exposed_s = 0;
  // ZeRO-2 (reduce-scatters only) with every GPU of a node in the plan: see shared_nic_scatter_s.
  const bool by_sharing = node_shared_by_all && traffic.forward_gathers == 0 && traffic.backward_gathers == 0;
  const std::vector<double> scatter_s = by_sharing ? shared_nic_scatter_s(in, load) : std::vector<double>();
  const bool hidden = pass_traffic_hidden(plan);
  const double slowest = in.replica_time_s[in.slowest_replica];
  for (int r = 0; r < dp; ++r) {
    const int pp = static_cast<int>(plan.replicas[r].stages.size());
    double pace = 0, pace_with_traffic = 0;
    for (int s = 0; s < pp; ++s) {
      const std::size_t slot = static_cast<std::size_t>(r) * max_pp + s;
      const SlotLoad& l = load[slot];
      const double f = in.times[slot].forward_s, b = in.times[slot].backward_s;
      // The passes' compute hides the traffic, not their pipeline sends (which follow the pass):
      // hidden behind the backward and its send, a ZeRO-2 reduce-scatter longer than the
      // backward alone was free where the simulator, which runs it beside the backward, delayed
      // the send (consumer-4090-a100 pp4 dp8 ZeRO-2: 7.73 s, the ZeRO-1 time, against 8.21 s;
      // s52 engine agreement hunt).
      // Nor the TP collectives when they share its links (SlotLoad::traffic_on_tp_links): the
      // link carries both, one after the other, while the GPU computes (consumer-4090-a100 TP 2
      // DP 2 in one box, ZeRO-3: 52.9 s, below the 57 s its PCIe ports were busy in the
      // simulator's 65.8 s; s62 sanity hunt).
      const StageCost& c = in.costs[in.shape_of[slot]];
      const auto hiding_s = [&](const PassCost& pass) {
        return l.traffic_on_tp_links ? pass.gpu_s + pass.stall_s : pass.wall_s();
      };
      const double f_compute = std::min(f, hiding_s(c.forward)), b_compute = std::min(b, hiding_s(c.backward));
      const double forward_traffic = traffic.forward_gathers * l.ag_s;
      const double backward_traffic = traffic.backward_gathers * l.ag_s +
                                      traffic.backward_reduce_scatters * (by_sharing ? scatter_s[slot] : l.rs_s);
      pace = std::max(pace, f + b);
      const double with_traffic =
          hidden ? std::max(f_compute, forward_traffic) + (f - f_compute) + std::max(b_compute, backward_traffic) +
                       (b - b_compute)
                 : f + forward_traffic + b + backward_traffic;
      pace_with_traffic = std::max(pace_with_traffic, with_traffic);
    }
    const double grows =
        micro_batches_with_pass_traffic(plan.zero, plan.replicas[r].micro_batches) * (pace_with_traffic - pace);
    exposed_s = std::max(exposed_s, in.replica_time_s[r] + grows - slowest);
  }
  return exposed_s;
}

}  // namespace hetsim::models::grad_sync_detail
