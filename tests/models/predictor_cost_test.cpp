// SPDX-License-Identifier: Apache-2.0
// The predictor on heterogeneous plans: the slowest stage / replica dominates as the closed
// form says; build_plan_work() carries the same op costs; memory infeasibility is a result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include <numeric>

#include "cost_test_util.hpp"
#include "pipeline_time.hpp"
#include "comm_cost.hpp"
#include "dp_segments.hpp"
#include "predictor.hpp"
#include "topology.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::gpt_workload;
using testing::node_type;
using testing::round_gpu;

/// Node 0: 8 fast GPUs; node 1: 8 GPUs with a third of the FLOP/s.
Cluster mixed() {
  return cluster_of({node_type("fast", round_gpu("fast", 300e12), 8, 300e9, 25e9),
                     node_type("slow", round_gpu("slow", 100e12), 8, 300e9, 25e9)},
                    {{0, 1}, {1, 1}});
}

Stage stage(int layers, std::vector<int> gpus) {
  Stage s;
  s.layers = layers;
  s.gpus = std::move(gpus);
  return s;
}

/// One replica of `stages` running `micro_batches` micro-batches of `micro_batch` sequences.
Plan one_replica(std::vector<Stage> stages, int micro_batches, int micro_batch = 1) {
  Plan p;
  p.micro_batch = micro_batch;
  Replica r;
  r.micro_batches = micro_batches;
  r.stages = std::move(stages);
  p.replicas = {r};
  return p;
}

TEST(Predictor, SlowestStageDominatesThePipeline) {
  const Cluster c = mixed();
  const Workload w = gpt_workload(8, 4096, 32, 2048, 64);
  Plan p;
  p.micro_batch = 4;
  p.recompute = Recompute::kFull;
  Replica r;
  r.micro_batches = 16;
  r.stages = {stage(4, {0, 1}), stage(4, {8, 9})};  // equal layers, the second stage is 3x slower
  p.replicas = {r};
  const Report rep = predict(c, w, p);
  ASSERT_TRUE(rep.feasible) << rep.infeasible_reason;
  ASSERT_EQ(rep.stages.size(), 2u);
  const StageTimes s0{rep.stages[0].forward_s, rep.stages[0].backward_s};
  const StageTimes s1{rep.stages[1].forward_s, rep.stages[1].backward_s};
  EXPECT_GT(s1.total(), 2.0 * s0.total());
  // Closed form: (m - 1) max + sum, plus the data-parallel tail.
  const double pipeline = 15 * s1.total() + s0.total() + s1.total();
  EXPECT_NEAR(rep.iteration_time_s - rep.breakdown.dp_comm_s - rep.breakdown.optimizer_s, pipeline, 1e-9);
  EXPECT_NEAR(rep.breakdown.compute_s + rep.breakdown.tp_comm_s + rep.breakdown.pp_comm_s + rep.breakdown.bubble_s +
                  rep.breakdown.dp_comm_s + rep.breakdown.optimizer_s,
              rep.iteration_time_s, 1e-9);
}

TEST(Predictor, SlowestReplicaSetsThePace) {
  const Cluster c = mixed();
  const Workload w = gpt_workload(4, 4096, 32, 2048, 128);
  Plan p;
  p.micro_batch = 4;
  Replica fast, slow;
  fast.micro_batches = slow.micro_batches = 16;
  fast.stages = {stage(4, {0, 1})};
  slow.stages = {stage(4, {8, 9})};
  p.replicas = {fast, slow};
  const Report both = predict(c, w, p);
  Plan only_slow = p;
  only_slow.replicas = {slow};
  const Report alone = predict(c, w, only_slow);
  ASSERT_TRUE(both.feasible && alone.feasible);
  // The fast replica waits: step = slow replica's pipeline + gradient sync + optimizer.
  EXPECT_NEAR(both.iteration_time_s - both.breakdown.dp_comm_s,
              alone.iteration_time_s - alone.breakdown.dp_comm_s, 1e-9);
  EXPECT_GT(both.breakdown.dp_comm_s, 0.0);
  // Uneven micro-batches: giving the fast replica more work up to balance helps.
  Plan balanced = p;
  balanced.replicas[0].micro_batches = 24;
  balanced.replicas[1].micro_batches = 8;
  EXPECT_LT(predict(c, w, balanced).iteration_time_s, both.iteration_time_s);
}

TEST(Predictor, PlanWorkOpsSumToThePredictedStageTimes) {
  const Cluster c = mixed();
  Workload w = gpt_workload(6, 2048, 16, 1024, 8);
  for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    Plan p = one_replica({stage(3, {0, 1, 2, 3}), stage(3, {8, 9, 10, 11})}, 4, 2);
    p.recompute = rc;
    p.sequence_parallel = true;
    const Report rep = predict(c, w, p);
    const PlanWork work = build_plan_work(c, w, p);
    ASSERT_TRUE(work.feasible);
    ASSERT_EQ(work.replicas.size(), 1u);
    for (int s = 0; s < 2; ++s) {
      const StageWork& sw = work.replicas[0][s];
      double f = 0, b = 0;
      for (const ChunkWork& ch : sw.chunks()) {
        for (const Op& op : ch.forward) f += op.duration_s;
        for (const Op& op : ch.backward) b += op.duration_s;
      }
      EXPECT_NEAR(f + sw.p2p_forward_s, rep.stages[s].forward_s, 1e-9);
      EXPECT_NEAR(b + sw.p2p_backward_s, rep.stages[s].backward_s, 1e-9);
      EXPECT_DOUBLE_EQ(sw.memory_bytes, rep.stages[s].memory_bytes);
    }
    // Tied embeddings between the first and last stage: one group per TP rank (4), each a rank
    // of the first stage and its peer in the last.
    ASSERT_EQ(work.dp_groups.size(), 4u);
    for (int j = 0; j < 4; ++j) {
      EXPECT_TRUE(work.dp_groups[j].embedding);
      EXPECT_EQ(work.dp_groups[j].gpus, (std::vector<int>{j, 8 + j}));
    }
  }
}

TEST(Predictor, OverlappedTpCollectivesCostOnlyTheirExcessOverTheGemm) {
  // tp_comm_overlap: an all-gather runs beside the GEMM after it, a reduce-scatter beside the
  // GEMM before it; a pass then takes its compute, its other collectives and, per pair,
  // max(0, collective - GEMM). The ops keep the collectives' full times for the simulator.
  const Cluster c = cluster_of({node_type("slow-link", round_gpu("g", 300e12), 8, 20e9, 25e9)}, {{0, 1}});
  const Workload w = gpt_workload(4, 2048, 16, 1024, 8);
  Plan p = one_replica({stage(4, {0, 1, 2, 3})}, 4, 2);
  p.sequence_parallel = true;
  p.tp_comm_overlap = true;
  const Report rep = predict(c, w, p);
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(rep.feasible && work.feasible);
  const auto pass_s = [](const std::vector<Op>& ops) {
    double t = 0;
    int overlapped = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (!op.overlapped) {
        t += op.duration_s;
        continue;
      }
      ++overlapped;
      const Op& gemm = op.kind == OpKind::kTpAllGather ? ops[i + 1] : ops[i - 1];
      EXPECT_EQ(gemm.kind, OpKind::kCompute) << op.name;
      t += std::max(0.0, op.duration_s - gemm.duration_s);
    }
    EXPECT_EQ(overlapped, 4 * 4) << "two all-gathers and two reduce-scatters per layer";
    return t;
  };
  const StageWork& sw = work.replicas[0][0];
  EXPECT_NEAR(pass_s(sw.chunks()[0].forward), rep.stages[0].forward_s, 1e-12);
  EXPECT_NEAR(pass_s(sw.chunks()[0].backward), rep.stages[0].backward_s, 1e-12);
  p.tp_comm_overlap = false;
  EXPECT_GT(predict(c, w, p).iteration_time_s, rep.iteration_time_s);
  p.sequence_parallel = false;  // the overlap needs the sequence-parallel collectives
  p.tp_comm_overlap = true;
  EXPECT_THAT(check_plan(p, c, w), ::testing::Contains(::testing::HasSubstr("tp_comm_overlap")));
}

TEST(Predictor, AStageOfMixedTypesNamesThemAll) {
  // A TP group across a fast and a slow node runs at the slow one's pace; its row names both
  // types in the group's order (Cluster::gpu_types_label, as predict --ops does), not the slow
  // one alone (whose capacity column would then look wrong).
  const Cluster c = mixed();
  const Workload w = gpt_workload(4, 2048, 16, 1024, 8);
  const Report r = predict(c, w, one_replica({stage(4, {0, 1, 2, 3, 8, 9, 10, 11})}, 8));
  ASSERT_TRUE(r.feasible) << r.infeasible_reason;
  EXPECT_EQ(r.stages[0].gpu_type, "fast+slow");
  EXPECT_EQ(predict(c, w, one_replica({stage(4, {8, 9, 10, 11})}, 8)).stages[0].gpu_type, "slow");
}

TEST(Predictor, AGradientSyncStartsWhenItsLastMemberFinishesItsStage) {
  // Replica 0 is one slow stage of 4 layers; replicas 1 and 2 are two fast stages of 2 layers.
  // Layers 3-4 are on replica 0's only stage and on stage 1 of the others: their group starts
  // when replica 0 finishes, and is exposed whole. (Grouped by stage index, replica 0 had no
  // stage 1 and the group hid behind replica 0's longer pipeline, as if those layers needed no
  // sync with it.) Node 0 fast (GPUs 0-7), node 1 slow (GPUs 8-15), 1 GB/s NICs.
  const Cluster c = cluster_of({node_type("fast", round_gpu("fast", 300e12), 8, 300e9, 1e9),
                                node_type("slow", round_gpu("slow", 100e12), 8, 300e9, 1e9)},
                               {{0, 1}, {1, 1}});
  Workload w = gpt_workload(4, 2048, 16, 1024, 192);
  w.model.tied_embeddings = false;
  Plan p;
  p.micro_batch = 1;
  p.replicas = {Replica{64, {stage(4, {8})}}, Replica{64, {stage(2, {9}), stage(2, {0})}},
                Replica{64, {stage(2, {10}), stage(2, {11})}}};
  const Report r = predict(c, w, p);
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(r.feasible && work.feasible) << r.infeasible_reason;
  double late_layers = 0;
  for (const DpGroup& g : work.dp_groups)
    if (g.gpus == std::vector<int>{8, 0, 11}) late_layers = g.time_s;
  ASSERT_GT(late_layers, 0.0) << "layers 3-4: replica 0's stage 0 with the others' stage 1";
  EXPECT_GE(r.breakdown.dp_comm_s, late_layers * (1 - 1e-9));
  std::printf("layers 3-4 sync %.3f s, exposed DP %.3f s, step %.3f s\n", late_layers, r.breakdown.dp_comm_s,
              r.iteration_time_s);
}

TEST(Predictor, OverCapacityIsInfeasibleWithAReason) {
  const Cluster c = cluster_of({node_type("small", round_gpu("small", 100e12, 4e9), 8, 300e9, 25e9)}, {{0, 1}});
  const Workload w = gpt_workload(24, 4096, 32, 2048, 8);
  Plan p;
  p.micro_batch = 1;
  Replica r;
  r.micro_batches = 8;
  r.stages = {stage(24, {0})};
  p.replicas = {r};
  const Report rep = predict(c, w, p);
  EXPECT_FALSE(rep.feasible);
  EXPECT_NE(rep.infeasible_reason.find("stage 0 needs"), std::string::npos) << rep.infeasible_reason;
  EXPECT_NE(rep.infeasible_reason.find("GiB of 3.7 GiB"), std::string::npos) << rep.infeasible_reason;
  // A part of 1 MiB read "needs 0.0 GiB of 0.0 GiB" (s60 hunt): small sizes in their own units.
  const Cluster tiny = cluster_of({node_type("tiny", round_gpu("tiny", 100e12, 1024.0 * 1024.0), 8, 300e9, 25e9)}, {{0, 1}});
  Plan two_layers = p;
  two_layers.replicas[0].stages[0].layers = 2;
  const Report small = predict(tiny, gpt_workload(2, 64, 2, 32, 8), two_layers);
  EXPECT_FALSE(small.feasible);
  EXPECT_NE(small.infeasible_reason.find(" of 1.00 MiB"), std::string::npos) << small.infeasible_reason;
}

TEST(Predictor, MoreMicroBatchesShrinkTheBubbleShare) {
  const Cluster c = mixed();
  const Workload w = gpt_workload(8, 2048, 16, 1024, 64);
  auto plan = [&](int m, int v) {
    UniformPlanOptions o;
    o.micro_batch = 64 / m;
    o.schedule = v > 1 ? Schedule::kInterleaved : Schedule::k1f1b;
    o.interleave = v;
    return std::get<Plan>(make_uniform_plan(c, w, 1, 4, 1, o));
  };
  const Report few = predict(c, w, plan(4, 1)), many = predict(c, w, plan(32, 1)), inter = predict(c, w, plan(4, 2));
  EXPECT_GT(few.breakdown.bubble_s / few.iteration_time_s, many.breakdown.bubble_s / many.iteration_time_s);
  EXPECT_LT(inter.breakdown.bubble_s, few.breakdown.bubble_s);
}

}  // namespace
}  // namespace hetsim::models

namespace hetsim::models {
namespace {

// ZeRO-3 over two nodes of 8 (pure data parallelism): each micro-batch's forward hides its
// weight gather behind its compute, its backward the two gathers (full recompute) and the
// gradient reduce-scatter; the step pays what the compute cannot hide, micro-batch by micro-batch.
TEST(Predictor, ZeroThreeTrafficIsPaidPerMicroBatchBeyondTheCompute) {
  using testing::cluster_of;
  using testing::node_type;
  using testing::round_gpu;
  const Cluster c = cluster_of({node_type("box", round_gpu("box", 300e12), 8, 300e9, 25e9)}, {{0, 2}});
  const Workload w = testing::gpt_workload(8, 4096, 32, 2048, 64);
  UniformPlanOptions o;
  o.micro_batch = 1;
  o.recompute = Recompute::kFull;
  o.zero = 3;
  const Plan p = std::get<Plan>(make_uniform_plan(c, w, 1, 1, 16, o));
  const Report rep = predict(c, w, p);
  ASSERT_TRUE(rep.feasible) << rep.infeasible_reason;
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_FALSE(work.dp_groups.empty());
  const DpGroup& grp = work.dp_groups.front();
  const GroupCost g = group_cost(c, grp.gpus);
  const double ag = sharded_collective_time(CollectiveKind::kAllGather, grp.gather_bytes, g, ShardedCollectives::kMemberNic);
  const double rs = sharded_collective_time(CollectiveKind::kReduceScatter, grp.size_bytes, g, ShardedCollectives::kMemberNic);
  const double f = rep.stages[0].forward_s, b = rep.stages[0].backward_s;
  const double per_micro_batch = std::max(0.0, ag - f) + std::max(0.0, 2 * ag + rs - b);
  ASSERT_GT(per_micro_batch, 0.0);  // the case exercises the exposed traffic
  EXPECT_NEAR(rep.breakdown.dp_comm_s, p.replicas[0].micro_batches * per_micro_batch, 1e-9);
  // No separate gradient sync at the end of the step: ZeRO-3's whole traffic is in the passes.
  EXPECT_NEAR(rep.iteration_time_s, p.replicas[0].micro_batches * (f + b) + rep.breakdown.dp_comm_s +
                                        rep.breakdown.optimizer_s, 1e-6);
  // Without prefetch each pass waits for all of its traffic: compute + traffic.
  Plan waiting = p;
  waiting.zero3_prefetch = false;
  const Report blocked = predict(c, w, waiting);
  ASSERT_TRUE(blocked.feasible) << blocked.infeasible_reason;
  EXPECT_NEAR(blocked.breakdown.dp_comm_s, p.replicas[0].micro_batches * (3 * ag + rs), 1e-9);
}

// ZeRO-3 in a pipeline: the traffic of a stage with slack behind the bottleneck stage costs
// nothing; the step grows by m * (max_s c_s - max_s t_s), c = max(f_c, gather) + max(b_c, gathers +
// reduce-scatter) + the stage's sends, f_c and b_c the passes without their sends
// (grad_sync_pass_traffic.cpp).
TEST(Predictor, ZeroThreeTrafficHidesInAFastStagesSlack) {
  using testing::cluster_of;
  using testing::node_type;
  using testing::round_gpu;
  // Two fast nodes, then two whose GPUs compute 4x slower: stage 1 paces the pipeline, and each
  // stage's data-parallel group crosses two nodes.
  const Cluster c = cluster_of({node_type("fast", round_gpu("fast", 400e12), 8, 300e9, 15e9),
                                node_type("slow", round_gpu("slow", 100e12), 8, 300e9, 15e9)},
                               {{0, 2}, {1, 2}});
  Workload w = testing::gpt_workload(8, 4096, 32, 2048, 16);
  w.model.tied_embeddings = false;  // no tied-embedding sync at the end of the step
  Plan p;
  p.micro_batch = 1;
  p.zero = 3;
  for (int r = 0; r < 2; ++r) p.replicas.push_back(Replica{8, {Stage{4, {8 * r}}, Stage{4, {16 + 8 * r}}}});
  const Report rep = predict(c, w, p);
  ASSERT_TRUE(rep.feasible) << rep.infeasible_reason;
  const PlanWork work = build_plan_work(c, w, p);
  p.zero = 1;
  const Report no_traffic = predict(c, w, p);
  double pace = 0, pace_with_traffic = 0, largest_stage_excess = 0;
  for (int s = 0; s < 2; ++s) {
    const DpGroup* grp = nullptr;
    for (const DpGroup& g : work.dp_groups)  // the stage's weights (not the tied-embedding sync)
      if (g.stage == s && g.gather_bytes > 0) grp = &g;
    ASSERT_NE(grp, nullptr);
    const GroupCost g = group_cost(c, grp->gpus);
    const double ag = sharded_collective_time(CollectiveKind::kAllGather, grp->gather_bytes, g, ShardedCollectives::kMemberNic);
    const double rs = sharded_collective_time(CollectiveKind::kReduceScatter, grp->size_bytes, g, ShardedCollectives::kMemberNic);
    // The passes' compute hides the traffic; their pipeline sends follow them.
    const double f = rep.stages[s].forward_s, b = rep.stages[s].backward_s;
    const double f_send = work.replicas[0][s].p2p_forward_s, b_send = work.replicas[0][s].p2p_backward_s;
    const double with_traffic = std::max(f - f_send, ag) + f_send + std::max(b - b_send, ag + rs) + b_send;
    pace = std::max(pace, f + b);
    pace_with_traffic = std::max(pace_with_traffic, with_traffic);
    largest_stage_excess = std::max(largest_stage_excess, with_traffic - (f + b));
  }
  ASSERT_GT(pace_with_traffic, pace);                          // the bottleneck stage is exposed a little,
  ASSERT_GT(largest_stage_excess, 2 * (pace_with_traffic - pace));  // the fast stage by far more
  EXPECT_NEAR(rep.breakdown.dp_comm_s, 8 * (pace_with_traffic - pace), 1e-9);
  EXPECT_NEAR(rep.iteration_time_s - rep.breakdown.optimizer_s,
              no_traffic.iteration_time_s - no_traffic.breakdown.dp_comm_s - no_traffic.breakdown.optimizer_s +
                  8 * (pace_with_traffic - pace),
              1e-6);
}

}  // namespace
}  // namespace hetsim::models

namespace hetsim::models {
namespace {

/// Two 8-GPU nodes with one 1 GB/s NIC each: the NIC share per sending GPU shows in the times.
Cluster two_nodes_one_nic_each() {
  NodeType nt = testing::node_type("box", testing::round_gpu("box", 100e12), 8, 300e9, 1e9);
  nt.nics.count = 1;
  return testing::cluster_of({nt}, {{0, 2}});
}

// A plan that leaves GPUs idle: only the plan's GPUs on a node share its NICs. Two TP-2 stages
// on two 8-GPU nodes with one NIC each: each rank's slice gets half the NIC, not an eighth.
TEST(Predictor, PipelineSendsShareTheNicWithThePlansGpusOnly) {
  const Cluster c = two_nodes_one_nic_each();
  const Workload w = testing::gpt_workload(4, 1024, 16, 1024, 8);
  const Plan p = one_replica({stage(2, {0, 1}), stage(2, {8, 9})}, 8);
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const double slice_bytes = 1024.0 * 1 * 1024 * 2 / 2;  // s * b * h * fp16 / tp
  const double expected = p2p_time(slice_bytes, path_between(c, 0, 8, 2));
  EXPECT_NEAR(work.replicas[0][0].p2p_forward_s, expected, 1e-12);
  EXPECT_GT(path_between(c, 0, 8, 2).bandwidth_Bps, 3.9 * path_between(c, 0, 8, 0).bandwidth_Bps);
}

// A node holding consecutive stages sends across nodes only from the ends of its run of stages:
// eight one-GPU stages, 0-3 on GPUs 0-3 of node 0 and 4-7 on GPUs 8-11 of node 1. One GPU per
// node crosses (stage 3 forward, stage 4 backward), so it has the NIC to itself, not a quarter
// of it (the plan's four GPUs on the node).
TEST(Predictor, OnlyTheGpusThatCrossNodesShareTheNic) {
  const Cluster c = two_nodes_one_nic_each();
  const Workload w = testing::gpt_workload(8, 1024, 16, 1024, 8);
  Plan p;
  p.micro_batch = 1;
  Replica r;
  r.micro_batches = 8;
  for (int g : {0, 1, 2, 3, 8, 9, 10, 11}) r.stages.push_back(stage(1, {g}));
  p.replicas = {r};
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const double bytes = 1024.0 * 1 * 1024 * 2;  // s * b * h * fp16, tp 1
  EXPECT_NEAR(work.replicas[0][3].p2p_forward_s, p2p_time(bytes, path_between(c, 3, 8, 1)), 1e-12);
  EXPECT_NEAR(work.replicas[0][4].p2p_backward_s, p2p_time(bytes, path_between(c, 8, 3, 1)), 1e-12);
  // The hand-overs inside a node use its fabric.
  EXPECT_NEAR(work.replicas[0][0].p2p_forward_s, p2p_time(bytes, path_between(c, 0, 1, 0)), 1e-12);
}

// The same for the gradient sync: one GPU per node, so each has its node's NIC to itself.
TEST(Predictor, GradientSyncSharesTheNicWithThePlansGpusOnly) {
  const Cluster c = two_nodes_one_nic_each();
  const Workload w = testing::gpt_workload(4, 1024, 16, 1024, 8);
  Plan p;
  p.micro_batch = 1;
  for (int g : {0, 8}) {
    Replica r;
    r.micro_batches = 4;
    Stage st;
    st.layers = 4;
    st.gpus = {g};
    r.stages = {st};
    p.replicas.push_back(r);
  }
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  ASSERT_EQ(work.dp_groups.size(), 1u);
  const DpGroup& grp = work.dp_groups.front();
  EXPECT_NEAR(grp.time_s, collective_time(CollectiveKind::kAllReduce, grp.size_bytes, group_cost(c, grp.gpus, 1)), 1e-12);
  EXPECT_LT(grp.time_s, 0.5 * collective_time(CollectiveKind::kAllReduce, grp.size_bytes, group_cost(c, grp.gpus, 8)));
}


// The WAN load of a plan's gradient groups (models/dp_segments.hpp): each group weighted by
// `weight(group)`, per zone pair.
std::vector<double> wan_load(const Cluster& c, const PlanWork& work, bool by_bytes) {
  std::vector<double> directed, load;
  for (const DpGroup& g : work.dp_groups)
    if (!g.embedding)
      add_wan_crossings(c, g.gpus.data(), static_cast<int>(g.gpus.size()), by_bytes ? g.size_bytes : 1.0, directed);
  wan_load_of(c, directed, load);
  return load;
}

// Gradient syncs that cross zones share the WAN link between them with each other: two stages'
// groups, each with two members on either side, cross at once (4 GPUs), so each gets about half
// the link (in proportion to its bytes), where a node's share (its two GPUs of the plan) would
// give each the whole link.
TEST(Predictor, GradientSyncsAcrossZonesShareTheWanLink) {
  const Cluster c = testing::two_zones_of(node_type("n", round_gpu("g", 200e12), 8, 200e9, 25e9));
  const Workload w = testing::gpt_workload(4, 1024, 16, 1024, 16);
  Plan p;
  p.micro_batch = 1;
  for (const auto& [first, second] : {std::pair{0, 8}, std::pair{1, 9}, std::pair{16, 24}, std::pair{17, 25}})
    p.replicas.push_back(one_replica({stage(2, {first}), stage(2, {second})}, 4).replicas.front());
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const std::vector<double> senders = wan_load(c, work, false);
  ASSERT_EQ(senders.size(), 4u);
  EXPECT_EQ(senders[zone_pair_index(c, 0, 1)], 4);
  const std::vector<double> bytes = wan_load(c, work, true);
  int groups = 0;
  for (const DpGroup& grp : work.dp_groups) {
    if (grp.embedding) continue;
    ++groups;
    std::vector<double> wan;
    wan_senders_for(bytes, grp.size_bytes, wan);
    EXPECT_GE(wan[zone_pair_index(c, 0, 1)], 3);
    EXPECT_LE(wan[zone_pair_index(c, 0, 1)], 5);
    const double shared = collective_time(CollectiveKind::kAllReduce, grp.size_bytes, group_cost(c, grp.gpus, 2, &wan));
    EXPECT_NEAR(grp.time_s, shared, 1e-12);
    EXPECT_GT(grp.time_s, 1.5 * collective_time(CollectiveKind::kAllReduce, grp.size_bytes, group_cost(c, grp.gpus, 2)));
  }
  EXPECT_EQ(groups, 2);
}

// Groups of unequal size share the link in proportion to what they move, so that they all end
// together when it paces them (counting each as one sender kept the link half idle once the
// small ones were done): replicas split 3 + 1 in one zone and 1 + 3 in the other make groups of
// 1 and 2 layers (segments 0, 1-2, 3), whose WAN-bound times come out equal.
TEST(Predictor, GroupsOfUnequalSizeShareTheWanInProportion) {
  Cluster c = testing::two_zones_of(node_type("n", round_gpu("g", 200e12), 8, 200e9, 25e9));
  for (auto& link : c.links) link.bandwidth_Bps = 0.2e9;  // the WAN paces every group
  Workload w = testing::gpt_workload(4, 1024, 16, 1024, 16);
  w.model.tied_embeddings = false;
  Plan p;
  p.micro_batch = 1;
  p.replicas.push_back(one_replica({stage(3, {0}), stage(1, {1})}, 4).replicas.front());
  p.replicas.push_back(one_replica({stage(1, {16}), stage(3, {17})}, 4).replicas.front());
  const PlanWork work = build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  std::vector<double> times, sizes;
  for (const DpGroup& grp : work.dp_groups)
    if (!grp.embedding) times.push_back(grp.time_s), sizes.push_back(grp.size_bytes);
  ASSERT_EQ(times.size(), 3u);
  EXPECT_GT(*std::max_element(sizes.begin(), sizes.end()), 1.5 * *std::min_element(sizes.begin(), sizes.end()));
  for (double t : times) EXPECT_NEAR(t, times.front(), 0.1 * times.front());
}

// A ring over three zones crosses each of their links once, one of them against the zones'
// order (west -> east): every link carries its member.
TEST(Predictor, ARingOverThreeZonesCountsEachLinksCrossing) {
  Cluster c;
  c.name = "three-zones";
  c.node_types = {node_type("n", round_gpu("g", 200e12), 8, 200e9, 25e9)};
  for (const char* name : {"east", "mid", "west"}) {
    Zone z;
    z.name = name;
    z.groups = {{0, 1}};
    c.zones.push_back(z);
  }
  c.links = {{0, 1, 1e9, 30e-3, 0}, {1, 2, 1e9, 30e-3, 0}, {0, 2, 1e9, 30e-3, 0}};
  c.finalize();
  Plan p;
  p.micro_batch = 1;
  for (int g : {0, 8, 16}) p.replicas.push_back(one_replica({stage(4, {g})}, 1).replicas.front());
  const PlanWork work = build_plan_work(c, testing::gpt_workload(4, 1024, 16, 1024, 16), p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const std::vector<double> wan = wan_load(c, work, false);
  ASSERT_EQ(wan.size(), 9u);
  EXPECT_EQ(wan[zone_pair_index(c, 0, 1)], 1);
  EXPECT_EQ(wan[zone_pair_index(c, 1, 2)], 1);
  EXPECT_EQ(wan[zone_pair_index(c, 2, 0)], 1);
}

// And for a TP group that spans nodes: GPUs 7 and 8 (one per node) are the plan's only GPUs on
// their nodes, so their all-reduces get each node's NIC whole, not an eighth of it.
TEST(Predictor, TpGroupsAcrossNodesShareTheNicWithThePlansGpusOnly) {
  const Cluster c = two_nodes_one_nic_each();
  const Workload w = testing::gpt_workload(4, 1024, 16, 1024, 8);
  const Report alone = predict(c, w, one_replica({stage(4, {7, 8})}, 8));
  ASSERT_TRUE(alone.feasible) << alone.infeasible_reason;
  // The same group priced as if every GPU of both nodes sent at once (the whole-cluster case).
  const double bytes = 1024.0 * 1 * 1024 * 2;  // s * b * h * fp16 per all-reduce
  const double one = collective_time(CollectiveKind::kAllReduce, bytes, group_cost(c, std::vector<int>{7, 8}, 1));
  const double eight = collective_time(CollectiveKind::kAllReduce, bytes, group_cost(c, std::vector<int>{7, 8}, 0));
  EXPECT_LT(one, 0.25 * eight);
  // Per micro-batch 4 layers x (2 forward + 2 backward) all-reduces, the embedding's forward
  // and the LM head input gradient's backward one (and the cross-entropy's few bytes): 8
  // micro-batches at the one-sender figure, far below the all-GPUs-send figure.
  EXPECT_GT(alone.breakdown.tp_comm_s, 8 * 18 * one);
  EXPECT_LT(alone.breakdown.tp_comm_s, 8 * 18.5 * one);
  EXPECT_LT(alone.breakdown.tp_comm_s, 0.3 * 8 * 18 * eight);
}

// Tied embeddings: every replica's first and last stage all-reduce the embedding gradient, and
// the slowest pair is waited for. Replica 1's pair sits on two nodes with slow NICs, replica 0's
// on fast ones: the step must not depend on which replica comes first (it did: only replica
// 0's pair was priced), and it includes the slow pair's all-reduce.
TEST(Predictor, TheSlowestTiedEmbeddingPairIsWaitedForWhateverTheReplicaOrder) {
  const GpuType g = round_gpu("g", 100e12);
  const Cluster c = cluster_of({node_type("fast-nic", g, 8, 300e9, 25e9), node_type("slow-nic", g, 8, 300e9, 0.1e9)},
                               {{0, 2}, {1, 2}});
  const Workload w = gpt_workload(4, 1024, 16, 1024, 16);
  ASSERT_TRUE(w.model.tied_embeddings);
  Plan p;
  p.micro_batch = 1;
  Replica fast, slow;
  fast.micro_batches = slow.micro_batches = 8;
  fast.stages = {stage(2, {0}), stage(2, {8})};
  slow.stages = {stage(2, {16}), stage(2, {24})};
  p.replicas = {fast, slow};
  Plan swapped = p;
  std::swap(swapped.replicas[0], swapped.replicas[1]);
  const Report a = predict(c, w, p), b = predict(c, w, swapped);
  ASSERT_TRUE(a.feasible) << a.infeasible_reason;
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.breakdown.dp_comm_s, b.breakdown.dp_comm_s);
  const double embedding_bytes = 51200.0 * 1024 * 2;  // vocab * hidden * fp16 gradient
  const double slow_pair_s = collective_time(CollectiveKind::kAllReduce, embedding_bytes, group_cost(c, {16, 24}, 1));
  EXPECT_GE(a.breakdown.dp_comm_s, slow_pair_s);
  // build_plan_work records both pairs with their own times.
  const PlanWork work = build_plan_work(c, w, p);
  int pairs = 0;
  for (const DpGroup& grp : work.dp_groups) pairs += grp.embedding ? 1 : 0;
  EXPECT_EQ(pairs, 2);
}

TEST(Predictor, Fp32TrainingRunsItsMatmulsInTf32WhereAllowed) {
  // An Ampere-like part: TF32 tensor cores at 8x the FP32 CUDA cores (A100: 156 vs 19.5 TFLOP/s).
  GpuType ampere = round_gpu("ampere", 312e12);
  ampere.peak_flops[Dtype::kTf32] = 156e12;
  ampere.peak_flops[Dtype::kFp32] = 19.5e12;
  GpuType volta = ampere;  // no TF32: FP32 training stays on the CUDA cores whatever the flag
  volta.name = "volta";
  volta.peak_flops.erase(Dtype::kTf32);
  EXPECT_EQ(ampere.matmul_dtype(Dtype::kFp32, true), Dtype::kTf32);
  EXPECT_EQ(ampere.matmul_dtype(Dtype::kFp32, false), Dtype::kFp32);
  EXPECT_EQ(volta.matmul_dtype(Dtype::kFp32, true), Dtype::kFp32);
  EXPECT_EQ(ampere.matmul_dtype(Dtype::kBf16, true), Dtype::kBf16);

  Workload w = gpt_workload(4, 4096, 32, 2048, 8);
  w.training.dtype = Dtype::kFp32;
  Plan p;
  p.micro_batch = 4;
  Replica r;
  r.micro_batches = 2;
  r.stages = {stage(4, {0})};
  p.replicas = {r};
  const auto forward_s = [&](const GpuType& g, bool allow_tf32) {
    w.training.allow_tf32 = allow_tf32;
    const Report rep = predict(cluster_of({node_type("n", g, 8, 300e9, 25e9)}, {{0, 1}}), w, p);
    EXPECT_TRUE(rep.feasible) << rep.infeasible_reason;
    return rep.feasible ? rep.stages[0].forward_s : 0.0;
  };
  const double tf32_s = forward_s(ampere, true), fp32_s = forward_s(ampere, false);
  // GEMM-bound at 4 x 2048 tokens and hidden 4096: most of the 8x shows; the FP32 activations
  // of the elementwise ops cost the same in both.
  EXPECT_GT(fp32_s, 4.0 * tf32_s);
  EXPECT_LT(fp32_s, 8.0 * tf32_s);
  EXPECT_DOUBLE_EQ(forward_s(volta, true), forward_s(volta, false));
  // MFU is taken against the peak the matmuls run at.
  w.training.allow_tf32 = true;
  const Report rep = predict(cluster_of({node_type("n", ampere, 8, 300e9, 25e9)}, {{0, 1}}), w, p);
  EXPECT_NEAR(rep.mfu, rep.tflops_per_gpu * 1e12 / 156e12, 1e-9);
}

}  // namespace
}  // namespace hetsim::models
