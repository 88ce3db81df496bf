// SPDX-License-Identifier: Apache-2.0
// Planner cases a review of its results turned up: one-GPU nodes, hardware priced at $0/h,
// a budget nothing fits, node types that differ in name only, and workloads too small to
// keep every node of a pool busy.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <tuple>
#include <variant>

#include "catalog.hpp"
#include "cost_test_util.hpp"
#include "input_loader.hpp"
#include "plan.hpp"
#include "plan_notes.hpp"
#include "planner.hpp"
#include "planner_space.hpp"
#include "predictor.hpp"

namespace hetsim::models {
namespace {

using testing::example_cluster;
using testing::example_workload;
/// An example cluster with `nodes` nodes in its group `{type: TYPE, count: N}`.
Cluster example_cluster_with(const std::string& file, const std::string& type, int nodes) {
  std::ifstream in(std::string(HETSIM_SOURCE_DIR) + "/clusters/" + file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::regex group("\\{type: " + type + ", count: [0-9]+\\}");
  EXPECT_TRUE(std::regex_search(text, group)) << file << " has no group of " << type;
  return parse_cluster(std::regex_replace(text, group, "{type: " + type + ", count: " + std::to_string(nodes) + "}"),
                       Catalog::builtin());
}

const Workload kSmall = parse_workload(R"(kind: workload
name: small
model: {layers: 4, hidden: 1024, heads: 16, vocab: 32000, seq_len: 1024}
training: {global_batch: 16, dtype: fp16}
)");

// Five one-GPU nodes without an intra-node fabric (allowed for `gpus: 1`).
const char* kOneGpuNodes = R"(kind: cluster
name: one-gpu-nodes
node_types:
  box: {gpu: a100-sxm4-80gb, gpus: 1, nics: {count: 1, bandwidth: "100Gbps"}, price: "$2/h"}
zones:
  - {name: z, fabric: {kind: switch}, nodes: [{type: box, count: 5}]}
)";

TEST(PlannerCases, OneGpuNodesWithoutAFabricPipelineAcrossTheirNics) {
  const Cluster c = parse_cluster(kOneGpuNodes, Catalog::builtin());
  // Four stages on four nodes: the sends cross the NICs; no intra fabric caps them.
  UniformPlanOptions o;
  o.micro_batch = 4;
  const auto plan = make_uniform_plan(c, kSmall, /*tp=*/1, /*pp=*/4, /*dp=*/1, o);
  ASSERT_TRUE(std::holds_alternative<Plan>(plan)) << std::get<Infeasible>(plan).reason;
  const Report r = predict(c, kSmall, std::get<Plan>(plan));
  ASSERT_TRUE(r.feasible) << r.infeasible_reason;
  EXPECT_GT(r.tokens_per_s, 0);
  EXPECT_TRUE(std::isfinite(r.breakdown.pp_comm_s));
  EXPECT_GT(r.breakdown.pp_comm_s, 0);
  const PlannerResult p = plan_training(c, kSmall, PlannerOptions{});
  ASSERT_FALSE(p.top.empty()) << p.reason;
}

TEST(PlannerCases, AWorkloadTooSmallForEveryNodeIsPlannedOnFewer) {
  // One layer, one sequence: one GPU can be kept busy, not five nodes.
  const Cluster c = parse_cluster(kOneGpuNodes, Catalog::builtin());
  const Workload tiny = parse_workload(R"(kind: workload
name: tiny
model: {layers: 1, hidden: 64, heads: 4, vocab: 256, seq_len: 32}
training: {global_batch: 1, dtype: fp16}
)");
  const PlannerResult p = plan_training(c, tiny, PlannerOptions{});
  ASSERT_FALSE(p.top.empty()) << p.reason;
  EXPECT_EQ(p.top.front().plan.gpu_count(), 1);
}

// An A100 node rented at $4/h beside a V100 node owned ($0/h).
const char* kHalfFree = R"(kind: cluster
name: half-free
node_types:
  abox: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "100Gbps"}, price: "$4/h"}
  vbox: {gpu: v100-sxm2-32gb, gpus: 2, intra: {kind: nvlink, bandwidth: "150GB/s"}, nics: {count: 1, bandwidth: "100Gbps"}, price: "$0/h"}
zones:
  - {name: z, fabric: {kind: switch}, nodes: [{type: abox, count: 1}, {type: vbox, count: 1}]}
)";

TEST(PlannerCases, TheCostObjectivePicksFreeHardwareAndItsFastestPlan) {
  const Cluster c = parse_cluster(kHalfFree, Catalog::builtin());
  PlannerOptions cost;
  cost.objective = PlanObjective::kCost;
  cost.top = 3;
  const PlannerResult p = plan_training(c, kSmall, cost);
  ASSERT_FALSE(p.top.empty()) << p.reason;
  EXPECT_EQ(p.top.front().report.cost_per_hour, 0.0);
  // Among the free plans, the fastest comes first.
  for (std::size_t i = 1; i < p.top.size(); ++i) {
    if (p.top[i].report.cost_per_hour == 0.0) {
      EXPECT_GE(p.top.front().report.tokens_per_s, p.top[i].report.tokens_per_s);
    }
  }
  // It is the throughput objective's best plan on the V100 node alone.
  Cluster v100 = parse_cluster(R"(kind: cluster
name: v100-only
node_types:
  vbox: {gpu: v100-sxm2-32gb, gpus: 2, intra: {kind: nvlink, bandwidth: "150GB/s"}, nics: {count: 1, bandwidth: "100Gbps"}, price: "$0/h"}
zones:
  - {name: z, fabric: {kind: switch}, nodes: [{type: vbox, count: 1}]}
)",
                               Catalog::builtin());
  const PlannerResult v = plan_training(v100, kSmall, PlannerOptions{});
  ASSERT_FALSE(v.top.empty());
  EXPECT_DOUBLE_EQ(p.top.front().report.tokens_per_s, v.top.front().report.tokens_per_s);
}

TEST(PlannerCases, ABudgetNothingFitsLeavesTheBaselinesAsTheyAre) {
  std::string priced = kHalfFree;
  priced.replace(priced.find("$0/h"), 4, "$2/h");  // the V100 node rented too
  const Cluster c = parse_cluster(priced, Catalog::builtin());
  PlannerOptions budget;
  budget.objective = PlanObjective::kBudget;
  budget.budget_per_hour = 1;  // the cheapest node costs 2
  const PlannerResult b = plan_training(c, kSmall, budget);
  const PlannerResult t = plan_training(c, kSmall, PlannerOptions{});
  EXPECT_TRUE(b.top.empty());
  ASSERT_TRUE(b.uniform.found && t.uniform.found);
  EXPECT_DOUBLE_EQ(b.uniform.best.report.tokens_per_s, t.uniform.best.report.tokens_per_s);
  EXPECT_NE(b.reason.find("$1.00/h"), std::string::npos) << b.reason;
}

// A larger budget never gives a worse plan (s51 plausibility hunt F1). geo-two-zones: past
// $230/h the search's best shapes crossed zones and the egress the predictor adds took them over
// budget, which left no plan where the $200/h one fitted; spot-mix: past $240/h a V100 node
// (no bf16) was forced into every allotment, which halved llama2-70b's throughput.
TEST(PlannerCases, ALargerBudgetNeverGivesAWorsePlan) {
  const Workload w = example_workload("llama2-70b.yaml");
  // geo-two-zones at $557.1 and $557.2/h, about the nodes' total ($557.16/h): the egress put every
  // cross-zone shape the search kept over the larger budget (38,882 -> 32,648 tokens/s; s52 F1).
  for (const auto& [cluster, low, high] : {std::tuple{"geo-two-zones", 200.0, 250.0}, std::tuple{"spot-mix", 230.0, 500.0},
                                           std::tuple{"geo-two-zones", 557.1, 557.2}}) {
    const Cluster c = example_cluster(std::string(cluster) + ".yaml");
    PlannerOptions o;
    o.objective = PlanObjective::kBudget;
    o.budget_per_hour = low;
    const PlannerResult at_low = plan_training(c, w, o);
    o.budget_per_hour = high;
    const PlannerResult at_high = plan_training(c, w, o);
    ASSERT_FALSE(at_low.top.empty()) << cluster << ": " << at_low.reason;
    ASSERT_FALSE(at_high.top.empty()) << cluster << ": " << at_high.reason;
    EXPECT_GE(at_high.top.front().report.tokens_per_s, at_low.top.front().report.tokens_per_s) << cluster;
    EXPECT_LE(at_high.top.front().report.cost_per_hour, high) << cluster;
  }
}

TEST(PlannerCases, AnotherNodeNeverGivesAWorsePlan) {
  // spot-mix with 3 and with 4 p4de nodes, gpt3-1.3b: the search used each pool whole, and the
  // 4th node's 8 replicas took no micro-batch off the others (512 sequences of 2 over 96
  // replicas) while the data-parallel sync grew: 864,371 tokens/s against 889,691 on 3 nodes.
  const Workload w = example_workload("gpt3-1.3b.yaml");
  PlannerOptions o;
  o.time_limit_s = 0;
  const PlannerResult three = plan_training(example_cluster_with("spot-mix.yaml", "p4de-24xlarge", 3), w, o);
  const PlannerResult four = plan_training(example_cluster_with("spot-mix.yaml", "p4de-24xlarge", 4), w, o);
  ASSERT_FALSE(three.top.empty() || four.top.empty());
  EXPECT_GE(four.top.front().report.tokens_per_s, three.top.front().report.tokens_per_s);
}

TEST(PlannerCases, AnotherNodeNeverGivesADearerCheapestPlan) {
  // spot-mix with 4 and with 5 L40S nodes, llama2-7b, --objective cost: the cost search used each
  // pool whole, and the fifth node's replicas made the cheapest plan $0.2441 per million tokens
  // against $0.2246 on four (each pool alone at every node count since).
  const Workload w = example_workload("llama2-7b.yaml");
  PlannerOptions o;
  o.time_limit_s = 0;
  o.objective = PlanObjective::kCost;
  const PlannerResult four = plan_training(example_cluster_with("spot-mix.yaml", "g6e-48xlarge", 4), w, o);
  const PlannerResult five = plan_training(example_cluster_with("spot-mix.yaml", "g6e-48xlarge", 5), w, o);
  ASSERT_FALSE(four.top.empty() || five.top.empty());
  EXPECT_LE(five.top.front().report.cost_per_million_tokens, four.top.front().report.cost_per_million_tokens * (1 + 1e-9));
}

TEST(PlannerCases, PipelineSendsAcrossZonesShareTheWanLink) {
  // geo-two-zones: GPU 32 (us-west H100) to GPU 0 (us-east A100) over the 100 Gbps WAN link.
  // Each pipeline crossing it at once adds its tensor to the link: the estimate grows by the
  // same step per pipeline (the link, not a GPU's NIC, is the bottleneck from one pipeline on),
  // and inside a zone the count is ignored.
  const Cluster c = example_cluster("geo-two-zones.yaml");
  const double bytes = 64e6;
  const auto across = [&](int pipelines) { return planner::p2p_estimate_s(c, 32, 1, 0, 1, bytes, pipelines); };
  const double step = across(2) - across(1);
  EXPECT_GT(step, 0);
  EXPECT_NEAR(across(20) - across(1), 19 * step, 1e-9 * across(20));
  EXPECT_GE(step, bytes / 12.5e9);  // at most the link's line rate per added tensor
  EXPECT_DOUBLE_EQ(planner::p2p_estimate_s(c, 0, 1, 8, 1, bytes, 20), planner::p2p_estimate_s(c, 0, 1, 8, 1, bytes, 1));
}

TEST(PlannerCases, AnotherNodeAcrossZonesNeverGivesAWorsePlan) {
  // geo-two-zones with a 5th A100 node, llama2-7b: the estimator priced the 20 pipelines of a
  // mixed kind crossing the WAN at one node's share of it (8 flows) and put their 72-GPU shape
  // at 397,034 tokens/s (346,723 predicted), crowding the 4-node cluster's best plan (358,767)
  // out of the predicted candidates.
  const Workload w = example_workload("llama2-7b.yaml");
  PlannerOptions o;
  o.time_limit_s = 0;
  const PlannerResult with_four = plan_training(example_cluster_with("geo-two-zones.yaml", "dgx-a100", 4), w, o);
  const PlannerResult with_five = plan_training(example_cluster_with("geo-two-zones.yaml", "dgx-a100", 5), w, o);
  ASSERT_FALSE(with_four.top.empty() || with_five.top.empty());
  EXPECT_GE(with_five.top.front().report.tokens_per_s, with_four.top.front().report.tokens_per_s);
  // The estimator's figure of the best plan is within a few percent of the predictor's.
  EXPECT_NEAR(with_five.top.front().estimated_tokens_per_s / with_five.top.front().report.tokens_per_s, 1.0, 0.05);
}

TEST(PlannerCases, ABudgetThatCoversEveryNodeStillTriesFewer) {
  // spot-mix gpt3-1.3b: a budget at or above the nodes' total ($327.30/h) left whole pools only,
  // 673,693 tokens/s, where $316.37/h found 674,527 on 72 GPUs (s52 planner monotonicity hunt F9).
  const Cluster c = example_cluster("spot-mix.yaml");
  const Workload w = example_workload("gpt3-1.3b.yaml");
  PlannerOptions o;
  o.objective = PlanObjective::kBudget;
  o.time_limit_s = 0;
  o.budget_per_hour = 316.37;
  const PlannerResult below = plan_training(c, w, o);
  o.budget_per_hour = 331.43;
  const PlannerResult above = plan_training(c, w, o);
  ASSERT_FALSE(below.top.empty() || above.top.empty());
  EXPECT_GE(above.top.front().report.tokens_per_s, below.top.front().report.tokens_per_s);
}

TEST(PlannerCases, NodeTypesThatDifferInNameOnlyArePlannedAsOne) {
  // The same 2 A100 + 1 V100 nodes, once as two node types and once as one type per node.
  const std::string node_a = R"({gpu: a100-sxm4-80gb, gpus: 8, intra: {kind: nvswitch, bandwidth: "300GB/s"}, nics: {count: 8, bandwidth: "200Gbps"}, price: "$40/h"})";
  const std::string node_v = R"({gpu: v100-sxm2-32gb, gpus: 8, intra: {kind: nvlink, bandwidth: "150GB/s"}, nics: {count: 4, bandwidth: "100Gbps"}, price: "$20/h"})";
  const Cluster merged = parse_cluster("kind: cluster\nname: merged\nnode_types:\n  a: " + node_a + "\n  v: " + node_v +
                                           "\nzones:\n  - {name: z, fabric: {kind: switch}, nodes: [{type: a, count: 2}, {type: v, count: 1}]}\n",
                                       Catalog::builtin());
  const Cluster split = parse_cluster("kind: cluster\nname: split\nnode_types:\n  a0: " + node_a + "\n  a1: " + node_a +
                                          "\n  v0: " + node_v +
                                          "\nzones:\n  - {name: z, fabric: {kind: switch}, nodes: [{type: a0, count: 1}, {type: a1, count: 1}, "
                                          "{type: v0, count: 1}]}\n",
                                      Catalog::builtin());
  // One pool per hardware (the search grows with the number of pools: with one per node type
  // and more than ten, it searched for minutes and missed the mixed plans).
  const auto pools = planner::make_pools(split);
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(pools[1].nodes, (std::vector<int>{2}));
  const Workload w = example_workload("gpt3-1.3b.yaml");
  const PlannerResult m = plan_training(merged, w, PlannerOptions{});
  const PlannerResult s = plan_training(split, w, PlannerOptions{});
  ASSERT_FALSE(m.top.empty() || s.top.empty());
  EXPECT_DOUBLE_EQ(s.top.front().report.tokens_per_s, m.top.front().report.tokens_per_s);
}

TEST(PlannerCases, OverlappedTpCommunicationIsPlannedWithAndNeverLoses) {
  // --tp-comm-overlap: every plan with sequence parallelism, the baselines too, carries the
  // overlap, and the best plan is at least as fast as without it (the same shapes cost less).
  const Cluster c = example_cluster("dgx-a100.yaml");
  const Workload w = example_workload("gpt3-13b.yaml");
  PlannerOptions o;
  o.top = 3;
  const PlannerResult plain = plan_training(c, w, o);
  o.tp_comm_overlap = true;
  const PlannerResult overlapped = plan_training(c, w, o);
  ASSERT_FALSE(plain.top.empty() || overlapped.top.empty());
  EXPECT_GE(overlapped.top.front().report.tokens_per_s, plain.top.front().report.tokens_per_s);
  ASSERT_TRUE(overlapped.uniform.found && overlapped.fastest_type_only.found);
  for (const RankedPlan* p : {&overlapped.top.front(), &overlapped.uniform.best, &overlapped.fastest_type_only.best}) {
    EXPECT_EQ(p->plan.tp_comm_overlap, p->plan.sequence_parallel) << p->shape;
    EXPECT_TRUE(check_plan(p->plan, c, w).empty()) << p->shape;
  }
  for (const RankedPlan& p : plain.top) EXPECT_FALSE(p.plan.tp_comm_overlap) << p.shape;
}

TEST(PlannerCases, ASequenceTpCannotSplitIsPlannedWithoutSequenceParallelism) {
  // Llama-2 70B at 4095 tokens: sequence parallelism cannot split the sequence over TP 2, 4 or 8,
  // and the search dropped every TP shape, so that --no-sequence-parallel found plans 7% faster
  // on h100-mi300x (s60 hunt). Such shapes run without it; the wider search is never worse.
  const Cluster c = example_cluster("h100-mi300x.yaml");
  Workload w = example_workload("llama2-70b.yaml");
  w.model.seq_len = 4095;
  PlannerOptions o;
  o.top = 3;
  o.threads = 1;
  const PlannerResult searched = plan_training(c, w, o);
  o.sequence_parallel = false;
  const PlannerResult without = plan_training(c, w, o);
  ASSERT_FALSE(searched.top.empty() || without.top.empty());
  EXPECT_GE(searched.top.front().report.tokens_per_s, without.top.front().report.tokens_per_s * (1 - 1e-9));
  bool any_tp = false;
  for (const RankedPlan& p : searched.top) {
    EXPECT_TRUE(check_plan(p.plan, c, w).empty()) << p.shape;
    for (const Replica& r : p.plan.replicas)
      for (const Stage& st : r.stages) any_tp = any_tp || st.gpus.size() > 1;
  }
  EXPECT_TRUE(any_tp) << "no plan with tensor parallelism among the best";
}

TEST(PlannerCases, AGradientSyncAcrossAWanRunsAfterTheBackward) {
  // Overlapped, the sync runs in Megatron-Core's buckets, a ring each; across geo-two-zones' 30 ms
  // WAN every ring step of every bucket waits for it, and one ring after the backward is faster.
  // The planner prices a plan both ways and keeps the faster: the uniform baseline (data
  // parallelism across both zones) syncs after the backward.
  const Cluster c = example_cluster("geo-two-zones.yaml");
  const Workload w = example_workload("gpt3-1.3b.yaml");
  UniformPlanOptions u;
  u.micro_batch = 4;
  u.zero = 0;
  u.overlap_grad_sync = true;
  const auto made = make_uniform_plan(c, w, 1, 1, c.gpu_count(), u);
  ASSERT_TRUE(std::holds_alternative<Plan>(made));
  Plan p = std::get<Plan>(made);
  const Report overlapped = predict(c, w, p);
  p.overlap_grad_sync = false;
  const Report after = predict(c, w, p);
  ASSERT_TRUE(overlapped.feasible && after.feasible);
  EXPECT_LT(after.iteration_time_s, overlapped.iteration_time_s);
  PlannerOptions o;
  o.top = 1;
  const PlannerResult r = plan_training(c, w, o);
  ASSERT_TRUE(r.uniform.found);
  EXPECT_FALSE(r.uniform.best.plan.overlap_grad_sync) << r.uniform.best.shape;
  EXPECT_NE(r.uniform.best.shape.find("sync after backward"), std::string::npos) << r.uniform.best.shape;
}

// --min-headroom: every plan returned, baselines included, keeps that share of its GPUs' memory
// free. The best Llama-2 70B plan on h100-mi300x filled its H100s to 4% of their memory, while
// plans 1% slower left 12% (a user wanted a margin for what the memory model does not count).
// The search places whole nodes: on a node whose GPUs are joined at 10 MB/s every plan that uses
// them all is slower than one GPU alone, and the result says so (s50 hunt F3: "best plan" 2.2x
// slower than a one-GPU plan, without a word). On the bundled clusters it says nothing.
TEST(PlannerCases, OneGpuFasterThanTheBestWholeNodePlanIsNoted) {
  Cluster slow = example_cluster("local-cpu.yaml");
  for (NodeType& t : slow.node_types) t.intra.bandwidth_Bps = 10e6;
  const Workload w = example_workload("tiny-gpt.yaml");
  PlannerOptions o;
  o.threads = 1;
  const PlannerResult r = plan_training(slow, w, o);
  ASSERT_FALSE(r.top.empty());
  EXPECT_NE(r.single_gpu_note.find(" alone (GPU "), std::string::npos) << r.single_gpu_note;
  EXPECT_NE(r.single_gpu_note.find("the search places whole nodes"), std::string::npos) << r.single_gpu_note;
  const PlannerResult normal = plan_training(example_cluster("local-cpu.yaml"), w, o);
  EXPECT_EQ(normal.single_gpu_note, "") << normal.single_gpu_note;
  const PlannerResult big = plan_training(example_cluster("dgx-a100.yaml"), example_workload("llama2-7b.yaml"), o);
  EXPECT_EQ(big.single_gpu_note, "") << big.single_gpu_note;
}

TEST(PlannerCases, MinimumHeadroomIsKeptByEveryPlan) {
  const Cluster c = example_cluster("h100-mi300x.yaml");
  const Workload w = example_workload("llama2-70b.yaml");
  PlannerOptions o;
  o.top = 3;
  const PlannerResult tight = plan_training(c, w, o);
  o.min_headroom_fraction = 0.10;
  const PlannerResult roomy = plan_training(c, w, o);
  ASSERT_FALSE(tight.top.empty() || roomy.top.empty());
  EXPECT_LT(tight.top.front().memory_headroom_fraction, 0.10);  // else the test shows nothing
  EXPECT_LE(roomy.top.front().report.tokens_per_s, tight.top.front().report.tokens_per_s);
  for (const RankedPlan& p : roomy.top) EXPECT_GE(p.memory_headroom_fraction, 0.10) << p.shape;
  if (roomy.uniform.found) {
    EXPECT_GE(roomy.uniform.best.memory_headroom_fraction, 0.10);
  }
  if (roomy.fastest_type_only.found) {
    EXPECT_GE(roomy.fastest_type_only.best.memory_headroom_fraction, 0.10);
  }
}

// --one-vendor: NCCL and RCCL build no communicator across vendors, so on h100-mi300x every plan
// a Megatron-LM, DeepSpeed or FSDP user can run stays on one vendor's GPUs (a s49 walkthrough: the
// best plans and the uniform baseline all joined the two, and nothing said so in `plan`).
TEST(PlannerCases, OneVendorKeepsEveryPlanOnOneVendor) {
  const Cluster c = example_cluster("h100-mi300x.yaml");
  const Workload w = example_workload("llama2-70b.yaml");
  PlannerOptions o;
  o.top = 5;
  o.threads = 1;
  const PlannerResult mixed = plan_training(c, w, o);
  o.one_vendor = true;
  const PlannerResult apart = plan_training(c, w, o);
  ASSERT_FALSE(mixed.top.empty() || apart.top.empty());
  // Else the test shows nothing: the free search joins them, and is faster for it.
  ASSERT_TRUE(mixed.top.front().joins_vendors) << mixed.top.front().shape;
  EXPECT_EQ(mixed.top.front().joins_vendors, joins_vendors(c, mixed.top.front().plan));
  EXPECT_GT(mixed.top.front().report.tokens_per_s, apart.top.front().report.tokens_per_s);
  for (const RankedPlan& p : apart.top) {
    EXPECT_FALSE(p.joins_vendors) << p.shape;
    EXPECT_FALSE(joins_vendors(c, p.plan)) << p.shape;
  }
  ASSERT_TRUE(apart.uniform.found);
  EXPECT_FALSE(joins_vendors(c, apart.uniform.best.plan)) << apart.uniform.best.shape;
  ASSERT_TRUE(apart.fastest_type_only.found);
  // The best of either vendor alone is at least the fastest type's best.
  EXPECT_GE(apart.top.front().report.tokens_per_s, apart.fastest_type_only.best.report.tokens_per_s);
}

// Twelve pools: mixed pipelines over more than ten pools try all pools, each GPU type's and every
// pair, each in a few orders (planner_kinds.cpp mixed_subsets, pipeline_orders); the subset mask
// was `1 << pools`, undefined past 31. Without a time limit the search runs to its end, and its
// best is no worse than either baseline.
TEST(PlannerCases, TwelvePoolsSearchToTheEndWithoutALimit) {
  std::vector<NodeType> types;
  std::vector<NodeGroup> groups;
  for (int t = 0; t < 12; ++t) {
    const GpuType g = testing::round_gpu("g" + std::to_string(t), (100 + 25 * t) * 1e12, (24 + 8 * (t % 4)) * 1e9);
    types.push_back(testing::node_type("n" + std::to_string(t), g, 2, 100e9, 25e9));
    groups.push_back({t, 1});
  }
  const Cluster c = testing::cluster_of(types, groups);
  const Workload w = testing::gpt_workload(24, 1024, 16, 1024, 96);
  PlannerOptions o;
  o.tp_degrees = {1, 2};
  o.micro_batches = {1};
  o.recomputes = {Recompute::kNone};
  o.interleaves = {1};
  o.time_limit_s = 0;
  o.threads = 1;
  const PlannerResult r = plan_training(c, w, o);
  ASSERT_FALSE(r.top.empty()) << r.reason;
  EXPECT_EQ(r.searches_stopped, 0);
  ASSERT_TRUE(r.uniform.found);
  ASSERT_TRUE(r.fastest_type_only.found);
  EXPECT_GE(r.top.front().report.tokens_per_s, r.uniform.best.report.tokens_per_s);
  EXPECT_GE(r.top.front().report.tokens_per_s, r.fastest_type_only.best.report.tokens_per_s);
}

// A small model on 16,384 GPUs is latency-bound: the all-reduce of ZeRO-0 runs as a tree (log n
// steps) where ZeRO-1's reduce-scatter and all-gather are rings (n steps). The default search
// (ZeRO-1) ranks the uniform baseline's ZeRO-0 plans too, so its best is no slower than the
// baseline; a user's `--zero 1` keeps to ZeRO-1 (s49 hunt: the best plan was 0.12x the baseline
// printed under it).
TEST(PlannerCases, TheDefaultSearchRanksTheBaselinesZeroZeroPlans) {
  const NodeType nt = testing::node_type("n", testing::round_gpu("g", 1000e12), 8, 450e9, 50e9);
  const Cluster c = testing::cluster_of({nt}, {{0, 2048}});
  const Workload w = testing::gpt_workload(1, 64, 1, 32, 1 << 24);
  PlannerOptions o;
  o.top = 1;
  o.threads = 1;
  o.time_limit_s = 0;
  o.recomputes = {Recompute::kNone};
  o.micro_batches = {8};
  o.rank_faster_zero0_baselines = true;  // as `plan` without --zero
  const PlannerResult free_zero = plan_training(c, w, o);
  ASSERT_FALSE(free_zero.top.empty()) << free_zero.reason;
  ASSERT_TRUE(free_zero.uniform.found);
  EXPECT_EQ(free_zero.top.front().plan.zero, 0) << free_zero.top.front().shape;
  EXPECT_GE(free_zero.top.front().report.tokens_per_s, free_zero.uniform.best.report.tokens_per_s);
  o.rank_faster_zero0_baselines = false;  // --zero 1
  const PlannerResult zero1 = plan_training(c, w, o);
  ASSERT_FALSE(zero1.top.empty()) << zero1.reason;
  EXPECT_EQ(zero1.top.front().plan.zero, 1) << zero1.top.front().shape;
  EXPECT_LT(zero1.top.front().report.tokens_per_s, zero1.uniform.best.report.tokens_per_s);  // else nothing shown
}

}  // namespace
}  // namespace hetsim::models

namespace hetsim::models {
namespace {

// A one-replica plan the planner hands out set `overlap_grad_sync`, and `predict --plan` of the
// emitted file then noted "settings that change nothing on this plan ... `overlap_grad_sync`",
// about a key the user never wrote (s58 docs hunt).
TEST(PlannerCases, OneReplicaPlansDoNotAskToOverlapASyncTheyLack) {
  const Cluster c = parse_cluster(R"(kind: cluster
name: pair
node_types:
  box: {gpu: a100-sxm4-80gb, gpus: 2, intra: {kind: nvlink, bandwidth: "300GB/s"}, nics: {count: 1, bandwidth: "100Gbps"},
        price: "$4/h"}
zones:
  - {name: z, fabric: {kind: switch}, nodes: [{type: box, count: 1}]}
)",
                                  Catalog::builtin());
  PlannerOptions o;
  o.top = 20;
  const Workload w = testing::example_workload("gpt3-6.7b.yaml");
  const PlannerResult r = plan_training(c, w, o);
  ASSERT_FALSE(r.top.empty()) << r.reason;
  int one_replica = 0;
  for (const RankedPlan& p : r.top) {
    if (p.plan.dp() != 1) continue;
    ++one_replica;
    EXPECT_FALSE(p.plan.overlap_grad_sync) << p.shape;
    for (const std::string& note : plan_notes(c, w, p.plan))
      EXPECT_EQ(note.find("change nothing"), std::string::npos) << note;
  }
  EXPECT_GT(one_replica, 0);
}

}  // namespace
}  // namespace hetsim::models
