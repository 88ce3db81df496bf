// SPDX-License-Identifier: Apache-2.0
// The predictor's second figure for pipeline sends of one parity through one NIC
// (lockstep_parity_figure, predictor.hpp) and the note that gives it (lockstep_parity_note):
// which nodes, which sends, and by how much, on hand-placed plans of the 4090 + A100 cluster
// (one 25 GbE port per node).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost_test_util.hpp"
#include "memory_cost.hpp"
#include "plan_notes.hpp"
#include "input_loader.hpp"
#include "predictor.hpp"
#include "send_node_loads.hpp"
#include "topology.hpp"
#include "units.hpp"

namespace hetsim::models {
namespace {

using testing::example_cluster;
using testing::example_workload;

/// GPT-3 1.3B (24 layers) in TP-1 stages of 24 / gpus.size() layers on the given GPUs, one
/// replica of 64 one-sequence micro-batches.
Plan tp1_pipeline(const std::vector<int>& gpus, Schedule schedule = Schedule::k1f1b) {
  Plan p;
  p.name = "tp1-pipeline";
  p.micro_batch = 1;
  p.schedule = schedule;
  Replica r;
  r.micro_batches = 64;
  for (int g : gpus) r.stages.push_back(Stage{24 / static_cast<int>(gpus.size()), {g}});
  p.replicas = {r};
  return p;
}

Workload gpt3_64() {
  Workload w = example_workload("gpt3-1.3b.yaml");
  w.training.global_batch = 64;
  return w;
}

// Six stages, two per box on boxes 0, 1, 2 (GPUs 0-1, 8-9, 16-17): boundaries 1 and 3 cross box
// 1's port, both odd. In 1F1B's steady state box 1 sends boundary 1's gradient and boundary 3's
// activation out at once, and takes in boundary 1's activation and boundary 3's gradient at once:
// each of those four sends carries two tensors through the port instead of one, so stages 1-4
// each spend one tensor's time more on one pass; stages 0 and 5 send only through boxes 0 and 2,
// where one boundary crosses.
TEST(LockstepParity, TheTwoBoundariesOfOneParityThroughABoxShareItsPort) {
  const Cluster c = example_cluster("consumer-4090-a100.yaml");
  const Workload w = gpt3_64();
  const Plan p = tp1_pipeline({0, 1, 8, 9, 16, 17});
  const Report alone = predict(c, w, p);
  ASSERT_TRUE(alone.feasible) << alone.infeasible_reason;
  const auto lockstep = lockstep_parity_figure(c, w, p);
  ASSERT_TRUE(lockstep.has_value());
  EXPECT_EQ(lockstep->nodes, std::vector<int>{1});  // box 1
  const NodeType& box = c.node_types[c.nodes[1].node_type];
  ASSERT_EQ(box.nics.count, 1);
  const double tensor_s = boundary_activation_bytes(w.model, 1, w.training.dtype) / achieved_bandwidth_Bps(box.nics);
  EXPECT_NEAR(tensor_s, 8388608 / achieved_bandwidth_Bps(box.nics), 1e-12);  // 2048 x 2048 x 2 bytes
  const std::vector<StageReport>& a = alone.stages;
  const std::vector<StageReport>& l = lockstep->report.stages;
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(l.size(), 6u);
  const double extra_forward[6] = {0, tensor_s, 0, tensor_s, 0, 0};   // stage 1 into box 1, stage 3 out of it
  const double extra_backward[6] = {0, 0, tensor_s, 0, tensor_s, 0};  // stage 2 out of box 1, stage 4 into it
  for (int s = 0; s < 6; ++s) {
    EXPECT_NEAR(l[s].forward_s - a[s].forward_s, extra_forward[s], 1e-3 * tensor_s) << "stage " << s;
    EXPECT_NEAR(l[s].backward_s - a[s].backward_s, extra_backward[s], 1e-3 * tensor_s) << "stage " << s;
  }
  EXPECT_GE(lockstep->report.iteration_time_s, alone.iteration_time_s);
  // predict() itself keeps each boundary's sends apart.
  EXPECT_EQ(predict(c, w, p).iteration_time_s, alone.iteration_time_s);
}

TEST(LockstepParity, NoFigureWhereEachNodeCarriesOneBoundaryOfEachParity) {
  const Cluster c = example_cluster("consumer-4090-a100.yaml");
  const Workload w = gpt3_64();
  // Three stages per box: only boundary 2 crosses between boxes.
  EXPECT_FALSE(lockstep_parity_figure(c, w, tp1_pipeline({0, 1, 2, 8, 9, 10})).has_value());
  // One stage per box: a box sends boundary s's activation and boundary s - 1's gradient, of two parities.
  EXPECT_FALSE(lockstep_parity_figure(c, w, tp1_pipeline({0, 8, 16, 24})).has_value());
  // GPipe runs every forward, then every backward: its sends pair otherwise, and are left alone.
  EXPECT_FALSE(lockstep_parity_figure(c, w, tp1_pipeline({0, 1, 8, 9, 16, 17}, Schedule::kGpipe)).has_value());
}

TEST(LockstepParity, TheNoteNamesTheNodesAndTheFigureWhenItMatters) {
  Cluster c = example_cluster("consumer-4090-a100.yaml");
  Workload w = gpt3_64();
  // Micro-batches of four sequences on a 10 Gb/s port, the middle stages the heaviest (the last
  // one holds the LM head): the stages sending two tensors at once set the pace.
  for (NodeType& t : c.node_types) t.nics.bandwidth_Bps = 10e9 / 8;
  Plan p = tp1_pipeline({0, 1, 8, 9, 16, 17});
  p.micro_batch = 4;
  p.recompute = Recompute::kFull;
  p.replicas[0].micro_batches = 16;
  const int layers[6] = {4, 5, 5, 5, 3, 2};
  for (int s = 0; s < 6; ++s) p.replicas[0].stages[s].layers = layers[s];
  const Report alone = predict(c, w, p);
  ASSERT_TRUE(alone.feasible);
  const auto lockstep = lockstep_parity_figure(c, w, p);
  ASSERT_TRUE(lockstep.has_value());
  ASSERT_GT(lockstep->report.iteration_time_s, kLockstepNoteRatio * alone.iteration_time_s);
  const std::string note = lockstep_parity_note(c, w, p, alone.iteration_time_s);
  EXPECT_NE(note.find("lab/rtx4090-box[1]"), std::string::npos) << note;
  EXPECT_EQ(note.find("rtx4090-box[0]"), std::string::npos) << note;
  EXPECT_NE(note.find(format_time(lockstep->report.iteration_time_s)), std::string::npos) << note;
  EXPECT_NE(note.find("hetsim simulate"), std::string::npos) << note;
  // A figure within 1% of the prediction says nothing worth a note.
  EXPECT_TRUE(lockstep_parity_note(c, w, p, lockstep->report.iteration_time_s).empty());
}

// The pipeline sends' loads per (send, node): a dense table, or past its bound a hash map of the
// entries used; both read back what was counted, and zero elsewhere.
TEST(SendNodeLoads, ADenseTableAndAHashMapHoldTheSameLoads) {
  for (std::size_t max_dense : {std::size_t{1} << 20, std::size_t{4}}) {
    SendNodeLoads loads;
    EXPECT_TRUE(loads.empty());
    loads.reset(6, 5, max_dense);
    EXPECT_FALSE(loads.empty());
    loads.at(3, 4).tensors += 0.5;
    loads.at(3, 4).tensors += 0.25;
    loads.at(0, 1).on_busiest_rail = 2;
    EXPECT_DOUBLE_EQ(loads.get(3, 4).tensors, 0.75);
    EXPECT_DOUBLE_EQ(loads.get(0, 1).on_busiest_rail, 2.0);
    EXPECT_DOUBLE_EQ(loads.get(5, 0).tensors, 0.0);
    double tensors = 0;
    int used = 0;
    loads.for_each([&](std::size_t send, std::size_t node, const NicLoad& l) {
      tensors += l.tensors;
      used += l.tensors > 0 || l.on_busiest_rail > 0;
      if (l.tensors > 0) {
        EXPECT_TRUE(send == 3 && node == 4);
      }
    });
    EXPECT_DOUBLE_EQ(tensors, 0.75);
    EXPECT_EQ(used, 2);
  }
}

// 16,000 one-layer stages over 2,000 nodes: the dense tables were 2 x 16,000 x 2,000 entries each
// (and the lockstep figure's two more), 8 GB at 32,000 stages, and `predict` ran out of memory or
// past a minute (s59 hunt). The plan is a result now (its 1F1B keeps 16,000 micro-batches' inputs
// in flight at stage 0, within an A100's memory for this small model).
TEST(SendNodeLoads, APipelineOfSixteenThousandStagesOverTwoThousandNodesIsPredicted) {
  const Cluster c = parse_cluster(R"(kind: cluster
name: deep
node_types:
  n: {gpu: a100-sxm4-80gb, gpus: 8, intra: {bandwidth: "300GB/s"}, nics: {count: 8, bandwidth: "200Gbps"}}
zones:
  - {name: z, fabric: {kind: fat-tree}, nodes: [{type: n, count: 2000}]}
)", Catalog::builtin());
  const Workload w = parse_workload(R"(kind: workload
name: deep
model: {layers: 16000, hidden: 1024, heads: 16, vocab: 1024, seq_len: 128}
training: {global_batch: 1}
)");
  UniformPlanOptions options;
  options.micro_batch = 1;
  const auto plan = make_uniform_plan(c, w, 1, 16000, 1, options);
  ASSERT_TRUE(std::holds_alternative<Plan>(plan));
  const Report r = predict(c, w, std::get<Plan>(plan));
  EXPECT_TRUE(r.feasible) << r.infeasible_reason;
  EXPECT_GT(r.iteration_time_s, 0.0);
}

}  // namespace
}  // namespace hetsim::models
