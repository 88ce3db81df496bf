// SPDX-License-Identifier: Apache-2.0
// The parts of the gradient sync's evaluation (grad_sync_cost.cpp GradSync) that hold no logic of
// the end-of-step sync itself: the memo of the last DP group's figures, what the groups put on
// each stage, the collective times of the last group and size, and ZeRO-2/3's traffic inside the
// passes (grad_sync_pass_traffic.cpp).
#pragma once
#include <algorithm>
#include <limits>
#include <vector>

#include "cluster.hpp"
#include "comm_cost.hpp"
#include "dp_segments.hpp"
#include "scratch_vector.hpp"
#include "step_cost.hpp"
#include "topology.hpp"

namespace hetsim::models::grad_sync_detail {

/// The last DP group's figures and what they depend on when its members sit on strictly
/// increasing nodes (one member per node): group_cost() is then a function of the members'
/// node types and zones alone, so the groups of a uniform plan's stages share one evaluation.
struct DpGroupMemo {
  ScratchVector<int> signature;  ///< node type, zone per member; empty when nothing is kept
  std::vector<double> wan;     ///< the WAN shares it was evaluated with (they differ per segment)
  GroupCost cost;
  int generation = 0;          ///< counts the evaluations of `cost`
};

inline const GroupCost& dp_group_cost(const Cluster& c, const int* members, int count, DpGroupMemo& memo,
                                      const DpNicChannels* channels, const std::vector<double>* wan_senders) {
  if (channels) {
    // Each node's NICs shared by its own count of senders, each GPU's rail by its channels
    // (GradSync's constructor).
    memo.cost = group_cost(c, members, count, 0, wan_senders, &channels->per_node, &channels->on_rail_of_gpu);
    ++memo.generation;
    memo.signature.clear();
    return memo.cost;
  }
  // Compared with the kept signature on the way; the new one is written only on a miss.
  bool increasing = true;
  bool same = !memo.signature.empty() && memo.signature.size() == 2 * static_cast<std::size_t>(count);
  int prev_node = -1;
  for (int i = 0; i < count && increasing; ++i) {
    const int node = c.gpus[members[i]].node;
    increasing = increasing && node > prev_node;
    prev_node = node;
    same = same && memo.signature[2 * i] == c.nodes[node].node_type && memo.signature[2 * i + 1] == c.nodes[node].zone;
  }
  if (increasing && same && (!wan_senders || *wan_senders == memo.wan)) return memo.cost;
  memo.cost = group_cost(c, members, count, 0, wan_senders);
  if (wan_senders) memo.wan = *wan_senders;
  ++memo.generation;
  memo.signature.clear();
  if (increasing) {
    for (int i = 0; i < count; ++i) {
      const Node& n = c.nodes[c.gpus[members[i]].node];
      memo.signature.push_back(n.node_type);
      memo.signature.push_back(n.zone);
    }
  }
  return memo.cost;
}

/// What the DP groups put on one stage's GPUs, kept when a stage can be in several groups
/// (segments of a non-aligned plan; a member of lower TP degree holds several shards, each in a
/// group of its own) and for ZeRO-3, whose traffic runs inside each replica's own passes.
/// A GPU's groups run side by side (separate communicators): they take as long as the slowest
/// of them, or as its own side of the rings lets all their bytes through, whichever is longer
/// (each group's time scaled by its bottleneck over that side: member_side_bandwidth_Bps). One
/// after the other, a lower-TP member would wait on each far side in turn.
/// `alone` scales a group's time to what it takes without the other groups that share its
/// members' sides (GradSync::add_slot_loads): their bytes are in each side's own_s.
struct Load {
  double own_s = 0, max_s = 0;
  void add(double group_s, double over_own_side, double weight, double alone = 1.0) {
    own_s += weight * group_s * over_own_side;
    max_s = std::max(max_s, group_s * alone);
  }
  double time_s() const { return std::max(own_s, max_s); }
};

/// One stage's loads. ZeRO-2/3 move a stage's gradients (ZeRO-3 also its weights) when its
/// layers run, its shards side by side. (A ZeRO-2/3 plan is aligned, one segment a stage: its
/// replicas share their stages, plan.hpp zero3_asymmetry; the predictor refuses the others
/// before this point.)
struct SlotLoad {
  Load gather;                        ///< ZeRO-1/2 weight all-gather at the end of the step
  /// End of the slowest of its groups' reductions, each alone (its buckets one after the other,
  /// each once ready: serial_buckets_end_s), from the slowest replica's end; its own side of the
  /// rings, all its groups' buckets together, is GradSync::slot_buckets.
  double groups_end_s = -std::numeric_limits<double>::infinity();
  Load segment_ag, segment_rs;        ///< ZeRO-3 gather and ZeRO-2/3 reduce-scatter of the current segment
  double ag_s = 0, rs_s = 0;          ///< per chunk pass: the segments' sum
  int groups = 0;
  /// Some data-parallel group of the stage moves its bytes over the links its TP collectives
  /// use: both inside the node (the GPU's own NVLink or PCIe port) or both across nodes (the
  /// node's NICs). Its ZeRO traffic then cannot hide behind the TP collectives, only behind the
  /// compute (pass_traffic_exposed_s).
  bool traffic_on_tp_links = false;
};

/// Collective times of the last group and sizes: the middle stages of a uniform plan have equal
/// groups (same memo generation) and equal parameter counts, hence equal times.
struct SyncTimes {
  int generation = -1;
  double grad_bytes = 0, gather_bytes = 0;
  int buckets = 1;
  double sync_s = 0;                   ///< gradient sync at the end of the step (ZeRO 0-2)
  double param_gather_s = 0;           ///< of which the ZeRO-1/2 weight all-gather
  double bucket_s = 0;                 ///< one bucket's reduction (overlapped sync)
  /// Of which the latency steps (the collective of one byte): a group alone pays them whatever
  /// its links' share, so only the rest scales to what it takes alone. (On a NIC rail, SyncRails,
  /// a bucket keeps them as bytes at its share: the groups of one segment run a bucket in step,
  /// so the link carries the bucket's latency once among them, and microseconds are nothing beside
  /// its bytes. On a WAN link they are tens of milliseconds a step and the link walks them as
  /// waits, in which groups out of step send: SyncRails::share_rail_in_phases.)
  double bucket_latency_s = 0;
  double gather_s = 0, scatter_s = 0;  ///< ZeRO-3 weight all-gather, gradient reduce-scatter
};

/// ZeRO-2/3: how far the passes' traffic (`traffic`, each stage's per-pass gathers and
/// reduce-scatters in `load`, [slot]) lengthens the step beyond the slowest replica's end
/// (grad_sync_pass_traffic.cpp).
/// `node_shared_by_all`: the loads were priced with every sending GPU of a node sharing its NICs
/// for all of their bytes (each stage in one group).
double pass_traffic_exposed_s(const StepInput& in, const PassTraffic& traffic, const SlotLoad* load, bool node_shared_by_all);

/// The gradient sync of a step priced once (grad_sync_cost.cpp): grad_sync_exposed_s without the
/// cycle of the gathers that start it; with `gathers`, each stage's weight all-gather is recorded
/// there ([replica * max_pp + stage]) and exposes nothing after the step (grad_sync_cycle.cpp).
double grad_sync_pass_s(const StepInput& in, PlanWork* work, GradSyncEnds* ends, std::vector<double>* gathers);

}  // namespace hetsim::models::grad_sync_detail
