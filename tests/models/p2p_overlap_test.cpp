// SPDX-License-Identifier: Apache-2.0
// Plan::overlap_p2p_comm (Megatron-Core overlap_p2p_comm): a pass's host work runs while the GPU
// drains the work queued before it, and a stage's pipeline sends run beside its compute.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cost_test_util.hpp"
#include "pipeline_time.hpp"
#include "predictor.hpp"
#include "stage_cost.hpp"
#include "topology.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::gpt_workload;
using testing::node_type;
using testing::round_gpu;

/// A pass of the pipeline engine's 1.5 ms of bookkeeping, then one kernel of 0.5 ms host time
/// and `gpu_s` of GPU time.
PassCost one_kernel_pass(double gpu_s) {
  PassCost c;
  c.launch(1.5e-3, 0);
  c.launch(0.5e-3, gpu_s);
  c.gpu_s += gpu_s;  // launch() queues the kernel; the sink adds its GPU time (stage_cost.cpp)
  return c;
}

TEST(PassCost, AnUnsynchronizedPassTakesTheLongerOfItsGpuAndItsHostTime) {
  // GPU-bound (3 ms of GPU): after a synchronize the GPU idles through the 2 ms of host work
  // before its kernel, 5 ms in all; without it the host prepares the pass while the GPU
  // finishes the previous one: 3 ms.
  PassCost synced = one_kernel_pass(3e-3), free = one_kernel_pass(3e-3);
  synced.close_pass(true);
  free.close_pass(false);
  EXPECT_NEAR(synced.wall_s(), 5e-3, 1e-12);
  EXPECT_NEAR(free.wall_s(), 3e-3, 1e-12);
  // Host-bound (1 ms of GPU): 2 ms of host then the kernel, 3 ms; unsynchronized the host's
  // 2 ms per pass set the pace.
  synced = one_kernel_pass(1e-3);
  free = one_kernel_pass(1e-3);
  synced.close_pass(true);
  free.close_pass(false);
  EXPECT_NEAR(synced.wall_s(), 3e-3, 1e-12);
  EXPECT_NEAR(free.wall_s(), 2e-3, 1e-12);
}

TEST(WithSends, OverlappedSendsCostOnlyTheirExcessOverTheCompute) {
  EXPECT_DOUBLE_EQ(with_sends(3.0, 1.0, false), 4.0);
  EXPECT_DOUBLE_EQ(with_sends(3.0, 1.0, true), 3.0);
  EXPECT_DOUBLE_EQ(with_sends(3.0, 5.0, true), 5.0);
}

/// Sum of a pass's recorded ops (compute, collectives and the trailing host stall): its wall time.
double ops_s(const std::vector<Op>& ops) {
  double t = 0;
  for (const Op& op : ops) t += op.duration_s;
  return t;
}

/// Two interleaved stages (v = 4) on two nodes whose NICs give `nic_Bps` per GPU.
struct TwoNodePipeline {
  Cluster cluster;
  Workload workload = gpt_workload(16, 2048, 16, 2048, 16);
  Plan plan;
  explicit TwoNodePipeline(double nic_Bps)
      : cluster(cluster_of({node_type("n", round_gpu("g", 300e12), 8, 300e9, nic_Bps)}, {{0, 2}})) {
    plan.micro_batch = 1;
    plan.schedule = Schedule::kInterleaved;
    plan.interleave = 4;
    Replica r;
    r.micro_batches = 16;
    r.stages.resize(2);
    r.stages[0].layers = r.stages[1].layers = 8;
    r.stages[0].gpus = {0, 1};
    r.stages[1].gpus = {8, 9};
    plan.replicas = {r};
  }
};

/// Per pipeline direction: a stage takes max(its passes, its sends' bytes) with overlap_p2p_comm
/// (their latency delays the receiver: interleaved_latency_pace), its passes (which then carry no
/// host stall of their own) plus its sends without.
void expect_stage_times_follow_with_sends(double nic_Bps) {
  TwoNodePipeline t(nic_Bps);
  const Report plain = predict(t.cluster, t.workload, t.plan);
  const PlanWork plain_work = build_plan_work(t.cluster, t.workload, t.plan);
  t.plan.overlap_p2p_comm = true;
  const Report overlapped = predict(t.cluster, t.workload, t.plan);
  const PlanWork overlapped_work = build_plan_work(t.cluster, t.workload, t.plan);
  ASSERT_TRUE(plain.feasible && overlapped.feasible) << plain.infeasible_reason << overlapped.infeasible_reason;
  for (int s = 0; s < 2; ++s) {
    double synced_f = 0, synced_b = 0, free_f = 0, free_b = 0;
    for (const ChunkWork& c : plain_work.replicas[0][s].chunks()) {
      synced_f += ops_s(c.forward);
      synced_b += ops_s(c.backward);
    }
    for (const ChunkWork& c : overlapped_work.replicas[0][s].chunks()) {
      free_f += ops_s(c.forward);
      free_b += ops_s(c.backward);
    }
    EXPECT_LT(free_f, synced_f) << "the per-pass host time no longer stalls a GPU-bound pass";
    const double sends_f = plain.stages[s].forward_s - synced_f, sends_b = plain.stages[s].backward_s - synced_b;
    EXPECT_GT(sends_f + sends_b, 0) << "stage " << s;
    // v = 4 chunks: stage 0 sends 4 activations to stage 1 and gets 3 back around the wrap;
    // stage 1 sends 3 around the wrap and 4 gradients back.
    const double latency_s = path_between(t.cluster, 0, 8, 0).latency_s;
    const double sent_f = s == 0 ? 4 : 3, sent_b = s == 0 ? 3 : 4;
    EXPECT_NEAR(overlapped.stages[s].forward_s, std::max(free_f, sends_f - sent_f * latency_s), 1e-9);
    EXPECT_NEAR(overlapped.stages[s].backward_s, std::max(free_b, sends_b - sent_b * latency_s), 1e-9);
  }
  EXPECT_LT(overlapped.iteration_time_s, plain.iteration_time_s);
}

TEST(Predictor, OverlappedPipelineSendsHideBehindTheCompute) {
  expect_stage_times_follow_with_sends(25e9);  // fast NICs: the sends vanish behind the compute
  TwoNodePipeline t(25e9);
  t.plan.overlap_p2p_comm = true;
  EXPECT_EQ(predict(t.cluster, t.workload, t.plan).breakdown.pp_comm_s, 0.0);
}

TEST(Predictor, OverlappedPipelineSendsSetThePaceOnASlowLink) {
  expect_stage_times_follow_with_sends(0.05e9);  // 0.4 Gb/s a GPU: the sends outlast the compute
  TwoNodePipeline t(0.05e9);
  t.plan.overlap_p2p_comm = true;
  const Report r = predict(t.cluster, t.workload, t.plan);
  EXPECT_GT(r.breakdown.pp_comm_s, r.breakdown.compute_s);
}

// The floor of interleaved_latency_pace by hand: two stages of 10 and 20 ms a micro-batch, 30 ms
// of latency each way over the boundary 0 -> 1 (two crossings a micro-batch: 60 ms each way),
// none around the wrap: (10 + 20 + 120) / 3 = 50 ms a micro-batch.
TEST(InterleavedLatencyPace, ChainsTheBoundarysLatencyWithItsTwoStages) {
  const StageTimes stages[2] = {{4e-3, 6e-3}, {8e-3, 12e-3}};
  const StageTimes latency[2] = {{60e-3, 0}, {0, 60e-3}};  // stage 0's activations, stage 1's gradients
  EXPECT_NEAR(interleaved_latency_pace(stages, latency, 2), 50e-3, 1e-15);
  const StageTimes none[2] = {};
  EXPECT_EQ(interleaved_latency_pace(stages, none, 2), 0);
  // In the closed form the floor replaces the slowest stage's 20 ms: 16 x 50 + (30 - 20) / 2.
  EXPECT_NEAR(pipeline_time(stages, 2, 16, 2, Schedule::kInterleaved, 50e-3), 16 * 50e-3 + 5e-3, 1e-12);
  EXPECT_NEAR(pipeline_time(stages, 2, 16, 2, Schedule::kInterleaved, 0), 16 * 20e-3 + 5e-3, 1e-12);
}

// Over a 30 ms link the latency of a send beside the compute is no time of the sender's: it
// counted as one and the pace was the sends' 8 x 30 ms a micro-batch (the simulator: a fraction).
// The schedule's event graph waits for each send's arrival (pipeline_time's send_delay), which
// the latency chain of interleaved_latency_pace bounds from below; the simulator's figure of such
// plans is in tests/sim/overlapped_sends_test.cpp.
TEST(Predictor, OverlappedSendsPayALinksLatencyThroughThePipelinesRoundTrip) {
  TwoNodePipeline t(25e9);
  t.cluster.node_types[0].nics.latency_s = 30e-3;
  t.cluster.finalize();
  t.plan.overlap_p2p_comm = true;
  const Report r = predict(t.cluster, t.workload, t.plan);
  ASSERT_TRUE(r.feasible) << r.infeasible_reason;
  const double stage_s = std::max(r.stages[0].forward_s + r.stages[0].backward_s,
                                  r.stages[1].forward_s + r.stages[1].backward_s);
  ASSERT_LT(stage_s, 0.1);  // the compute and the sends' bytes: far below the latency
  const double latency_s = path_between(t.cluster, 0, 8, 0).latency_s;
  // Boundary 0 -> 1: 4 crossings each way a micro-batch; the wrap 3: the former binds.
  const double pace = (r.stages[0].forward_s + r.stages[0].backward_s + r.stages[1].forward_s +
                       r.stages[1].backward_s + 8 * latency_s) / 3;
  EXPECT_GT(pace, 2 * stage_s);
  EXPECT_GE(r.iteration_time_s, 16 * pace + (2 * stage_s - stage_s) / 4);
  EXPECT_LT(r.iteration_time_s, 16 * 8 * latency_s);  // what charging the latency to the sender gave
}

TEST(CheckPlan, OverlappedSendsNeedTheInterleavedSchedule) {
  TwoNodePipeline t(25e9);
  t.plan.overlap_p2p_comm = true;
  EXPECT_TRUE(check_plan(t.plan, t.cluster, t.workload).empty());
  t.plan.schedule = Schedule::k1f1b;
  t.plan.interleave = 1;
  EXPECT_THAT(check_plan(t.plan, t.cluster, t.workload),
              ::testing::Contains(::testing::HasSubstr("overlap_p2p_comm: overlapped pipeline sends need the interleaved schedule")));
}

}  // namespace
}  // namespace hetsim::models
