// SPDX-License-Identifier: Apache-2.0
// Collective and point-to-point time from a group's link figures (alpha-beta model).
#include "comm_cost.hpp"

#include <algorithm>
#include <cmath>

namespace hetsim::models {

double ring_time(CollectiveKind kind, double size_bytes, const GroupCost& g) {
  const int n = g.size;
  if (n <= 1 || size_bytes <= 0) return 0;
  const double steps = kind == CollectiveKind::kAllReduce ? 2.0 * (n - 1) : 1.0 * (n - 1);
  return kCollectiveLaunch_s + steps / n * size_bytes / g.bus_bandwidth_Bps + steps * g.hop_latency_s;
}

double tree_time(CollectiveKind kind, double size_bytes, const GroupCost& g) {
  const int n = g.size;
  if (n <= 1 || size_bytes <= 0) return 0;
  if (kind != CollectiveKind::kAllReduce) return ring_time(kind, size_bytes, g);
  const double depth = std::ceil(std::log2(static_cast<double>(n)));
  return kCollectiveLaunch_s + 2.0 * size_bytes / g.bus_bandwidth_Bps + 2.0 * depth * g.hop_latency_s;
}

double hierarchical_time(CollectiveKind kind, double size_bytes, const GroupCost& g) {
  const int n = g.size;
  if (n <= 1 || size_bytes <= 0) return 0;
  if (g.nodes <= 1 || g.inter_bandwidth_Bps <= 0) return ring_time(kind, size_bytes, g);
  const int k = std::max(1, g.min_per_node);
  const int nodes = g.nodes;
  const double intra_factor = (k - 1.0) / k;
  const double inter_factor = (nodes - 1.0) / nodes;
  const double ar = kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
  // intra RS (+ intra AG for all-reduce), inter phase on S/k per member.
  double t = kCollectiveLaunch_s;
  if (k > 1) t += ar * (intra_factor * size_bytes / g.intra_bandwidth_Bps + (k - 1) * g.intra_latency_s);
  t += ar * (inter_factor * size_bytes / k / g.inter_bandwidth_Bps + (nodes - 1) * g.inter_latency_s);
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

Zero3Traffic zero3_traffic(Recompute recompute) {
  Zero3Traffic t;
  if (recompute == Recompute::kFull) t.backward_gathers = 2;
  return t;
}

double zero3_collective_time(CollectiveKind kind, double size_bytes, const GroupCost& g) {
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
