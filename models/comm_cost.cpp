// SPDX-License-Identifier: Apache-2.0
// Collective and point-to-point time from a group's link figures (alpha-beta model).
#include "comm_cost.hpp"

#include <algorithm>
#include <cmath>

namespace hetsim::models {

namespace {

/// True when the group spans nodes and its inter-node hops have their own latency figure.
bool spans_nodes(const GroupCost& g) { return g.nodes > 1 && g.inter_latency_s > 0; }

}  // namespace

double ring_latency_s(CollectiveKind kind, const GroupCost& g) {
  const double own_hops_s = kind == CollectiveKind::kAllReduce ? g.ring_allreduce_latency_s : g.ring_pass_latency_s;
  if (own_hops_s > 0) return own_hops_s;
  const double passes = kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
  const double steps = passes * (g.size - 1);
  if (!spans_nodes(g)) return steps * g.hop_latency_s;
  // A pipelined chunk crosses each of the N-1 node boundaries once per pass; its other steps
  // stay inside nodes (NCCL src/graph/tuning.cc: nInterSteps = 2(nNodes-1) for all-reduce). The
  // crossings it passes are the ring's own, at their mean latency (GroupCost::inter_latency_mean_s).
  const double inter_steps = std::min(steps, passes * (g.nodes - 1));
  return (steps - inter_steps) * g.intra_latency_s + inter_steps * g.inter_latency_mean_s;
}

double tree_latency_s(const GroupCost& g) {
  if (!spans_nodes(g)) return 2.0 * (g.size - 1) * g.hop_latency_s;
  // Up and down a chain of the members of a node, then a binary tree of depth log2(N) between
  // nodes (NCCL src/graph/tuning.cc: 2 ((nRanks/nNodes - 1) intraLat + log2i(nNodes) interLat)).
  const double per_node = static_cast<double>(g.size) / g.nodes;
  const double depth = std::ceil(std::log2(static_cast<double>(g.nodes)));
  return 2.0 * ((per_node - 1) * g.intra_latency_s + depth * g.inter_latency_s);
}

double ring_time(CollectiveKind kind, double size_bytes, const GroupCost& g) {
  const int n = g.size;
  if (n <= 1 || size_bytes <= 0) return 0;
  const double steps = kind == CollectiveKind::kAllReduce ? 2.0 * (n - 1) : 1.0 * (n - 1);
  return kCollectiveLaunch_s + steps / n * size_bytes / g.bus_bandwidth_Bps + ring_latency_s(kind, g);
}

double tree_time(CollectiveKind kind, double size_bytes, const GroupCost& g) {
  const int n = g.size;
  if (n <= 1 || size_bytes <= 0) return 0;
  if (kind != CollectiveKind::kAllReduce) return ring_time(kind, size_bytes, g);
  // Two mirrored binary trees, half the data each (NCCL's double binary tree; Sanders, Speck and
  // Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and scan", Parallel
  // Computing 2009): with three or more members some member sends its halves up both trees in
  // the reduction and its two children's halves down in the broadcast, the whole tensor in each
  // phase; of two members each is the other's child in one tree only, half the tensor a phase
  // (sim/collective_flows.cpp tree_all_reduce moves the same).
  const double phases_of_tensor = n == 2 ? 1.0 : 2.0;
  return kCollectiveLaunch_s + phases_of_tensor * size_bytes / g.bus_bandwidth_Bps + tree_latency_s(g);
}

double hierarchical_time(CollectiveKind kind, double size_bytes, const GroupCost& g) {
  const int n = g.size;
  if (n <= 1 || size_bytes <= 0) return 0;
  // Two-level all-reduce only (Horovod's hierarchical allreduce; Jia et al., "Highly scalable
  // deep learning training system with mixed-precision", arXiv 1807.11205): NCCL's and RCCL's
  // reduce-scatter and all-gather are rings, as tree_time's are, and the simulator's too (it
  // priced a ZeRO-1 sync asked to be hierarchical at the ring's 0.36 s where this said 0.80 s).
  if (kind != CollectiveKind::kAllReduce) return ring_time(kind, size_bytes, g);
  if (g.nodes <= 1 || g.inter_bandwidth_Bps <= 0) return ring_time(kind, size_bytes, g);
  const int k = std::max(1, g.min_per_node);
  const int nodes = g.nodes;
  const double intra_factor = (k - 1.0) / k;
  const double inter_factor = (nodes - 1.0) / nodes;
  const double ar = kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
  // intra RS (+ intra AG for all-reduce), inter phase on S/k per member.
  double t = kCollectiveLaunch_s;
  if (k > 1) t += ar * (intra_factor * size_bytes / g.intra_bandwidth_Bps + (k - 1) * g.intra_latency_s);
  t += ar * (inter_factor * size_bytes / k / g.inter_bandwidth_Bps + (nodes - 1) * g.inter_latency_mean_s);
  return t;
}

GradSyncAlgorithm resolve_algorithm(CollectiveKind kind, double size_bytes, const GroupCost& g,
                                    GradSyncAlgorithm requested) {
  if (requested != GradSyncAlgorithm::kAuto) return requested;
  // First of equals: the ring (tree_time falls back to it for all-gather / reduce-scatter).
  return tree_time(kind, size_bytes, g) < ring_time(kind, size_bytes, g) ? GradSyncAlgorithm::kTree
                                                                         : GradSyncAlgorithm::kRing;
}

double collective_time(CollectiveKind kind, double size_bytes, const GroupCost& g, GradSyncAlgorithm algorithm) {
  switch (resolve_algorithm(kind, size_bytes, g, algorithm)) {
    case GradSyncAlgorithm::kTree: return tree_time(kind, size_bytes, g);
    case GradSyncAlgorithm::kHierarchical: return hierarchical_time(kind, size_bytes, g);
    case GradSyncAlgorithm::kRing:
    case GradSyncAlgorithm::kAuto: break;
  }
  return ring_time(kind, size_bytes, g);
}

PassTraffic pass_traffic(int zero, Recompute recompute) {
  PassTraffic t;
  if (zero >= 2) t.backward_reduce_scatters = 1;
  if (zero >= 3) {
    t.forward_gathers = 1;
    t.backward_gathers = recompute == Recompute::kFull ? 2 : 1;
  }
  return t;
}

bool pass_traffic_hidden(const Plan& plan) { return plan.zero >= 3 ? plan.zero3_prefetch : plan.overlap_grad_sync; }

int micro_batches_with_pass_traffic(int zero, int micro_batches) {
  if (zero >= 3) return micro_batches;
  return zero == 2 ? std::max(0, micro_batches - 1) : 0;
}

bool micro_batch_carries_pass_traffic(int zero, int micro_batch, int micro_batches) {
  return micro_batch < micro_batches_with_pass_traffic(zero, micro_batches);
}

double sharded_collective_time(CollectiveKind kind, double size_bytes, const GroupCost& g, ShardedCollectives how) {
  if (how == ShardedCollectives::kNodeNics) return ring_time(kind, size_bytes, g);
  GroupCost per_member = g;
  if (g.nodes > 1 && g.inter_bandwidth_Bps > 0)
    per_member.bus_bandwidth_Bps = std::min(g.bus_bandwidth_Bps, g.inter_bandwidth_Bps);
  return ring_time(kind, size_bytes, per_member);
}

double p2p_time(double size_bytes, const PathCost& path) {
  if (size_bytes <= 0) return 0;
  return path.latency_s + size_bytes / path.bandwidth_Bps;
}

}  // namespace hetsim::models
