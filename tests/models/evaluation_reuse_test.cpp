// SPDX-License-Identifier: Apache-2.0
// What one evaluation reuses: a decoder layer's sums across the stages that share its node type
// and TP group (LayerCostMemo, models/stage_cost.hpp), and the storage of the tables of the
// evaluations before it (ScratchVector, models/scratch_vector.hpp). Neither may change a figure.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost_test_util.hpp"
#include "scratch_vector.hpp"
#include "stage_cost.hpp"
#include "topology.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::gpt_workload;
using testing::node_type;
using testing::round_gpu;

void expect_same_pass(const PassCost& a, const PassCost& b, const std::string& what) {
  EXPECT_EQ(a.gpu_s, b.gpu_s) << what;
  EXPECT_EQ(a.tp_comm_s, b.tp_comm_s) << what;
  EXPECT_EQ(a.host_s, b.host_s) << what;
  EXPECT_EQ(a.stall_s, b.stall_s) << what;
  EXPECT_EQ(a.flop, b.flop) << what;
  EXPECT_EQ(a.model_flop, b.model_flop) << what;
}

void expect_same_stage(const StageCost& a, const StageCost& b, const std::string& what) {
  expect_same_pass(a.forward, b.forward, what + " forward");
  expect_same_pass(a.backward, b.backward, what + " backward");
  EXPECT_EQ(a.params, b.params) << what;
}

struct MemoCase {
  Cluster cluster = cluster_of({node_type("box", round_gpu("g", 100e12), 8, 300e9, 25e9)}, {{0, 2}});
  Workload workload = gpt_workload(24, 4096, 32, 2048, 64);
  Plan plan;
  MemoCase() {
    plan.micro_batch = 2;
    plan.recompute = Recompute::kSelective;
    plan.sequence_parallel = true;
  }
  /// A stage of `layers` blocks on `gpus` (one TP group).
  StageShape shape(const std::vector<int>& gpus, int layers, bool first, bool last) const {
    StageShape s;
    s.node_type = &cluster.node_types[0];
    s.layers = layers;
    s.tp = static_cast<int>(gpus.size());
    s.first = first;
    s.last = last;
    s.tp_group = group_cost(cluster, gpus.data(), s.tp);
    return s;
  }
};

TEST(LayerCostMemo, StagesSharingALayerGetTheFiguresOfTheirOwn) {
  // A pipeline's first, middle and last stages on one node's TP group: the middle and last stage
  // take the layer the first one priced, and every figure equals the stage priced alone.
  const MemoCase m;
  const std::vector<int> tp8 = {0, 1, 2, 3, 4, 5, 6, 7};
  LayerCostMemo memo;
  const StageShape stages[] = {m.shape(tp8, 5, true, false), m.shape(tp8, 7, false, false), m.shape(tp8, 6, false, true)};
  for (const StageShape& s : stages) {
    const StageCost alone = stage_cost(s, m.workload, m.plan, 3);
    const StageCost shared = stage_cost(s, m.workload, m.plan, 3, nullptr, &memo);
    expect_same_stage(shared, alone, std::to_string(s.layers) + " layers");
  }
  ASSERT_NE(memo.find(stages[0].node_type, stages[0].tp_group), nullptr);
  // The per-layer part is the layer's: seven layers' forward minus five's is two layers' worth.
  const StageCost five = stage_cost(m.shape(tp8, 5, false, false), m.workload, m.plan, 3, nullptr, &memo);
  const StageCost seven = stage_cost(stages[1], m.workload, m.plan, 3, nullptr, &memo);
  EXPECT_GT(seven.forward.gpu_s, five.forward.gpu_s * 1.3);
}

TEST(LayerCostMemo, AnotherTpGroupGetsALayerOfItsOwn) {
  // Four GPUs of one node and four spread over two nodes: one node type and TP degree, other
  // link figures, hence other TP collective times. Each must be priced on its own group.
  const MemoCase m;
  const StageShape in_node = m.shape({0, 1, 2, 3}, 6, false, false);
  const StageShape across = m.shape({0, 1, 8, 9}, 6, false, false);
  ASSERT_FALSE(in_node.tp_group == across.tp_group);
  LayerCostMemo memo;
  const StageCost a = stage_cost(in_node, m.workload, m.plan, 4, nullptr, &memo);
  const StageCost b = stage_cost(across, m.workload, m.plan, 4, nullptr, &memo);
  expect_same_stage(b, stage_cost(across, m.workload, m.plan, 4), "across nodes");
  EXPECT_GT(b.forward.tp_comm_s, 2 * a.forward.tp_comm_s);  // 25 GB/s NICs against 300 GB/s
  EXPECT_NE(memo.find(across.node_type, across.tp_group), nullptr);
}

TEST(LayerCostMemo, AFullMemoStillPricesEveryStage) {
  // Groups beyond the memo's room are priced without it, with the same figures.
  const MemoCase m;
  LayerCostMemo memo;
  const std::vector<std::vector<int>> groups = {{0}, {0, 1}, {0, 1, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7}, {0, 8}, {0, 1, 8, 9}};
  for (const std::vector<int>& g : groups) {
    const StageShape s = m.shape(g, 4, false, false);
    expect_same_stage(stage_cost(s, m.workload, m.plan, 2, nullptr, &memo), stage_cost(s, m.workload, m.plan, 2),
                      "tp " + std::to_string(g.size()));
  }
}

TEST(ScratchVector, ADroppedTableLendsItsStorageToTheNextOne) {
  const int* storage = nullptr;
  {
    ScratchVector<int> table(1000, 7);
    storage = table.data();
  }
  ScratchVector<int> next;
  EXPECT_TRUE(next.empty());  // its contents are gone, its capacity is kept
  EXPECT_GE(next.capacity(), 1000u);
  next.assign(500, 3);
  EXPECT_EQ(next.data(), storage);
  EXPECT_EQ(next[499], 3);
}

TEST(ScratchVector, AMovedTableKeepsItsElementsAndIsPooledOnce) {
  ScratchVector<double> a(4, 1.5);
  const double* storage = a.data();
  ScratchVector<double> b(std::move(a));
  EXPECT_EQ(b.data(), storage);
  EXPECT_EQ(b.size(), 4u);
  EXPECT_EQ(b[3], 1.5);
}

TEST(ScratchVector, ACopyHasItsOwnStorage) {
  ScratchVector<int> a(3, 5);
  ScratchVector<int> b(a);
  b[0] = 9;
  EXPECT_EQ(a[0], 5);
  EXPECT_EQ(b.size(), 3u);
  ScratchVector<int> c;
  c = b;
  EXPECT_EQ(c[0], 9);
  EXPECT_NE(c.data(), b.data());
}

TEST(ScratchVector, HugeTablesAreNotKept) {
  const int* storage = nullptr;
  {
    ScratchVector<char> huge((std::size_t{1} << 20) + 1, 'x');  // over 1 MiB
    storage = reinterpret_cast<const int*>(huge.data());
  }
  ScratchVector<char> next;
  EXPECT_LT(next.capacity(), (std::size_t{1} << 20) + 1);
  EXPECT_NE(reinterpret_cast<const int*>(next.data()), storage);
}

}  // namespace
}  // namespace hetsim::models
