// SPDX-License-Identifier: Apache-2.0
// The own sides of a GPU in several data-parallel groups (grad_sync_own_sides.hpp).
#include "grad_sync_own_sides.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "topology.hpp"

namespace hetsim::models::grad_sync_detail {

namespace {

/// Channels c in [0, k) that land on position t of a node's m members (c mod m == t).
int channels_at(int k, int m, int t) { return t < k ? (k - 1 - t) / m + 1 : 0; }

}  // namespace

OwnSides own_sides_of(const Cluster& c, const int* members, int count, int i, bool node_shared) {
  const auto at = [&](int k) { return members[((k % count) + count) % count]; };
  const auto node_at = [&](int k) { return c.gpus[at(k)].node; };
  const int x = members[i], node = c.gpus[x].node;
  const NodeType& type = c.node_types[c.nodes[node].node_type];
  const bool mesh = type.intra.mesh;
  const auto out_inside = [&](int to) { return mesh ? 2 * to : kSwitchOut; };
  const auto in_inside = [&](int from) { return mesh ? 2 * from + 1 : kSwitchIn; };
  // A mesh link is one peer's share of the GPU's fabric (the simulator's pair links); a switch
  // port carries the GPU's whole figure.
  const double inside_Bps = intra_bandwidth_Bps(type, 2);
  const double host_Bps = type.host_link_Bps * kHostLinkEfficiency;
  OwnSides sides;
  // Its node's members in ring order: `first` (an index, may be below 0: the ring wraps) for m.
  int first = i, m = 1;
  while (m < count && node_at(first - 1) == node) --first, ++m;
  while (m < count && node_at(first + m) == node) ++m;
  const int t = i - first;  // its place among them
  // Who sends to a next member inside the node: all of them when the whole ring is inside, else
  // all but the run's last (whose next member is on the next node).
  const auto sends_inside = [&](int place) { return m == count || place + 1 < m; };
  if (mesh && m > 2 && type.gpus_per_node > 2 && m - 1 <= kMaxMeshPeers) {
    // On a mesh, a hop inside the node is spread over the links to every member there (RCCL's
    // rings over an xGMI mesh take different peer orders per channel), 1/(m-1) of it on each, as
    // the simulator lays it out (sim/collective_flows.cpp spread_over_mesh_links); so a member
    // sends on every link to its node's members and receives on every link from those that send.
    const double share = 1.0 / (m - 1);
    for (int u = 0; u < m; ++u) {
      if (u == t) continue;
      if (sends_inside(t)) sides.add(out_inside(at(first + u)), share, inside_Bps);
      if (sends_inside(u)) sides.add(in_inside(at(first + u)), share, inside_Bps);
    }
  } else {
    if (sends_inside(t)) sides.add(out_inside(at(i + 1)), 1.0, inside_Bps);
    if (m == count || t > 0) sides.add(in_inside(at(i - 1)), 1.0, inside_Bps);
  }
  if (m == count) return sides;  // the whole ring inside its node
  // The neighbouring nodes' members: those before `first`, and those after its node's last.
  const int before = first - 1, after = first + m;
  int a = 1, b = 1;
  while (a < count - m && node_at(before - a) == node_at(before)) ++a;
  while (b < count - m && node_at(after + b) == node_at(after)) ++b;
  const int out_side = host_staging(c, x, at(after)).staged ? kHostOut : kOnRails;
  const int in_side = host_staging(c, x, at(before)).staged ? kHostIn : kOnRails;
  if (node_shared) {
    if (t + 1 == m) sides.add(out_side, 1.0, host_Bps);
    if (t == 0) sides.add(in_side, 1.0, host_Bps);
  } else {
    const int k_out = std::max(m, b), k_in = std::max(a, m);
    sides.add(out_side, static_cast<double>(channels_at(k_out, m, t)) / k_out, host_Bps);
    sides.add(in_side, static_cast<double>(channels_at(k_in, m, t)) / k_in, host_Bps);
  }
  return sides;
}

std::vector<SyncBucket>& OwnSideQueues::queue(std::size_t slot, int side) {
  std::vector<SideQueue>& queues = queues_[slot];
  for (SideQueue& q : queues)
    if (q.side == side) return q.buckets;
  return queues.emplace_back(SideQueue{side, {}}).buckets;
}

double OwnSideQueues::end_s(std::size_t slot) {
  double end = -std::numeric_limits<double>::infinity();
  for (SideQueue& q : queues_[slot])
    end = std::max(end, serial_buckets_end_s(q.buckets.data(), q.buckets.data() + q.buckets.size()));
  return end;
}

}  // namespace hetsim::models::grad_sync_detail
