// SPDX-License-Identifier: Apache-2.0
// The search's estimate of pipeline sends and of the gradient sync (planner_space.hpp): which
// copies' sends share a node's NIC, the exchanges of one parity in 1F1B's steady state, the
// all-gather of 16-bit weights after a reduce-scatter of FP32 gradients, what an overlapped
// sync leaves exposed, and the tied embedding's all-reduce across a WAN.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalog.hpp"
#include "cost_test_util.hpp"
#include "input_loader.hpp"
#include "planner.hpp"
#include "planner_space.hpp"

namespace hetsim::models {
namespace {

using testing::example_cluster;
using testing::example_workload;

/// The search's estimate of the best plan it finds for an example cluster and workload is within
/// `fraction` of the predictor's figure.
void expect_best_plan_estimated_within(const std::string& cluster, const std::string& workload, double fraction) {
  PlannerOptions o;
  o.time_limit_s = 0;
  const PlannerResult r = plan_training(example_cluster(cluster), example_workload(workload), o);
  ASSERT_FALSE(r.top.empty()) << cluster << " " << workload;
  const auto& best = r.top.front();
  EXPECT_NEAR(best.estimated_tokens_per_s, best.report.tokens_per_s, fraction * best.report.tokens_per_s) << best.shape;
}

TEST(PlannerSendEstimate, CrossingsCountTheCopiesWhoseSameSendLeavesANode) {
  using planner::boundary_crossings;
  // 4 copies on nodes of 8 units: a node holds stages 2k and 2k + 1 of every copy.
  EXPECT_EQ(boundary_crossings(0, 4, 8, false).out, 0);  // stage 0 -> 1 stays in node 0
  EXPECT_EQ(boundary_crossings(1, 4, 8, false).out, 4);  // units 4-7 -> 8-11
  EXPECT_EQ(boundary_crossings(1, 4, 8, false).in, 4);
  // One copy: one flow leaves node 0 at its last stage (unit 7 -> 8).
  EXPECT_EQ(boundary_crossings(7, 1, 8, false).out, 1);
  EXPECT_EQ(boundary_crossings(7, 1, 8, false).in, 1);
  // 16 copies: node 0 holds units 0-7 of stage 0, all sending to node 2 (units 16-23).
  EXPECT_EQ(boundary_crossings(0, 16, 8, false).out, 8);
  EXPECT_EQ(boundary_crossings(0, 16, 8, false).in, 8);
  // 3 copies on 8 units a node: stage 2 is units 6-8; on node 0, units 6 and 7 send to 9 and 10.
  EXPECT_EQ(boundary_crossings(2, 3, 8, false).out, 2);
  // The pool's last stage: its units on copy 0's node all leave for the next pool.
  EXPECT_EQ(boundary_crossings(7, 4, 8, true).out, 4);
}

TEST(PlannerSendEstimate, ExchangesOfOneParityShareTheNodesBetweenThem) {
  using planner::BoundaryCrossings;
  using planner::with_same_parity_exchanges;
  const BoundaryCrossings four{4, 4};
  // Two stages a node, 8 stages, no other pool: boundary 1 leaves node 0 (stages 0-1, nothing
  // before stage 0) alone, and enters node 1 (stages 2-3) as stage 4's gradient does (boundary 3).
  BoundaryCrossings c = with_same_parity_exchanges(four, 1, 4, 8, 8, false, false);
  EXPECT_EQ(c.out, 4);
  EXPECT_EQ(c.in, 8);
  // Boundary 3 leaves node 1 with stage 2's gradient (boundary 1) and enters node 2 with stage 6's.
  c = with_same_parity_exchanges(four, 3, 4, 8, 8, false, false);
  EXPECT_EQ(c.out, 8);
  EXPECT_EQ(c.in, 8);
  // Boundary 5 enters node 3 (stages 6-7): stage 7 is the pipeline's last, nothing comes back to it.
  EXPECT_EQ(with_same_parity_exchanges(four, 5, 4, 8, 8, false, false).in, 4);
  // ... unless another pool follows.
  EXPECT_EQ(with_same_parity_exchanges(four, 5, 4, 8, 8, false, true).in, 8);
  // Three stages a node (one copy): the two ends of a node are boundaries of different parity.
  const BoundaryCrossings one{1, 1};
  c = with_same_parity_exchanges(one, 5, 1, 3, 9, false, false);
  EXPECT_EQ(c.out, 1);
  EXPECT_EQ(c.in, 1);
}

TEST(PlannerSendEstimate, ASendSharesItsNodesNicWithTheCopiesCrossingOnly) {
  // consumer-4090-a100: GPU 32 (A100 node, one 25 GbE port) to GPU 0 (RTX 4090 box).
  const Cluster c = example_cluster("consumer-4090-a100.yaml");
  const double bytes = 64e6;
  const double every_gpu = planner::p2p_estimate_s(c, 32, 1, 0, 1, bytes);  // 8 senders a node
  const double one_copy = planner::p2p_estimate_s(c, 32, 1, 0, 1, bytes, 1, 1, 1);
  EXPECT_DOUBLE_EQ(planner::p2p_estimate_s(c, 32, 1, 0, 1, bytes, 1, 8, 8), every_gpu);
  EXPECT_LT(one_copy * 4, every_gpu);  // a whole port against an eighth of it
  // A TP-4 sender's four flows (a quarter of the tensor each) load the nodes as four copies of
  // TP 1 would: the same time for a quarter of the bytes, but for the one latency.
  EXPECT_NEAR(planner::p2p_estimate_s(c, 32, 4, 0, 1, bytes, 1, 1, 1) * 4,
              planner::p2p_estimate_s(c, 32, 1, 0, 1, bytes, 1, 4, 4), 0.005 * every_gpu);
}

TEST(PlannerSendEstimate, ZeroGathersSixteenBitWeightsAfterFp32Gradients) {
  const Workload bf16 = example_workload("llama2-7b.yaml");
  EXPECT_DOUBLE_EQ(planner::zero_gather_per_grad_byte(bf16.training), 0.5);
  TrainingSpec fp32 = bf16.training;
  fp32.dtype = Dtype::kFp32;
  EXPECT_DOUBLE_EQ(planner::zero_gather_per_grad_byte(fp32), 1.0);
  const Cluster c = example_cluster("dgx-a100.yaml");
  const std::vector<int> members = {0, 8, 16, 24};
  const double bytes = 1e9;
  const auto total_s = [&](int zero, const TrainingSpec& t) {
    const planner::SyncEstimate e = planner::sync_estimate(c, members, bytes, zero, t, false);
    return e.reduce_s + e.gather_s;
  };
  const double both_full = total_s(1, fp32);
  const double half_gather = total_s(1, bf16.training);
  EXPECT_LT(half_gather, both_full);
  EXPECT_GT(half_gather, 0.5 * both_full);  // the reduce-scatter is whole
  EXPECT_DOUBLE_EQ(total_s(0, bf16.training), total_s(0, fp32));  // ZeRO-0 gathers nothing
}

TEST(PlannerSendEstimate, TheSyncIsHiddenPartByPartOrRunAfterTheBackward) {
  // A stage of 0.9 s a micro-batch: backward 0.6 s, forward 0.3 s (backward = 2x forward).
  planner::SyncEstimate sync;
  sync.reduce_s = 1.0;
  sync.gather_s = 0.5;
  sync.buckets = 4;
  sync.bucketed_reduce_s = 1.2;  // four buckets of 0.3 s, latency steps included
  // Overlapped: the buckets end max(0.3, 1.2 - 0.6 * 3/4) = 0.75 s after the backward, the gather
  // 0.5 - 0.3 s after the next forward: 0.95 s, below 1.5 s after the backward.
  EXPECT_NEAR(planner::exposed_sync_s(sync, 0.9), 0.95, 1e-12);
  // Buckets that wait on a WAN's latency at every ring step: one ring after the backward wins.
  sync.bucketed_reduce_s = 3.0;
  EXPECT_NEAR(planner::exposed_sync_s(sync, 0.9), 1.5, 1e-12);
  // Nothing to hide behind: all of it, whichever way.
  sync.bucketed_reduce_s = 1.0;
  sync.buckets = 1;
  EXPECT_NEAR(planner::exposed_sync_s(sync, 0.0), 1.5, 1e-12);
}

TEST(PlannerSendEstimate, OnePipelineThroughANodeIsEstimatedAsPredicted) {
  // consumer-4090-a100, llama2-70b: the best plan is one pipeline, 8 TP-1 stages on the A100
  // node and 8 TP-4 stages on the boxes. One flow crosses the A100 node's 25 GbE port; the
  // estimate shared it among the node's 8 GPUs (0.20 s a send for the predictor's 25 ms) and put
  // the plan 21% below its prediction (4,646 for 5,862 tokens/s).
  // Now 3% low: the boxes of two stages each count the exchanges of one parity (5,680).
  expect_best_plan_estimated_within("consumer-4090-a100.yaml", "llama2-70b.yaml", 0.05);
}

TEST(PlannerSendEstimate, TheTiedEmbeddingAcrossAWanIsEstimated) {
  // geo-two-zones, gpt3-13b: the best plan's pipelines start in us-east and end in us-west, so
  // the 16 pairs of first and last stages all-reduce the tied embedding's gradient over the
  // 100 Gb/s WAN after the DP sync (0.85 s of an 11.8 s step), which the estimate left out: it
  // was 7.7% above the prediction.
  expect_best_plan_estimated_within("geo-two-zones.yaml", "gpt3-13b.yaml", 0.02);
  const Cluster c = example_cluster("geo-two-zones.yaml");
  const Workload w = example_workload("gpt3-13b.yaml");
  // The pair's figure itself: more pipelines on the link, a longer all-reduce; within a zone no
  // WAN; one GPU, nothing to reduce.
  const auto pair_s = [&](int first, int last, int crossing) {
    return planner::tied_embedding_estimate_s(c, w, first, 1, last, 1, 8, crossing);
  };
  EXPECT_GT(pair_s(0, 32, 16), pair_s(0, 32, 1));
  EXPECT_DOUBLE_EQ(pair_s(0, 8, 16), pair_s(0, 8, 0));
  EXPECT_EQ(pair_s(3, 3, 0), 0.0);
}

}  // namespace
}  // namespace hetsim::models
