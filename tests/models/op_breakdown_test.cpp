// SPDX-License-Identifier: Apache-2.0
// predict --ops: the cost model's ops per micro-batch of each distinct stage (op_breakdown).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cost_test_util.hpp"
#include "op_breakdown.hpp"
#include "predictor.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::gpt_workload;
using testing::node_type;
using testing::round_gpu;

const OpTime* find_op(const StageOps& g, const std::string& name) {
  for (const OpTime& op : g.ops)
    if (op.name == name) return &op;
  return nullptr;
}

struct Fixture {
  Cluster cluster;
  Workload workload;
  Plan plan;
  PlanWork work;
  std::vector<StageOps> groups;

  Fixture(int tp, int pp, int dp, Recompute recompute) {
    cluster = cluster_of({node_type("n", round_gpu("g", 100e12), 8, 100e9, 10e9)}, {{0, 4}});
    workload = gpt_workload(8, 1024, 16, 1024, 64);
    UniformPlanOptions o;
    o.micro_batch = 2;
    o.recompute = recompute;
    plan = std::get<Plan>(make_uniform_plan(cluster, workload, tp, pp, dp, o));
    work = build_plan_work(cluster, workload, plan);
    groups = op_breakdown(cluster, plan, work);
  }
};

TEST(OpBreakdown, AlikeStagesShareOneGroupAndEveryStageIsInOne) {
  const Fixture f(2, 4, 4, Recompute::kNone);
  // First stage (embedding), middle stages, last stage (LM head): three groups; the middle
  // stages 1 and 2 of every replica run the same ops.
  ASSERT_EQ(f.groups.size(), 3u);
  int stages = 0;
  for (const StageOps& g : f.groups) stages += g.stage_count;
  EXPECT_EQ(stages, 16);
  EXPECT_EQ(f.groups[0].stages, "replicas 0-3, stage 0");
  EXPECT_EQ(f.groups[1].stages, "replicas 0-3, stages 1-2");
  EXPECT_EQ(f.groups[2].stages, "replicas 0-3, stage 3");
  EXPECT_NE(find_op(f.groups[0], "embedding"), nullptr);
  EXPECT_EQ(find_op(f.groups[1], "embedding"), nullptr);
  EXPECT_NE(find_op(f.groups[2], "lm_head"), nullptr);
  for (const StageOps& g : f.groups) {
    EXPECT_EQ(g.gpu_type, "g");
    EXPECT_EQ(g.layers, 2);
    EXPECT_EQ(g.tp, 2);
  }
}

TEST(OpBreakdown, OpsAndSendsSumToTheStageTimeOfTheReport) {
  const Fixture f(2, 4, 4, Recompute::kFull);
  const Report r = predict(f.cluster, f.workload, f.plan);
  std::map<std::pair<int, int>, const StageReport*> rows;
  for (const StageReport& s : r.stages) rows[{s.replica, s.stage}] = &s;
  for (const StageOps& g : f.groups) {
    double ops_s = 0;
    for (const OpTime& op : g.ops) ops_s += op.total_s();
    // No tp_comm_overlap here: every op's whole time is in the stage's.
    EXPECT_NEAR(ops_s + g.send_forward_s + g.send_backward_s, g.forward_s + g.backward_s, 1e-12) << g.stages;
  }
  // The groups carry the stage rows' figures.
  const StageReport& middle = *rows.at({0, 1});
  // (build_plan_work sums every stage itself; predict copies alike replicas' figures: the last
  // bit may differ.)
  EXPECT_NEAR(f.groups[1].forward_s, middle.forward_s, 1e-12 * middle.forward_s);
  EXPECT_NEAR(f.groups[1].backward_s, middle.backward_s, 1e-12 * middle.backward_s);
  EXPECT_GT(f.groups[1].send_forward_s, 0);   // to the next stage, on another node
  EXPECT_GT(f.groups[1].send_backward_s, 0);  // to the previous one
  EXPECT_EQ(f.groups[0].send_backward_s, 0);  // the first stage sends no gradient back
}

TEST(OpBreakdown, AnOpsForwardRecomputeAndBackwardShareALine) {
  const Fixture full(1, 1, 4, Recompute::kFull);
  ASSERT_EQ(full.groups.size(), 1u);
  const OpTime* qkv = find_op(full.groups[0], "qkv");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(find_op(full.groups[0], "qkv_bwd"), nullptr);
  EXPECT_EQ(qkv->kind, "compute");
  EXPECT_GT(qkv->forward_s, 0);
  // Full recompute runs the forward GEMM again, at the same cost; dgrad + wgrad take twice it.
  EXPECT_DOUBLE_EQ(qkv->recompute_s, qkv->forward_s);
  EXPECT_NEAR(qkv->backward_s, 2 * qkv->forward_s, 0.2 * qkv->forward_s);
  // QKV GEMM of 8 layers (pp 1), micro-batch 2, seq 1024, hidden 1024: 2 s b h 3h a layer
  // forward, the same recomputed, twice it backward: 4 x forward in all.
  EXPECT_EQ(full.groups[0].layers, 8);
  const double forward_flop = 8 * 2.0 * 1024 * 2 * 1024 * 3 * 1024;
  EXPECT_NEAR(qkv->flop, 4 * forward_flop, 1e-6 * forward_flop);
  EXPECT_GT(qkv->kernels, 0);
  // Longest first.
  for (std::size_t i = 1; i < full.groups[0].ops.size(); ++i)
    EXPECT_GE(full.groups[0].ops[i - 1].total_s(), full.groups[0].ops[i].total_s());

  const Fixture none(1, 1, 4, Recompute::kNone);
  EXPECT_EQ(find_op(none.groups[0], "qkv")->recompute_s, 0);
}

TEST(OpBreakdown, TensorParallelCollectivesCarryTheirBytes) {
  const Fixture f(4, 1, 2, Recompute::kNone);
  const OpTime* tp = find_op(f.groups[0], "tp_mlp");
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ(tp->kind, "tp_all_reduce");
  EXPECT_GT(tp->forward_s, 0);
  // One all-reduce of the MLP output (s b h fp16 bytes) per layer forward and one in the
  // backward (the f operator's): 8 layers (pp 1) x 2 passes.
  EXPECT_DOUBLE_EQ(tp->size_bytes, 8 * 2 * (1024.0 * 2 * 1024 * 2));
  EXPECT_EQ(tp->flop, 0);
}

TEST(OpBreakdown, StageSetLabels) {
  EXPECT_EQ(stage_set_label({{0, 0}}), "replica 0, stage 0");
  EXPECT_EQ(stage_set_label({{1, 2}, {0, 2}, {1, 3}, {0, 3}}), "replicas 0-1, stages 2-3");
  EXPECT_EQ(stage_set_label({{0, 1}, {2, 1}, {3, 1}}), "replicas 0, 2-3, stage 1");
  EXPECT_EQ(stage_set_label({{0, 0}, {1, 1}}), "replica 0 stage 0, replica 1 stage 1");
  EXPECT_EQ(stage_set_label({{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}}),
            "replica 0 stage 0, replica 1 stage 1, replica 2 stage 2, +2 more");
}

TEST(OpBreakdown, TheReportWritesThemOnlyWhenAttached) {
  Fixture f(2, 4, 4, Recompute::kNone);
  Report r = predict(f.cluster, f.workload, f.plan);
  // Always a key (a script reads the same keys on every path), empty until attached.
  EXPECT_NE(to_json(r).find("\"stage_ops\": []"), std::string::npos) << to_json(r);
  EXPECT_EQ(to_table(r).find("ops per micro-batch"), std::string::npos);
  r.stage_ops = f.groups;
  const std::string json = to_json(r), table = to_table(r);
  EXPECT_NE(json.find("\"stage_ops\": ["), std::string::npos) << json;
  EXPECT_NE(json.find("\"stages\": \"replicas 0-3, stages 1-2\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"name\": \"qkv\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"kind\": \"tp_all_reduce\""), std::string::npos) << json;
  EXPECT_NE(table.find("ops per micro-batch of replicas 0-3, stages 1-2 (g, 2 layers, tp 2)"), std::string::npos)
      << table;
  EXPECT_NE(table.find("TFLOP/s"), std::string::npos) << table;
}

}  // namespace
}  // namespace hetsim::models
