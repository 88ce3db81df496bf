// SPDX-License-Identifier: Apache-2.0
// The own sides of a GPU in several data-parallel groups (grad_sync_own_sides.hpp).
#include "grad_sync_own_sides.hpp"

#include <algorithm>
#include <limits>

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

double OwnSideQueues::end_s(std::size_t slot) {
  std::vector<SyncBucket>& own = buckets_[slot];
  const std::vector<int>& sides = sides_[slot];
  if (own.empty()) return -std::numeric_limits<double>::infinity();
  if (std::all_of(sides.begin(), sides.end(), [&](int s) { return s == sides.front(); }))
    return serial_buckets_end_s(own.data(), own.data() + own.size());  // the usual case: one side
  double end = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < sides.size(); ++i) {
    if (std::find(sides.begin(), sides.begin() + static_cast<std::ptrdiff_t>(i), sides[i]) !=
        sides.begin() + static_cast<std::ptrdiff_t>(i))
      continue;  // a side already done
    one_side_.clear();
    for (std::size_t j = i; j < sides.size(); ++j)
      if (sides[j] == sides[i]) one_side_.push_back(own[j]);
    end = std::max(end, serial_buckets_end_s(one_side_.data(), one_side_.data() + one_side_.size()));
  }
  return end;
}

}  // namespace hetsim::models::grad_sync_detail
