// SPDX-License-Identifier: Apache-2.0
// Egress between zones (egress_cost.hpp): what leaves a zone over a priced link is charged.
#include <gtest/gtest.h>

#include "cost_test_util.hpp"
#include "egress_cost.hpp"
#include "predictor.hpp"

namespace hetsim::models {
namespace {

using testing::gpt_workload;
using testing::node_type;
using testing::round_gpu;

constexpr double kPricePerByte = 0.05e-9;  // $0.05/GB

Cluster priced_zones() {
  Cluster c = testing::two_zones_of(node_type("n", round_gpu("g", 300e12), 8, 300e9, 25e9));
  c.links[0].egress_price_per_byte = kPricePerByte;
  return c;
}

Plan two_stage_plan(int first_stage_gpu, int second_stage_gpu, int micro_batches) {
  Plan p;
  p.micro_batch = 1;
  Replica r;
  r.micro_batches = micro_batches;
  r.stages.resize(2);
  r.stages[0].layers = r.stages[1].layers = 2;
  r.stages[0].gpus = {first_stage_gpu};
  r.stages[1].gpus = {second_stage_gpu};
  p.replicas = {r};
  return p;
}

/// One replica of one 4-layer stage on each of `gpus`, one micro-batch each.
Plan one_gpu_replicas(std::initializer_list<int> gpus) {
  Plan p;
  p.micro_batch = 1;
  for (int g : gpus) {
    Replica r;
    r.micro_batches = 1;
    r.stages.resize(1);
    r.stages[0].layers = 4;
    r.stages[0].gpus = {g};
    p.replicas.push_back(r);
  }
  return p;
}

TEST(Egress, PipelineSendsAcrossZonesPayBothWays) {
  const Cluster c = priced_zones();  // east: GPUs 0-15, west: 16-31
  Workload w = gpt_workload(4, 1024, 16, 2048, 8);
  w.model.tied_embeddings = false;
  const double boundary = 2048.0 * 1 * 1024 * 2;  // seq x micro x hidden x fp16
  // Each of 8 micro-batches sends its activation east -> west and its gradient back.
  EXPECT_NEAR(egress_dollars_per_step(c, w, two_stage_plan(0, 16, 8), {1e6, 1e6}, 2, boundary),
              kPricePerByte * 2 * 8 * boundary, 1e-15);
  EXPECT_EQ(egress_dollars_per_step(c, w, two_stage_plan(0, 8, 8), {1e6, 1e6}, 2, boundary), 0.0);  // one zone
  // The report's cost per hour carries it: nodes used, plus the step's egress per hour.
  const Plan across = two_stage_plan(0, 16, 8);
  const Report r = predict(c, w, across);
  ASSERT_TRUE(r.feasible) << r.infeasible_reason;
  const double nodes_per_hour = 2 * 10.0;  // node_type's $10/h, one node in each zone
  EXPECT_NEAR(r.cost_per_hour, nodes_per_hour + kPricePerByte * 2 * 8 * boundary / r.iteration_time_s * 3600, 1e-9);
}

TEST(Egress, AGradientRingPaysEveryHopBetweenZones) {
  const Cluster c = priced_zones();
  Workload w = gpt_workload(4, 1024, 16, 2048, 4);
  w.model.tied_embeddings = false;
  const Plan p = one_gpu_replicas({0, 1, 16, 17});  // ring 0 -> 1 -> 16 -> 17 -> 0: two hops between zones
  const double params = 1e6;
  const double per_hop = 2.0 * 3 / 4 * params * 2;  // 2(n-1)/n of the fp16 gradients
  EXPECT_NEAR(egress_dollars_per_step(c, w, p, std::vector<double>(4, params), 1, 4e6), kPricePerByte * 2 * per_hop, 1e-15);
}

// The same four GPUs listed alternating between the zones: NCCL's ring still takes each node's
// members in a row (as the step's time prices it), two hops between the zones, not four (s66
// hunt: $348/h against $204/h for one plan in two replica orders).
TEST(Egress, TheRingIsInNodeOrderWhateverTheReplicaOrder) {
  const Cluster c = priced_zones();
  Workload w = gpt_workload(4, 1024, 16, 2048, 4);
  w.model.tied_embeddings = false;
  const double params = 1e6;
  const double per_hop = 2.0 * 3 / 4 * params * 2;
  const std::vector<double> stage_params(4, params);
  EXPECT_NEAR(egress_dollars_per_step(c, w, one_gpu_replicas({0, 16, 1, 17}), stage_params, 1, 4e6), kPricePerByte * 2 * per_hop,
              1e-15);
  EXPECT_DOUBLE_EQ(egress_dollars_per_step(c, w, one_gpu_replicas({0, 16, 1, 17}), stage_params, 1, 4e6),
                   egress_dollars_per_step(c, w, one_gpu_replicas({0, 1, 16, 17}), stage_params, 1, 4e6));
}

TEST(Egress, ReplicasOfOtherTpDegreesMoveEachShardOnce) {
  // Replica 0 shards the stage over GPUs 0-1 (tp 2, 0.5M parameters each), replica 1 holds it
  // on GPU 16 (tp 1, 1M) in the other zone: two rings of one 0.5M shard each, as step_cost
  // prices them, move the layer's gradients once across the zones. (Each ring was given the
  // largest member's 1M parameters: twice the bytes.)
  const Cluster c = priced_zones();
  Workload w = gpt_workload(4, 1024, 16, 2048, 4);
  w.model.tied_embeddings = false;
  Plan p;
  p.micro_batch = 1;
  for (const std::vector<int>& gpus : {std::vector<int>{0, 1}, std::vector<int>{16}}) {
    Replica r;
    r.micro_batches = 2;
    r.stages = {Stage{4, gpus}};
    p.replicas.push_back(r);
  }
  const double per_hop = 2.0 * 1 / 2 * 0.5e6 * 2;  // 2(n-1)/n of a shard's fp16 gradients
  EXPECT_NEAR(egress_dollars_per_step(c, w, p, {0.5e6, 1e6}, 1, 4e6), kPricePerByte * 2 * 2 * per_hop, 1e-15);
}

}  // namespace
}  // namespace hetsim::models
