// SPDX-License-Identifier: Apache-2.0
// The own sides of a GPU in several data-parallel groups at once (grad_sync_cost.cpp GradSync,
// stages in several groups): which of its links each group's ring uses at it, and a queue of the
// groups' buckets per such link.
//
// Why: a GPU's groups inside its node and those that leave it through its NIC use different
// hardware (its switch port or mesh links, its NIC, each direction of them), and run side by side;
// its NIC is a rail of SyncRails (grad_sync_rails.hpp), shared fairly by the groups that cross
// it. A MI300X in eight cross-vendor groups through its NIC and two groups with its xGMI peers had
// all their buckets in one queue: 0.37 s of sync where the simulator's flows take 0.17 s
// (tests/sim SegmentSync.AGpusGroupsInsideItsNodeAndThroughItsNicRunSideBySide).
#pragma once
#include <cstddef>
#include <vector>

#include "cluster.hpp"
#include "scratch_vector.hpp"
#include "step_cost.hpp"

namespace hetsim::models::grad_sync_detail {

/// The sides of its GPU that member i of the ring `members` (count of them) uses: out, to send its
/// share to the next member, and in, to receive from the previous one. Inside its node, its port
/// into the node's switch (kSwitchOut, kSwitchIn), or on a mesh (xGMI) the link to the next member
/// (2 x its GPU index: a link per peer) and from the previous one (2 x that index + 1). Across
/// nodes, its NIC rail, which SyncRails prices with every group that crosses it (kOnRails: not
/// queued here), and for a host-staged path between vendors also its link to the host (kHostOut,
/// kHostIn), which the rails do not carry. Each direction of a port or link carries at its rate.
inline constexpr int kHostOut = -1, kHostIn = -2, kSwitchOut = -3, kSwitchIn = -4, kOnRails = -5;
struct OwnSides {
  int out, in;
};
OwnSides own_sides_of(const Cluster& c, const int* members, int count, int i);

/// Per slot (replica x stage), the buckets its own sides carry, each side a single server that
/// sends them in the order they become ready (serial_buckets_end_s).
class OwnSideQueues {
 public:
  explicit OwnSideQueues(std::size_t slots) : queues_(slots) {}
  bool empty() const { return queues_.empty(); }
  std::size_t size() const { return queues_.size(); }
  /// A bucket through both of a member's sides.
  void add(std::size_t slot, OwnSides sides, SyncBucket bucket) {
    for (const int side : {sides.out, sides.in})
      if (side != kOnRails) queue(slot, side).push_back(bucket);
  }
  /// When slot's sides have sent their buckets: the slowest side; -infinity without buckets.
  /// Reorders the slot's buckets.
  double end_s(std::size_t slot);

 private:
  struct SideQueue {
    int side;
    std::vector<SyncBucket> buckets;
  };
  std::vector<SyncBucket>& queue(std::size_t slot, int side);
  ScratchVector<std::vector<SideQueue>> queues_;  ///< [slot]: a queue per side it uses (a few)
};

}  // namespace hetsim::models::grad_sync_detail
