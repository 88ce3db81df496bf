// SPDX-License-Identifier: Apache-2.0
// The ZeRO-1/2 weight all-gather overlapped with the next step's first forward pass
// (Megatron-Core overlap_param_gather): what each stage hides of it, in both engines.
#include <gtest/gtest.h>

#include "engine_inputs.hpp"
#include "simulator.hpp"

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

}  // namespace
}  // namespace hetsim::sim
