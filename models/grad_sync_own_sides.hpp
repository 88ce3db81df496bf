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
#include <algorithm>
#include <cstddef>
#include <vector>

#include "cluster.hpp"
#include "scratch_vector.hpp"
#include "step_cost.hpp"

namespace hetsim::models::grad_sync_detail {

/// The sides of its GPU that member i of the ring `members` (count of them, each node's members in
/// a row: order_ring_by_node) uses, each with the part of the member's ring share of a bucket that
/// crosses it: out, to send to the next member, and in, to receive from the previous one. Inside
/// its node, its port into the node's switch (kSwitchOut, kSwitchIn), or on a mesh (xGMI) the link
/// to the next member (2 x its GPU index: a link per peer) and from the previous one (2 x that
/// index + 1), the whole share; with more than two members on the mesh node, 1/(m-1) on the link
/// to and from each of the m - 1 others (the hop spread over the mesh). Across nodes, its NIC rail, which SyncRails prices with every group
/// that crosses it (kOnRails: not kept here), and for a host-staged path between vendors also its
/// link to the host (kHostOut, kHostIn), which the rails do not carry. A ring that crosses a node
/// boundary at one member (`node_shared`, GroupCost::node_shared) puts the whole share there; else
/// the crossing is one NCCL channel per member of the larger side, the k channels landing on the
/// node's members in turn (as group_cost prices the hop and the simulator lays out its flows:
/// sim/collective_flows.cpp ring_steps), so a member takes the part of k that lands on it. Each
/// direction of a port or link carries at its own rate (`rate_Bps`: a mesh link's share of the
/// GPU's fabric, its switch port, its host link; efficiency applied).
inline constexpr int kHostOut = -1, kHostIn = -2, kSwitchOut = -3, kSwitchIn = -4, kOnRails = -5;
struct SideShare {
  int side;
  double share;     ///< of the member's ring share of each bucket
  double rate_Bps;  ///< what the side carries per second
};
/// A mesh node's members of one ring beyond which its hops inside the node are taken on the links
/// to the next and previous members alone (OwnSides' capacity), not spread over every link.
inline constexpr int kMaxMeshPeers = 15;
struct OwnSides {
  /// In and out across the node, and in and out on the links to each of its node's members.
  static constexpr int kMaxSides = 2 + 2 * kMaxMeshPeers;
  SideShare sides[kMaxSides]{};
  int count = 0;
  /// Keeps a side that is not the rails' and carries something.
  void add(int side, double share, double rate_Bps) {
    if (side != kOnRails && share > 0 && count < kMaxSides) sides[count++] = {side, share, rate_Bps};
  }
};
OwnSides own_sides_of(const Cluster& c, const int* members, int count, int i, bool node_shared);

/// Per slot (replica x stage), the buckets its own sides carry, each side a single server that
/// sends them in the order they become ready (serial_buckets_end_s).
class OwnSideQueues {
 public:
  explicit OwnSideQueues(std::size_t slots) : queues_(slots) {}
  bool empty() const { return queues_.empty(); }
  std::size_t size() const { return queues_.size(); }
  /// A bucket through a member's sides, each carrying its share of the member's `bytes` at its
  /// rate, and no longer than that share of `group_s` (the bucket's time at its group's
  /// bottleneck: a side cannot hold the ring back below it).
  void add(std::size_t slot, const OwnSides& sides, double ready_s, double bytes, double group_s) {
    for (int k = 0; k < sides.count; ++k) {
      const SideShare& s = sides.sides[k];
      const double busy_s = s.rate_Bps > 0 ? std::min(group_s, bytes / s.rate_Bps) : group_s;
      queue(slot, s.side).push_back({ready_s, s.share * busy_s});
    }
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
