// SPDX-License-Identifier: Apache-2.0
// Tests of the core types: parameter/FLOP counts, rank order, GPU selectors, plan checks.
#include <gtest/gtest.h>

#include "cluster.hpp"
#include "plan.hpp"
#include "workload.hpp"

namespace hetsim::models {
namespace {

ModelSpec gpt(int layers, int hidden, int heads, int seq, int vocab) {
  ModelSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.seq_len = seq;
  m.vocab = vocab;
  return m;
}

TEST(Workload, Gpt3ParamsMatchBrownEtAl) {
  // GPT-3 175B: 96 layers, d_model 12288, 96 heads (Brown et al. 2020, Table 2.1): 175.0e9 params.
  const ModelSpec m = gpt(96, 12288, 96, 2048, 50257);
  EXPECT_NEAR(m.params_total() / 1e9, 175.0, 0.5);
}

TEST(Workload, Llama2SevenBParams) {
  // Llama 2 7B: 6.74e9 parameters (Touvron et al. 2023).
  ModelSpec m = gpt(32, 4096, 32, 4096, 32000);
  m.ffn_hidden = 11008;
  m.activation = Activation::kSwiglu;
  m.tied_embeddings = false;
  EXPECT_NEAR(m.params_total() / 1e9, 6.738, 0.01);
}

TEST(Workload, FlopsPerTokenIsNarayananEq3WithoutRecompute) {
  // 72 l h^2 (1 + s/6h + V/12lh) per token (Narayanan et al. SC'21 eq. 3 with 3 passes).
  const ModelSpec m = gpt(40, 6144, 48, 2048, 51200);
  const double l = m.layers, h = m.hidden, s = m.seq_len, v = m.vocab;
  const double expected = 72.0 * l * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * l * h));
  EXPECT_NEAR(m.flops_per_token() / expected, 1.0, 1e-3);  // biases of the matmuls are not counted
}

Cluster two_zone_cluster() {
  Cluster c;
  c.name = "t";
  NodeType a;
  a.name = "dgx";
  a.gpu.name = "a100";
  a.gpus_per_node = 8;
  NodeType b;
  b.name = "box";
  b.gpu.name = "v100";
  b.gpus_per_node = 4;
  b.price_per_hour = 10;
  b.spot_price_per_hour = 3;
  a.price_per_hour = 30;
  c.node_types = {a, b};
  Zone z1{"east", {}, {{0, 2}, {1, 1}}};
  Zone z2{"west", {}, {{1, 2}}};
  c.zones = {z1, z2};
  c.finalize();
  return c;
}

TEST(Cluster, RankOrderFollowsZonesGroupsNodes) {
  const Cluster c = two_zone_cluster();
  ASSERT_EQ(c.gpu_count(), 8 + 8 + 4 + 8);
  EXPECT_EQ(c.zone_of_gpu(19), 0);
  EXPECT_EQ(c.zone_of_gpu(20), 1);
  EXPECT_EQ(c.node_of_gpu(16), 2);
  EXPECT_DOUBLE_EQ(c.price_per_hour(), 2 * 30 + 3 * 10);
  EXPECT_DOUBLE_EQ(c.price_per_hour(true), 2 * 30 + 3 * 3);
}

TEST(Cluster, LabelsAGroupByItsGpuTypesInOrderOfFirstUse) {
  const Cluster c = two_zone_cluster();  // GPUs 0-15 a100 (dgx), 16-27 v100 (box)
  EXPECT_EQ(c.gpu_types_label({0, 1, 2}), "a100");
  EXPECT_EQ(c.gpu_types_label({16, 3, 17, 4}), "v100+a100");
  EXPECT_EQ(c.gpu_types_label({7, 27}), "a100+v100");
}

TEST(Cluster, ResolvesSelectors) {
  const Cluster c = two_zone_cluster();
  std::string err;
  EXPECT_EQ(*c.resolve_gpus("east/dgx[1]/gpu[0-1]", &err), (std::vector<int>{8, 9}));
  EXPECT_EQ(*c.resolve_gpus("west/box[1]", &err), (std::vector<int>{24, 25, 26, 27}));
  EXPECT_EQ(*c.resolve_gpus("box[1]/gpu[3]", &err), (std::vector<int>{23}));  // cluster-wide node index
  EXPECT_EQ(*c.resolve_gpus("gpu[2,5-6]", &err), (std::vector<int>{2, 5, 6}));
  EXPECT_FALSE(c.resolve_gpus("gpu[28]", &err));
  EXPECT_NE(err.find("out of range"), std::string::npos);
  EXPECT_FALSE(c.resolve_gpus("north/dgx[0]", &err));
  EXPECT_NE(err.find("unknown zone 'north'"), std::string::npos);
  EXPECT_FALSE(c.resolve_gpus("dgx[2]/gpu[0]", &err));
  EXPECT_FALSE(c.resolve_gpus("dgx[0]/gpu[8]", &err));
  EXPECT_FALSE(c.resolve_gpus("dgx[0/gpu[1]", &err));
  EXPECT_FALSE(c.resolve_gpus("", &err));
  EXPECT_NE(err.find("empty GPU selector"), std::string::npos) << err;  // not "unknown node type ''"
  EXPECT_FALSE(c.resolve_gpus("8.5", &err));
  EXPECT_NE(err.find("'8.5' is not a GPU index (expected a whole number from 0 to 27"), std::string::npos) << err;
  EXPECT_FALSE(c.resolve_gpus("dgx[0]/gpu[7-4]", &err));
  EXPECT_NE(err.find("range 7-4 in 'dgx[0]/gpu[7-4]' runs backwards (expected the lower index first: 4-7)"),
            std::string::npos) << err;
}

// `gpu[0-999999999]` expanded a billion indices (18 s, 4 GB) before reporting the first one out
// of range; ranges now stop at the first index outside the cluster, node type or node.
TEST(Cluster, HugeSelectorRangesStopAtTheFirstIndexOutOfRange) {
  const Cluster c = two_zone_cluster();
  std::string err;
  EXPECT_FALSE(c.resolve_gpus("gpu[5-999999999]", &err));
  EXPECT_EQ(err, "GPU index 28 out of range (cluster has 28 GPUs, 0-27)");
  EXPECT_FALSE(c.resolve_gpus("east/dgx[0]/gpu[0-999999999]", &err));
  EXPECT_EQ(err, "GPU 8 out of range (node type 'dgx' has 8 GPUs)");
  EXPECT_FALSE(c.resolve_gpus("dgx[1-999999999]", &err));
  EXPECT_EQ(err, "node dgx[2] out of range (2 node(s) of that type)");
  EXPECT_FALSE(c.resolve_gpus("gpu[999999998-999999999]", &err));
  EXPECT_EQ(err, "GPU index 999999998 out of range (cluster has 28 GPUs, 0-27)");
  // Ten digits and more were "bad GPU selector" (adversarial pass, 2026-12-05).
  EXPECT_FALSE(c.resolve_gpus("gpu[99999999999]", &err));
  EXPECT_EQ(err, "GPU index 99999999999 out of range (cluster has 28 GPUs, 0-27)");
  EXPECT_FALSE(c.resolve_gpus("gpu[0-2147483648]", &err));
  EXPECT_EQ(err, "GPU index 2147483648 out of range (cluster has 28 GPUs, 0-27)");
  EXPECT_FALSE(c.resolve_gpus("dgx[12345678901]/gpu[0]", &err));
  EXPECT_EQ(err, "node dgx[12345678901] out of range (2 node(s) of that type)");
  EXPECT_FALSE(c.resolve_gpus("dgx[0]/gpu[0,12345678901]", &err));
  EXPECT_EQ(err, "GPU 12345678901 out of range (node type 'dgx' has 8 GPUs)");
  // Leading zeros add no magnitude: "gpu[00000000000000000001]" is GPU 1 (s49 hunt: "out of range").
  EXPECT_EQ(*c.resolve_gpus("gpu[00000000000000000001-0002]", &err), (std::vector<int>{1, 2}));
  EXPECT_EQ(*c.resolve_gpus("gpu[000]", &err), (std::vector<int>{0}));
}

Workload work(int layers, int batch) {
  Workload w;
  w.model = gpt(layers, 1024, 16, 1024, 51200);
  w.training.global_batch = batch;
  return w;
}

TEST(Plan, UniformPlanUsesMegatronRankOrder) {
  const Cluster c = two_zone_cluster();
  UniformPlanOptions o;
  o.micro_batch = 2;
  auto r = make_uniform_plan(c, work(5, 16), 2, 2, 2, o);
  ASSERT_TRUE(std::holds_alternative<Plan>(r)) << std::get<Infeasible>(r).reason;
  const Plan& p = std::get<Plan>(r);
  ASSERT_EQ(p.dp(), 2);
  EXPECT_EQ(p.replicas[1].stages[0].gpus, (std::vector<int>{2, 3}));  // TP fastest, then DP
  EXPECT_EQ(p.replicas[0].stages[1].gpus, (std::vector<int>{4, 5}));  // then PP
  EXPECT_EQ(p.replicas[0].stages[0].layers, 3);                       // first layers mod pp take one more
  EXPECT_EQ(p.replicas[0].stages[1].layers, 2);
  EXPECT_EQ(p.replicas[0].micro_batches, 4);
}

TEST(Plan, UniformPlanReportsInfeasibleShapes) {
  const Cluster c = two_zone_cluster();
  UniformPlanOptions o;
  EXPECT_TRUE(std::holds_alternative<Infeasible>(make_uniform_plan(c, work(4, 16), 8, 2, 4, o)));  // 64 GPUs > 28
  EXPECT_TRUE(std::holds_alternative<Infeasible>(make_uniform_plan(c, work(4, 15), 1, 1, 2, o)));  // batch
  EXPECT_TRUE(std::holds_alternative<Infeasible>(make_uniform_plan(c, work(4, 16), 3, 1, 1, o)));  // tp vs heads
  // pp x interleave past an int: 4 x 2^30 wrapped to 0 and the divisibility test divided by it.
  o.schedule = Schedule::kInterleaved;
  o.interleave = 1 << 30;
  const auto huge = make_uniform_plan(c, work(4, 16), 1, 4, 1, o);
  ASSERT_TRUE(std::holds_alternative<Infeasible>(huge));
  EXPECT_NE(std::get<Infeasible>(huge).reason.find("pp*interleave (4294967296)"), std::string::npos);
}

TEST(Plan, CheckPlanFindsEveryProblem) {
  const Cluster c = two_zone_cluster();
  Plan p;
  p.micro_batch = 1;
  p.replicas = {Replica{3, {Stage{2, {0, 1}}, Stage{1, {1, 40}}}}};
  const auto problems = check_plan(p, c, work(4, 4));
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_NE(problems[0].find("used more than once"), std::string::npos);
  EXPECT_NE(problems[1].find("out of range"), std::string::npos);
  EXPECT_NE(problems[2].find("layers sum to 3"), std::string::npos);
  EXPECT_NE(problems[3].find("expected training.global_batch = 4"), std::string::npos);
}

TEST(Plan, InterleavingNeedsAPipelineAndMicroBatchesInGroupsOfItsDepth) {
  // Megatron-LM's interleaved schedule runs micro-batches in groups of the pipeline depth, and
  // its chunks need a pipeline: 6 micro-batches on 4 stages were priced 10-50% fast.
  const Cluster c = two_zone_cluster();
  Plan p;
  p.micro_batch = 1;
  p.schedule = Schedule::kInterleaved;
  p.interleave = 2;
  p.replicas = {Replica{6, {Stage{2, {0}}, Stage{2, {1}}, Stage{2, {2}}, Stage{2, {3}}}}};
  auto problems = check_plan(p, c, work(8, 6));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("replicas[0].micro_batches: 6 is no multiple of the 4 stages"), std::string::npos) << problems[0];
  p.replicas[0].micro_batches = 8;
  EXPECT_TRUE(check_plan(p, c, work(8, 8)).empty());
  p.replicas = {Replica{8, {Stage{8, {0}}}}};
  problems = check_plan(p, c, work(8, 8));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("interleave: 2 splits each stage into chunks of a pipeline"), std::string::npos) << problems[0];
  // Every replica needs a pipeline, not only the first (a one-stage second replica was accepted).
  p.replicas = {Replica{4, {Stage{4, {0}}, Stage{4, {1}}}}, Replica{4, {Stage{8, {2}}}}};
  problems = check_plan(p, c, work(8, 8));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("replicas[1].stages: one stage, but interleave 2"), std::string::npos) << problems[0];
}

}  // namespace
}  // namespace hetsim::models
