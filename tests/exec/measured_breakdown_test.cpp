// SPDX-License-Identifier: Apache-2.0
// The measured Report's breakdown is defined as the predictor's (models/report.hpp Breakdown):
// on the critical path, summing to the iteration time, with waits for other ranks counted as
// bubble and not as communication.
#include <gtest/gtest.h>

#include <map>

#include "exec_test_support.hpp"
#include "runner/run.hpp"

namespace hetsim::exec {
namespace {

using testing::plan;
using testing::replica;
using testing::stage;

double sum(const models::Breakdown& b) {
  return b.compute_s + b.tp_comm_s + b.pp_comm_s + b.dp_comm_s + b.bubble_s + b.optimizer_s;
}

RankSummary summary(double step, double compute, double pp, double dp, double pipeline) {
  RankSummary s;
  s.step_time_s = step;
  s.compute_s = compute;
  s.pp_comm_s = pp;
  s.dp_comm_s = dp;
  s.optimizer_s = 0.01;
  s.pipeline_s = pipeline;
  return s;
}

// Built from summaries: the busiest rank's own step (1.0 s) is not the iteration time (1.2 s,
// the slowest rank's); its categories plus the bubble must add up to the latter.
TEST(MeasuredBreakdown, CategoriesSumToTheIterationTime) {
  RunSpec s;
  s.cluster = testing::cpu_cluster(2, 0);
  s.workload = testing::tiny_workload();
  s.plan = plan("pp2", {replica(4, {stage(3, 0), stage(1, 1)})});
  const RankLayout layout(s.plan, s.workload.model);
  const std::vector<RankSummary> ranks = {summary(1.0, 0.8, 0.05, 0.02, 0.9), summary(1.2, 0.3, 0.05, 0.02, 1.1)};
  const models::Report r = build_report(s, layout, ranks, {});
  EXPECT_DOUBLE_EQ(r.iteration_time_s, 1.2);
  EXPECT_DOUBLE_EQ(r.breakdown.compute_s, 0.8);  // the bottleneck stage's
  EXPECT_NEAR(sum(r.breakdown), r.iteration_time_s, 1e-12);
  EXPECT_NEAR(r.breakdown.bubble_s, 1.2 - 0.8 - 0.05 - 0.02 - 0.01, 1e-12);
}

// With two replicas the critical path runs through the replica with the longer pipeline, even
// when the other one has a busier rank (models/predictor.cpp takes the slowest replica's
// bottleneck stage).
TEST(MeasuredBreakdown, CriticalRankIsTheBusiestOfTheSlowestReplica) {
  models::Plan p = plan("dp2", {replica(2, {stage(3, 0), stage(1, 1)}), replica(2, {stage(2, 2), stage(2, 3)})});
  const RankLayout layout(p, testing::tiny_workload().model);
  const std::vector<RankSummary> ranks = {summary(1, 0.7, 0, 0, 0.8), summary(1, 0.2, 0, 0, 0.8),
                                          summary(1, 0.5, 0, 0, 0.9), summary(1, 0.6, 0, 0, 0.95)};
  EXPECT_EQ(critical_rank(layout, ranks), 3);
}

// End to end on an unequal pipeline (CPU backend, threads as ranks).
TEST(MeasuredBreakdown, AnUnequalPipelineRunAddsUpToItsIterationTime) {
  RunSpec s;
  s.cluster = testing::cpu_cluster(1, 1);
  s.workload = testing::tiny_workload();
  s.plan = plan("pp2-unequal", {replica(4, {stage(3, 0), stage(1, 1)})});
  s.steps = 3;
  const RunOutcome out = run_in_process(s);
  const models::Report& r = out.report;
  ASSERT_GT(r.iteration_time_s, 0);
  // Summaries travel between ranks as float: rounding of a few parts in 1e7 per figure.
  EXPECT_NEAR(sum(r.breakdown), r.iteration_time_s, 1e-6 * r.iteration_time_s);
  EXPECT_GT(r.breakdown.bubble_s, 0);
}

// pp 2, dp 1, tied embeddings: a slow first stage (cpu-scalar, 3 layers) and a fast last one.
// The last stage waits for the first one's forward before each of its own and, at the end, for
// the first stage's last backward before the tied-embedding sync. Those waits are bubble: the
// last stage's pp and dp communication stay far below the time it waited.
TEST(MeasuredBreakdown, WaitingForAnotherRankIsBubbleNotCommunication) {
  RunSpec s;
  s.cluster = testing::cpu_cluster(0, 2);
  s.workload = testing::tiny_workload();
  // Wide enough that a layer's compute (milliseconds) dwarfs a thread's wake-up (microseconds).
  s.workload.model.hidden = 64;
  s.workload.model.ffn_hidden = 256;
  s.workload.model.seq_len = 32;
  s.plan = plan("pp2-slow-first", {replica(4, {stage(3, 0), stage(1, 1)})});
  s.steps = 4;
  const RunOutcome out = run_in_process(s);
  std::map<int, std::vector<Measurement>> by_rank;
  for (const auto& m : out.measurements) by_rank[m.rank].push_back(m);
  const RankSummary first = summarize(by_rank[0], s.steps, 4, 4, 0);
  const RankSummary last = summarize(by_rank[1], s.steps, 4, 4, 0);
  ASSERT_GT(first.backward_per_micro_batch_s, 0);
  // The last stage waits at least for the first stage's last backward (and its first forward).
  EXPECT_GT(last.wait_s, 0.5 * first.backward_per_micro_batch_s);
  EXPECT_LT(last.dp_comm_s, 0.5 * first.backward_per_micro_batch_s)
      << "the tied-embedding sync counted the wait for the first stage's last backward";
  EXPECT_LT(last.pp_comm_s, 0.5 * first.forward_per_micro_batch_s * 4)
      << "the receives counted the waits for the first stage's forwards";
  for (const auto& m : by_rank[1]) {
    if (m.op == "tied_embedding_wait" || m.op == "recv_activation_wait") {
      EXPECT_EQ(to_string(m.op_class), std::string("bubble"));
    }
  }
}

// dp 2, a fast replica (cpu-avx2) and a slow one (cpu-scalar): the fast one waits for the slow
// one before the gradient all-reduce. That wait is bubble, so its dp_comm is the all-reduce only.
TEST(MeasuredBreakdown, WaitingForASlowerReplicaIsNotGradientSync) {
  RunSpec s;
  s.cluster = testing::cpu_cluster(1, 1);
  s.workload = testing::tiny_workload();
  s.workload.model.hidden = 64;
  s.workload.model.ffn_hidden = 256;
  s.workload.model.seq_len = 32;
  s.plan = plan("dp2-fast-slow", {replica(2, {stage(4, 0)}), replica(2, {stage(4, 1)})});
  s.steps = 4;
  const RunOutcome out = run_in_process(s);
  std::map<int, std::vector<Measurement>> by_rank;
  for (const auto& m : out.measurements) by_rank[m.rank].push_back(m);
  const RankSummary fast = summarize(by_rank[0], s.steps, 2, 2, 0);
  const RankSummary slow = summarize(by_rank[1], s.steps, 2, 2, 0);
  const double gap_s = slow.compute_s - fast.compute_s;
  ASSERT_GT(gap_s, 0) << "cpu-scalar should be slower than cpu-avx2";
  EXPECT_GT(fast.wait_s, 0.5 * gap_s);
  EXPECT_LT(fast.dp_comm_s, 0.5 * gap_s) << "the all-reduce counted the wait for the slower replica";
}

}  // namespace
}  // namespace hetsim::exec
