// SPDX-License-Identifier: Apache-2.0
// Closed-form checks of the simulated network (CM02, no cross-traffic, no TCP window bound):
// a transfer alone takes latency + size/bandwidth; a ring all-reduce 2(p-1)·α + 2(p-1)/p·n/B
// (Patarasuk & Yuan, JPDC 2009); shared NICs and WAN links divide their bandwidth.
// Bandwidths are the cost model's achieved figures: nominal x models::link_efficiency.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "collective_flows.hpp"
#include "simulator.hpp"
#include "test_clusters.hpp"
#include "topology.hpp"
#include "sim_layout.hpp"
#include "sim_topology.hpp"

namespace hetsim::sim {
namespace {

using testing::NodeSpec;

constexpr double kTol = 0.01;  // the 1% on closed forms
// Test nodes: 300 GB/s NVSwitch, 2us; 25 GB/s InfiniBand NICs, 2us each; fabric 5us.
const double kIntraBw = 300e9 * models::link_efficiency(models::IntraFabricKind::kNvswitch);
const double kNicBw = 25e9 * models::link_efficiency(models::NicKind::kInfiniband);
constexpr double kInterLatency = 2e-6 + 5e-6 + 2e-6;

TEST(ClosedForm, P2pInsideNodeIsLatencyPlusSizeOverBandwidth) {
  const auto cluster = testing::one_zone(1, NodeSpec{});
  const double t = simulate_phases(cluster, {{{0, 1, 1e9}}});
  const double expected = 2e-6 + 1e9 / kIntraBw;
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(ClosedForm, P2pAcrossNodesCrossesHostLinkNicAndFabric) {
  const auto cluster = testing::one_zone(2, NodeSpec{});
  const Topology topo(cluster);
  // NIC 2us + fabric 5us + NIC 2us, as models::path_between; the NIC is the narrowest link.
  EXPECT_NEAR(topo.path_latency_s(0, 8), kInterLatency, 1e-15);
  EXPECT_DOUBLE_EQ(topo.path_bandwidth_Bps(0, 8), kNicBw);
  const auto analytic = models::path_between(cluster, 0, 8, 0);  // every GPU of the node sending: one NIC each
  EXPECT_NEAR(analytic.latency_s, kInterLatency, 1e-15);
  EXPECT_DOUBLE_EQ(analytic.bandwidth_Bps, kNicBw);
  const double t = simulate_phases(cluster, {{{0, 8, 1e9}}});
  const double expected = kInterLatency + 1e9 / kNicBw;
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(ClosedForm, RingAllReduceInsideNode) {
  const auto cluster = testing::one_zone(1, NodeSpec{});
  const int p = 8;
  const double n = 1e9, alpha = 2e-6, bw = kIntraBw;
  const double t = simulate_phases(cluster, ring_all_reduce({0, 1, 2, 3, 4, 5, 6, 7}, n));
  const double expected = 2 * (p - 1) * alpha + 2.0 * (p - 1) / p * n / bw;
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(ClosedForm, RingAllReduceAcrossNodes) {
  const auto cluster = testing::one_zone(4, NodeSpec{});
  const int p = 4;
  const double n = 4e8, alpha = kInterLatency, bw = kNicBw;
  const double t = simulate_phases(cluster, ring_all_reduce({0, 8, 16, 24}, n));
  const double expected = 2 * (p - 1) * alpha + 2.0 * (p - 1) / p * n / bw;
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(ClosedForm, SmallRingAllReduceIsLatencyBound) {
  const auto cluster = testing::one_zone(4, NodeSpec{});
  const double n = 1e3, alpha = kInterLatency, bw = kNicBw;
  const double t = simulate_phases(cluster, ring_all_reduce({0, 8, 16, 24}, n));
  const double expected = 6 * alpha + 1.5 * n / bw;
  EXPECT_NEAR(t, expected, kTol * expected);
}

// Eight GPUs behind ONE 25GB/s NIC each send 100MB to the next node: the NIC is shared,
// each flow gets 1/8 of it (23.5/8 GB/s achieved), so the step takes 8x what it takes with a NIC per GPU.
/// Simulated time of GPU i of node 0 sending 100 MB to GPU i of node 1, all eight at once, on
/// 8-GPU nodes with `nics` NICs each.
double eight_flows_to_the_next_node(int nics) {
  NodeSpec spec;
  spec.nics = nics;
  const auto cluster = testing::one_zone(2, spec);
  Phase phase;
  for (int i = 0; i < 8; ++i) phase.push_back({i, 8 + i, 1e8});
  return simulate_phases(cluster, {phase});
}

TEST(ClosedForm, SharedNicSlowsConcurrentTransfersEightfold) {
  const double t = eight_flows_to_the_next_node(1);
  const double expected = kInterLatency + 8 * 1e8 / kNicBw;  // 34.05 ms
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(ClosedForm, NicPerGpuTransfersDoNotContend) {
  const double t = eight_flows_to_the_next_node(8);
  const double expected = kInterLatency + 1e8 / kNicBw;  // 4.26 ms
  EXPECT_NEAR(t, expected, kTol * expected);
}

// Two NICs for eight GPUs, the first four of each node sending: GPUs 0-3 share the first NIC
// (contiguous GPUs on a rail), a quarter of it each, in the simulator and in the cost model
// (which once spread them over both NICs, half a NIC each).
TEST(ClosedForm, FourGpusOnOneRailOfATwoNicNodeShareItsNic) {
  NodeSpec two_nics;
  two_nics.nics = 2;
  const auto cluster = testing::one_zone(2, two_nics);
  Phase phase;
  for (int i = 0; i < 4; ++i) phase.push_back({i, 8 + i, 1e8});
  const double t = simulate_phases(cluster, {phase});
  const double expected = kInterLatency + 4 * 1e8 / kNicBw;
  EXPECT_NEAR(t, expected, kTol * expected);
  EXPECT_NEAR(models::path_between(cluster, 0, 8, 4).bandwidth_Bps, kNicBw / 4, 1);
  EXPECT_NEAR(models::path_between(cluster, 0, 8, 1).bandwidth_Bps, kNicBw, 1);
  EXPECT_NEAR(models::path_between(cluster, 0, 8, 0).bandwidth_Bps, kNicBw / 4, 1);  // all eight: four per NIC
}

// Two NICs per GPU (16 on an 8-GPU node): each GPU's rail carries both, in the simulator and in
// the cost model (models::nic_share); the simulator once used every other NIC only.
TEST(ClosedForm, TwoNicsPerGpuCarryARailEach) {
  const double t = eight_flows_to_the_next_node(16);
  const double expected = kInterLatency + 1e8 / (2 * kNicBw);
  EXPECT_NEAR(t, expected, kTol * expected);
  NodeSpec dual;
  dual.nics = 16;
  const auto cluster = testing::one_zone(2, dual);
  EXPECT_NEAR(models::path_between(cluster, 0, 8, 0).bandwidth_Bps, 2 * kNicBw, 1);
  EXPECT_NEAR(models::path_between(cluster, 0, 8, 1).bandwidth_Bps, 2 * kNicBw, 1);
}

// A fat tree with oversubscription 4: the node's uplink carries 8·23.5/4 = 47 GB/s, so eight
// concurrent 100MB flows take 800MB/47GB/s = 17 ms instead of 4.3 ms.
TEST(ClosedForm, OversubscribedFatTreeLimitsTheNodeUplink) {
  const auto cluster = testing::one_zone(2, NodeSpec{}, 5e-6, 4.0);
  Phase phase;
  for (int i = 0; i < 8; ++i) phase.push_back({i, 8 + i, 1e8});
  const double t = simulate_phases(cluster, {phase});
  const double expected = kInterLatency + 8e8 / (8 * kNicBw / 4);
  EXPECT_NEAR(t, expected, kTol * expected);
}

// The uplink is the node's, shared by its senders: one GPU sending alone keeps its NIC's rate
// (the node has 2 NICs' worth at the core), eight share the uplink. The cost model had divided
// every sender's NIC share by o: a quarter of a NIC for a lone sender (s66 hunt: a pipeline send
// priced 1437 us against 366 us simulated).
TEST(ClosedForm, OversubscriptionCapsTheNodeNotEachSender) {
  const auto cluster = testing::one_zone(2, NodeSpec{}, 5e-6, 4.0);
  EXPECT_NEAR(models::path_between(cluster, 0, 8, 1).bandwidth_Bps, kNicBw, 1);
  EXPECT_NEAR(models::path_between(cluster, 0, 8, 8).bandwidth_Bps, kNicBw / 4, 1);
  const double t = simulate_phases(cluster, {{{0, 8, 1e8}}});
  const double expected = kInterLatency + 1e8 / kNicBw;
  EXPECT_NEAR(t, expected, kTol * expected);
}

// Between zones whose fabrics differ, a path crosses half of each (the simulator's uplinks carry
// half their zone's figure): the cost model took the larger of the two.
TEST(ClosedForm, CrossZoneLatencyTakesHalfOfEachZonesFabric) {
  auto cluster = testing::two_zones(1, NodeSpec{}, 1.25e9, 30e-3);
  cluster.zones[1].fabric.latency_s = 10e-3;
  const Topology topo(cluster);
  const double expected = 30e-3 + 2e-6 + 2e-6 + (cluster.zones[0].fabric.latency_s + 10e-3) / 2;
  EXPECT_NEAR(topo.path_latency_s(0, 8), expected, 1e-12);
  EXPECT_NEAR(models::path_between(cluster, 0, 8, 1).latency_s, expected, 1e-12);
}

TEST(ClosedForm, WanTransferIsLatencyPlusSizeOverWanBandwidth) {
  const auto cluster = testing::two_zones(1, NodeSpec{}, 1.25e9, 30e-3);
  const Topology topo(cluster);
  EXPECT_NEAR(topo.path_latency_s(0, 8), 30e-3 + kInterLatency, 1e-12);
  const double t = simulate_phases(cluster, {{{0, 8, 1e9}}});
  const double expected = 30e-3 + kInterLatency + 1e9 / (1.25e9 * models::kWanLinkEfficiency);
  EXPECT_NEAR(t, expected, kTol * expected);
}

// A ring all-reduce of `bytes` over `ring`, one GPU per node (each node's NIC carries one
// channel), as collective_flows lays it out: its equal steps.
std::vector<Phase> ring_all_reduce_steps(const models::Cluster& cluster, const std::vector<int>& ring, double bytes) {
  const Topology topo(cluster);
  const std::vector<models::NodeSenders> one_per_node(cluster.nodes.size(), {1, 0});
  return collective_flows(topo, models::CollectiveKind::kAllReduce, models::GradSyncAlgorithm::kRing, ring, bytes,
                          &one_per_node)
      .phases;
}

// A ring all-reduce over one GPU of each of four nodes, two nodes in each of two zones with a
// 30 ms WAN between them: its ranks forward what they have received, so each step waits for
// its predecessor's hop only, and the WAN's latency is paid on two of every four hops round
// the ring, not on each of the 6 steps (phase_dataflow.hpp).
TEST(ClosedForm, ARingAcrossAWanPaysItsLatencyPerTripNotPerStep) {
  const auto cluster = testing::two_zones(2, NodeSpec{}, 1.25e9, 30e-3);
  const double n = 1e7;
  const std::vector<Phase> steps = ring_all_reduce_steps(cluster, {0, 8, 16, 24}, n);
  ASSERT_EQ(steps.size(), 6u);
  const double t = simulate_phases(cluster, steps);
  const double wan = 1.25e9 * models::kWanLinkEfficiency;
  const double step = n / 4 / wan;                              // a step's chunk over the WAN
  const double barriers = 6 * (30e-3 + kInterLatency + step);   // every step waiting for a WAN hop
  // Dataflow: the longest chain of the 6 steps' dependencies follows the ring from a WAN hop:
  // 3 WAN hops and 3 NIC hops (a hop's consecutive chunks follow each other on its connection).
  const double chain = 3 * (30e-3 + kInterLatency + step) + 3 * (kInterLatency + n / 4 / kNicBw);
  std::printf("WAN ring: simulated %.4f s, dependency chain %.4f s, step barriers %.4f s\n", t, chain, barriers);
  EXPECT_GE(t, 0.99 * chain);
  EXPECT_LT(t, 0.6 * barriers);
}

// A ring of three with two WAN hops (two members in zone 0, one in zone 1), bandwidth-bound:
// each member sends its steps over one connection in order, so each WAN direction carries its
// four 1 GB chunks back to back, and the last arrives two trips of latency after four chunk
// times. Started beside the previous step instead (a member may forward step k+1 while its step
// k is still on the link), the two share the link, the chunk the next member waits for comes
// late and each direction idles in turn: 5.74 s against 3.82 s.
TEST(ClosedForm, ARingsStepsFollowEachOtherOnEachConnection) {
  const double wan_Bps = 1.25e9, wan_latency_s = 30e-3;
  const auto cluster = testing::two_zones(2, NodeSpec{}, wan_Bps, wan_latency_s);
  ASSERT_NE(cluster.nodes[0].zone, cluster.nodes[2].zone);
  const double n = 3e9;
  const std::vector<Phase> steps = ring_all_reduce_steps(cluster, {0, 8, 16}, n);  // nodes 0, 1 | node 2
  ASSERT_EQ(steps.size(), 4u);
  const double t = simulate_phases(cluster, steps);
  const double chunk_s = n / 3 / (wan_Bps * models::kWanLinkEfficiency);
  const double expected = 4 * chunk_s + 2 * (wan_latency_s + kInterLatency);
  std::printf("ring of three over two WAN hops: simulated %.4f s, chunks back to back %.4f s\n", t, expected);
  EXPECT_NEAR(t, expected, 0.02 * expected);
}

// The same ring's gradient sync in four buckets, all ready, latency-bound (25 MB chunks, 23.5 ms
// on the WAN against its 30 ms): a member goes on to the next bucket when it and its next member
// are done with the last (NCCL runs a rank's collectives in order, each when that rank is done
// with the one before; Runtime::run_bucketed_dataflow). A bucket's chain: three WAN trips and
// three chunk times (rank 16's last step waits for rank 8's third, which waits for rank 0's
// second, which waits for 16's first), the next bucket starting as its members finish.
TEST(ClosedForm, ARingsBucketsFollowEachOtherRankByRank) {
  const double wan_Bps = 1.25e9, wan_latency_s = 30e-3;
  const auto cluster = testing::two_zones(2, NodeSpec{}, wan_Bps, wan_latency_s);
  const double n = 3e8;
  const std::vector<Phase> steps = ring_all_reduce_steps(cluster, {0, 8, 16}, n);
  const double chunk_s = n / 3 / 4 / (wan_Bps * models::kWanLinkEfficiency);  // a bucket's chunk
  const double trip_s = wan_latency_s + kInterLatency;
  const double t = simulate_bucketed_ring(cluster, steps, 4);
  const double expected = 4 * (3 * trip_s + 3 * chunk_s);
  std::printf("four buckets over two WAN hops: simulated %.4f s, four chains of 3 trips and 3 chunks %.4f s\n", t, expected);
  EXPECT_NEAR(t, expected, 0.02 * expected);
}

// Four nodes of zone 0 each send 250MB to zone 1 at once: they share the 1.25GB/s WAN link
// (x0.85 achieved), so the step takes 1GB/1.0625GB/s = 0.94 s, four times one transfer alone.
TEST(ClosedForm, WanLinkIsSharedByConcurrentTransfers) {
  const auto cluster = testing::two_zones(4, NodeSpec{}, 1.25e9, 30e-3);
  Phase phase;
  for (int i = 0; i < 4; ++i) phase.push_back({8 * i, 32 + 8 * i, 2.5e8});
  const double t = simulate_phases(cluster, {phase});
  const double expected = 30e-3 + kInterLatency + 1e9 / (1.25e9 * models::kWanLinkEfficiency);
  EXPECT_NEAR(t, expected, kTol * expected);
}

// An NVIDIA node and an AMD node without cross-vendor RDMA: the transfer is staged through host
// memory at the PCIe rate (16 GB/s x 0.8 = 12.8 GB/s < the NIC's 23.5) and pays two copy
// setups (models::kHostCopySetup_s each), as the cost model's path_between has it.
models::Cluster nvidia_and_amd(bool rdma) {
  NodeSpec spec;
  spec.host_Bps = 16e9;
  auto cluster = testing::one_zone(1, spec);
  models::NodeType amd = cluster.node_types[0];
  amd.name = "amd-box";
  amd.gpu.vendor = models::Vendor::kAmd;
  cluster.node_types.push_back(amd);
  cluster.zones[0].groups.push_back({1, 1});
  cluster.cross_vendor_rdma = rdma;
  testing::derive(cluster);
  return cluster;
}

TEST(ClosedForm, CrossVendorTransferIsHostStaged) {
  const auto cluster = nvidia_and_amd(false);
  const double pcie = 16e9 * models::kHostLinkEfficiency;
  const auto analytic = models::path_between(cluster, 0, 8, 0);
  EXPECT_TRUE(analytic.host_staged);
  EXPECT_DOUBLE_EQ(analytic.bandwidth_Bps, pcie);
  const double t = simulate_phases(cluster, {{{0, 8, 1e9}}});
  const double expected = kInterLatency + 2 * models::kHostCopySetup_s + 1e9 / pcie;
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(ClosedForm, CrossVendorRdmaIsNotStaged) {
  const auto cluster = nvidia_and_amd(true);
  const double t = simulate_phases(cluster, {{{0, 8, 1e9}}});
  const double expected = kInterLatency + 1e9 / kNicBw;
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(Topology, NoRouteBetweenUnlinkedZonesIsAnError) {
  auto cluster = testing::two_zones(1, NodeSpec{}, 1e9, 1e-3);
  cluster.links.clear();
  const Topology topo(cluster);
  EXPECT_THROW(topo.path(0, 8), std::runtime_error);
}

TEST(FoldPhase, DisjointEqualFlowsFoldToOne) {
  const auto cluster = testing::one_zone(1, NodeSpec{});
  const Topology topo(cluster);
  const auto ring = ring_all_reduce({0, 1, 2, 3}, 4e6);
  const auto folded = fold_phase(topo, ring[0], true);
  EXPECT_EQ(folded.simulated.size(), 1u);
  EXPECT_EQ(folded.shadows.size(), 3u);
}

// A reduce-scatter over GPUs 0 and 1 of zone A's node and GPU 8 across a 30 ms WAN: 2 steps,
// hops 0->1 (intra), 1->8 and 8->0 (WAN, each split over the two members of node 0). The ring's
// last step waits for the heaviest chain of 2 hops, 1->8->0: two WAN latencies, one paid by the
// merged flows, one after them. The mean hop latency a step gave 2/3 of one.
TEST(MergeRepeatedPhases, AShortRingOverASlowHopWaitsItsHeaviestChain) {
  const auto cluster = testing::two_zones(1, NodeSpec{}, 1.25e9, 30e-3);
  const Topology topo(cluster);
  const std::vector<int> ring{0, 1, 8}, node_of{0, 0, 1};
  std::vector<FoldedPhase> steps;
  for (const Phase& ph : ring_reduce_scatter(ring, 3e6, &node_of)) steps.push_back({ph, {}, 0});
  const auto merged = merge_repeated_phases(topo, steps);
  ASSERT_EQ(merged.size(), 1u);
  const double wan_s = topo.path_latency_s(1, 8);
  EXPECT_NEAR(merged[0].delay_after_s, topo.path_latency_s(8, 0), 1e-12);
  EXPECT_GT(wan_s, 30e-3);
}

// The same ring beside a second one over the same ranks in another order, as a sync's groups
// of stages in several groups run them (two NCCL communicators): rank 1 sends to 8 in one and
// to 0 in the other, so each ring's hops are followed apart (Flow::ring) and the heaviest chain
// is still two WAN hops.
TEST(MergeRepeatedPhases, RingsSharingRanksAreFollowedApart) {
  const auto cluster = testing::two_zones(1, NodeSpec{}, 1.25e9, 30e-3);
  const Topology topo(cluster);
  std::vector<Phase> both;
  for (const auto& [ring, node_of, tag] : {std::tuple{std::vector<int>{0, 1, 8}, std::vector<int>{0, 0, 1}, 1},
                                           std::tuple{std::vector<int>{1, 0, 9}, std::vector<int>{0, 0, 1}, 2}}) {
    std::vector<Phase> steps = ring_reduce_scatter(ring, 3e6, &node_of);
    for (Phase& ph : steps)
      for (Flow& f : ph) f.ring = tag;
    merge_phases(both, steps);
  }
  std::vector<FoldedPhase> steps;
  for (const Phase& ph : both) steps.push_back({ph, {}, 0});
  const auto merged = merge_repeated_phases(topo, steps);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_NEAR(merged[0].delay_after_s, topo.path_latency_s(8, 0), 1e-12);
}

TEST(FoldPhase, FlowsSharingANicAreKept) {
  NodeSpec one_nic;
  one_nic.nics = 1;
  const auto cluster = testing::one_zone(2, one_nic);
  const Topology topo(cluster);
  Phase phase{{0, 8, 1e6}, {1, 9, 1e6}};
  EXPECT_EQ(fold_phase(topo, phase, true).simulated.size(), 2u);
}

// The DP groups of TP ranks 0 and 1 of a tp2 plan on two 8-GPU nodes all-reduce at once: each
// ring crosses each node boundary through one NIC (models::GroupCost::node_shared), so the
// simulated flows and the cost model's ring give 2(p-1)/p n / B_nic.
TEST(ClosedForm, ConcurrentPartialNodeRingsCrossThroughOneNicEach) {
  const auto cluster = testing::one_zone(2, NodeSpec{});
  const Topology topo(cluster);
  const std::vector<int> rank0 = {0, 2, 4, 6, 8, 10, 12, 14}, rank1 = {1, 3, 5, 7, 9, 11, 13, 15};
  const double n = 4e9;
  const models::GroupCost g = models::group_cost(cluster, rank0);
  ASSERT_TRUE(g.node_shared);
  auto flows = collective_flows(topo, models::CollectiveKind::kAllReduce, models::GradSyncAlgorithm::kRing, rank0, n).phases;
  merge_phases(flows, collective_flows(topo, models::CollectiveKind::kAllReduce, models::GradSyncAlgorithm::kRing, rank1, n).phases);
  const double t = simulate_phases(cluster, flows);
  const double analytic = models::ring_time(models::CollectiveKind::kAllReduce, n, g);
  EXPECT_NEAR(t, analytic, kTol * analytic);
  EXPECT_NEAR(t, 2.0 * 7 / 8 * n / kNicBw, kTol * t);
}

// A ring on nodes the plan leaves partly idle: each member crosses over its own rail's NIC
// (models::nic_share), in the simulator and in the cost model alike; the idle GPUs' NICs carry
// nothing (the cost model once pooled all eight NICs for such a group).
void expect_partly_used_ring_crosses_over_members_nics(const std::vector<int>& gpus, int members_per_node) {
  const auto cluster = testing::one_zone(2, NodeSpec{});
  const Topology topo(cluster);
  const double n = 4e9;
  const models::GroupCost g = models::group_cost(cluster, gpus, members_per_node);
  ASSERT_FALSE(g.node_shared);
  const std::vector<models::NodeSenders> senders(cluster.nodes.size(), {members_per_node, 0});
  const auto flows = collective_flows(topo, models::CollectiveKind::kAllReduce, models::GradSyncAlgorithm::kRing, gpus,
                                      n, &senders);
  const double t = simulate_phases(cluster, flows.phases);
  const double analytic = models::ring_time(models::CollectiveKind::kAllReduce, n, g);
  const int p = static_cast<int>(gpus.size());
  EXPECT_NEAR(t, analytic, kTol * analytic);
  EXPECT_NEAR(t, 2.0 * (p - 1) / p * n / (members_per_node * kNicBw), kTol * t);
}

TEST(ClosedForm, RingOfHalfTheNodesGpusAloneCrossesOverItsMembersNics) {
  expect_partly_used_ring_crosses_over_members_nics({0, 2, 4, 6, 8, 10, 12, 14}, 4);
}

TEST(ClosedForm, RingOfOneGpuPerNodeCrossesOverItsOwnNic) {
  expect_partly_used_ring_crosses_over_members_nics({0, 8}, 1);
}

}  // namespace
}  // namespace hetsim::sim

namespace hetsim::sim {
namespace {

// Tree all-reduce of a group of 8 spread over 4 nodes, 2 members each (every member its own
// NIC): two channels, each with one head per node and half the data; between the heads two
// mirrored binary trees of a quarter each. The up phase's bottleneck is a head with two child
// nodes in one tree and a parent in the other: 2·n/4 in, n/4 out on its NIC; so up and down
// each take (n/2)/B_nic, the cost model's tree_time 2·n/B_bus with B_bus = 2 NICs.
const std::vector<int> kTreeGpus = {0, 1, 8, 9, 16, 17, 24, 25};
const std::vector<int> kTreeNodes = {0, 0, 1, 1, 2, 2, 3, 3};

TEST(ClosedForm, TreeBetweenNodesRunsOneChannelPerMember) {
  const auto cluster = testing::one_zone(4, NodeSpec{});
  const double n = 1e9;
  const auto phases = tree_all_reduce(kTreeGpus, n, &kTreeNodes);
  ASSERT_EQ(phases.size(), 2u);
  auto node = [&](int gpu) { return kTreeNodes[std::find(kTreeGpus.begin(), kTreeGpus.end(), gpu) - kTreeGpus.begin()]; };
  for (const auto& phase : phases) {
    double inter_bytes = 0;
    for (const auto& f : phase)
      if (node(f.src) != node(f.dst)) inter_bytes += f.bytes;
    EXPECT_DOUBLE_EQ(inter_bytes, 2 /*channels*/ * 2 /*trees*/ * 3 /*edges*/ * n / 4);
  }
  const double t = simulate_phases(cluster, phases);
  const double expected = 2 * (n / 2) / kNicBw;
  EXPECT_NEAR(t, expected, 0.05 * expected);
}

// One channel (a node-shared group): a single head per node carries all of it, twice as long.
TEST(ClosedForm, TreeOfANodeSharedGroupRunsOneChannel) {
  const auto cluster = testing::one_zone(4, NodeSpec{});
  const double n = 1e9;
  const double t = simulate_phases(cluster, tree_all_reduce(kTreeGpus, n, &kTreeNodes, true));
  const double expected = 2 * n / kNicBw;
  EXPECT_NEAR(t, expected, 0.05 * expected);
}

// The fill after a tree phase between node heads is the rest of the cost model's per-phase
// latency (a chain through each node's members, log2 N node levels), the phase's flows paying
// one crossing. It was ceil(log2 p) - 1 worst hops over all p members: a TP group of 16 on two
// nodes paid 3 node crossings a phase for the model's one (4x the time over a WAN link).
TEST(ClosedForm, TreeFillBetweenNodeHeadsIsTheCostModelsLatency) {
  const auto cluster = testing::one_zone(4, NodeSpec{});
  for (const int nodes : {2, 4}) {
    std::vector<int> gpus;  // every GPU of `nodes` nodes of 8
    for (int g = 0; g < 8 * nodes; ++g) gpus.push_back(g);
    const models::GroupCost g = models::group_cost(cluster, gpus.data(), static_cast<int>(gpus.size()), 0);
    EXPECT_NEAR(tree_fill_latency_s(g) + g.inter_latency_s, models::tree_latency_s(g) / 2, 1e-12) << nodes;
    EXPECT_LT(tree_fill_latency_s(g), tree_fill_hops(8 * nodes) * g.hop_latency_s) << nodes;
  }
  // One member a node: a tree over the ranks, its depth at the worst hop.
  const std::vector<int> gpus = {0, 8, 16, 24};
  const models::GroupCost g = models::group_cost(cluster, gpus.data(), 4, 0);
  EXPECT_DOUBLE_EQ(tree_fill_latency_s(g), 1 * g.hop_latency_s);
}

TEST(ClosedForm, MeshCollectivesUseALinkPerPeerAndSendsOne) {
  // 4 GPUs joined pairwise (GH200 nodes: 450 GB/s a GPU over 3 peers): a ring of k members on
  // the node moves at (k - 1) / 3 of the total in both engines; a send crosses one link.
  auto cluster = testing::one_zone(1, NodeSpec{4, 450e9});
  cluster.node_types[0].intra.kind = models::IntraFabricKind::kNvlink;
  cluster.node_types[0].intra.mesh = true;
  const Topology topo(cluster);
  const double total = 450e9 * models::link_efficiency(models::IntraFabricKind::kNvlink);
  EXPECT_EQ(topo.path(0, 1).size(), 3u);  // intra_up, the direct link, intra_down
  EXPECT_NEAR(topo.path_bandwidth_Bps(0, 1), total / 3, 1e-3);
  EXPECT_NEAR(models::path_between(cluster, 0, 1, 0).bandwidth_Bps, total / 3, 1e-3);
  const double n = 1e9;
  for (const std::vector<int>& ring : {std::vector<int>{0, 1}, std::vector<int>{0, 1, 2}, std::vector<int>{0, 1, 2, 3}}) {
    const int k = static_cast<int>(ring.size());
    const models::GroupCost g = models::group_cost(cluster, ring);
    EXPECT_NEAR(g.bus_bandwidth_Bps, total * (k - 1) / 3, 1e-3) << k << " members";
    const CollectiveFlows flows = collective_flows(topo, models::CollectiveKind::kAllReduce,
                                                   models::GradSyncAlgorithm::kRing, ring, n);
    const double t = testing::in_child([&] { return simulate_phases(cluster, flows.phases); });
    const double expected = 2 * (k - 1) * 2e-6 + 2.0 * (k - 1) / k * n / (total * (k - 1) / 3);
    EXPECT_NEAR(t, expected, kTol * expected) << k << " members";
  }
}

// One GPU of a node with fast NICs in a ring with the eight GPUs of a node with slow ones (a
// heterogeneous plan's DP segment: one H100 stage beside MI-series replicas, s26 walkthrough).
// NCCL's channels enter the eight-member node at different GPUs, so the crossing spreads over its
// eight NICs, as the cost model's hop (the lower of each side's members x NIC share). The
// simulator had paired the lone member with one GPU of the other node: 2.7x the cost model's
// figure on a 48-GPU plan.
TEST(ClosedForm, RingFromALoneMemberSpreadsOverTheOtherNodesNics) {
  NodeSpec fast;
  fast.nic_Bps = 100e9;
  models::Cluster cluster = testing::one_zone(1, fast);
  models::NodeType slow = cluster.node_types[0];
  slow.name = "slow";
  slow.nics.bandwidth_Bps = 12.5e9;
  cluster.node_types.push_back(slow);
  cluster.zones[0].groups.push_back({1, 1});
  testing::derive(cluster);
  const Topology topo(cluster);
  const std::vector<int> ring = {0, 8, 9, 10, 11, 12, 13, 14, 15};
  const double n = 4e9;
  const models::GroupCost g = models::group_cost(cluster, ring);
  const auto flows = collective_flows(topo, models::CollectiveKind::kAllReduce, models::GradSyncAlgorithm::kRing, ring, n);
  const double t = simulate_phases(cluster, flows.phases);
  const double analytic = models::ring_time(models::CollectiveKind::kAllReduce, n, g);
  EXPECT_NEAR(t, analytic, 0.05 * analytic);
}

}  // namespace
}  // namespace hetsim::sim
