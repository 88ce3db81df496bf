// SPDX-License-Identifier: Apache-2.0
// Spot preemptions (models/preemption.hpp): Young's interval and the goodput it leaves, by hand;
// what a checkpoint holds and how long the plan's nodes take to write it; which nodes are
// reclaimed; the cluster keys; and the planner ranking by goodput under --spot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
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

TEST(Preemption, DalysIntervalAndTheGoodputItLeavesByHand) {
  // One preemption an hour (M = 3600 s), 50 s to write a checkpoint, 250 s to restart. Daly's
  // interval: sqrt(2*50*3600) (1 + sqrt(50/7200)/3 + 50/(18*3600)) - 50 = 600 * 1.028549 - 50
  // = 567.13 s; a segment takes 3600 e^(250/3600) (e^(617.13/3600) - 1) = 721.6 s: 0.78593.
  double tau = 0;
  EXPECT_NEAR(goodput_fraction(1.0 / 3600, 50, 250, &tau), 0.78593, 2e-5);
  EXPECT_NEAR(tau, 567.13, 0.01);
  // It is (near) the best interval: 10% either way trains less.
  const auto at = [](double t) { return t / (3600 * std::exp(250.0 / 3600) * std::expm1((t + 50) / 3600)); };
  EXPECT_NEAR(at(tau), 0.78593, 2e-5);
  EXPECT_GT(at(tau), at(0.9 * tau));
  EXPECT_GT(at(tau), at(1.1 * tau));
  // Young's first order at his interval (600 s) says 1 - (50/600 + (300 + 250)/3600) = 0.7639:
  // about right, and below the complete model's 0.7857 there.
  EXPECT_NEAR(at(600), 0.7857, 1e-4);
  EXPECT_NEAR(goodput_fraction(1.0 / 3600, 50, 250, nullptr, 600), at(600), 1e-12);  // a 600 s step
  // Checkpoints come between steps: with 900 s steps the interval is one step, and costs more.
  EXPECT_NEAR(goodput_fraction(1.0 / 3600, 50, 250, &tau, 900), 900 / (3600 * std::exp(250.0 / 3600) * std::expm1(950.0 / 3600)), 1e-12);
  EXPECT_EQ(tau, 900.0);
  // Nothing reclaimed: nothing lost, no checkpoint interval.
  EXPECT_EQ(goodput_fraction(0, 50, 250, &tau), 1.0);
  EXPECT_EQ(tau, 0.0);
  // A restart much longer than the mean time between preemptions: next to no progress.
  EXPECT_LT(goodput_fraction(1.0 / 60, 50, 600), 1e-4);
  // Steps far longer than that: none at all (no overflow to NaN).
  EXPECT_EQ(goodput_fraction(1.0 / 60, 50, 600, nullptr, 1e6), 0.0);
  // At the rate's lower bound (1e-300/h) with a 1e11 s checkpoint, 2CM is beyond a double: the
  // interval is still Daly's (sqrt(2CM) to first order), and next to nothing is lost (s59 hunt:
  // goodput 0 and "infeasible", while a higher rate gave 1).
  EXPECT_NEAR(goodput_fraction(1e-300 / 3600, 1e11, 600, &tau), 1.0, 1e-9);
  EXPECT_TRUE(std::isfinite(tau));
  EXPECT_NEAR(tau / (std::sqrt(2 * 1e11) * std::sqrt(3600e300)), 1.0, 1e-6);
}

TEST(Preemption, TheGoodputIsWhatASimulatedSpotJobTrains) {
  // Poisson preemptions (also during checkpoints and restarts), a checkpoint after every tau of
  // work, the work since the last one lost, a restart R: 200,000 segments, fixed seed.
  const double per_s = 2.0 / 3600, c = 30, r = 400;
  double tau = 0;
  const double predicted = goodput_fraction(per_s, c, r, &tau);
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> next_preemption(per_s);
  double elapsed = 0, work = 0;
  for (int segment = 0; segment < 200000; ++segment) {
    for (;;) {
      const double x = next_preemption(rng);
      if (x >= tau + c) {
        elapsed += tau + c;
        work += tau;
        break;
      }
      elapsed += x;
      for (;;) {  // restart until one completes
        const double y = next_preemption(rng);
        if (y >= r) {
          elapsed += r;
          break;
        }
        elapsed += y;
      }
    }
  }
  EXPECT_NEAR(work / elapsed, predicted, 0.003) << "tau " << tau;
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

// Two spot node types and one on demand (no spot price: never reclaimed).
const char* kCluster = R"(kind: cluster
name: spotty
node_types:
  flaky: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "10GB/s"}, price: "$10/h", spot_price: "$3/h", preemption_rate: "2/h", restart_time: "10min"}
  steady: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "10GB/s"}, price: "$10/h", spot_price: "$4/h", preemption_rate: "0.5/h", checkpoint_bandwidth: "30GB/s"}
  owned: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "10GB/s"}, price: "$10/h"}
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

  // A rate and restart at their bounds (1e300/h, 1e12 s): their product is beyond a double, the
  // restart is not (it was printed as "inf s").
  Cluster extreme = c;
  for (NodeType& t : extreme.node_types) t.preemption_rate_per_hour = 1e300, t.restart_time_s = 1e12;
  const SpotOutlook at_bounds = spot_outlook(extreme, kWorkload, all, true);
  EXPECT_DOUBLE_EQ(at_bounds.restart_s, 1e12 + bytes / 50e9);
  EXPECT_EQ(at_bounds.goodput_fraction, 0.0);

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
  // A rate or restart time on a node without a spot price would be read by nothing: an error.
  std::string dead = kCluster;
  dead.replace(dead.find("price: \"$10/h\"}"), 15, "price: \"$10/h\", preemption_rate: \"5/h\", restart_time: \"1h\"}");
  try {
    parse_cluster(dead, Catalog::builtin(), "c.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node_types.owned.preemption_rate: only a node priced at its spot price is reclaimed, and node "
                        "type 'owned' has none (expected a spot_price, or no preemption_rate)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("node_types.owned.restart_time: only a node"), std::string::npos) << what;
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
  // Ranked by goodput: each plan at least as productive as the next; one on the flaky node keeps
  // next to nothing (a 10 min restart every 2 min on average).
  for (std::size_t i = 1; i < b.top.size(); ++i)
    EXPECT_GE(b.top[i - 1].goodput_tokens_per_s(), b.top[i].goodput_tokens_per_s());
  for (const RankedPlan& p : b.top) {
    if (p.spot.preemptions_per_hour > 0) {
      EXPECT_LT(p.spot.goodput_fraction, 0.01) << p.shape;
    }
  }
  Plan on_flaky;
  on_flaky.micro_batch = 1;
  on_flaky.replicas.push_back(Replica{16, {Stage{kWorkload.model.layers, {0, 1}}}});
  EXPECT_LT(spot_outlook(c, kWorkload, on_flaky, true).goodput_fraction, 0.01);
}

TEST(Preemption, APlanThatTrainsNothingBetweenPreemptionsIsInfinitelyDear) {
  const Cluster c = parse_cluster(kCluster, Catalog::builtin());
  Report r;
  r.iteration_time_s = 1e7;  // a step of four months, on nodes reclaimed 2.5 times an hour
  r.tokens_per_s = 100;
  r.cost_per_hour = 30;  // the three nodes on demand
  const SpotOutlook s = price_at_spot(c, kWorkload, data_parallel_on({0, 2, 4}), r);
  EXPECT_EQ(s.goodput_fraction, 0.0);
  EXPECT_DOUBLE_EQ(r.cost_per_hour, 3 + 4 + 10);  // spot, spot, and the owned node on demand
  EXPECT_TRUE(std::isinf(r.cost_per_million_tokens));
  // Infeasible, with the figures that make it so (predict --spot printed "$inf per million tokens").
  EXPECT_FALSE(r.feasible);
  EXPECT_THAT(r.infeasible_reason, ::testing::HasSubstr("spot preemptions leave no time to train (2.5 preemptions per hour"));
  // A plan that trains: its dollars buy its goodput.
  r = Report{};
  r.tokens_per_s = 100;
  r.iteration_time_s = 10;
  r.cost_per_hour = 30;
  const SpotOutlook t = price_at_spot(c, kWorkload, data_parallel_on({0, 2, 4}), r);
  EXPECT_GT(t.goodput_fraction, 0.0);
  EXPECT_DOUBLE_EQ(r.cost_per_million_tokens, cost_per_million_tokens(17, 100 * t.goodput_fraction));
  EXPECT_TRUE(r.feasible);
}

// "Next to no" goodput (below kMinGoodputFraction but above 0) is infeasible too, and no more
// priced than none: predict --spot printed "$1.38e+37 per million tokens" for such a plan.
TEST(Preemption, NextToNoGoodputHasNoPricePerToken) {
  const Cluster c = parse_cluster(kCluster, Catalog::builtin());
  Report r;
  r.iteration_time_s = 3e4;  // a step of 8.3 hours on nodes reclaimed 2.5 times an hour
  r.tokens_per_s = 100;
  r.cost_per_hour = 30;
  const SpotOutlook s = price_at_spot(c, kWorkload, data_parallel_on({0, 2, 4}), r);
  ASSERT_GT(s.goodput_fraction, 0.0);
  ASSERT_LT(s.goodput_fraction, kMinGoodputFraction);
  EXPECT_FALSE(r.feasible);
  EXPECT_TRUE(std::isinf(r.cost_per_million_tokens));
  EXPECT_THAT(to_table(r), ::testing::HasSubstr("cost                     $17.00/h, no price per token (it trains none)\n"));
}

// Nodes reclaimed a million times an hour: every plan fits, none trains. The planner printed
// "$inf" per million tokens and "-nanx" baselines with exit 0; it now finds no plan, and says why.
TEST(Preemption, ThePlannerSaysWhenPreemptionsLeaveNoPlanAnyGoodput) {
  const Cluster c = parse_cluster(R"(kind: cluster
name: storm
node_types:
  flaky: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "25GB/s"}, price: "$10/h", spot_price: "$1/h", preemption_rate: "1e6/h"}
zones:
  - {name: z, fabric: {kind: switch}, nodes: [{type: flaky, count: 2}]}
)",
                                  Catalog::builtin());
  PlannerOptions spot;
  spot.spot = true;
  const PlannerResult r = plan_training(c, kWorkload, spot);
  EXPECT_TRUE(r.top.empty());
  EXPECT_THAT(r.reason, ::testing::StartsWith("no feasible plan: spot preemptions leave no time to train"));
  // One search: the two retries with a memory margin, for plans the estimator thought fit and the
  // predictor did not, are no help here (they tripled the search: 720 plans predicted for 240 on
  // spot-mix at 1000 preemptions an hour; s60 hunt).
  EXPECT_GT(r.plans_without_goodput, 0);
  EXPECT_EQ(r.plans_predicted, r.plans_without_goodput);
  // Under a budget that buys the nodes, the preemptions are still the reason (the budget was named).
  PlannerOptions budget = spot;
  budget.objective = PlanObjective::kBudget;
  budget.budget_per_hour = 40;
  EXPECT_THAT(plan_training(c, kWorkload, budget).reason,
              ::testing::StartsWith("no feasible plan: spot preemptions leave no time to train"));
  spot.spot = false;  // on demand the same cluster trains
  EXPECT_FALSE(plan_training(c, kWorkload, spot).top.empty());
}

}  // namespace
}  // namespace hetsim::models
