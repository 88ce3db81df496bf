// SPDX-License-Identifier: Apache-2.0
// The Report of a simulation from the cost model's: figures that follow the simulated time.
#include <gtest/gtest.h>

#include "sim_report.hpp"

namespace hetsim::sim {
namespace {

// The egress a plan's traffic between zones pays is a price per step: per hour it follows the
// simulated step time (it kept the cost model's, and the price per token scaled it again).
TEST(SimReport, EgressPerHourFollowsTheSimulatedStepTime) {
  models::Report analytic;
  analytic.iteration_time_s = 2.0;
  analytic.tokens_per_s = 1000.0;
  const double nodes_per_hour = 100.0, egress_per_step = 0.05;
  analytic.cost_per_hour = nodes_per_hour + egress_per_step / 2.0 * 3600.0;  // $190/h
  analytic.cost_per_million_tokens = models::cost_per_million_tokens(analytic.cost_per_hour, analytic.tokens_per_s);
  analytic.extra["egress_dollars_per_step"] = egress_per_step;
  SimResult sim;
  sim.iteration_time_s = 4.0;  // the simulator finds the step twice as long
  const models::Report r = make_sim_report(analytic, sim);
  EXPECT_DOUBLE_EQ(r.tokens_per_s, 500.0);
  EXPECT_NEAR(r.cost_per_hour, nodes_per_hour + egress_per_step / 4.0 * 3600.0, 1e-9);  // $145/h
  // Per million tokens: the nodes' hours per token double, the egress per token stays.
  const double expected = (nodes_per_hour / 3600.0 * 4.0 + egress_per_step) / (500.0 * 4.0) * 1e6;
  EXPECT_NEAR(r.cost_per_million_tokens, expected, 1e-9 * expected);
  EXPECT_EQ(r.extra.at("egress_dollars_per_step"), egress_per_step);
}

TEST(SimReport, WithoutEgressThePricePerHourStands) {
  models::Report analytic;
  analytic.iteration_time_s = 2.0;
  analytic.tokens_per_s = 1000.0;
  analytic.cost_per_hour = 100.0;
  SimResult sim;
  sim.iteration_time_s = 2.5;
  const models::Report r = make_sim_report(analytic, sim);
  EXPECT_DOUBLE_EQ(r.cost_per_hour, 100.0);
  EXPECT_NEAR(r.cost_per_million_tokens, models::cost_per_million_tokens(100.0, 800.0), 1e-12);
}

// Found by the s26 user study (p10-rank2: one 7-stage H100 replica of 1 micro-batch beside
// single-stage MI355X replicas of 2 and 1): the breakdown took the stage that ended last and was
// busiest counting its DP wait. Without overlap every member of the sync ends at once, so a
// 1-micro-batch replica (half the compute, twice the wait) tied with the 2-micro-batch one that
// set the pace; with overlap the weight gather's credit (each stage's own first forward) made the
// H100 replica end last, and its 5-layer stage's compute showed beside 0.65 s of bubble. The
// critical path is the replica whose passes end last, then the exposed sync and the update.
SimResult two_replicas_one_sync() {
  SimResult sim;
  StageTiming one_mb;  // replica 0: 1 micro-batch of 3 s, then waits 3 s for replica 1 and the 0.5 s sync
  one_mb.replica = 0;
  one_mb.compute_s = 3.0;
  one_mb.passes_end_s = 3.0;
  one_mb.dp_wait_s = 3.5;
  one_mb.optimizer_s = 1.0;
  one_mb.end_s = 7.5;
  StageTiming two_mb = one_mb;  // replica 1: 2 micro-batches, the pace
  two_mb.replica = 1;
  two_mb.compute_s = 6.0;
  two_mb.passes_end_s = 6.0;
  two_mb.dp_wait_s = 0.5;
  sim.stages = {one_mb, two_mb};
  sim.iteration_time_s = 7.5;
  return sim;
}

TEST(SimReport, TheBreakdownFollowsTheReplicaWhosePassesEndLast) {
  const models::Report r = make_sim_report(models::Report{}, two_replicas_one_sync());
  EXPECT_EQ(r.breakdown.compute_s, 6.0);  // was 3.0 (the tie went to replica 0), dp 3.5
  EXPECT_EQ(r.breakdown.dp_comm_s, 0.5);
  EXPECT_EQ(r.breakdown.optimizer_s, 1.0);
  EXPECT_EQ(r.breakdown.bubble_s, 0.0);
}

TEST(SimReport, AnOverlappedGatherThatMovesTheEndsDoesNotMoveTheBreakdown) {
  SimResult sim = two_replicas_one_sync();
  // Replica 0 as a 2-stage pipeline of 1.5 s stages: its stage 0 drains last, at 3 s.
  sim.stages[0].compute_s = 1.5;
  StageTiming second = sim.stages[0];
  second.stage = 1;
  second.passes_end_s = 2.5;
  sim.stages.insert(sim.stages.begin() + 1, second);
  // The gather after the update is credited with each stage's first forward: replica 1's (0.9 s
  // of its 6 s) moves its end further back than replica 0's (0.1 s).
  sim.stages[0].end_s = sim.stages[1].end_s = 7.5 + 0.2 - 0.1;
  sim.stages[2].end_s = 7.5 + 0.2 - 0.9;
  sim.iteration_time_s = 7.6;
  const models::Report r = make_sim_report(models::Report{}, sim);
  EXPECT_EQ(r.breakdown.compute_s, 6.0);  // was 1.5, beside 3.5 s of dp comm and 1.6 s of bubble
  EXPECT_NEAR(r.breakdown.dp_comm_s, 0.6, 1e-12);  // 7.6 - 6 - 1
  EXPECT_EQ(r.breakdown.optimizer_s, 1.0);
  EXPECT_EQ(r.breakdown.bubble_s, 0.0);
}

}  // namespace
}  // namespace hetsim::sim
