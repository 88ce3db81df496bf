// SPDX-License-Identifier: Apache-2.0
// When the tied word embedding's all-reduce runs: on each rank after its own data-parallel
// reduction (Megatron-LM finalize_model_grads), so a replica's first and last stages start their
// pairs once those two stages have reduced, beside the other stages' longer reductions. Both
// engines, against hand figures.
#include <gtest/gtest.h>

#include "engine_inputs.hpp"
#include "predictor.hpp"
#include "step_cost.hpp"

namespace hetsim::sim {
namespace {

using testing::both_feasible;
using testing::BothEngines;
using testing::plan_of;

// GPT-3 1.3B (tied embeddings) in three stages at TP 4 on the 4090 + A100 lab cluster (one
// 25 Gb/s NIC a node), two replicas: their first stages share 4090 box 0 (GPUs 0-3, 4-7), their
// last stages box 1 (8-11, 12-15), so those DP groups stay inside a box; their middle stages of
// 18 layers sit on boxes 2 and 3, whose DP groups cross the two boxes' NICs and take far longer.
// Each replica's embedding pairs (GPUs 0-3 with 8-11, 4-7 with 12-15) cross boxes 0 and 1's NICs
// once the replica's end stages have reduced: beside the middle stages' reduction, which still
// ends the sync. The cost model added the pairs after every stage's reduction.
TEST(EmbeddingSync, PairsRunBesideTheOtherStagesLongerReduction) {
  testing::Inputs in = testing::load("consumer-4090-a100.yaml", "gpt3-1.3b.yaml");
  in.workload.training.global_batch = 16;
  const models::Cluster& c = in.cluster;
  models::Workload w = in.workload;
  ASSERT_TRUE(w.model.tied_embeddings);
  ASSERT_EQ(w.model.layers, 24);
  const models::Plan p = plan_of(
      "end stages on boxes 0 and 1, middles on boxes 2 and 3", 0,
      {models::Replica{8, {models::Stage{3, {0, 1, 2, 3}}, models::Stage{18, {16, 17, 18, 19}}, models::Stage{3, {8, 9, 10, 11}}}},
       models::Replica{8, {models::Stage{3, {4, 5, 6, 7}}, models::Stage{18, {24, 25, 26, 27}}, models::Stage{3, {12, 13, 14, 15}}}}});
  const BothEngines tied = both_feasible(c, w, p);
  w.model.tied_embeddings = false;
  const BothEngines untied = both_feasible(c, w, p);
  // The pairs' all-reduce alone: eight pairs of V h / 4 bytes, four through each box's one NIC,
  // a ring of two sending its shard once each way: V h through each NIC.
  const double vh_bytes = static_cast<double>(w.model.vocab) * w.model.hidden * models::grad_sync_bytes_per_param(w.training);
  const double pairs_s = vh_bytes / models::achieved_bandwidth_Bps(c.node_types[0].nics);
  // What the V100 stages' reduction leaves exposed, which the pairs would have lengthened.
  const double middle_s = untied.analytic.breakdown.dp_comm_s;
  ASSERT_GT(pairs_s, 0.1 * middle_s) << "the pairs are long enough to matter";
  ASSERT_LT(pairs_s, 0.5 * middle_s) << "and fit beside the middle stages' reduction";
  for (const BothEngines* e : {&tied, &untied})
    EXPECT_NEAR(e->analytic.breakdown.dp_comm_s, e->sim.breakdown.dp_comm_s, 0.05 * e->sim.breakdown.dp_comm_s);
  EXPECT_NEAR(tied.analytic.breakdown.dp_comm_s, middle_s, 0.02 * middle_s);
  EXPECT_NEAR(tied.sim.breakdown.dp_comm_s, untied.sim.breakdown.dp_comm_s, 0.02 * untied.sim.breakdown.dp_comm_s);
}

// Found by scripts/engine_diff.py (seed 3). GPT-3 1.3B on the 4090 + A100 lab cluster: one
// TP-8 replica of all 24 layers on box 2 (GPUs 16-23), one of two stages, layers 0-14 at TP 4 on
// box 0 (GPUs 4-7) and 15-23 at TP 2 on box 3 (24-25). The DP groups of both segments cross box
// 2's one NIC, where they share it fairly: the 9-layer segment's groups end first, the 15-layer
// segment's with the NIC, so the second replica's first stage, and its embedding pairs, wait
// for box 2's NIC to drain. The cost model took the first stage's own NIC (box 0, 15 layers'
// bytes alone), 0.34 s after the slowest replica's end where the simulator's end at 0.51 s.
TEST(EmbeddingSync, AStageWaitsForItsGroupsOnEveryNicTheyCross) {
  testing::Inputs in = testing::load("consumer-4090-a100.yaml", "gpt3-1.3b.yaml");
  in.workload.training.global_batch = 9;
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  models::Plan p = plan_of("tp8 on box 2 beside a tp4 | tp2 pipeline on boxes 0 and 3", 1,
                           {models::Replica{7, {models::Stage{24, {16, 17, 18, 19, 20, 21, 22, 23}}}},
                            models::Replica{2, {models::Stage{15, {4, 5, 6, 7}}, models::Stage{9, {24, 25}}}}});
  p.recompute = models::Recompute::kNone;
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_GT(e.sim.breakdown.dp_comm_s, 0.3 * e.sim.iteration_time_s) << "the sync is what this test is about";
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, e.sim.breakdown.dp_comm_s, 0.03 * e.sim.breakdown.dp_comm_s);
  EXPECT_NEAR(e.analytic.iteration_time_s, e.sim.iteration_time_s, 0.015 * e.sim.iteration_time_s);
}

// Found by scripts/engine_diff.py (seed 2). GPT-3 2.7B on the mixed A100/V100 cluster, split
// 30 | 2 layers (A100s 2 and 8) and 2 | 30 (V100s 28-31 at TP 4, 24-25 at TP 2). V100s 24 and
// 25 share one NIC rail; their last segment's groups (layers 30-31, with A100 8) are ready a
// quarter second before the slowest replica ends and leave the rail early, then the 28-layer
// segment's two groups share it: 2 x 2.2 GB through a 100 Gb/s rail, 0.37 s. Sharing the rail
// from the first ready bucket, as if every group were there from the start, put that end at 0.20 s.
TEST(EmbeddingSync, GroupsShareARailFromWhenTheyAreReady) {
  testing::Inputs in = testing::load("mixed-a100-v100.yaml", "gpt3-2.7b.yaml");
  in.workload.training.global_batch = 8;
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  models::Plan p = plan_of("30 | 2 on A100s beside 2 | 30 on V100s", 0,
                           {models::Replica{5, {models::Stage{30, {2}}, models::Stage{2, {8}}}},
                            models::Replica{3, {models::Stage{2, {28, 29, 30, 31}}, models::Stage{30, {24, 25}}}}});
  p.recompute = models::Recompute::kFull;
  const BothEngines e = both_feasible(c, w, p);
  const double v_bytes = 28.0 / 2 * w.model.params_per_layer() * models::grad_sync_bytes_per_param(w.training);
  const double rail_s = 2 * v_bytes / models::achieved_bandwidth_Bps(c.node_types[1].nics);
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, rail_s, 0.1 * rail_s);
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, e.sim.breakdown.dp_comm_s, 0.05 * e.sim.breakdown.dp_comm_s);
}

}  // namespace
}  // namespace hetsim::sim
