// SPDX-License-Identifier: Apache-2.0
// The stage actors replay hand-built PlanWork; pipelines of equal stages have closed forms:
// 1F1B and GPipe take (m+p-1)·(t_f+t_b) plus transfers (Narayanan et al., SC'21 §2.2.1);
// interleaving divides the bubble by v (SC'21 §2.2.2). Sends are blocking (Megatron-LM), so
// each stage's pass time includes its send, exactly as models::pipeline_time counts it:
// with t_x per transfer, (m-1)·(t_f+t_b+2t_x) + p·(t_f+t_b) + 2(p-1)·t_x.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "collective_flows.hpp"
#include "engine_inputs.hpp"
#include "predictor.hpp"
#include "sim_report.hpp"
#include "simulator.hpp"
#include "test_clusters.hpp"
#include "comm_cost.hpp"
#include "pipeline_time.hpp"
#include "topology.hpp"

namespace hetsim::sim {
namespace {

using testing::NodeSpec;
using testing::UniformWork;
constexpr double kTol = 0.01;

SimResult simulate(const models::Cluster& cluster, const UniformWork& u, bool fold) {
  models::Plan plan;
  models::PlanWork work;
  testing::make_uniform(u, plan, work);
  SimOptions opt;
  opt.fold = fold;
  auto r = simulate_work(cluster, plan, work, opt);
  EXPECT_TRUE(r.ok) << r.error;
  return r;
}

double run(const models::Cluster& cluster, const UniformWork& u, bool fold = true) {
  return simulate(cluster, u, fold).iteration_time_s;
}

const double kIntraBw = 300e9 * models::link_efficiency(models::IntraFabricKind::kNvswitch);
const double kNicBw = 25e9 * models::link_efficiency(models::NicKind::kInfiniband);
// Stages on GPUs 0..3 of one node: a 3MB activation takes 2us + 3MB/234GB/s = 14.8us.
const double kTransfer = 2e-6 + 3e6 / kIntraBw;

// The analytic pipeline time of equal stages with blocking sends of t_x (v chunks per stage).
double analytic_pipeline(const UniformWork& u, double t_x) {
  std::vector<models::StageTimes> st(u.pp);
  const int v = u.interleave;
  for (int s = 0; s < u.pp; ++s) {
    st[s].forward_s = u.t_f + (s < u.pp - 1 ? v : v - 1) * t_x;
    st[s].backward_s = u.t_b + (s > 0 ? v : v - 1) * t_x;
  }
  return models::pipeline_time(st, u.micro_batches, v);
}

UniformWork pipeline(models::Schedule schedule) {
  UniformWork u;
  u.pp = 4;
  u.micro_batches = 8;
  u.t_f = 1e-3;
  u.t_b = 2e-3;
  u.act_bytes = 3e6;
  u.schedule = schedule;
  return u;
}

TEST(PipelineReplay, OneFOneBOfEqualStagesWithoutTransfers) {
  auto u = pipeline(models::Schedule::k1f1b);
  u.act_bytes = 0;
  const double t = run(testing::one_zone(1, NodeSpec{}), u);
  const double expected = (u.micro_batches + u.pp - 1) * (u.t_f + u.t_b);
  EXPECT_NEAR(t, expected, 1e-9);
}

TEST(PipelineReplay, OneFOneBOfEqualStages) {
  const auto u = pipeline(models::Schedule::k1f1b);
  const double t = run(testing::one_zone(1, NodeSpec{}), u);
  // The sends make the end stages lighter than the middle ones, so the exact 1F1B time lies
  // below the DAPPLE bound (m-1)·max + Σ (models/pipeline_time.cpp).
  const double bound = (u.micro_batches - 1) * (u.t_f + u.t_b + 2 * kTransfer) + u.pp * (u.t_f + u.t_b) +
                       2 * (u.pp - 1) * kTransfer;
  const double expected = analytic_pipeline(u, kTransfer);
  EXPECT_LE(expected, bound);
  EXPECT_GE(expected, (u.micro_batches + u.pp - 1) * (u.t_f + u.t_b));
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(PipelineReplay, GpipeOfEqualStages) {
  const auto u = pipeline(models::Schedule::kGpipe);
  const double t = run(testing::one_zone(1, NodeSpec{}), u);
  const double expected = analytic_pipeline(u, kTransfer);
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(PipelineReplay, InterleavingDividesTheBubble) {
  auto u = pipeline(models::Schedule::kInterleaved);
  u.interleave = 2;
  u.act_bytes = 0;
  const double t = run(testing::one_zone(1, NodeSpec{}), u);
  const double expected = u.micro_batches * (u.t_f + u.t_b) + (u.pp - 1) * (u.t_f + u.t_b) / u.interleave;
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(PipelineReplay, InterleavedWithTransfersMatchesTheAnalyticPipeline) {
  auto u = pipeline(models::Schedule::kInterleaved);
  u.interleave = 2;
  const double t = run(testing::one_zone(1, NodeSpec{}), u);
  const double expected = analytic_pipeline(u, kTransfer);
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(PipelineReplay, SingleStageRunsItsMicroBatchesBackToBack) {
  UniformWork u;
  u.micro_batches = 5;
  u.optimizer_s = 4e-3;
  const double t = run(testing::one_zone(1, NodeSpec{}), u);
  EXPECT_NEAR(t, 5 * 3e-3 + 4e-3, 1e-9);
}

// Found by the s26 user study (H100 + MI355X, Llama-3.1 70B): the cost model adds the slowest
// stage's optimizer step after the sync (26.0 ms, an MI355X stage), the simulator ran each stage's
// own after its own sync, so the MI355X stages' updates hid in the 1F1B cool-down and the
// breakdown showed the first stage's 17.2 ms. The gradient-norm all-reduce before the update
// (Megatron-LM clip_grad) joins every stage: 2 stages, 4 micro-batches of 1 + 2 ms, no sends:
// the pipeline takes (4 + 1) x 3 = 15 ms (stage 1 drains at 13 ms), then stage 1's 5 ms update.
TEST(PipelineReplay, TheSlowestStagesOptimizerStepEndsTheStep) {
  auto u = pipeline(models::Schedule::k1f1b);
  u.pp = 2;
  u.micro_batches = 4;
  u.act_bytes = 0;
  models::Plan plan;
  models::PlanWork work;
  testing::make_uniform(u, plan, work);
  work.replicas[0][0].optimizer_s = 1e-3;
  work.replicas[0][1].optimizer_s = 5e-3;
  const SimResult r = simulate_work(testing::one_zone(1, NodeSpec{}), plan, work, SimOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NEAR(r.iteration_time_s, 15e-3 + 5e-3, 1e-9);  // was max(15 + 1, 13 + 5) = 18 ms
  const models::Report rep = make_sim_report(models::Report{}, r);
  EXPECT_NEAR(rep.breakdown.optimizer_s, 5e-3, 1e-12);
  EXPECT_NEAR(rep.breakdown.compute_s, 4 * 3e-3, 1e-9);
  EXPECT_NEAR(rep.breakdown.bubble_s, 3e-3, 1e-9);  // (p - 1)(t_f + t_b)
  EXPECT_EQ(rep.breakdown.dp_comm_s, 0.0);
}

TEST(PipelineReplay, TpAllReduceAddsToEveryPass) {
  UniformWork u;
  u.tp = 8;
  u.micro_batches = 2;
  u.tp_ar_bytes = 8e7;
  const double t = run(testing::one_zone(1, NodeSpec{}), u);
  // Ring (the cost model's choice at this size): launch + 2(p-1)·α + 2(p-1)/p·n/B.
  const double ar = models::kCollectiveLaunch_s + 2 * 7 * 2e-6 + 2.0 * 7 / 8 * 8e7 / kIntraBw;
  const double expected = 2 * (3e-3 + 2 * ar);
  EXPECT_NEAR(t, expected, kTol * expected);
}

// Two replicas of one stage on two nodes sync 1GB of gradients after backward:
// a 2-member ring all-reduce over the NIC = launch + 2·9us + 1GB/23.5GB/s.
TEST(PipelineReplay, DpGradientSyncFollowsBackward) {
  UniformWork u;
  u.dp = 2;
  u.micro_batches = 2;
  u.grad_bytes = 1e9;
  u.optimizer_s = 1e-3;
  NodeSpec single;
  single.gpus = 1;
  single.nics = 1;
  const double t = run(testing::one_zone(2, single), u);
  const double expected = 2 * 3e-3 + (models::kCollectiveLaunch_s + 2 * 9e-6 + 1e9 / kNicBw) + 1e-3;
  EXPECT_NEAR(t, expected, kTol * expected);
}

TEST(PipelineReplay, OverlappedGradientSyncHidesBehindBackward) {
  UniformWork u;
  u.dp = 2;
  u.micro_batches = 2;
  u.grad_bytes = 1e8;  // 4ms alone: mostly hidden behind the 2ms last backward with 4 buckets
  NodeSpec single;
  single.gpus = 1;
  single.nics = 1;
  const auto cluster = testing::one_zone(2, single);
  u.overlap = false;
  const double plain = testing::in_child([&] { return run(cluster, u); });
  u.overlap = true;
  const double overlapped = testing::in_child([&] { return run(cluster, u); });
  EXPECT_LT(overlapped, plain - 1e-3);
  EXPECT_GT(overlapped, 6e-3);  // the compute alone
}

// 64 GPUs: TP8 inside a node, PP2, DP4, all with TP all-reduces, activations and a ring
// gradient sync. Folding simulates one replica (+ the next one's nodes as receivers).
TEST(Folding, FoldedAndUnfoldedAgreeOnA64GpuPlan) {
  UniformWork u;
  u.tp = 8;
  u.pp = 2;
  u.dp = 4;
  u.micro_batches = 6;
  u.tp_ar_bytes = 2e7;
  u.act_bytes = 1e7;
  u.grad_bytes = 2e8;
  u.optimizer_s = 1e-3;
  NodeSpec two_nics;
  two_nics.nics = 2;  // 4 GPUs per NIC: DP and PP flows contend
  const auto cluster = testing::one_zone(8, two_nics);
  // The child reports the time, negated when the run was not folded as asked.
  const double folded = testing::in_child([&] {
    const auto r = simulate(cluster, u, true);
    return r.folded && r.replicas_simulated == 1 ? r.iteration_time_s : -r.iteration_time_s;
  });
  const double unfolded = testing::in_child([&] {
    const auto r = simulate(cluster, u, false);
    return r.folded ? -r.iteration_time_s : r.iteration_time_s;
  });
  ASSERT_GT(folded, 0) << "the 64-GPU plan was not folded";
  ASSERT_GT(unfolded, 0);
  std::printf("folded %.9f s, unfolded %.9f s\n", folded, unfolded);
  EXPECT_NEAR(folded, unfolded, 0.01 * unfolded);
}

// GPT-3 1.3B, overlapped and with full recompute, one GPU a replica (GPUs 0 .. gpus-1 of the
// repository's `cluster`, `micro_batches` each): the exposed sync of the cost model and of the
// simulator folded and unfolded agree within `tolerance` of the first two.
void expect_unfolded_sync_agrees(const std::string& cluster, int gpus, int micro_batches, int zero, double tolerance) {
  testing::Inputs in = testing::load(cluster, "gpt3-1.3b.yaml");
  std::vector<models::Replica> replicas;
  for (int g = 0; g < gpus; ++g) replicas.push_back(models::Replica{micro_batches, {models::Stage{24, {g}}}});
  models::Plan p = testing::plan_of(std::to_string(gpus) + " one-GPU replicas on " + cluster, zero, replicas);
  p.overlap_grad_sync = true;
  p.recompute = models::Recompute::kFull;
  const models::Report analytic = models::predict(in.cluster, in.workload, p);
  SimOptions unfold;
  unfold.fold = false;
  const models::Report folded = simulate_report_in_child(in.cluster, in.workload, p, SimOptions{});
  const models::Report unfolded = simulate_report_in_child(in.cluster, in.workload, p, unfold);
  std::printf("exposed sync: analytic %.6f s, folded %.6f s, unfolded %.6f s\n", analytic.breakdown.dp_comm_s,
              folded.breakdown.dp_comm_s, unfolded.breakdown.dp_comm_s);
  ASSERT_TRUE(analytic.feasible && folded.feasible && unfolded.feasible);
  EXPECT_NEAR(unfolded.breakdown.dp_comm_s, folded.breakdown.dp_comm_s, tolerance * folded.breakdown.dp_comm_s);
  EXPECT_NEAR(unfolded.breakdown.dp_comm_s, analytic.breakdown.dp_comm_s, tolerance * analytic.breakdown.dp_comm_s);
}

// ZeRO-1, one H100 a replica on 8 nodes of 8 (bench1024): the gradient ring crosses each node
// boundary split over the 8 NICs. The unfolded dataflow forwards a crossing at the next node's
// first member (the pieces carry their hop, Flow::hop_src/hop_dst), so a trip round the ring
// pays 8 crossing latencies, as NCCL's channel rings do and as the folded run (mean hop latency
// a step) and the cost model count it. When every member waited for its own crossing piece,
// each of the 2 x 63 steps paid one: 0.896 ms of exposed sync unfolded against 0.613 ms folded
// and 0.607 ms analytic; now 0.592 ms.
TEST(Folding, UnfoldedRingsPayANodeCrossingOnceATrip) { expect_unfolded_sync_agrees("bench1024.yaml", 64, 8, 1, 0.05); }

// ZeRO-0, one GPU a replica on 2 H100 and 2 MI300X nodes without cross-vendor RDMA: the ring's
// H100 <-> MI300X hops are staged through host memory. The unfolded dataflow lets a staged step
// land at its receiver after its copies (run_dataflow_steps' arrival delays), so the copies are
// paid where chunks cross, once a trip, as the cost model counts them in the hop's latency;
// staged rings ran with a barrier after every step plus the copies: 13.6 ms of exposed sync
// unfolded against 0.81 ms folded and 0.72 ms analytic; now 0.78 ms.
TEST(Folding, UnfoldedStagedRingsPayTheCopiesOnceATrip) { expect_unfolded_sync_agrees("h100-mi300x.yaml", 32, 16, 0, 0.1); }

// Found by scripts/engine_diff.py (seed 1). GPT-3 1.3B on geo-two-zones, ZeRO-1, overlapped:
// short gradient rings across the 30 ms WAN link, stages in several groups. Folded, a lone
// bucket's merged steps wait their ring's heaviest chain of hops (merge_repeated_phases), but the
// buckets that follow one another back to back wait the mean hop latency a step, as their steps
// make one dataflow unfolded: 1.759 s folded, 1.761 s unfolded (the chain for every bucket gives
// 1.895 s folded). The cost model, whose buckets each pay the chain, gives 1.848 s.
TEST(Folding, BackToBackBucketsAcrossAWanFollowTheUnfoldedDataflow) {
  testing::Inputs in = testing::load("geo-two-zones.yaml", "gpt3-1.3b.yaml");
  in.workload.training.global_batch = 21;
  models::Plan p = testing::plan_of(
      "three replicas across the WAN, ZeRO-1, overlapped", 1,
      {models::Replica{7, {models::Stage{9, {48, 49, 50, 51}}, models::Stage{15, {7}}}},
       models::Replica{11, {models::Stage{5, {17}}, models::Stage{19, {46, 47}}}},
       models::Replica{3, {models::Stage{24, {4, 5}}}}});
  p.overlap_grad_sync = true;
  SimOptions unfold;
  unfold.fold = false;
  const models::Report folded = simulate_report_in_child(in.cluster, in.workload, p, SimOptions{});
  const models::Report unfolded = simulate_report_in_child(in.cluster, in.workload, p, unfold);
  ASSERT_TRUE(folded.feasible && unfolded.feasible) << folded.infeasible_reason << unfolded.infeasible_reason;
  std::printf("analytic %.4f s, folded %.4f s, unfolded %.4f s\n", models::predict(in.cluster, in.workload, p).iteration_time_s,
              folded.iteration_time_s, unfolded.iteration_time_s);
  EXPECT_NEAR(folded.iteration_time_s, unfolded.iteration_time_s, 0.01 * unfolded.iteration_time_s);
}

// Found by a metamorphic-test pass. Llama-2 7B on geo-two-zones, ZeRO-1 overlapped, one GPU a
// replica: eight A100 replicas of one micro-batch in one zone, eight H100 replicas of three in the
// other, one 16-member gradient ring over the two 30 ms hops. Its 32 buckets run back to back.
// Folded, each merged bucket waited 30 ms paid once and the mean hop latency (3.75 ms) for each of
// the other 14 steps, 82.5 ms, where a lone bucket's heaviest chain, and the period of the
// dataflow's max-plus recurrence, is 60 ms: 14.34 s folded against 13.64 s analytic and 13.7 s
// unfolded. Back-to-back buckets now never wait longer than the chain.
TEST(Folding, BackToBackBucketsOnALongRingOverTwoSlowHopsWaitNoLongerThanTheChain) {
  testing::Inputs in = testing::load("geo-two-zones.yaml", "llama2-7b.yaml");
  in.workload.training.global_batch = 256;
  std::vector<models::Replica> replicas;
  for (int g = 0; g < 8; ++g) replicas.push_back(models::Replica{1, {models::Stage{32, {g}}}});       // A100s
  for (int g = 32; g < 40; ++g) replicas.push_back(models::Replica{3, {models::Stage{32, {g}}}});     // H100s
  models::Plan p = testing::plan_of("A100 and H100 replicas on one ring over the WAN, ZeRO-1, overlapped", 1, replicas);
  p.micro_batch = 8;
  p.recompute = models::Recompute::kFull;
  p.overlap_grad_sync = true;
  SimOptions unfold;
  unfold.fold = false;
  const models::Report analytic = models::predict(in.cluster, in.workload, p);
  const models::Report folded = simulate_report_in_child(in.cluster, in.workload, p, SimOptions{});
  const models::Report unfolded = simulate_report_in_child(in.cluster, in.workload, p, unfold);
  ASSERT_TRUE(analytic.feasible && folded.feasible && unfolded.feasible)
      << analytic.infeasible_reason << folded.infeasible_reason << unfolded.infeasible_reason;
  std::printf("analytic %.4f s, folded %.4f s, unfolded %.4f s\n", analytic.iteration_time_s, folded.iteration_time_s,
              unfolded.iteration_time_s);
  EXPECT_NEAR(folded.iteration_time_s, analytic.iteration_time_s, 0.01 * analytic.iteration_time_s);
  EXPECT_NEAR(folded.iteration_time_s, unfolded.iteration_time_s, 0.02 * unfolded.iteration_time_s);
}

}  // namespace
}  // namespace hetsim::sim

namespace hetsim::sim {
namespace {

// Eight TP ranks of a node sync 100MB of gradients each with the same rank of the other
// node, through ONE shared 25 GB/s NIC: each of the 8 concurrent rings gets 1/8 of it, so the
// sync takes launch + 2·9us + 8·100MB/23.5GB/s = 34.1 ms instead of 4.3 ms with a NIC per GPU.
TEST(Contention, DpSyncThroughOneSharedNic) {
  UniformWork u;
  u.tp = 8;
  u.dp = 2;
  u.micro_batches = 2;
  u.grad_bytes = 1e8;
  NodeSpec one_nic;
  one_nic.nics = 1;
  const double t = run(testing::one_zone(2, one_nic), u);
  const double expected = 2 * 3e-3 + models::kCollectiveLaunch_s + 2 * 9e-6 + 8 * 1e8 / kNicBw;
  EXPECT_NEAR(t, expected, kTol * expected);
}

// ZeRO-3 on two single-GPU nodes: each forward prefetches its half of the 100MB of weights from
// the other replica (9us + 50MB/23.5GB/s = 2.14 ms), which the 1 ms forward cannot hide; each
// backward gathers them again and reduce-scatters the 100MB of gradients (9us + 100MB/23.5GB/s
// = 4.26 ms), more than its 2 ms. Nothing is left for after the step (models::pass_traffic).
TEST(Contention, ZeroThreeTrafficOverlapsEachPass) {
  UniformWork u;
  u.dp = 2;
  u.micro_batches = 2;
  u.grad_bytes = 1e8;
  u.zero = 3;
  NodeSpec single;
  single.gpus = 1;
  single.nics = 1;
  const double t = run(testing::one_zone(2, single), u);
  const double forward = 9e-6 + 5e7 / kNicBw;
  const double backward = 9e-6 + (5e7 + 5e7) / kNicBw;
  const double expected = 2 * (std::max(1e-3, forward) + std::max(2e-3, backward));
  EXPECT_NEAR(t, expected, kTol * expected);
}

// Four replicas of a 2-stage pipeline: stage 0 on zone 0 (two nodes of 2 GPUs), stage 1 on
// zone 1, one 1.25 GB/s WAN link. The four replicas' sends cross the WAN together, 1/4 each
// (as the cost model's predictor prices a plan's WAN share), not a node's share (1/2): each
// 50MB transfer takes 30ms + 9us + 4·50MB/(1.25GB/s·0.85) = 218 ms instead of 124 ms.
TEST(Contention, PipelineSendsShareTheWanLink) {
  UniformWork u;
  u.pp = 2;
  u.dp = 4;
  u.micro_batches = 4;
  u.act_bytes = 5e7;
  NodeSpec two_gpus;
  two_gpus.gpus = 2;
  two_gpus.nics = 2;
  const auto cluster = testing::two_zones(2, two_gpus, 1.25e9, 30e-3);
  const double t = run(cluster, u);
  const double wan = 1.25e9 * models::kWanLinkEfficiency;
  const double shared = 30e-3 + 9e-6 + 4 * 5e7 / wan;
  const double node_share = 30e-3 + 9e-6 + 2 * 5e7 / wan;
  const double expected = analytic_pipeline(u, shared);
  EXPECT_NEAR(t, expected, kTol * expected);
  EXPECT_GT(t, analytic_pipeline(u, node_share) * 1.2);
}

}  // namespace
}  // namespace hetsim::sim
