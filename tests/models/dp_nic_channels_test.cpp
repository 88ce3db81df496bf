// SPDX-License-Identifier: Apache-2.0
// NIC channels of the gradient sync (dp_segments.hpp dp_nic_channels): a GPU in several
// data-parallel groups at once (a replica of lower TP degree beside one of higher) sends through
// its node's NICs once per group, and only groups that leave their node use the NICs at all.
#include <gtest/gtest.h>

#include <algorithm>

#include "comm_cost.hpp"
#include "cost_test_util.hpp"
#include "dp_segments.hpp"
#include "predictor.hpp"
#include "stage_cost.hpp"
#include "step_cost.hpp"
#include "topology.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::gpt_workload;
using testing::node_type;
using testing::round_gpu;

Replica one_stage(int micro_batches, int layers, std::vector<int> gpus) {
  Replica r;
  r.micro_batches = micro_batches;
  r.stages.push_back(Stage{layers, std::move(gpus)});
  return r;
}

/// Two nodes of 8 GPUs, each with one NIC its GPUs share (Ethernet with TCP, as
/// validation's socket nodes), `nic_Bps` one direction.
Cluster two_shared_nic_nodes(double nic_Bps) {
  NodeType nt = node_type("eth", round_gpu("g", 300e12), 8, 300e9, nic_Bps);
  nt.nics.count = 1;
  nt.nics.kind = NicKind::kEthernet;
  return cluster_of({nt}, {{0, 2}});
}

/// Replicas of TP 4 on GPUs 0-3 and 4-7 (node 0) beside replicas of TP 2 on GPUs 8-9 and
/// 10-11 (node 1): the gradients are cut into lcm(4, 2) = 4 shards, and a TP-2 GPU holds two.
Plan tp4_pair_beside_tp2_pair() {
  Plan p;
  p.replicas = {one_stage(8, 4, {0, 1, 2, 3}), one_stage(8, 4, {4, 5, 6, 7}), one_stage(8, 4, {8, 9}),
                one_stage(8, 4, {10, 11})};
  return p;
}

TEST(DpNicChannels, AGpuOfLowerTpDegreeIsASenderInEachOfItsShardGroups) {
  const Cluster c = two_shared_nic_nodes(1e9);
  const Workload w = gpt_workload(4, 2048, 16, 1024, 32);
  const Plan p = tp4_pair_beside_tp2_pair();
  const DpSegments segments(p, w.model);
  DpNicChannels ch;
  dp_nic_channels(p, c, segments, ch);
  // Shard j's group: GPU j, GPU 4 + j (node 0), GPU 8 + j / 2, GPU 10 + j / 2 (node 1).
  for (int g = 0; g < 8; ++g) EXPECT_EQ(ch.per_gpu[g], 1) << "GPU " << g;
  for (int g = 8; g < 12; ++g) EXPECT_EQ(ch.per_gpu[g], 2) << "GPU " << g;
  for (int g = 12; g < 16; ++g) EXPECT_EQ(ch.per_gpu[g], 0) << "GPU " << g << " is idle";
  EXPECT_EQ(ch.per_node, (std::vector<NodeSenders>{{8, 8}, {8, 8}}));  // one NIC a node: one rail
}

TEST(DpNicChannels, GroupsInsideOneNodeUseNoNic) {
  // Replicas on GPUs 0 and 1 reduce inside node 0; the pair on GPUs 2 and 8 crosses.
  const Cluster c = two_shared_nic_nodes(1e9);
  const Workload w = gpt_workload(4, 2048, 16, 1024, 32);
  Plan inside;
  inside.replicas = {one_stage(16, 4, {0}), one_stage(16, 4, {1})};
  DpNicChannels ch;
  dp_nic_channels(inside, c, DpSegments(inside, w.model), ch);
  EXPECT_EQ(ch.per_node, (std::vector<NodeSenders>{{0, 0}, {0, 0}}));
  Plan across;
  across.replicas = {one_stage(16, 4, {2}), one_stage(16, 4, {8})};
  dp_nic_channels(across, c, DpSegments(across, w.model), ch);
  EXPECT_EQ(ch.per_node, (std::vector<NodeSenders>{{1, 1}, {1, 1}}));
  EXPECT_EQ(ch.per_gpu[2], 1);
  EXPECT_EQ(ch.per_gpu[0], 0);
}

TEST(Predictor, ShardGroupsOfMixedTpShareTheNodeNicOnceEach) {
  // The four shard groups each cross between the nodes once per direction (their members on a
  // node are neighbours in the ring), so node 1's one NIC carries four ring crossings at once.
  // Each moves 2 (n - 1) / n of a shard's gradients (ring all-reduce, Patarasuk & Yuan 2009),
  // n = 4: the sync takes 4 x 1.5 x shard bytes over the achieved NIC bandwidth. (Counting the
  // node's GPUs, four, as its senders while a TP-2 GPU also ran its two groups one after the
  // other made it twice that.)
  const Cluster c = two_shared_nic_nodes(1e9);
  Workload w = gpt_workload(4, 2048, 16, 1024, 32);
  w.model.tied_embeddings = false;
  const Plan p = tp4_pair_beside_tp2_pair();
  const Report r = predict(c, w, p);
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(r.feasible && work.feasible) << r.infeasible_reason;
  ASSERT_EQ(work.dp_groups.size(), 4u);
  const double shard_bytes = stage_params(w.model, 4, 4, true, true, 1) * grad_sync_bytes_per_param(w.training);
  for (const DpGroup& g : work.dp_groups) EXPECT_DOUBLE_EQ(g.size_bytes, shard_bytes);
  const double nic_Bps = achieved_bandwidth_Bps(c.node_types[0].nics);
  const double load_s = 4 * 1.5 * shard_bytes / nic_Bps;
  EXPECT_NEAR(r.breakdown.dp_comm_s, load_s, 0.03 * load_s);
  // The simulator's own flows through the NIC agree (engine agreement, sim tests): the figure
  // above is what both engines share as the NICs' senders.
  EXPECT_EQ(work.dp_nic_senders, (std::vector<NodeSenders>{{8, 8}, {8, 8}}));  // one NIC a node
}

TEST(Predictor, AGpusShardGroupsShareItsOwnRailNic) {
  // One NIC per GPU (rails): GPU 8 alone on node 1 holds both shards of the TP-2 replica on
  // node 0, and its one rail carries both groups: twice one group's time at the full rail.
  const Cluster c = cluster_of({node_type("rail", round_gpu("g", 300e12), 8, 300e9, 1e9)}, {{0, 2}});
  Workload w = gpt_workload(4, 2048, 16, 1024, 64);
  w.model.tied_embeddings = false;
  Plan p;
  p.replicas = {one_stage(32, 4, {0, 1}), one_stage(32, 4, {8})};
  const Report r = predict(c, w, p);
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(r.feasible && work.feasible) << r.infeasible_reason;
  ASSERT_EQ(work.dp_groups.size(), 2u);
  const double shard_bytes = work.dp_groups[0].size_bytes;
  const double rail_Bps = achieved_bandwidth_Bps(c.node_types[0].nics);
  const double both_s = 2 * shard_bytes / rail_Bps;  // two members: each sends its shard once
  EXPECT_NEAR(r.breakdown.dp_comm_s, both_s, 0.03 * both_s);
}

}  // namespace
}  // namespace hetsim::models
