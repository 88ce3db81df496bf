// SPDX-License-Identifier: Apache-2.0
// Spot preemptions (models/preemption.hpp): Young's interval and the goodput it leaves, by hand;
// what a checkpoint holds and how long the plan's nodes take to write it; which nodes are
// reclaimed; the cluster keys; and the planner ranking by goodput under --spot.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <variant>

#include "catalog.hpp"
#include "diagnostics.hpp"
#include "input_loader.hpp"
#include "input_writers.hpp"
#include "plan.hpp"
#include "planner.hpp"
#include "preemption.hpp"

namespace hetsim::models {
namespace {

TEST(Preemption, YoungsIntervalAndTheGoodputItLeavesByHand) {
  // One preemption an hour, 50 s to write a checkpoint, 250 s to restart: tau* = sqrt(2*50*3600)
  // = 600 s; wasted 50/600 + (1/3600)(600/2 + 250) = 0.083333 + 0.152778 = 0.236111.
  double tau = 0;
  EXPECT_NEAR(goodput_fraction(1.0 / 3600, 50, 250, &tau), 1 - 0.236111, 1e-6);
  EXPECT_NEAR(tau, 600, 1e-9);
  // The interval is the optimum: any other costs more.
  const auto wasted = [](double t) { return 50 / t + (t / 2 + 250) / 3600; };
  EXPECT_LT(wasted(600), wasted(540));
  EXPECT_LT(wasted(600), wasted(660));
  // Checkpoints come between steps: with 900 s steps the interval is one step, and costs more.
  EXPECT_NEAR(goodput_fraction(1.0 / 3600, 50, 250, &tau, 900), 1 - (50.0 / 900 + (450 + 250) / 3600.0), 1e-9);
  EXPECT_EQ(tau, 900.0);
  EXPECT_NEAR(goodput_fraction(1.0 / 3600, 50, 250, &tau, 60), 1 - 0.236111, 1e-6);  // shorter steps: Young's
  // Nothing reclaimed: nothing lost, no checkpoint interval.
  EXPECT_EQ(goodput_fraction(0, 50, 250, &tau), 1.0);
  EXPECT_EQ(tau, 0.0);
  // A restart longer than the mean time between preemptions: no progress at all.
  EXPECT_EQ(goodput_fraction(1.0 / 60, 50, 600), 0.0);
}

const Workload kWorkload = parse_workload(R"(kind: workload
name: w
model: {layers: 4, hidden: 1024, heads: 16, vocab: 32000, seq_len: 1024}
training: {global_batch: 16, dtype: bf16}
)");

TEST(Preemption, ACheckpointHoldsTheWeightsAndTheOptimizerStates) {
  // Mixed precision with Adam: 2 bytes of weights + 12 of fp32 master copy and moments.
  EXPECT_DOUBLE_EQ(checkpoint_bytes(kWorkload), kWorkload.model.params_total() * 14);
  Workload fp32 = kWorkload;
  fp32.training.dtype = Dtype::kFp32;
  EXPECT_DOUBLE_EQ(checkpoint_bytes(fp32), kWorkload.model.params_total() * 12);
  Workload fp8 = kWorkload;  // the FP8 copy of the weights is rebuilt, not saved
  fp8.training.dtype = Dtype::kFp8;
  EXPECT_DOUBLE_EQ(checkpoint_bytes(fp8), kWorkload.model.params_total() * 14);
}

// Two spot node types and one on demand that has a rate but no spot price (never reclaimed).
const char* kCluster = R"(kind: cluster
name: spotty
node_types:
  flaky: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "10GB/s"}, price: "$10/h", spot_price: "$3/h", preemption_rate: "2/h", restart_time: "10min"}
  steady: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "10GB/s"}, price: "$10/h", spot_price: "$4/h", preemption_rate: "0.5/h", checkpoint_bandwidth: "30GB/s"}
  owned: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "10GB/s"}, price: "$10/h", preemption_rate: "5/h"}
zones:
  - {name: z, fabric: {kind: switch}, nodes: [{type: flaky, count: 1}, {type: steady, count: 1}, {type: owned, count: 1}]}
)";

Plan data_parallel_on(const std::vector<int>& gpus) {
  Plan p;
  p.micro_batch = 1;
  for (int g : gpus) {
    Replica r;
    r.micro_batches = kWorkload.training.global_batch / static_cast<int>(gpus.size());
    r.stages.push_back(Stage{kWorkload.model.layers, {g}});
    p.replicas.push_back(r);
  }
  return p;
}

TEST(Preemption, TheNodesAtSpotPricesAreReclaimedAndAllNodesWriteTheCheckpoint) {
  const Cluster c = parse_cluster(kCluster, Catalog::builtin());
  ASSERT_EQ(c.node_types.size(), 3u);
  EXPECT_DOUBLE_EQ(c.node_types[0].restart_time_s, 600);
  EXPECT_DOUBLE_EQ(c.node_types[1].restart_time_s, kDefaultRestartTime_s);
  EXPECT_DOUBLE_EQ(checkpoint_bandwidth_Bps(c.node_types[0]), 10e9);  // one NIC's
  EXPECT_DOUBLE_EQ(checkpoint_bandwidth_Bps(c.node_types[1]), 30e9);  // its own figure
  const double bytes = checkpoint_bytes(kWorkload);

  // All three nodes: flaky and steady are reclaimed (2.5/h), owned is not (no spot price).
  const Plan all = data_parallel_on({0, 2, 4});
  const SpotOutlook s = spot_outlook(c, kWorkload, all, true);
  EXPECT_DOUBLE_EQ(s.preemptions_per_hour, 2.5);
  EXPECT_DOUBLE_EQ(s.checkpoint_bytes, bytes);
  EXPECT_DOUBLE_EQ(s.checkpoint_s, bytes / 50e9);  // 10 + 30 + 10 GB/s at once
  // The restart of whichever is reclaimed, weighted by its rate, then the checkpoint read back.
  EXPECT_DOUBLE_EQ(s.restart_s, (2.0 * 600 + 0.5 * 300) / 2.5 + bytes / 50e9);
  EXPECT_DOUBLE_EQ(s.goodput_fraction, goodput_fraction(2.5 / 3600, s.checkpoint_s, s.restart_s));
  EXPECT_GT(s.checkpoint_interval_s, 0.0);
  EXPECT_LT(s.goodput_fraction, 1.0);

  // Priced on demand, nothing is reclaimed; on the owned node alone neither.
  EXPECT_EQ(spot_outlook(c, kWorkload, all, false).goodput_fraction, 1.0);
  const SpotOutlook owned = spot_outlook(c, kWorkload, data_parallel_on({4, 5}), true);
  EXPECT_EQ(owned.preemptions_per_hour, 0.0);
  EXPECT_EQ(owned.goodput_fraction, 1.0);
  EXPECT_EQ(owned.checkpoint_interval_s, 0.0);
}

TEST(Preemption, TheClusterKeysAreCheckedAndWrittenBack) {
  const Cluster c = parse_cluster(kCluster, Catalog::builtin());
  const Cluster back = parse_cluster(cluster_to_yaml(c), Catalog::builtin());
  ASSERT_EQ(back.node_types.size(), 3u);
  EXPECT_DOUBLE_EQ(back.node_types[0].restart_time_s, 600);
  EXPECT_FALSE(back.node_types[0].checkpoint_bandwidth_Bps.has_value());
  ASSERT_TRUE(back.node_types[1].checkpoint_bandwidth_Bps.has_value());
  EXPECT_DOUBLE_EQ(*back.node_types[1].checkpoint_bandwidth_Bps, 30e9);
  EXPECT_DOUBLE_EQ(back.node_types[1].restart_time_s, kDefaultRestartTime_s);

  std::string bad = kCluster;
  bad.replace(bad.find("restart_time: \"10min\""), 21, "restart_time: \"ten\"");
  bad.replace(bad.find("checkpoint_bandwidth: \"30GB/s\""), 30, "checkpoint_bandwidth: \"0GB/s\"");
  try {
    parse_cluster(bad, Catalog::builtin(), "c.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node_types.flaky.restart_time"), std::string::npos) << what;
    EXPECT_NE(what.find("node_types.steady.checkpoint_bandwidth"), std::string::npos) << what;
  }
}

TEST(Preemption, AtSpotPricesThePlannerRanksByGoodput) {
  // Two nodes of the same GPUs: one reclaimed 30 times an hour with a 10 min restart (every
  // plan on it makes no progress), one bought on demand. On demand, both nodes together are
  // fastest; at spot prices the plan on the owned node alone is the one that trains.
  const Cluster c = parse_cluster(R"(kind: cluster
name: two
node_types:
  flaky: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "25GB/s"}, price: "$10/h", spot_price: "$1/h", preemption_rate: "30/h", restart_time: "10min"}
  owned: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "25GB/s"}, price: "$10/h"}
zones:
  - {name: z, fabric: {kind: switch}, nodes: [{type: flaky, count: 1}, {type: owned, count: 1}]}
)",
                                  Catalog::builtin());
  PlannerOptions on_demand;
  const PlannerResult a = plan_training(c, kWorkload, on_demand);
  ASSERT_FALSE(a.top.empty()) << a.reason;
  EXPECT_EQ(a.top.front().plan.gpu_count(), 4);
  EXPECT_EQ(a.top.front().spot.goodput_fraction, 1.0);
  EXPECT_DOUBLE_EQ(a.top.front().goodput_tokens_per_s(), a.top.front().report.tokens_per_s);

  PlannerOptions spot;
  spot.spot = true;
  const PlannerResult b = plan_training(c, kWorkload, spot);
  ASSERT_FALSE(b.top.empty()) << b.reason;
  const RankedPlan& best = b.top.front();
  EXPECT_EQ(best.plan.gpu_count(), 2);
  for (const Replica& r : best.plan.replicas)
    for (const Stage& s : r.stages)
      for (int g : s.gpus) EXPECT_EQ(c.nodes[c.node_of_gpu(g)].node_type, 1) << best.shape;
  EXPECT_EQ(best.spot.goodput_fraction, 1.0);
  // Ranked by goodput: each plan at least as productive as the next, and those on the flaky
  // node cost per token what they train between preemptions (nothing: infinitely much).
  for (std::size_t i = 1; i < b.top.size(); ++i)
    EXPECT_GE(b.top[i - 1].goodput_tokens_per_s(), b.top[i].goodput_tokens_per_s());
  for (const RankedPlan& p : b.top) {
    if (p.spot.preemptions_per_hour > 0) {
      EXPECT_EQ(p.goodput_tokens_per_s(), 0.0) << p.shape;
      EXPECT_TRUE(std::isinf(p.report.cost_per_million_tokens)) << p.shape;
    }
  }
}

}  // namespace
}  // namespace hetsim::models
