// SPDX-License-Identifier: Apache-2.0
// The ring a collective runs on: NCCL chains the nodes and runs each node's members in a row, so
// the ring crosses each node's NICs once whatever the order of the group's ranks
// (models::order_ring_by_node, used by group_cost, the gradient sync and the simulator).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "comm_cost.hpp"
#include "cost_test_util.hpp"
#include "topology.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::node_type;
using testing::round_gpu;

Cluster three_nodes() {
  return cluster_of({node_type("box", round_gpu("g", 100e12), 8, 30e9, 3e9)}, {{0, 3}});  // GPUs 0-7, 8-15, 16-23
}

TEST(RingOrder, ARingVisitsEachNodeOnceWhenItsMembersOfANodeAreInARow) {
  const Cluster c = three_nodes();
  EXPECT_TRUE(ring_visits_each_node_once(c, std::vector<int>{0, 1, 8, 16}.data(), 4));
  EXPECT_TRUE(ring_visits_each_node_once(c, std::vector<int>{16, 8, 0}.data(), 3)) << "any node order";
  EXPECT_TRUE(ring_visits_each_node_once(c, std::vector<int>{1, 8, 16, 0}.data(), 4)) << "a run across the wrap";
  EXPECT_TRUE(ring_visits_each_node_once(c, std::vector<int>{0, 8, 1}.data(), 3)) << "1 -> 0 closes the circle";
  EXPECT_FALSE(ring_visits_each_node_once(c, std::vector<int>{0, 8, 1, 16}.data(), 4));
  EXPECT_TRUE(ring_visits_each_node_once(c, std::vector<int>{3}.data(), 1));
}

TEST(RingOrder, MembersAreGroupedByNodeInTheOrderTheNodesFirstAppear) {
  const Cluster c = three_nodes();
  // Replicas split differently: stages of node 0 a replica apart in the DP group's rank order.
  std::vector<int> ring{4, 8, 0, 16, 5};
  std::vector<int> slots{10, 11, 12, 13, 14};  // what the gradient sync keeps per member
  order_ring_by_node(c, ring.data(), 5, slots.data());
  EXPECT_EQ(ring, (std::vector<int>{4, 0, 5, 8, 16}));
  EXPECT_EQ(slots, (std::vector<int>{10, 12, 14, 11, 13}));
  std::vector<int> already{0, 1, 8, 16};
  order_ring_by_node(c, already.data(), 4);
  EXPECT_EQ(already, (std::vector<int>{0, 1, 8, 16})) << "a ring that visits each node once stays";
}

TEST(RingOrder, AGroupIsPricedOnNcclsRingWhateverItsRankOrder) {
  // Two zones 30 ms apart, two nodes each: GPU 0 and 1 on an east node, 16 and 24 on the two west
  // nodes. In rank order (0, 16, 1, 24) a ring would cross the WAN four times; NCCL's (0, 1, 16,
  // 24) crosses it twice, so a chunk's pass takes the two WAN hops and the west nodes' hop.
  using testing::two_zones_of;
  const Cluster c = two_zones_of(node_type("box", round_gpu("g", 100e12), 8, 30e9, 3e9));
  const GroupCost ranks = group_cost(c, std::vector<int>{0, 16, 1, 24});
  const GroupCost nccl = group_cost(c, std::vector<int>{0, 1, 16, 24});
  EXPECT_DOUBLE_EQ(ranks.bus_bandwidth_Bps, nccl.bus_bandwidth_Bps);
  EXPECT_DOUBLE_EQ(ranks.ring_pass_latency_s, nccl.ring_pass_latency_s);
  EXPECT_DOUBLE_EQ(ranks.ring_allreduce_latency_s, nccl.ring_allreduce_latency_s);
  EXPECT_NEAR(ranks.ring_pass_latency_s, 2 * 30e-3, 1e-4) << "two WAN crossings a pass, not four";
  EXPECT_DOUBLE_EQ(ring_time(CollectiveKind::kAllReduce, 1e9, ranks), ring_time(CollectiveKind::kAllReduce, 1e9, nccl));
}

// The gradient sync tallies a group's members per node once and passes the member's node's tally
// (a scan per member was quadratic in the group); both forms price every member's side alike.
TEST(RingOrder, AMembersSideIsTheSameFromItsNodesTally) {
  const Cluster c = three_nodes();
  const std::vector<int> ring{0, 1, 2, 8, 16, 17};
  const std::vector<int> channels{1, 3, 2, 1, 2, 1};
  for (const bool one_crossing : {false, true})
    for (int i = 0; i < static_cast<int>(ring.size()); ++i) {
      NodeTally tally;
      for (int k = 0; k < static_cast<int>(ring.size()); ++k)
        if (c.gpus[ring[k]].node == c.gpus[ring[i]].node) {
          ++tally.members;
          tally.channels += channels[k];
        }
      const NodeSenders own{4, 2};
      EXPECT_DOUBLE_EQ(member_side_bandwidth_Bps(c, ring.data(), 6, i, own, one_crossing, channels.data()),
                       member_side_bandwidth_Bps(c, ring.data(), 6, i, own, one_crossing, tally, true))
          << "member " << i;
      EXPECT_DOUBLE_EQ(member_side_bandwidth_Bps(c, ring.data(), 6, i, own, one_crossing),
                       member_side_bandwidth_Bps(c, ring.data(), 6, i, own, one_crossing,
                                                 NodeTally{tally.members, tally.members}, false))
          << "member " << i;
    }
}

}  // namespace
}  // namespace hetsim::models
