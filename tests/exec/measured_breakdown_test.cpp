// SPDX-License-Identifier: Apache-2.0
// The measured Report's breakdown is defined as the predictor's (models/report.hpp Breakdown):
// on the critical path, summing to the iteration time, with waits for other ranks counted as
// bubble and not as communication.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

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

/// Three steps of an unequal pipeline (CPU backend, threads as ranks).
RunSpec unequal_pipeline_run() {
  RunSpec s;
  s.cluster = testing::cpu_cluster(1, 1);
  s.workload = testing::tiny_workload();
  s.plan = plan("pp2-unequal", {replica(4, {stage(3, 0), stage(1, 1)})});
  s.steps = 3;
  return s;
}

// End to end on an unequal pipeline.
TEST(MeasuredBreakdown, AnUnequalPipelineRunAddsUpToItsIterationTime) {
  const RunOutcome out = run_in_process(unequal_pipeline_run());
  const models::Report& r = out.report;
  ASSERT_GT(r.iteration_time_s, 0);
  // Summaries travel between ranks as float: rounding of a few parts in 1e7 per figure.
  EXPECT_NEAR(sum(r.breakdown), r.iteration_time_s, 1e-6 * r.iteration_time_s);
  EXPECT_GT(r.breakdown.bubble_s, 0);
}

// Without keep_measurements (`run` without --out) each step's records are folded into the
// summary and dropped (10,000 steps held 1 GB): no record is returned and the Report is still
// made of every measured step, its breakdown adding up as above.
TEST(MeasuredBreakdown, ARunThatKeepsNoRecordsStillReportsItsSteps) {
  RunSpec s = unequal_pipeline_run();
  s.options.keep_measurements = false;
  const RunOutcome out = run_in_process(s);
  EXPECT_TRUE(out.measurements.empty());
  const models::Report& r = out.report;
  ASSERT_GT(r.iteration_time_s, 0);
  EXPECT_GT(r.breakdown.compute_s, 0);
  EXPECT_NEAR(sum(r.breakdown), r.iteration_time_s, 1e-6 * r.iteration_time_s);
  ASSERT_EQ(r.stages.size(), 2u);
  EXPECT_GT(r.stages[0].forward_s, 0);
}

// Folded within the step, record by record (fold_records_every 1: as a step of 65,536
// micro-batches folds every 4096), the step record and its passes' ops arrive in different
// parts, and the span, the bubble and the stage times still come out.
TEST(MeasuredBreakdown, RecordsFoldedWithinTheStepGiveTheSameKindOfReport) {
  RunSpec s = unequal_pipeline_run();
  s.options.keep_measurements = false;
  s.options.fold_records_every = 1;
  const RunOutcome out = run_in_process(s);
  EXPECT_TRUE(out.measurements.empty());
  const models::Report& r = out.report;
  ASSERT_GT(r.iteration_time_s, 0);
  EXPECT_NEAR(sum(r.breakdown), r.iteration_time_s, 1e-6 * r.iteration_time_s);
  EXPECT_GT(r.breakdown.bubble_s, 0);
  ASSERT_EQ(r.stages.size(), 2u);
  EXPECT_GT(r.stages[0].forward_s, 0);
  EXPECT_GT(r.stages[1].backward_s, 0);
}

// `run --out` holds a step's records whole (they are written in start order, the step's own
// record first): past RunSpec::max_step_records the rank fails with why, not the host's OOM killer.
TEST(MeasuredBreakdown, ARunWritingRecordsStopsAtItsRecordBound) {
  RunSpec s = unequal_pipeline_run();
  s.options.keep_measurements = false;
  s.options.fold_records_every = 1;
  s.on_step_records = [](int, std::vector<Measurement>) {};
  s.max_step_records = 10;
  try {
    run_in_process(s);
    FAIL() << "expected the run to stop at 10 records";
  } catch (const RankFailure& e) {
    EXPECT_NE(std::string(e.what()).find("--out: a step holds more than 10 op records"), std::string::npos) << e.what();
  }
}

// summarize() is the mean over the measured steps (the first is warm-up) of each step's sums and
// of its span (its step record's start to its last pass op's end), which is what lets a run fold
// each step's records in as it goes.
TEST(MeasuredBreakdown, SummaryIsTheMeanOfTheMeasuredStepsAndTheirSpans) {
  const auto rec = [](int step, const char* op, const char* phase, OpClass c, double from, double to) {
    Measurement m;
    m.step = step;
    m.op = op;
    m.phase = phase;
    m.op_class = c;
    m.start_s = from;
    m.end_s = to;
    return m;
  };
  std::vector<Measurement> all;
  for (int step = 1; step <= 3; ++step) {
    const double t0 = 10.0 * step;
    all.push_back(rec(step, "step", "", OpClass::kCompute, t0, t0 + 5));
    all.push_back(rec(step, "mlp", "forward", OpClass::kCompute, t0 + 0.5, t0 + 1.5 + step));
    all.push_back(rec(step, "adam", "optimizer", OpClass::kOptimizer, t0 + 4, t0 + 4.5));
  }
  const RankSummary s = summarize(all, 3, 1, 1, 0);
  // Steps 2 and 3 are measured (step 1 is warm-up): means over the two.
  EXPECT_DOUBLE_EQ(s.step_time_s, 5);
  EXPECT_DOUBLE_EQ(s.compute_s, (3.0 + 4.0) / 2);
  EXPECT_DOUBLE_EQ(s.pipeline_s, (3.5 + 4.5) / 2);
  EXPECT_DOUBLE_EQ(s.optimizer_s, 0.5);
}

/// tiny-gpt wide enough that a layer's compute (milliseconds) dwarfs a thread's wake-up (microseconds).
models::Workload wide_tiny_workload() {
  models::Workload w = testing::tiny_workload();
  w.model.hidden = 64;
  w.model.ffn_hidden = 256;
  w.model.seq_len = 32;
  return w;
}

/// The end of a rank's last compute op of a phase in a step (micro-batch `mb`, or any with -1).
double last_compute_end(const std::vector<Measurement>& ms, int step, const std::string& phase, int mb = -1) {
  double end = 0;
  for (const auto& m : ms)
    if (m.step == step && m.phase == phase && m.op_class == OpClass::kCompute && (mb < 0 || m.micro_batch == mb))
      end = std::max(end, m.end_s);
  return end;
}

// The assertions are causal, not timings (the 2 cores here are shared: a thread can be
// descheduled for milliseconds inside any op). A wait is bubble when the communication op that
// follows it starts only once the peer has done what it waited for: then the time spent waiting
// is in the wait op, and the communication op holds the transfer alone.

// pp 2, dp 1, tied embeddings: a slow first stage (cpu-scalar, 3 layers) and a fast last one.
// The last stage waits for the first one's forward before each of its own and, at the end, for
// the first stage's last backward before the tied-embedding sync.
TEST(MeasuredBreakdown, WaitingForAnotherRankIsBubbleNotCommunication) {
  RunSpec s;
  s.cluster = testing::cpu_cluster(0, 2);
  s.workload = wide_tiny_workload();
  s.plan = plan("pp2-slow-first", {replica(4, {stage(3, 0), stage(1, 1)})});
  s.steps = 3;
  const RunOutcome out = run_in_process(s);
  std::map<int, std::vector<Measurement>> by_rank;
  for (const auto& m : out.measurements) by_rank[m.rank].push_back(m);
  const auto& first = by_rank[0];
  int receives = 0, syncs = 0, waits = 0;
  for (const auto& m : by_rank[1]) {
    if (m.op == "tied_embedding_wait" || m.op == "recv_activation_wait") {
      EXPECT_EQ(to_string(m.op_class), std::string("bubble")) << m.op;
      ++waits;
    }
    if (m.op == "recv_activation") {
      ++receives;
      EXPECT_EQ(to_string(m.op_class), std::string("pp_comm"));
      EXPECT_GE(m.start_s, last_compute_end(first, m.step, "forward", m.micro_batch))
          << "step " << m.step << " micro-batch " << m.micro_batch << ": the receive began before the sender's forward ended";
    }
    if (m.op == "tied_embedding_all_reduce") {
      ++syncs;
      EXPECT_EQ(to_string(m.op_class), std::string("dp_comm"));
      EXPECT_GE(m.start_s, last_compute_end(first, m.step, "backward"))
          << "step " << m.step << ": the sync began before the first stage's last backward ended";
    }
  }
  EXPECT_EQ(receives, 3 * 4);
  EXPECT_EQ(syncs, 3);
  EXPECT_EQ(waits, receives + syncs);
}

// dp 2, a fast replica (cpu-avx2) and a slow one (cpu-scalar): the fast one waits for the slow
// one before the gradient all-reduce; its dp_comm ops start once the slow one's backward ended.
TEST(MeasuredBreakdown, WaitingForASlowerReplicaIsNotGradientSync) {
  RunSpec s;
  s.cluster = testing::cpu_cluster(1, 1);
  s.workload = wide_tiny_workload();
  s.plan = plan("dp2-fast-slow", {replica(2, {stage(4, 0)}), replica(2, {stage(4, 1)})});
  s.steps = 3;
  const RunOutcome out = run_in_process(s);
  std::map<int, std::vector<Measurement>> by_rank;
  for (const auto& m : out.measurements) by_rank[m.rank].push_back(m);
  int syncs = 0, waits = 0;
  for (const auto& m : by_rank[0]) {
    if (m.phase != "grad_sync" || m.op.rfind("loss", 0) == 0) continue;
    if (m.op_class == OpClass::kBubble) ++waits;
    if (m.op_class != OpClass::kDpComm) continue;
    ++syncs;
    EXPECT_GE(m.start_s, last_compute_end(by_rank[1], m.step, "backward"))
        << m.op << " of step " << m.step << " began before the slow replica's backward ended";
  }
  EXPECT_GE(syncs, 3);
  EXPECT_EQ(waits, 3);  // one per step, before the group's first collective
}

}  // namespace
}  // namespace hetsim::exec
