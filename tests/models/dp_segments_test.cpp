// SPDX-License-Identifier: Apache-2.0
// Data-parallel segments: replicas that split the model into different stages synchronise each
// layer's gradients among the stages that hold it, and a stage in several groups pays for each.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "cost_test_util.hpp"
#include "dp_segments.hpp"
#include "planner_estimate.hpp"
#include "predictor.hpp"
#include "stage_cost.hpp"
#include "step_cost.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::gpt_workload;
using testing::node_type;
using testing::round_gpu;

Replica replica(int micro_batches, std::vector<int> layers, std::vector<int> first_gpus) {
  Replica r;
  r.micro_batches = micro_batches;
  for (std::size_t s = 0; s < layers.size(); ++s) r.stages.push_back(Stage{layers[s], {first_gpus[s]}});
  return r;
}

Plan plan_of(std::vector<Replica> replicas, int interleave = 1) {
  Plan p;
  p.replicas = std::move(replicas);
  p.interleave = interleave;
  if (interleave > 1) p.schedule = Schedule::kInterleaved;
  return p;
}

TEST(DpSegments, EqualSplitsAreStagesByIndex) {
  const Workload w = gpt_workload(32, 1024, 16, 1024, 8);
  const Plan p = plan_of({replica(4, {16, 16}, {0, 1}), replica(4, {16, 16}, {2, 3})});
  const DpSegments seg(p, w.model);
  EXPECT_TRUE(seg.aligned());
  ASSERT_EQ(seg.count(), 2);
  EXPECT_EQ(seg.stage_of(1, 0), 1);
  EXPECT_EQ(seg.stage_of(1, 1), 1);
}

TEST(DpSegments, DifferentSplitsGroupEachLayerWithTheStagesHoldingIt) {
  // Layers 1-10 (and the embedding) are on stage 0 everywhere; 11-16 on stage 1 of the third
  // replica only; 17-20 on stage 0 of the second only; 21-32 (and the head) on stage 1 everywhere.
  const Workload w = gpt_workload(32, 1024, 16, 1024, 12);
  const Plan p = plan_of({replica(4, {16, 16}, {0, 1}), replica(4, {20, 12}, {2, 3}), replica(4, {10, 22}, {4, 5})});
  const DpSegments seg(p, w.model);
  EXPECT_FALSE(seg.aligned());
  ASSERT_EQ(seg.count(), 4);
  const int expected_stages[4][3] = {{0, 0, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}};
  const int expected_layers[4] = {10, 6, 4, 12};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(seg.layers(k), expected_layers[k]) << "segment " << k;
    for (int r = 0; r < 3; ++r) EXPECT_EQ(seg.stage_of(k, r), expected_stages[k][r]) << "segment " << k << " replica " << r;
  }
  // Per-GPU parameters: the embedding with the first segment, the LM head copy with the last.
  EXPECT_DOUBLE_EQ(seg.params(0, 0, w.model), stage_params(w.model, 10, 1, true, false, 2));
  EXPECT_DOUBLE_EQ(seg.params(1, 2, w.model), stage_params(w.model, 6, 1, false, false, 2));
  EXPECT_DOUBLE_EQ(seg.params(3, 1, w.model), stage_params(w.model, 12, 1, false, true, 2));
}

TEST(DpSegments, TheEnginesWholeVocabularyIsOnEveryTpRank) {
  // Megatron-LM splits the word embedding and the LM head over the TP ranks; the execution
  // engine keeps them whole on every rank (TrainingSpec::engine_kernels), blocks split alike.
  const Workload w = gpt_workload(32, 1024, 16, 1024, 12);
  const double word = 1.0 * w.model.vocab * w.model.hidden;
  EXPECT_DOUBLE_EQ(stage_params(w.model, 16, 4, true, false, 2, true) - stage_params(w.model, 16, 4, true, false, 2),
                   word * (1 - 1.0 / 4));
  EXPECT_DOUBLE_EQ(stage_params(w.model, 16, 4, false, true, 2, true) - stage_params(w.model, 16, 4, false, true, 2),
                   word * (1 - 1.0 / 4));
  EXPECT_DOUBLE_EQ(stage_params(w.model, 16, 4, false, false, 2, true), stage_params(w.model, 16, 4, false, false, 2));
  const Plan p = plan_of({replica(4, {16, 16}, {0, 1}), replica(4, {20, 12}, {2, 3})});
  const DpSegments seg(p, w.model);
  EXPECT_DOUBLE_EQ(seg.params(0, 0, w.model, true), stage_params(w.model, 16, 1, true, false, 2, true));
}

// A stage's backward produces its segments from the head down: on replica 0's stage 0 (layers
// 1-16 and the embedding) segment 1 (layers 11-16) comes first, then segment 0 (1-10 and the
// embedding), each for its share of the stage's parameters; a stage of one segment has the pass.
TEST(DpSegments, AStageProducesItsLaterSegmentsFirstInItsBackward) {
  const Workload w = gpt_workload(32, 1024, 16, 1024, 12);
  const Plan p = plan_of({replica(4, {16, 16}, {0, 1}), replica(4, {20, 12}, {2, 3}), replica(4, {10, 22}, {4, 5})});
  const DpSegments seg(p, w.model);
  const double stage0 = stage_params(w.model, 16, 1, true, false, 2);
  const DpSegments::Window later = seg.backward_window(1, 0, w.model), earlier = seg.backward_window(0, 0, w.model);
  // Fractions of the pass elapsed: segment 1 first, from the pass's start; segment 0 to its end.
  EXPECT_DOUBLE_EQ(later.from, 0.0);
  EXPECT_NEAR(later.to, stage_params(w.model, 6, 1, false, false, 2) / stage0, 1e-12);
  EXPECT_DOUBLE_EQ(earlier.from, later.to);
  EXPECT_NEAR(earlier.to, 1.0, 1e-12);
  const DpSegments::Window whole = seg.backward_window(0, 2, w.model);  // replica 2's stage 0: segment 0 only
  EXPECT_DOUBLE_EQ(whole.from, 0.0);
  EXPECT_DOUBLE_EQ(whole.to, 1.0);
  const Plan aligned = plan_of({replica(4, {16, 16}, {0, 1}), replica(4, {16, 16}, {2, 3})});
  const DpSegments::Window stage = DpSegments(aligned, w.model).backward_window(1, 0, w.model);
  EXPECT_DOUBLE_EQ(stage.from, 0.0);
  EXPECT_DOUBLE_EQ(stage.to, 1.0);
}

TEST(DpSegments, ReplicasOfOtherDepths) {
  const Workload w = gpt_workload(32, 1024, 16, 1024, 8);
  const Plan p = plan_of({replica(4, {32}, {0}), replica(4, {16, 16}, {1, 2})});
  const DpSegments seg(p, w.model);
  ASSERT_FALSE(seg.aligned());
  ASSERT_EQ(seg.count(), 2);
  EXPECT_EQ(seg.stage_of(0, 0), 0);
  EXPECT_EQ(seg.stage_of(0, 1), 0);
  EXPECT_EQ(seg.stage_of(1, 0), 0);
  EXPECT_EQ(seg.stage_of(1, 1), 1);
}

TEST(DpSegments, InterleavedChunksOfOneStageMerge) {
  // Megatron-LM's chunk order, first chunks one block larger: replica 0 (8, 8) -> layers 1-4 s0,
  // 5-8 s1, 9-12 s0, 13-16 s1; replica 1 (4, 12) -> 1-2 s0, 3-8 s1, 9-10 s0, 11-16 s1.
  const Workload w = gpt_workload(16, 1024, 16, 1024, 8);
  const Plan p = plan_of({replica(4, {8, 8}, {0, 1}), replica(4, {4, 12}, {2, 3})}, 2);
  std::vector<int> stages, chunks;
  for (const PartPlace& place : place_model_parts(p.replicas[1], 2, 16)) {
    stages.push_back(place.stage);
    chunks.push_back(place.chunk);
  }
  EXPECT_EQ(stages, (std::vector<int>{0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(chunks, (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  const DpSegments seg(p, w.model);
  ASSERT_EQ(seg.count(), 3);
  EXPECT_EQ(seg.layers(0), 4);  // (s0, s0): 1-2 and 9-10
  EXPECT_EQ(seg.layers(1), 4);  // (s0, s1): 3-4 and 11-12
  EXPECT_EQ(seg.layers(2), 8);  // (s1, s1): 5-8 and 13-16
}

TEST(Predictor, ReplicasSplitDifferentlySyncEachLayerWithItsHolders) {
  // Three nodes with 1 GB/s NICs, so that the gradient sync shows. Replica 0: stages of 4 + 4
  // layers on nodes 0 and 1; replica 1: 2 + 6 layers, both on node 2, fewer micro-batches (so
  // replica 0 is the slowest and every group that holds its stage 0 starts at the step's end).
  const Cluster c = cluster_of({node_type("n", round_gpu("n", 300e12), 8, 300e9, 1e9)}, {{0, 3}});
  Workload w = gpt_workload(8, 2048, 16, 1024, 96);
  w.model.tied_embeddings = false;
  const Plan p = plan_of({replica(64, {4, 4}, {0, 8}), replica(32, {2, 6}, {16, 17})});
  const Report r = predict(c, w, p);
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(r.feasible && work.feasible) << r.infeasible_reason;
  std::set<std::vector<int>> groups;
  double t_first = 0, t_middle = 0;
  for (const DpGroup& g : work.dp_groups) {
    if (g.embedding) continue;
    groups.insert(g.gpus);
    const double bytes = g.gpus == std::vector<int>{0, 16}  ? stage_params(w.model, 2, 1, true, false, 2) * 2
                         : g.gpus == std::vector<int>{0, 17} ? stage_params(w.model, 2, 1, false, false, 2) * 2
                                                             : stage_params(w.model, 4, 1, false, true, 2) * 2;
    EXPECT_DOUBLE_EQ(g.size_bytes, bytes);
    if (g.gpus == std::vector<int>{0, 16}) t_first = g.time_s;
    if (g.gpus == std::vector<int>{0, 17}) t_middle = g.time_s;
  }
  // Layers 1-2 + embedding: replica 0 stage 0 with replica 1 stage 0; layers 3-4: replica 0
  // stage 0 with replica 1 stage 1; layers 5-8 + head: both stage 1. (By stage index, GPU 17
  // and GPU 8 would reduce 6 layers' gradients together, of which GPU 8 holds only 4.)
  EXPECT_EQ(groups, (std::set<std::vector<int>>{{0, 16}, {0, 17}, {8, 17}}));
  ASSERT_GT(t_first, 0.0);
  ASSERT_GT(t_middle, 0.0);
  // GPU 0 is in two groups that both start at the step's end: they run one after the other.
  EXPECT_GE(r.breakdown.dp_comm_s, (t_first + t_middle) * (1 - 1e-9));
}

// 4 layers held by replica 0 at TP 2 (GPUs first, first + 1) and by replica 1 on GPU `single`.
Workload tp2_beside_tp1_workload() {
  Workload w = gpt_workload(4, 2048, 16, 1024, 64);
  w.model.tied_embeddings = false;
  return w;
}
Plan tp2_beside_tp1(int first, int single) {
  Plan p = plan_of({replica(32, {4}, {first}), replica(32, {4}, {single})});
  p.replicas[0].stages[0].gpus = {first, first + 1};
  return p;
}

TEST(Predictor, AMemberOfLowerTpDegreeSyncsEachShardWithItsPeer) {
  // Replica 0 shards 4 layers over 2 GPUs (node 0), replica 1 holds them on one GPU (node 1).
  // Each of replica 0's GPUs reduces its half with the same half of replica 1's gradients: two
  // groups of half the layer parameters, both through GPU 8, whose NIC paces them: each group's
  // ring gets half of it (two channels on its rail), and side by side they take as long as one,
  // twice what one group alone would. (The groups moved the whole layer each, as the largest
  // member holds it: twice the bytes.)
  const Cluster c = cluster_of({node_type("n", round_gpu("n", 300e12), 8, 300e9, 1e9)}, {{0, 2}});
  const Workload w = tp2_beside_tp1_workload();
  const Plan p = tp2_beside_tp1(0, 8);
  const Report r = predict(c, w, p);
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(r.feasible && work.feasible) << r.infeasible_reason;
  std::set<std::vector<int>> groups;
  double t = 0;
  for (const DpGroup& g : work.dp_groups) {
    groups.insert(g.gpus);
    EXPECT_DOUBLE_EQ(g.size_bytes, stage_params(w.model, 4, 2, true, true, 1) * grad_sync_bytes_per_param(w.training));
    t = std::max(t, g.time_s);
  }
  EXPECT_EQ(groups, (std::set<std::vector<int>>{{0, 8}, {1, 8}}));
  // A ring of two all-reduces by sending its bytes once each way: both groups' bytes through
  // GPU 8's one NIC.
  const double half_bytes = stage_params(w.model, 4, 2, true, true, 1) * grad_sync_bytes_per_param(w.training);
  const double both_through_one_nic_s = 2 * half_bytes / achieved_bandwidth_Bps(c.node_types[0].nics);
  EXPECT_NEAR(t, both_through_one_nic_s, 0.01 * both_through_one_nic_s) << "each group gets half of GPU 8's NIC";
  EXPECT_NEAR(r.breakdown.dp_comm_s, both_through_one_nic_s, 0.01 * both_through_one_nic_s)
      << "GPU 8 takes part in both groups";
}

TEST(Predictor, AGpuRunsItsShardGroupsSideBySideWhenTheFarSidePacesThem) {
  // Replica 0 (TP 2) on a node whose one NIC its two GPUs share (1 GB/s each); replica 1 (TP 1)
  // alone on a node with a 25 GB/s NIC per GPU. GPU 8 is in both shard groups, each paced by the
  // slow side; side by side they take as long as one (its own NIC has room for both), where one
  // after the other took twice as long.
  NodeType slow = node_type("slow", round_gpu("s", 300e12), 8, 300e9, 2e9);
  slow.nics.count = 1;
  const NodeType fast = node_type("fast", round_gpu("f", 300e12), 8, 300e9, 25e9);
  const Cluster c = cluster_of({slow, fast}, {{0, 1}, {1, 1}});
  const Workload w = tp2_beside_tp1_workload();
  const Plan p = tp2_beside_tp1(0, 8);
  const Report r = predict(c, w, p);
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(r.feasible && work.feasible) << r.infeasible_reason;
  ASSERT_EQ(work.dp_groups.size(), 2u);
  const double t = std::max(work.dp_groups[0].time_s, work.dp_groups[1].time_s);
  EXPECT_NEAR(r.breakdown.dp_comm_s, t, 0.01 * t) << "not 2t: the groups run side by side";
}

TEST(Predictor, ShardsPairWithTheRankHoldingThemAndCutAtTheLcmOfTpDegrees) {
  // Megatron-LM's TP rank t of tp holds the t-th 1/tp of each split matrix: beside tp4 (GPUs
  // 0-3), tp2's rank 0 (GPU 8) holds shards 0 and 1, rank 1 (GPU 9) shards 2 and 3 (exec pairs
  // them so, exec/runner/rank_layout.cpp; pairing shard j with rank j mod 2 was wrong).
  const Cluster c = cluster_of({node_type("n", round_gpu("n", 300e12), 8, 300e9, 1e9)}, {{0, 2}});
  Workload w = gpt_workload(4, 2048, 24, 1536, 64);
  w.model.tied_embeddings = false;
  Plan p = plan_of({replica(32, {4}, {0}), replica(32, {4}, {8})});
  p.replicas[0].stages[0].gpus = {0, 1, 2, 3};
  p.replicas[1].stages[0].gpus = {8, 9};
  PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible);
  std::set<std::vector<int>> groups;
  for (const DpGroup& g : work.dp_groups) groups.insert(g.gpus);
  EXPECT_EQ(groups, (std::set<std::vector<int>>{{0, 8}, {1, 8}, {2, 9}, {3, 9}}));
  // tp2 beside tp3 (24 heads): 6 shards of a sixth of the layers' split matrices each; GPU 0
  // holds shards 0-2, GPU 1 shards 3-5, GPU 8 shards 0-1, GPU 9 2-3, GPU 10 4-5.
  p.replicas[0].stages[0].gpus = {0, 1};
  p.replicas[1].stages[0].gpus = {8, 9, 10};
  work = build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible);
  std::multiset<std::vector<int>> shards;
  for (const DpGroup& g : work.dp_groups) {
    shards.insert(g.gpus);
    EXPECT_DOUBLE_EQ(g.size_bytes, stage_params(w.model, 4, 3, true, true, 1) * 3 / 6 * grad_sync_bytes_per_param(w.training));
  }
  EXPECT_EQ(shards, (std::multiset<std::vector<int>>{{0, 8}, {0, 8}, {0, 9}, {1, 9}, {1, 10}, {1, 10}}));
}

TEST(OverlappedGradSync, BucketsFollowMegatronCoreAndExposeTheLast) {
  // Megatron-Core's default bucket: max(40M, 1M x dp) parameters.
  EXPECT_EQ(grad_bucket_count(100e6, 8), 3);     // 40M buckets
  EXPECT_EQ(grad_bucket_count(100e6, 64), 2);    // 64M buckets
  EXPECT_EQ(grad_bucket_count(1e6, 8), 1);
  EXPECT_EQ(grad_bucket_count(1e12, 8), kMaxGradBuckets);
  // 4 buckets of 1 s over a 8 s backward: each done before the next is ready, the last one
  // (1 s) after the pass; over a 2 s backward the reductions queue: 4 - 2 * 3/4 = 2.5 s.
  EXPECT_DOUBLE_EQ(overlapped_sync_exposed_s(1.0, 8.0, 4), 1.0);
  EXPECT_DOUBLE_EQ(overlapped_sync_exposed_s(1.0, 2.0, 4), 2.5);
  EXPECT_DOUBLE_EQ(overlapped_sync_exposed_s(4.0, 2.0, 1), 4.0);  // one bucket: nothing hidden
}

TEST(OverlappedGradSync, AnInterleavedStagesChunksAreReadyAtTheirOwnLastBackward) {
  // Two chunks a stage of a 4-stage pipeline, a 2 s backward a micro-batch (1 s a chunk), four
  // buckets: chunk 1's last backward ends 4 chunk-backwards (chunk 0 of the last group of four
  // micro-batches) before chunk 0's, so its two buckets are ready 4.5 and 4 s before the stage's
  // end, chunk 0's 0.5 and 0 s.
  const double before[] = {4.5, 4.0, 0.5, 0.0};
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(bucket_ready_before_end_s(i, 4, 2.0, 2, 4), before[i]) << i;
  // Without interleaving: (1 - (i+1)/B) of the pass, as overlapped_sync_exposed_s has it.
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(bucket_ready_before_end_s(i, 4, 2.0, 1, 4), 2.0 * (3 - i) / 4) << i;
  EXPECT_DOUBLE_EQ(bucket_ready_before_end_s(0, 1, 2.0, 2, 4), 0.0) << "one bucket waits for chunk 0";
  // Buckets of 1.5 s one after the other: chunk 1's are done at -1.5 s, chunk 0's start at -0.5
  // and at 1.0 s: 2.5 s exposed, where one 2 s window for all four exposes 4 x 1.5 - 2 x 3/4 = 4.5 s.
  EXPECT_DOUBLE_EQ(overlapped_sync_exposed_s(1.5, 2.0, 4, 2, 4), 2.5);
  EXPECT_DOUBLE_EQ(overlapped_sync_exposed_s(1.5, 2.0, 4), 4.5);
  // The stages before stage 2 run one chunk's backward each after its last: (2 + 4) / 2.
  const StageTimes st[] = {{1, 2}, {2, 4}, {1, 2}};
  EXPECT_DOUBLE_EQ(backward_finish_offset(st, 2, 2), 3.0);
  EXPECT_DOUBLE_EQ(backward_finish_offset(st, 2), 6.0);
  // GPipe, 5 micro-batches: the drain as a flow shop from the last stage (backwards 2, 4, 2 s).
  // Stage 2 ends its five at 5 x 2 = 10 s; stage 1 at 2 + 4 + 4 x 4 = 22 s; stage 0 at
  // 2 + 4 + 2 + 4 x 4 = 24 s: stage 2 ends 14 s before stage 0 (6 + 4 x (4 - 2)), stage 1 2 s.
  EXPECT_DOUBLE_EQ(backward_finish_offset(st, 2, 1, Schedule::kGpipe, 3, 5), 14.0);
  EXPECT_DOUBLE_EQ(backward_finish_offset(st, 1, 1, Schedule::kGpipe, 3, 5), 2.0);
  EXPECT_DOUBLE_EQ(backward_finish_offset(st, 2, 1, Schedule::kGpipe, 3, 1), 6.0);  // one micro-batch: 1F1B's
}

TEST(PlannerEstimate, ReplicasSplitDifferentlyPayEachSegmentOfAStage) {
  // The planner's cheap estimate groups gradients as the predictor does: GPU 0 (replica 0's
  // stage 0) syncs layers 1-2 with GPU 16 and layers 3-4 with GPU 17, one after the other.
  const Cluster c = cluster_of({node_type("n", round_gpu("n", 300e12), 8, 300e9, 1e9)}, {{0, 3}});
  Workload w = gpt_workload(8, 2048, 16, 1024, 96);
  w.model.tied_embeddings = false;
  const Plan p = plan_of({replica(64, {4, 4}, {0, 8}), replica(32, {2, 6}, {16, 17})});
  const std::vector<std::vector<planner::StageRef>> refs = {{{0, 4, 1, 0.0}, {8, 4, 1, 0.0}},
                                                            {{16, 2, 1, 0.0}, {17, 6, 1, 0.0}}};
  const double bpp = grad_sync_bytes_per_param(w.training);
  const double first = planner::sync_estimate(c, {0, 16}, stage_params(w.model, 2, 1, true, false, 2) * bpp, 0, w.training, false).reduce_s;
  const double middle = planner::sync_estimate(c, {0, 17}, stage_params(w.model, 2, 1, false, false, 2) * bpp, 0, w.training, false).reduce_s;
  const double last = planner::sync_estimate(c, {8, 17}, stage_params(w.model, 4, 1, false, true, 2) * bpp, 0, w.training, false).reduce_s;
  EXPECT_DOUBLE_EQ(planner::grad_sync_estimate_s(c, w, p, refs, 0), std::max(first + middle, middle + last));
}

}  // namespace
}  // namespace hetsim::models
