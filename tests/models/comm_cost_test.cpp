// SPDX-License-Identifier: Apache-2.0
// Collective times on hand-computed cases, link figures of groups, and the pipeline's closed
// forms. (Memory per GPU: memory_cost_test.cpp.)
#include <gtest/gtest.h>

#include "comm_cost.hpp"
#include "cost_test_util.hpp"
#include "memory_cost.hpp"
#include "pipeline_time.hpp"
#include "predictor.hpp"
#include "step_cost.hpp"
#include "topology.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::node_type;
using testing::round_gpu;
using testing::two_zones_of;

TEST(CommCost, RingAllReduceHandComputed) {
  GroupCost g;
  g.size = 8;
  g.bus_bandwidth_Bps = 100e9;
  g.hop_latency_s = 2e-6;
  // 10 us launch + 2 (n-1)/n S / B + 2 (n-1) alpha
  EXPECT_NEAR(ring_time(CollectiveKind::kAllReduce, 1e9, g), 10e-6 + 2 * 7.0 / 8 * 1e9 / 100e9 + 14 * 2e-6, 1e-12);
  EXPECT_NEAR(ring_time(CollectiveKind::kAllGather, 1e9, g), 10e-6 + 7.0 / 8 * 1e9 / 100e9 + 7 * 2e-6, 1e-12);
  EXPECT_DOUBLE_EQ(ring_time(CollectiveKind::kAllReduce, 1e9, GroupCost{}), 0.0);  // one rank: nothing to do
  // Inside one node the tree is a chain up and down: 2 (n-1) alpha, never shorter than the ring.
  EXPECT_NEAR(tree_time(CollectiveKind::kAllReduce, 1e9, g), 10e-6 + 2 * 1e9 / 100e9 + 14 * 2e-6, 1e-12);
}

TEST(CommCost, LatencyStepsSplitIntoIntraAndInterNode) {
  // 16 ranks on two nodes of 8 (NCCL src/graph/tuning.cc): the ring's 30 all-reduce steps take
  // 2 (N-1) = 2 inter-node hops and 28 intra-node ones; all-gather 1 and 14; the tree goes up
  // and down a chain of 8 and a tree of depth 1.
  GroupCost g;
  g.size = 16;
  g.nodes = 2;
  g.hop_latency_s = 5e-6;
  g.intra_latency_s = 2e-6;
  g.inter_latency_s = g.inter_latency_mean_s = 5e-6;
  EXPECT_NEAR(ring_latency_s(CollectiveKind::kAllReduce, g), 28 * 2e-6 + 2 * 5e-6, 1e-15);
  EXPECT_NEAR(ring_latency_s(CollectiveKind::kAllGather, g), 14 * 2e-6 + 1 * 5e-6, 1e-15);
  EXPECT_NEAR(tree_latency_s(g), 2 * (7 * 2e-6 + 1 * 5e-6), 1e-15);
  // One member per node (a DP group of TP-8 replicas): every step crosses nodes.
  GroupCost dp = g;
  dp.nodes = 16;
  EXPECT_NEAR(ring_latency_s(CollectiveKind::kAllReduce, dp), 30 * 5e-6, 1e-15);
  EXPECT_NEAR(tree_latency_s(dp), 2 * (0 + 4 * 5e-6), 1e-15);
}

/// Two nodes of eight: NVSwitch-class inside, a 10 GB/s NIC share between them.
GroupCost two_nodes_of_eight() {
  GroupCost g;
  g.size = 16;
  g.nodes = 2;
  g.min_per_node = 8;
  g.intra_bandwidth_Bps = 200e9;
  g.inter_bandwidth_Bps = 10e9;
  g.bus_bandwidth_Bps = 80e9;
  return g;
}

TEST(CommCost, HierarchicalSplitsIntraAndInter) {
  const GroupCost g = two_nodes_of_eight();
  const double s = 1e9;
  const double expected = 10e-6 + 2 * (7.0 / 8 * s / 200e9) + 2 * (0.5 * s / 8 / 10e9);
  EXPECT_NEAR(hierarchical_time(CollectiveKind::kAllReduce, s, g), expected, 1e-12);
}

// A reduce-scatter or all-gather asked to be hierarchical or a tree is a ring (NCCL's are rings),
// as the simulator builds it; a tree of two members is each the other's child in one of the two
// trees: half the tensor each way a phase, S/B in all, where three members take 2 S/B
// (s57 engine hunt: a ZeRO-1 sync asked to be hierarchical, 0.80 s against the simulator's 0.36 s;
// a tied-embedding pair across a WAN asked to be a tree, 0.69 s against 0.38 s).
TEST(CommCost, OnlyAllReduceHasTreeAndHierarchicalForms) {
  const GroupCost g = two_nodes_of_eight();
  const double s = 1e9;
  for (CollectiveKind kind : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    EXPECT_DOUBLE_EQ(hierarchical_time(kind, s, g), ring_time(kind, s, g));
    EXPECT_DOUBLE_EQ(tree_time(kind, s, g), ring_time(kind, s, g));
  }
  GroupCost pair;
  pair.size = 2;
  pair.bus_bandwidth_Bps = 10e9;
  pair.hop_latency_s = 30e-3;
  EXPECT_NEAR(tree_time(CollectiveKind::kAllReduce, s, pair), 10e-6 + s / 10e9 + 2 * 30e-3, 1e-12);
  GroupCost three = pair;
  three.size = 3;
  EXPECT_NEAR(tree_time(CollectiveKind::kAllReduce, s, three), 10e-6 + 2 * s / 10e9 + 4 * 30e-3, 1e-12);
}

TEST(CommCost, AutoPicksRingOrTreeNeverHierarchical) {
  // Two nodes of 8, slow NICs: hierarchical would be fastest, but NCCL/RCCL never run it on
  // their own, so kAuto takes the faster of ring and tree.
  GroupCost g;
  g.size = 16;
  g.nodes = 2;
  g.min_per_node = 8;
  g.intra_bandwidth_Bps = 200e9;
  g.inter_bandwidth_Bps = 1e9;
  g.bus_bandwidth_Bps = 8e9;
  g.hop_latency_s = 5e-6;
  const double s = 1e9;
  ASSERT_LT(hierarchical_time(CollectiveKind::kAllReduce, s, g), ring_time(CollectiveKind::kAllReduce, s, g));
  EXPECT_EQ(resolve_algorithm(CollectiveKind::kAllReduce, s, g), GradSyncAlgorithm::kRing);
  EXPECT_DOUBLE_EQ(collective_time(CollectiveKind::kAllReduce, s, g), ring_time(CollectiveKind::kAllReduce, s, g));
  // Asked for, it runs.
  EXPECT_DOUBLE_EQ(collective_time(CollectiveKind::kAllReduce, s, g, GradSyncAlgorithm::kHierarchical),
                   hierarchical_time(CollectiveKind::kAllReduce, s, g));
  // Tiny messages over many nodes: the tree's log2(N) latency wins.
  GroupCost many = g;
  many.size = 1024;
  many.nodes = 128;
  many.intra_latency_s = 2e-6;
  many.inter_latency_s = many.inter_latency_mean_s = 5e-6;
  EXPECT_EQ(resolve_algorithm(CollectiveKind::kAllReduce, 1e3, many), GradSyncAlgorithm::kTree);
}

TEST(CommCost, ZeroThreeTrafficAndPerMemberRing) {
  EXPECT_EQ(pass_traffic(3, Recompute::kNone).forward_gathers, 1);
  EXPECT_EQ(pass_traffic(3, Recompute::kNone).backward_gathers, 1);
  EXPECT_EQ(pass_traffic(3, Recompute::kSelective).backward_gathers, 1);  // recomputes no weight GEMM
  EXPECT_EQ(pass_traffic(3, Recompute::kFull).backward_gathers, 2);       // the recompute forward re-gathers
  EXPECT_EQ(pass_traffic(3, Recompute::kFull).backward_reduce_scatters, 1);
  // ZeRO-2: the sharded gradients are reduced after every backward; the weights are not gathered.
  EXPECT_EQ(pass_traffic(2, Recompute::kFull).forward_gathers, 0);
  EXPECT_EQ(pass_traffic(2, Recompute::kFull).backward_gathers, 0);
  EXPECT_EQ(pass_traffic(2, Recompute::kNone).backward_reduce_scatters, 1);
  EXPECT_FALSE(pass_traffic(1, Recompute::kFull).any());
  EXPECT_FALSE(pass_traffic(0, Recompute::kNone).any());
  // 16 GPUs on two nodes: NCCL's ring reaches 8 NICs' worth (bus 200 GB/s), ZeRO-3's per-member
  // ring one NIC share (25 GB/s): (n-1)/n S / 25 GB/s.
  GroupCost g;
  g.size = 16;
  g.nodes = 2;
  g.min_per_node = 8;
  g.bus_bandwidth_Bps = 200e9;
  g.inter_bandwidth_Bps = 25e9;
  g.hop_latency_s = 5e-6;
  EXPECT_NEAR(sharded_collective_time(CollectiveKind::kAllGather, 1e10, g, ShardedCollectives::kMemberNic),
              10e-6 + 15.0 / 16 * 1e10 / 25e9 + 15 * 5e-6, 1e-12);
  // Fanned out over the node's NICs (FSDP's flat all-gather): the ring's bus bandwidth, 8x here.
  EXPECT_NEAR(sharded_collective_time(CollectiveKind::kAllGather, 1e10, g, ShardedCollectives::kNodeNics),
              10e-6 + 15.0 / 16 * 1e10 / 200e9 + 15 * 5e-6, 1e-12);
  GroupCost one_node = g;
  one_node.nodes = 1;
  one_node.inter_bandwidth_Bps = 0;
  for (const ShardedCollectives how : {ShardedCollectives::kMemberNic, ShardedCollectives::kNodeNics})
    EXPECT_DOUBLE_EQ(sharded_collective_time(CollectiveKind::kAllGather, 1e10, one_node, how),
                     ring_time(CollectiveKind::kAllGather, 1e10, one_node));
}

TEST(Topology, GroupsRunAtTheirSlowestLink) {
  const GpuType a100 = round_gpu("a", 312e12);
  const Cluster c = cluster_of({node_type("dgx", a100, 8, 300e9, 25e9)}, {{0, 2}});
  const GroupCost intra = group_cost(c, std::vector<int>{0, 1, 2, 3});
  EXPECT_NEAR(intra.bus_bandwidth_Bps, 300e9 * link_efficiency(IntraFabricKind::kNvswitch), 1);
  EXPECT_EQ(intra.nodes, 1);
  // 16 GPUs over 2 nodes: each node's 8 members each use their own NIC share (25 GB/s).
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[i] = i;
  const GroupCost both = group_cost(c, all);
  EXPECT_EQ(both.nodes, 2);
  EXPECT_NEAR(both.bus_bandwidth_Bps, 8 * 25e9 * link_efficiency(NicKind::kInfiniband), 1);
  // One member per node (a DP group of TP-8 replicas): one NIC share.
  const GroupCost dp = group_cost(c, std::vector<int>{0, 8});
  EXPECT_NEAR(dp.bus_bandwidth_Bps, 25e9 * link_efficiency(NicKind::kInfiniband), 1);
  EXPECT_FALSE(both.node_shared);
  EXPECT_FALSE(dp.node_shared);
}

TEST(Topology, GroupsSharingNodesWithConcurrentGroupsCrossAtOneNicShare) {
  // The DP group of TP rank 0 of a tp2 plan on 8-GPU nodes: 4 members per node, the node's
  // other 4 GPUs in TP rank 1's group at the same time. Its ring crosses at one member's NIC
  // share (SC'21 Table 1, 3.6B tp2 dp32), not 4 shares.
  const GpuType a100 = round_gpu("a", 312e12);
  const Cluster c = cluster_of({node_type("dgx", a100, 8, 300e9, 25e9)}, {{0, 2}});
  const double nic = 25e9 * link_efficiency(NicKind::kInfiniband);
  const std::vector<int> tp2_rank0 = {0, 2, 4, 6, 8, 10, 12, 14};
  const GroupCost g = group_cost(c, tp2_rank0);
  EXPECT_TRUE(g.node_shared);
  EXPECT_EQ(g.min_per_node, 4);
  EXPECT_NEAR(g.bus_bandwidth_Bps, nic, 1);
  EXPECT_NEAR(g.inter_bandwidth_Bps, nic, 1);
  // Alone on its nodes (only its 4 GPUs per node take part): each member sends over its own
  // rail's NIC, so the crossing carries 4 NICs, not all 8 (a GPU's x16 link carries one NIC).
  const GroupCost alone = group_cost(c, tp2_rank0, 4);
  EXPECT_FALSE(alone.node_shared);
  EXPECT_NEAR(alone.bus_bandwidth_Bps, 4 * nic, 1);
  // The ring time follows: 2(n-1)/n S over one NIC share.
  const double s = 1e9;
  EXPECT_NEAR(ring_time(CollectiveKind::kAllReduce, s, g) - kCollectiveLaunch_s -
                  ring_latency_s(CollectiveKind::kAllReduce, g),
              2.0 * 7 / 8 * s / nic, 1e-9);
  // One node: no NIC on the ring at all.
  EXPECT_FALSE(group_cost(c, std::vector<int>{0, 2, 4, 6}).node_shared);
  // Nodes of one NIC for 8 GPUs: the two concurrent rings share it (half each), as before.
  NodeType one_nic = node_type("box", a100, 8, 300e9, 25e9);
  one_nic.nics.count = 1;
  const Cluster d = cluster_of({one_nic}, {{0, 2}});
  const GroupCost shared = group_cost(d, tp2_rank0);
  EXPECT_TRUE(shared.node_shared);
  EXPECT_NEAR(shared.bus_bandwidth_Bps, nic / 2, 1);
}

TEST(Topology, AGpuAloneOnItsNodeSendsOverItsOwnRail) {
  // One NIC per GPU (DGX A100): a GPU that sends alone gets its NIC, not the node's eight.
  const GpuType a100 = round_gpu("a", 312e12);
  const double nic = 25e9 * link_efficiency(NicKind::kInfiniband);
  const Cluster dgx = cluster_of({node_type("dgx", a100, 8, 300e9, 25e9)}, {{0, 2}});
  EXPECT_NEAR(path_between(dgx, 0, 8, 1).bandwidth_Bps, nic, 1);
  EXPECT_NEAR(path_between(dgx, 0, 8, 0).bandwidth_Bps, nic, 1);  // all eight send: one NIC each too
  // One NIC for four GPUs (a cloud instance): the lone GPU has the whole NIC, four share it.
  NodeType cloud = node_type("cloud", a100, 4, 300e9, 25e9);
  cloud.nics.count = 1;
  const Cluster one = cluster_of({cloud}, {{0, 2}});
  EXPECT_NEAR(path_between(one, 0, 4, 1).bandwidth_Bps, nic, 1);
  EXPECT_NEAR(path_between(one, 0, 4, 0).bandwidth_Bps, nic / 4, 1);
  // Two NICs per GPU: a lone GPU's rail holds two.
  NodeType dual = node_type("dual", a100, 4, 300e9, 25e9);
  dual.nics.count = 8;
  const Cluster two = cluster_of({dual}, {{0, 2}});
  EXPECT_NEAR(path_between(two, 0, 4, 1).bandwidth_Bps, 2 * nic, 1);
}

TEST(Topology, EachNodeOfAGroupSharesItsNicsAmongItsOwnSenders) {
  // A pair across a 10 GB/s box where it sends alone and a 40 GB/s box where two GPUs send at
  // once (one NIC each box): 10 GB/s, the first box's NIC; one count for both boxes (the busier
  // box's 2) halved the first box's NIC as well.
  const GpuType gpu = round_gpu("a", 100e12);
  NodeType slow = node_type("slow", gpu, 4, 300e9, 10e9), fast = node_type("fast", gpu, 4, 300e9, 40e9);
  slow.nics.count = fast.nics.count = 1;
  const Cluster c = cluster_of({slow, fast}, {{0, 1}, {1, 1}});  // GPUs 0-3, 4-7
  const double eff = link_efficiency(NicKind::kInfiniband);
  const std::vector<int> pair = {3, 4};
  const std::vector<NodeSenders> senders = {{1, 0}, {2, 0}};  // by node
  EXPECT_NEAR(group_cost(c, pair.data(), 2, 0, nullptr, &senders).bus_bandwidth_Bps, 10e9 * eff, 1);
  EXPECT_NEAR(group_cost(c, pair, 2).bus_bandwidth_Bps, 10e9 * eff / 2, 1);
}

TEST(Topology, ARailCarriesTheChannelsOfItsOwnGpus) {
  // 8 GPUs and 4 NICs of 25 GB/s a node: GPUs 0-1 share rail 0, 2-3 rail 1 (rail_of_gpu). GPUs 0
  // and 1 each in two data-parallel groups (a TP-2 stage beside TP-4 replicas) put four channels
  // on rail 0, GPUs 2 and 3 likewise on rail 1. Eight channels filling the rails in order would be
  // two a rail: each channel gets a quarter of one NIC, not half.
  const GpuType gpu = round_gpu("a", 100e12);
  NodeType box = node_type("box", gpu, 8, 300e9, 25e9);
  box.nics.count = 4;
  const Cluster c = cluster_of({box}, {{0, 2}});  // GPUs 0-7, 8-15
  EXPECT_EQ(rail_of_gpu(c, 1), 0);
  EXPECT_EQ(rail_of_gpu(c, 2), 1);
  EXPECT_EQ(rail_of_gpu(c, 15), 3);
  std::vector<int> per_gpu(16, 0);
  per_gpu[0] = per_gpu[1] = per_gpu[2] = per_gpu[3] = 2;  // node 0
  per_gpu[8] = per_gpu[12] = 1;                           // node 1: rails 0 and 2, one each
  std::vector<NodeSenders> senders;
  node_senders_of(c, per_gpu, senders);
  ASSERT_EQ(senders.size(), 2u);
  EXPECT_EQ(senders[0], (NodeSenders{8, 4}));
  EXPECT_EQ(senders[1], (NodeSenders{2, 1}));
  const double nic = 25e9 * link_efficiency(NicKind::kInfiniband);
  const std::vector<int> pair = {0, 8};
  EXPECT_NEAR(group_cost(c, pair.data(), 2, 0, nullptr, &senders).bus_bandwidth_Bps, nic / 4, 1);
  const std::vector<NodeSenders> filled_in_order = {{8, 0}, {2, 0}};
  EXPECT_NEAR(group_cost(c, pair.data(), 2, 0, nullptr, &filled_in_order).bus_bandwidth_Bps, nic / 2, 1);
  // A group whose busy side is node 1: GPU 12 alone on rail 2 has its NIC; node 1's two senders
  // filled in order would share rail 0.
  const std::vector<int> far_pair = {3, 12};
  const std::vector<NodeSenders> node0_idle = {{1, 1}, {2, 1}}, node1_in_order = {{1, 1}, {2, 0}};
  EXPECT_NEAR(group_cost(c, far_pair.data(), 2, 0, nullptr, &node0_idle).bus_bandwidth_Bps, nic, 1);
  EXPECT_NEAR(group_cost(c, far_pair.data(), 2, 0, nullptr, &node1_in_order).bus_bandwidth_Bps, nic / 2, 1);
}

TEST(Topology, TpGroupsOfStagesThatStraddleNodesCrossOnTheirOwnRails) {
  // 8 GPUs and 4 NICs a node (a NIC per pair). Stage 0's TP-8 group holds GPUs 4-7 of node 0 and
  // 0-3 of node 1, stage 1's GPUs 4-7 of node 1 and 0-3 of node 2: on node 1 stage 0's ring
  // leaves at GPU 3 (rail 1) and enters at GPU 0 (rail 0), stage 1's at GPUs 7 and 4 (rails 3
  // and 2). No NIC is shared; filling the rails in order had put both on one.
  NodeType box = node_type("box", round_gpu("a", 100e12), 8, 300e9, 25e9);
  box.nics.count = 4;
  const Cluster c = cluster_of({box}, {{0, 3}});
  const double nic = 25e9 * link_efficiency(NicKind::kInfiniband);
  const std::vector<NodeSenders> straddling = {{4, 2}, {8, 2}, {4, 2}};
  const std::vector<int> stage0 = {4, 5, 6, 7, 8, 9, 10, 11};
  const GroupCost g = group_cost(c, stage0.data(), 8, 0, nullptr, &straddling);
  EXPECT_TRUE(g.node_shared);
  EXPECT_NEAR(g.bus_bandwidth_Bps, nic, 1);
  // Members spread over the node (a DP group of one TP rank: GPUs 0, 2, 4, 6 beside the other
  // rank's 1, 3, 5, 7) still fill the rails in order: two groups' crossings on one NIC.
  const std::vector<int> spread = {0, 2, 4, 6, 8, 10, 12, 14};
  const std::vector<NodeSenders> all_busy = {{8, 2}, {8, 2}, {0, 0}};
  EXPECT_NEAR(group_cost(c, spread.data(), 8, 0, nullptr, &all_busy).bus_bandwidth_Bps, nic / 2, 1);
}

TEST(Topology, ASwitchPortCapsEachNicBeforeTheGpusShareIt) {
  // One 25 GB/s NIC for 8 GPUs on 12.5 GB/s switch ports: each GPU gets 12.5/8 GB/s when all
  // eight send (the port is the NIC's ceiling), 12.5 GB/s alone.
  NodeType nt = node_type("box", round_gpu("a", 312e12), 8, 300e9, 25e9);
  nt.nics.count = 1;
  Cluster c = cluster_of({nt}, {{0, 2}});
  c.zones[0].fabric.kind = ZoneFabricKind::kSwitch;
  c.zones[0].fabric.bandwidth_Bps = 12.5e9;
  EXPECT_NEAR(path_between(c, 0, 8, 0).bandwidth_Bps, 12.5e9 / 8, 1);
  EXPECT_NEAR(path_between(c, 0, 8, 1).bandwidth_Bps, 12.5e9, 1);
}

TEST(Topology, AWanLinkIsSharedByEveryGpuOfThePlanThatCrossesIt) {
  // Two zones of two 8-GPU nodes joined by a 1 GB/s link: a node's senders share it (1/8 each)
  // unless the plan says how many GPUs of all its nodes cross at once (here 32: 1/32 each).
  const Cluster c = two_zones_of(node_type("n", round_gpu("g", 200e12), 8, 200e9, 25e9));
  const double wan = 1e9 * kWanLinkEfficiency;
  EXPECT_NEAR(path_between(c, 0, 16, 0).bandwidth_Bps, wan / 8, 1);
  EXPECT_NEAR(path_between(c, 0, 16, 0, 32).bandwidth_Bps, wan / 32, 1);
  EXPECT_NEAR(path_between(c, 0, 8, 0, 32).bandwidth_Bps, 25e9 * link_efficiency(NicKind::kInfiniband), 1);  // one zone
}

// A ring over two zones crosses the WAN twice per circle; its other node crossings stay in a
// zone. Its latency sums the hops the slowest chunk passes (GroupCost::ring_pass_latency_s),
// where the worst hop's latency at every crossing made a 30 ms WAN cost 30 ms at each node
// boundary, and the crossings' mean under-counted small rings.
TEST(Topology, ARingsLatencyIsThatOfItsOwnCrossings) {
  const Cluster c = two_zones_of(node_type("n", round_gpu("g", 200e12), 8, 200e9, 25e9));
  const double local = group_cost(c, std::vector<int>{0, 8}).inter_latency_s;
  const double wan = group_cost(c, std::vector<int>{8, 16}).inter_latency_s;
  ASSERT_GT(wan, 30e-3);
  ASSERT_LT(local, 1e-4);
  const GroupCost ring = group_cost(c, std::vector<int>{0, 8, 16, 24});  // east, east, west, west
  EXPECT_EQ(ring.nodes, 4);
  EXPECT_DOUBLE_EQ(ring.inter_latency_s, wan);  // the tree may take the worst hop
  EXPECT_NEAR(ring.inter_latency_mean_s, (2 * local + 2 * wan) / 4, 1e-15);
  // All-reduce: a chunk passes 2 (n-1) = 6 consecutive hops of the circle east-WAN-west-WAN:
  // three of them on the WAN, whichever it starts from.
  EXPECT_NEAR(ring_latency_s(CollectiveKind::kAllReduce, ring), 3 * local + 3 * wan, 1e-12);
  // Three members, east then two in the west: hops WAN, local, WAN. A reduce-scatter's chunk
  // passes two consecutive hops, and the slowest passes both WAN crossings (the simulator's
  // dataflow ring, sim/phase_dataflow.hpp): 2 x WAN, where the crossings' mean gave 4/3 of it.
  const GroupCost three = group_cost(c, std::vector<int>{0, 16, 24});
  EXPECT_NEAR(ring_latency_s(CollectiveKind::kReduceScatter, three), 2 * wan, 1e-12);
  EXPECT_NEAR(ring_latency_s(CollectiveKind::kAllReduce, three), 3 * wan + local, 1e-12);
  // Two members on one east node, one in the west: both crossings are the WAN link, of equal
  // latency, where a fabric's equal crossings keep NCCL's tuning count (one crossing a pass,
  // 1 x WAN). A link's propagation delay is paid at each crossing and the last chunk passes both:
  // 2 x WAN, as the simulator's flows (engine_diff seed 1 was 11.7% apart, now 6.3%).
  const GroupCost two_east = group_cost(c, std::vector<int>{0, 1, 16});
  const double intra = c.node_types[0].intra.latency_s;
  EXPECT_NEAR(ring_latency_s(CollectiveKind::kReduceScatter, two_east), 2 * wan, 1e-12);
  EXPECT_NEAR(ring_latency_s(CollectiveKind::kAllReduce, two_east), intra + 3 * wan, 1e-12);
}

// Inside one zone a ring keeps NCCL's count at its crossings' mean latency, also when its
// nodes' NICs differ: unequal crossings took the hops' count, 2 sum - fastest pair, which for a
// ring over two node types is one crossing more, so a ring got slower when one type's NIC got
// faster (a TP-16 ring over 100 GbE 1% slower for 20 -> 19.9 us; s64 monotonicity hunt).
TEST(Topology, AFasterNicNeverSlowsARingInsideAZone) {
  const auto ring_over = [](double nic_latency_s) {
    NodeType fast = node_type("fast", round_gpu("g", 200e12), 4, 31.5e9, 12.5e9);
    NodeType slow = fast;
    slow.name = "slow";
    fast.nics.latency_s = 20e-6;
    slow.nics.latency_s = nic_latency_s;
    const Cluster c = cluster_of({fast, slow}, {{0, 2}, {1, 1}});
    std::vector<int> members(12);
    for (int i = 0; i < 12; ++i) members[i] = i;
    return group_cost(c, members);
  };
  const GroupCost equal = ring_over(20e-6);
  for (const double latency_s : {19.9e-6, 10e-6, 1e-6}) {
    const GroupCost faster = ring_over(latency_s);
    EXPECT_LT(faster.inter_latency_mean_s, equal.inter_latency_mean_s);
    for (const auto kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather})
      EXPECT_LT(ring_latency_s(kind, faster), ring_latency_s(kind, equal)) << latency_s;
  }
}

TEST(Topology, SharedNicsDivideTheNodeBandwidth) {
  // 8 GPUs share 2 NICs of 25 GB/s: a GPU gets 50/8 GB/s when all send across nodes.
  NodeType nt = node_type("box", round_gpu("a", 312e12), 8, 300e9, 25e9);
  nt.nics.count = 2;
  const Cluster c = cluster_of({nt}, {{0, 2}});
  const PathCost p = path_between(c, 0, 8, 0);
  EXPECT_NEAR(p.bandwidth_Bps, 50e9 / 8 * link_efficiency(NicKind::kInfiniband), 1);
  EXPECT_FALSE(p.intra_node);
}

TEST(Topology, CrossVendorPathsAreHostStaged) {
  const Cluster c = cluster_of({node_type("nv", round_gpu("a", 312e12), 8, 300e9, 50e9),
                                node_type("amd", round_gpu("m", 383e12, 128e9, Vendor::kAmd), 8, 300e9, 50e9)},
                               {{0, 1}, {1, 1}});
  const PathCost p = path_between(c, 0, 8, 1);
  EXPECT_TRUE(p.host_staged);
  EXPECT_LE(p.bandwidth_Bps, 32e9 * kHostLinkEfficiency + 1);
  Cluster rdma = c;
  rdma.cross_vendor_rdma = true;
  EXPECT_FALSE(path_between(rdma, 0, 8, 1).host_staged);
  // A pipeline send from TP 8 to TP 4: each receiver copies two slices through its one host
  // link, so each flow gets half the staging rate (both flows were priced at the whole rate:
  // 111 us for 193 us by hand, s66 hunt); from TP 4 to TP 8, or not staged, nothing changes.
  const double staging_Bps = host_staging(c, 0, 8).rate_Bps;
  ASSERT_GT(staging_Bps, 0);
  PathCost fast = p;
  fast.bandwidth_Bps = 2 * staging_Bps;  // as if the network allowed more than the copies
  EXPECT_DOUBLE_EQ(staged_send_path(c, 0, 8, 8, 4, fast).bandwidth_Bps, staging_Bps / 2);
  EXPECT_DOUBLE_EQ(staged_send_path(c, 0, 8, 4, 8, fast).bandwidth_Bps, 2 * staging_Bps);
  PathCost not_staged = fast;
  not_staged.host_staged = false;
  EXPECT_DOUBLE_EQ(staged_send_path(c, 0, 8, 8, 4, not_staged).bandwidth_Bps, 2 * staging_Bps);
}


// A PCIe line rate between two GPUs of a node gives what a send through the root complex
// achieves (0.40 of it: Sailor's and nccl-tests' PCIe measurements, topology.hpp), while a
// copy to the host keeps a cudaMemcpy's 0.80: the two used one figure until 2026-12-01.
TEST(Topology, PcieBetweenGpusAchievesLessThanAHostCopy) {
  NodeType pcie_box = node_type("t4-box", round_gpu("t", 65e12), 4, 15.75e9, 6.25e9);
  pcie_box.intra.kind = IntraFabricKind::kPcie;
  const Cluster c = cluster_of({pcie_box}, {{0, 1}});
  const PathCost p = path_between(c, 0, 1, 1);
  EXPECT_TRUE(p.intra_node);
  EXPECT_DOUBLE_EQ(p.bandwidth_Bps, 15.75e9 * 0.40);
  EXPECT_DOUBLE_EQ(link_efficiency(IntraFabricKind::kPcie), 0.40);
  EXPECT_DOUBLE_EQ(kHostLinkEfficiency, 0.80);
  // GPUs with peer access (below a PCIe switch) copy directly: 0.70 of the line rate.
  pcie_box.intra.peer_to_peer = true;
  EXPECT_DOUBLE_EQ(path_between(cluster_of({pcie_box}, {{0, 1}}), 0, 1, 1).bandwidth_Bps, 15.75e9 * 0.70);
  // A figure measured on the box is used as it is.
  pcie_box.intra.bandwidth_Bps = 6.08e9;
  pcie_box.intra.measured = true;
  EXPECT_DOUBLE_EQ(path_between(cluster_of({pcie_box}, {{0, 1}}), 0, 1, 1).bandwidth_Bps, 6.08e9);
}

TEST(PipelineTime, EqualStagesGiveTheMegatronBubble) {
  const std::vector<StageTimes> st(4, StageTimes{1.0, 2.0});
  EXPECT_DOUBLE_EQ(pipeline_time(st, 8, 1), (8 + 4 - 1) * 3.0);      // (m + p - 1)(tf + tb)
  EXPECT_DOUBLE_EQ(pipeline_time(st, 8, 2), (8 + 3.0 / 2) * 3.0);     // bubble (p - 1)/v
}

TEST(PipelineTime, SlowestStageSetsTheSteadyState) {
  const std::vector<StageTimes> st = {{1, 2}, {2, 4}, {1, 1}};
  EXPECT_EQ(bottleneck_stage(st.data(), 3), 1);
  // Stage 1 starts after stage 0's first forward (1), then never idles (it keeps two
  // micro-batches in flight and stages 0 and 2 are faster): 10 * 6; the last backward then
  // crosses stage 0 (2). DAPPLE's (m - 1) max + sum = 65 is the upper bound.
  EXPECT_DOUBLE_EQ(pipeline_time(st, 10, 1), 1 + 10 * 6.0 + 2);
  EXPECT_LE(pipeline_time(st, 10, 1), 9 * 6.0 + (3 + 6 + 2));
  // GPipe: all forwards, then the backwards in reverse order; stage 1 bounds both phases:
  // forwards end at 1 + 10 * 2 + 1, backwards start there, stage 1 runs 10 * 4 (the first
  // backward reaches it after 1), stage 0 finishes with 2.
  EXPECT_DOUBLE_EQ(pipeline_time(st, 10, 1, Schedule::kGpipe), 22 + 1 + 40 + 2);
  EXPECT_DOUBLE_EQ(backward_finish_offset(st.data(), 2), 2 + 4);
}

TEST(Topology, MeshGivesAGroupOneLinkPerPeer) {
  // 8 GPUs joined pairwise (MI300X: 7 xGMI links): the per-GPU figure is over 7 links.
  NodeType mesh = node_type("mesh", round_gpu("g", 100e12), 8, 448e9, 50e9);
  mesh.intra.kind = IntraFabricKind::kXgmi;
  mesh.intra.mesh = true;
  const double total = achieved_bandwidth_Bps(mesh.intra);
  EXPECT_DOUBLE_EQ(intra_bandwidth_Bps(mesh, 2), total / 7);  // TP 2, or a send: one link
  EXPECT_DOUBLE_EQ(intra_bandwidth_Bps(mesh, 4), total * 3 / 7);
  EXPECT_DOUBLE_EQ(intra_bandwidth_Bps(mesh, 8), total);
  EXPECT_DOUBLE_EQ(intra_bandwidth_Bps(mesh, 1), total / 7);  // a point-to-point path
  const Cluster c = cluster_of({mesh}, {{0, 1}});
  EXPECT_DOUBLE_EQ(group_cost(c, std::vector<int>{0, 1, 2, 3}).bus_bandwidth_Bps, total * 3 / 7);
  EXPECT_DOUBLE_EQ(path_between(c, 0, 5, 0).bandwidth_Bps, total / 7);
  NodeType sw = mesh;  // the same figure through a switch: every group gets all of it
  sw.intra.mesh = false;
  EXPECT_DOUBLE_EQ(intra_bandwidth_Bps(sw, 2), total);
  EXPECT_DOUBLE_EQ(group_cost(cluster_of({sw}, {{0, 1}}), std::vector<int>{0, 1}).bus_bandwidth_Bps, total);
}

TEST(GradSyncBytes, Fp32AllReduceDoublesTheFp16Wire) {
  TrainingSpec t;
  t.dtype = Dtype::kFp16;
  EXPECT_DOUBLE_EQ(grad_sync_bytes_per_param(t), 2.0);
  t.fp32_grad_allreduce = true;  // DeepSpeed fp32_allreduce / Megatron-LM fp32 main_grad reduction
  EXPECT_DOUBLE_EQ(grad_sync_bytes_per_param(t), 4.0);
  t.dtype = Dtype::kBf16;
  t.fp32_grad_allreduce = false;  // Megatron-LM reduces bf16 gradients in fp32 regardless
  EXPECT_DOUBLE_EQ(grad_sync_bytes_per_param(t), 4.0);
}

}  // namespace
}  // namespace hetsim::models
