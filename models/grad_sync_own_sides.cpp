// SPDX-License-Identifier: Apache-2.0
// The own sides of a GPU in several data-parallel groups (grad_sync_own_sides.hpp).
#include "grad_sync_own_sides.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "topology.hpp"

namespace hetsim::models::grad_sync_detail {

OwnSides own_sides_of(const Cluster& c, const int* members, int count, int i) {
  const int x = members[i], next = members[(i + 1) % count], previous = members[(i + count - 1) % count];
  const int node = c.gpus[x].node;
  const bool mesh = c.node_types[c.nodes[node].node_type].intra.mesh;
  OwnSides sides{};
  if (c.gpus[next].node != node) sides.out = host_staging(c, x, next).staged ? kHostOut : kOnRails;
  else sides.out = mesh ? 2 * next : kSwitchOut;
  if (c.gpus[previous].node != node) sides.in = host_staging(c, x, previous).staged ? kHostIn : kOnRails;
  else sides.in = mesh ? 2 * previous + 1 : kSwitchIn;
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
