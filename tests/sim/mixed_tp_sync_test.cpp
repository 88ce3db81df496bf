// SPDX-License-Identifier: Apache-2.0
// Gradient sync of replicas of different TP degrees through shared NICs: a GPU of the lower TP
// degree is in one data-parallel group per shard it holds, each a ring channel of its own through
// its node's one NIC (models::dp_nic_channels). The simulator moves the rings' flows over the
// NIC links; the cost model prices each group with its share of the NIC. They agree.
#include <gtest/gtest.h>

#include "engine_inputs.hpp"
#include "plan_work.hpp"
#include "predictor.hpp"
#include "step_cost.hpp"
#include "topology.hpp"

namespace hetsim::sim {
namespace {

using testing::a100_l4_mix;
using testing::both_feasible;
using testing::BothEngines;
using testing::plan_of;

TEST(MixedTpSync, ShardGroupsThroughOneNicAgreeWithTheSimulatedFlows) {
  // Two TP-2 replicas on the A100 box (GPUs 0-3) beside four TP-1 replicas on the first L4 box
  // (GPUs 4-7 of its 8): the gradients are cut in two shards, each L4 GPU is in both groups, and
  // the L4 box's NIC carries the two groups' crossings (8 channels: 4 GPUs x 2 groups).
  const testing::Inputs in = a100_l4_mix(24);
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  const auto one_stage = [&](std::vector<int> gpus) {
    return models::Replica{4, {models::Stage{w.model.layers, std::move(gpus)}}};
  };
  const models::Plan p = plan_of("tp2 x2 beside tp1 x4", 1,
                                 {one_stage({0, 1}), one_stage({2, 3}), one_stage({4}), one_stage({5}),
                                  one_stage({6}), one_stage({7})});
  const models::PlanWork work = models::build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  ASSERT_EQ(work.dp_nic_senders.size(), c.nodes.size());
  EXPECT_EQ(work.dp_nic_senders[0].senders, 4);
  EXPECT_EQ(work.dp_nic_senders[1].senders, 8);
  EXPECT_EQ(work.dp_nic_senders[1].on_busiest_rail, 8) << "one NIC: every channel on its rail";
  EXPECT_EQ(work.dp_nic_senders[2].senders, 0);
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_GT(e.analytic.breakdown.dp_comm_s, 0.1 * e.analytic.iteration_time_s) << "the sync is what this test is about";
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, e.sim.breakdown.dp_comm_s, 0.05 * e.sim.breakdown.dp_comm_s);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.03 * e.analytic.iteration_time_s);
}

TEST(MixedTpSync, ChannelsOfGpusOnOneRailShareItsNic) {
  // A DGX A100 pipeline at TP 4 (GPUs 0-7, one NIC each) beside a DGX-1 V100 pipeline at TP 2 on
  // GPUs 16-19, whose node has 4 NICs for 8 GPUs: GPUs 16-17 share rail 0, 18-19 rail 1. Each V100
  // is in two shard groups, so four ring channels cross each of those rails. The cost model took
  // two a rail (eight channels filling the node's rails in order) and predicted half the
  // simulator's sync (61.8 vs 124 ms; models::node_senders_of counts the rails now).
  testing::Inputs in = testing::load("mixed-a100-v100.yaml", "gpt3-1.3b.yaml");
  in.workload.training.global_batch = 13;
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  const int half = w.model.layers / 2;
  const models::Plan p = plan_of("A100 tp4 pp2 beside V100 tp2 pp2", 1,
                                 {models::Replica{8, {models::Stage{half, {0, 1, 2, 3}}, models::Stage{half, {4, 5, 6, 7}}}},
                                  models::Replica{5, {models::Stage{half, {16, 17}}, models::Stage{half, {18, 19}}}}});
  const models::PlanWork work = models::build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const int v100_node = c.gpus[16].node;
  EXPECT_EQ(work.dp_nic_senders[v100_node], (models::NodeSenders{8, 4}));
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_GT(e.analytic.breakdown.dp_comm_s, 0.1 * e.analytic.iteration_time_s) << "the sync is what this test is about";
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, e.sim.breakdown.dp_comm_s, 0.05 * e.sim.breakdown.dp_comm_s);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.02 * e.analytic.iteration_time_s);
}

TEST(MixedTpSync, TiedEmbeddingShardsOfStagesOfDifferentTpDegrees) {
  // One pipeline on the 4090 + A100 lab cluster (one 25 Gb/s NIC a node): its first stage at TP 2
  // on GPUs 22-23, its last at TP 8 on GPUs 0-7. The tied word embedding's rows fall into
  // lcm(2, 8) = 8 shards, each all-reduced by the two GPUs holding it: GPUs 22 and 23 are in four
  // pairs each. Each node's one NIC carries 8 shards of V h / 8: the sync takes V h bytes over a
  // NIC. (The cost model priced two pairs of V h / 2 at an eighth of the NIC each, 4x the
  // simulator's 99 ms.)
  testing::Inputs in = testing::load("consumer-4090-a100.yaml", "gpt3-1.3b.yaml");
  in.workload.training.global_batch = 8;
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  models::Plan p = plan_of("tp2 first, tp8 last", 0,
                           {models::Replica{8, {models::Stage{12, {22, 23}}, models::Stage{12, {0, 1, 2, 3, 4, 5, 6, 7}}}}});
  const models::PlanWork work = models::build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const double all_bytes = static_cast<double>(w.model.vocab) * w.model.hidden * models::grad_sync_bytes_per_param(w.training);
  int pairs = 0, pairs_of_gpu22 = 0;
  for (const models::DpGroup& g : work.dp_groups) {
    if (!g.embedding) continue;
    ++pairs;
    EXPECT_DOUBLE_EQ(g.size_bytes, all_bytes / 8);
    pairs_of_gpu22 += g.gpus[0] == 22;
  }
  EXPECT_EQ(pairs, 8);
  EXPECT_EQ(pairs_of_gpu22, 4);
  const BothEngines e = both_feasible(c, w, p);
  // A pair of two all-reduces by sending its shard once each way: V h bytes through each NIC.
  const double through_one_nic_s = all_bytes / models::achieved_bandwidth_Bps(c.node_types[0].nics);
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, through_one_nic_s, 0.03 * through_one_nic_s);
  EXPECT_NEAR(e.sim.breakdown.dp_comm_s, through_one_nic_s, 0.03 * through_one_nic_s);
}

// Found by scripts/engine_diff.py (seed 2). GPT-3 1.3B on the two zones: both replicas' first
// stage in the west (H100s 43 and 40, TP 1), their last in the east (A100 11 at TP 1, A100s
// 24-31 at TP 8). The tied embedding's pairs all cross the 100 Gb/s, 30 ms WAN link: replica 0's
// one pair V h, replica 1's eight V h / 8 each. Shared by their bytes the link carries 2 V h a
// direction, and the pairs pay the ring's two 30 ms steps once, side by side: 2 V h / rate +
// 60 ms. The cost model shared the link by count, a ninth of it for replica 0's pair (0.24 s).
TEST(MixedTpSync, TiedEmbeddingPairsShareAWanLinkByTheirBytes) {
  testing::Inputs in = testing::load("geo-two-zones.yaml", "gpt3-1.3b.yaml");
  in.workload.training.global_batch = 8;
  const models::Cluster& c = in.cluster;
  models::Workload w = in.workload;
  models::Plan p = plan_of("west first, east last; TP 1 and TP 8 last stages", 0,
                           {models::Replica{2, {models::Stage{12, {43}}, models::Stage{12, {11}}}},
                            models::Replica{2, {models::Stage{12, {40}}, models::Stage{12, {24, 25, 26, 27, 28, 29, 30, 31}}}}});
  p.micro_batch = 2;
  const BothEngines tied = both_feasible(c, w, p);
  w.model.tied_embeddings = false;
  const BothEngines untied = both_feasible(c, w, p);
  const double vh_bytes = static_cast<double>(w.model.vocab) * w.model.hidden * models::grad_sync_bytes_per_param(w.training);
  const models::InterZoneLink& link = c.links.at(0);
  const double hand_s = 2 * vh_bytes / (link.bandwidth_Bps * models::kWanLinkEfficiency) + 2 * link.latency_s;
  for (const BothEngines* e : {&tied, &untied})
    EXPECT_NEAR(e->analytic.breakdown.dp_comm_s, e->sim.breakdown.dp_comm_s, 0.05 * e->sim.breakdown.dp_comm_s);
  EXPECT_NEAR(tied.analytic.breakdown.dp_comm_s - untied.analytic.breakdown.dp_comm_s, hand_s, 0.15 * hand_s);
}

// A DP group whose two members on one node are a rank apart (replicas 0 and 2 on 4090 box 0,
// 1 and 3 on boxes 1 and 2): NCCL's ring runs the node's members in a row and crosses each
// box's one NIC once a step; in rank order the simulator's ring crossed box 0's twice, twice its
// bytes (models::order_ring_by_node). The sync does not depend on the ranks' order.
TEST(MixedTpSync, ARingCrossesEachNodeOnceWhateverTheRankOrder) {
  testing::Inputs in = testing::load("consumer-4090-a100.yaml", "gpt3-1.3b.yaml");
  in.workload.training.global_batch = 8;
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  const auto one_gpu = [&](int gpu) { return models::Replica{2, {models::Stage{w.model.layers, {gpu}}}}; };
  const BothEngines apart = both_feasible(c, w, plan_of("box 0 at ranks 0 and 2", 1, {one_gpu(0), one_gpu(8), one_gpu(1), one_gpu(16)}));
  const BothEngines together = both_feasible(c, w, plan_of("box 0 at ranks 0 and 1", 1, {one_gpu(0), one_gpu(1), one_gpu(8), one_gpu(16)}));
  EXPECT_GT(together.sim.breakdown.dp_comm_s, 0.1 * together.sim.iteration_time_s) << "the sync is what this test is about";
  EXPECT_NEAR(apart.sim.breakdown.dp_comm_s, together.sim.breakdown.dp_comm_s, 0.01 * together.sim.breakdown.dp_comm_s);
  EXPECT_NEAR(apart.analytic.breakdown.dp_comm_s, together.analytic.breakdown.dp_comm_s, 0.01 * together.analytic.breakdown.dp_comm_s);
  EXPECT_NEAR(apart.analytic.breakdown.dp_comm_s, apart.sim.breakdown.dp_comm_s, 0.05 * apart.sim.breakdown.dp_comm_s);
}

}  // namespace
}  // namespace hetsim::sim
