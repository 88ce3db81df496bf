// SPDX-License-Identifier: Apache-2.0
// The ZeRO-1/2 weight all-gather overlapped with the next step's first forward pass
// (Megatron-Core overlap_param_gather): what each stage hides of it, in both engines.
#include <gtest/gtest.h>

#include "engine_inputs.hpp"
#include "simulator.hpp"
#include "step_cost.hpp"

namespace hetsim::sim {
namespace {

using testing::both_feasible;
using testing::BothEngines;
using testing::plan_of;

StageTiming stage(int replica, double passes_end_s, double gather_s, double first_forward_s) {
  StageTiming st;
  st.replica = replica;
  st.passes_end_s = passes_end_s;
  st.gather_tail_s = gather_s;
  st.first_forward_s = first_forward_s;
  st.end_s = 5.0;      // every stage ends the gather together
  st.dp_wait_s = 1.5;  // of it, the 1 s gather
  return st;
}

// Replica 0 finishes its passes last (3.0 s): it hides its first forward (0.3 s) of the 1 s
// gather. Replica 1 finished 0.4 s earlier, so it hides its first forward (0.2 s) and that slack.
// A stage without an overlapped gather (first forward 0) keeps its end.
TEST(GatherOverlap, AStageHidesTheGatherBehindItsFirstForwardAndItsReplicasSlack) {
  std::vector<StageTiming> stages = {stage(0, 3.0, 1.0, 0.3), stage(1, 2.6, 1.0, 0.2), stage(2, 2.0, 1.0, 0.0)};
  hide_overlapped_gathers(stages);
  EXPECT_DOUBLE_EQ(stages[0].hidden_tail_s, 0.3);
  EXPECT_DOUBLE_EQ(stages[0].end_s, 4.7);
  EXPECT_DOUBLE_EQ(stages[0].dp_wait_s, 1.2);
  EXPECT_DOUBLE_EQ(stages[1].hidden_tail_s, 0.6);
  EXPECT_DOUBLE_EQ(stages[1].end_s, 4.4);
  EXPECT_DOUBLE_EQ(stages[2].hidden_tail_s, 0.0);
  EXPECT_DOUBLE_EQ(stages[2].end_s, 5.0);
  // With more slack than the gather, it hides the whole gather, not more.
  stages = {stage(0, 3.0, 1.0, 0.3), stage(1, 1.0, 1.0, 0.2)};
  hide_overlapped_gathers(stages);
  EXPECT_DOUBLE_EQ(stages[1].hidden_tail_s, 1.0);
}

// Found by simulating `hetsim plan`'s best plan for GPT-3 1.3B on the 4090 + A100 lab cluster
// (ZeRO-1 overlapped, one 25 Gb/s NIC a node): RTX 4090s running 3 micro-batches of 4 beside A100s
// running 5, which finish their passes ~0.35 s earlier. The weights' all-gather (~1 s through the
// NICs) outlasts every first forward, the A100's most (0.18 s against the 4090's 0.33 s). The
// simulator ended the step at the A100's gather less its first forward (4.15 s), the cost model at
// the 4090's (3.99 s); in the steady state the A100 replica starts its next passes later by what
// its slack allows, so the 4090s pace the step: both engines now take each replica's slack
// (this plan, one box of each: 4.07 s simulated against 3.91 s before, now 3.913 and 3.911 s).
TEST(GatherOverlap, AReplicaWithSlackHidesMoreOfTheGather) {
  testing::Inputs in = testing::load("consumer-4090-a100.yaml", "gpt3-1.3b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 4 * (8 * 3 + 8 * 5);
  std::vector<models::Replica> replicas;
  for (int g = 0; g < 8; ++g) replicas.push_back(models::Replica{3, {models::Stage{24, {g}}}});        // a 4090 box
  for (int g = 32; g < 40; ++g) replicas.push_back(models::Replica{5, {models::Stage{24, {g}}}});      // the A100 node
  models::Plan p = plan_of("4090s at 3 micro-batches beside A100s at 5, ZeRO-1", 1, std::move(replicas));
  p.micro_batch = 4;
  p.recompute = models::Recompute::kSelective;
  p.overlap_grad_sync = true;
  const BothEngines e = both_feasible(in.cluster, w, p);
  testing::expect_syncs_agree(e, 0.1, 0.03, 0.01);
}

/// The 4090s' peaks scaled by `factor`.
testing::Inputs with_4090_peak(testing::Inputs in, double factor) {
  for (models::NodeType& t : in.cluster.node_types)
    if (t.gpu.name == "rtx4090")
      for (auto& [dtype, flops] : t.gpu.peak_flops) flops *= factor;
  return in;
}

// The plan `hetsim plan` picks for GPT-3 1.3B on the 4090 + A100 cluster: 32 RTX 4090 replicas at
// 3 or 2 micro-batches of 4 beside 8 A100 replicas at 5, ZeRO-1 overlapped. With the 4090s 25%
// faster their passes end with the A100s'; both engines put the weights' gather after the step
// and hid it behind the first forward and the slack, so the faster 4090s' early buckets started
// the reduction before their own gather had ended: 4.05 s against 3.99 s with the catalog's 4090
// (4.06 simulated). In the cycle that starts with the gather (models::gathers_lead_the_step) the
// faster GPU gives no longer a step, and the engines agree.
TEST(GatherOverlap, AFasterGpuGivesNoLongerACycle) {
  const testing::Inputs base = testing::load("consumer-4090-a100.yaml", "gpt3-1.3b.yaml");
  std::vector<models::Replica> replicas;
  for (int g = 0; g < 32; ++g) replicas.push_back(models::Replica{g < 16 ? 3 : 2, {models::Stage{24, {g}}}});
  for (int g = 32; g < 40; ++g) replicas.push_back(models::Replica{5, {models::Stage{24, {g}}}});
  models::Plan p = plan_of("4090s at 3 and 2 micro-batches beside A100s at 5, ZeRO-1", 1, std::move(replicas));
  p.micro_batch = 4;
  p.recompute = models::Recompute::kSelective;
  p.overlap_grad_sync = true;
  models::Workload w = base.workload;
  w.training.global_batch = 4 * (16 * 3 + 16 * 2 + 8 * 5);
  const BothEngines before = both_feasible(base.cluster, w, p);
  const testing::Inputs faster = with_4090_peak(base, 1.25);
  const BothEngines after = both_feasible(faster.cluster, w, p);
  EXPECT_LE(after.analytic.iteration_time_s, before.analytic.iteration_time_s * (1 + 1e-9));
  EXPECT_LE(after.sim.iteration_time_s, before.sim.iteration_time_s * (1 + 1e-3));
  testing::expect_syncs_agree(before, 0.1, 0.03, 0.01);
  testing::expect_syncs_agree(after, 0.1, 0.03, 0.01);
}

// Two stages of a pipeline each gather their weights as the step starts; the second stage's first
// forward begins once the first stage's has run, so it hides its gather behind that too. Hand
// figures, forwards 0.3 s and 0.2 s: replica 0's gathers of 0.4 s are short by 0.4 - 0.3 = 0.1 s at
// stage 0 and not at all at stage 1 (0.4 - 0.5); replica 1's 0.2 s hides at stage 0 and its 0.7 s
// at stage 1 is short by 0.7 - (0.3 + 0.2) = 0.2 s.
TEST(GatherOverlap, ALaterStageHidesItsGatherBehindThePipelinesFill) {
  testing::Inputs in = testing::load("dgx-a100.yaml", "gpt3-1.3b.yaml");
  models::Plan p = plan_of("two two-stage replicas", 1,
                           {models::Replica{4, {models::Stage{12, {0}}, models::Stage{12, {1}}}},
                            models::Replica{4, {models::Stage{12, {2}}, models::Stage{12, {3}}}}});
  p.overlap_grad_sync = true;
  ASSERT_TRUE(models::gathers_lead_the_step(p));
  const std::vector<int> shape_of = {0, 0, 0, 0};
  const std::vector<models::StageCost> costs(1);
  const std::vector<models::StageTimes> times = {{0.3, 0.6}, {0.2, 0.4}, {0.3, 0.6}, {0.2, 0.4}};
  const std::vector<double> replica_time_s = {3.6, 3.6};
  const std::vector<char> tp_in_one_node(4, 1);
  const std::vector<int> front_gpu = {0, 1, 2, 3};
  const models::StepInput step{in.cluster,     in.workload, p,          2, shape_of, costs, times, replica_time_s,
                               tp_in_one_node, front_gpu,   0,          nullptr};
  const std::vector<double> delay_s = models::replica_gather_delay_s(step, {0.4, 0.4, 0.2, 0.7});
  ASSERT_EQ(delay_s.size(), 2u);
  EXPECT_NEAR(delay_s[0], 0.1, 1e-12);
  EXPECT_NEAR(delay_s[1], 0.2, 1e-12);
  // Interleaved stages keep the gather after the step; without overlap or ZeRO-1/2 there is none.
  p.schedule = models::Schedule::kInterleaved;
  p.interleave = 2;
  EXPECT_FALSE(models::gathers_lead_the_step(p));
  p.schedule = models::Schedule::k1f1b;
  p.zero = 0;
  EXPECT_FALSE(models::gathers_lead_the_step(p));
  p.zero = 1;
  p.overlap_grad_sync = false;
  EXPECT_FALSE(models::gathers_lead_the_step(p));
}

// Two A100 | V100 pipelines on InfiniBand, each stage on its own node, ZeRO-1 overlapped:
// the engines agree on the cycle where the second stage's gather runs during the pipeline's fill.
TEST(GatherOverlap, BothEnginesRunTheCycleOfAPipeline) {
  testing::Inputs in = testing::load("mixed-a100-v100.yaml", "gpt3-1.3b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 32;
  models::Plan p = plan_of("A100 | V100 pipelines, ZeRO-1", 1,
                           {models::Replica{16, {models::Stage{14, {0}}, models::Stage{10, {16}}}},
                            models::Replica{16, {models::Stage{14, {8}}, models::Stage{10, {24}}}}});
  p.overlap_grad_sync = true;
  const BothEngines e = both_feasible(in.cluster, w, p);
  EXPECT_NEAR(e.analytic.iteration_time_s, e.sim.iteration_time_s, 0.02 * e.sim.iteration_time_s);
}

}  // namespace
}  // namespace hetsim::sim
