// SPDX-License-Identifier: Apache-2.0
// The planner when nothing can be planned: the result carries a reason a user can act on
// (not an exception, not an empty message), and the baselines say why they are missing too.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "planner.hpp"
#include "predictor.hpp"

namespace hetsim::models {
namespace {

std::string source(const std::string& rel) { return std::string(HETSIM_SOURCE_DIR) + "/" + rel; }

TEST(PlannerInfeasible, NodesLargerThanTheWorkloadCanUseSaySo) {
  // tiny-gpt (batch 8, 2 layers, 4 heads) keeps at most 8 x 2 x 4 = 64 GPUs busy; the planner
  // places whole nodes, so 1024-GPU nodes leave nothing to plan: the reason must say that.
  const Cluster c = parse_cluster(R"(kind: cluster
name: big-nodes
node_types:
  box: {gpu: a100-sxm4-80gb, gpus: 1024, intra: {bandwidth: "300GB/s"}, nics: {count: 8, bandwidth: "25GB/s"}}
zones:
  - {name: dc, fabric: {kind: switch}, nodes: [{type: box, count: 1}]}
)", Catalog::builtin());
  const PlannerResult r = plan_training(c, load_workload(source("workloads/tiny-gpt.yaml")), PlannerOptions{});
  EXPECT_TRUE(r.top.empty());
  EXPECT_NE(r.reason.find("whole nodes"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("at most 64"), std::string::npos) << r.reason;
}

// The loaders bound every figure, but a GPU type built in code (or figures extreme together)
// can still overflow a step's sum: predict printed "iteration time inf s" as feasible, exit 0,
// and the planner ranked such plans at 0 tokens/s with a 63-digit $/Mtok.
TEST(PlannerInfeasible, AnIterationTimeThatOverflowsIsInfeasibleWithAReason) {
  Cluster c = load_cluster(source("clusters/dgx-a100.yaml"), Catalog::builtin());
  for (NodeType& t : c.node_types)  // a peak no loader accepts: a GEMM of 1e10 FLOP takes 1e310 s
    for (auto& [dtype, flops] : t.gpu.peak_flops) flops = 1e-300;
  const Workload w = load_workload(source("workloads/gpt3-13b.yaml"));
  const auto plan = make_uniform_plan(c, w, 8, 1, 4, UniformPlanOptions{});
  ASSERT_TRUE(std::holds_alternative<Plan>(plan));
  const Report r = predict(c, w, std::get<Plan>(plan));
  EXPECT_FALSE(r.feasible);
  EXPECT_NE(r.infeasible_reason.find("iteration time overflows"), std::string::npos) << r.infeasible_reason;
  const PlannerResult planned = plan_training(c, w, PlannerOptions{});
  EXPECT_TRUE(planned.top.empty());
}

TEST(PlannerInfeasible, ModelTooLargeGivesAReasonNotAPlan) {
  // GPT-3 175B needs ~2.8 TB of weights and Adam state; 32 A100-80GB hold 2.56 TB.
  const Cluster c = load_cluster(source("clusters/dgx-a100.yaml"), Catalog::builtin());
  const Workload w = load_workload(source("workloads/gpt3-175b.yaml"));
  const PlannerResult r = plan_training(c, w, PlannerOptions{});
  EXPECT_TRUE(r.top.empty());
  EXPECT_FALSE(r.reason.empty());
  EXPECT_FALSE(r.uniform.found);
  EXPECT_FALSE(r.fastest_type_only.found);
}

TEST(PlannerInfeasible, NoTypeComputingTheDtypeSaysSoNotThatTheModelIsTooLarge) {
  // The CPU device types compute in fp32 only; tiny-gpt in bf16 fits their memory many times
  // over, so "does not fit" would send the user the wrong way.
  const Cluster c = load_cluster(source("clusters/local-cpu.yaml"), Catalog::builtin());
  Workload w = load_workload(source("workloads/tiny-gpt.yaml"));
  w.training.dtype = Dtype::kBf16;
  const PlannerResult r = plan_training(c, w, PlannerOptions{});
  EXPECT_TRUE(r.top.empty());
  EXPECT_NE(r.reason.find("computes in bf16"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("cpu-avx2"), std::string::npos) << r.reason;
  EXPECT_TRUE(r.fastest_type.empty());
  EXPECT_FALSE(r.fastest_type_only.found);
  EXPECT_NE(r.fastest_type_only.reason.find("computes in bf16"), std::string::npos) << r.fastest_type_only.reason;

  // The same workload in fp32 plans on the same cluster.
  w.training.dtype = Dtype::kFp32;
  const PlannerResult ok = plan_training(c, w, PlannerOptions{});
  EXPECT_FALSE(ok.top.empty()) << ok.reason;
}

// A node type defined without nodes (a sweep point with none of it, a cluster file whose A100
// group was removed) computes nothing: its bf16 hid the reason behind "does not fit".
TEST(PlannerInfeasible, ATypeWithoutNodesDoesNotComputeTheDtype) {
  const Cluster c = parse_cluster(R"(kind: cluster
name: v100-only
node_types:
  a: {gpu: a100-sxm4-80gb, gpus: 8, intra: {bandwidth: "300GB/s"}, nics: {count: 8, bandwidth: "25GB/s"}}
  v: {gpu: v100-sxm2-32gb, gpus: 8, intra: {bandwidth: "150GB/s"}, nics: {count: 1, bandwidth: "12.5GB/s"}}
zones:
  - {name: dc, fabric: {kind: switch}, nodes: [{type: v, count: 2}]}
)", Catalog::builtin());
  Workload w = load_workload(source("workloads/tiny-gpt.yaml"));
  w.training.dtype = Dtype::kBf16;
  const PlannerResult r = plan_training(c, w, PlannerOptions{});
  EXPECT_TRUE(r.top.empty());
  EXPECT_NE(r.reason.find("no GPU type of the cluster computes in bf16 (v100-sxm2-32gb)"), std::string::npos) << r.reason;
}

// States that would fit spread over every GPU, but no plan of the search's keeps each stage
// within its GPU (TP 1 only, 10% of each GPU's memory): the reason says so, and what shards them.
TEST(PlannerInfeasible, StatesThatFitOverAllGpusPointToZero3) {
  const Cluster c = load_cluster(source("clusters/dgx-a100.yaml"), Catalog::builtin());
  PlannerOptions o;
  o.tp_degrees = {1};
  o.memory_fraction = 0.10;
  const PlannerResult r = plan_training(c, load_workload(source("workloads/gpt3-6.7b.yaml")), o);
  EXPECT_TRUE(r.top.empty());
  EXPECT_EQ(r.reason,
            "no feasible plan: the model does not fit on these GPUs: its weights, gradients and optimizer states are "
            "99.3 GiB of the 192 GiB the GPUs hold, but no plan the search tries keeps every stage within its GPU's "
            "memory (--zero 3 shards the states over every GPU)");
}

// A budget below a dollar an hour was printed as "$0.00/h".
TEST(PlannerInfeasible, ASmallBudgetIsPrintedAsGiven) {
  const Cluster c = load_cluster(source("clusters/dgx-a100.yaml"), Catalog::builtin());
  PlannerOptions o;
  o.objective = PlanObjective::kBudget;
  o.budget_per_hour = 0.004;
  const PlannerResult r = plan_training(c, load_workload(source("workloads/tiny-gpt.yaml")), o);
  EXPECT_TRUE(r.top.empty());
  EXPECT_NE(r.reason.find("within the budget of $0.004/h"), std::string::npos) << r.reason;
}

// A budget above the whole cluster's price excluded nothing: the reason is the model's size,
// not the budget (it said "within the budget of $1000.00/h" for a $163.88/h cluster).
TEST(PlannerInfeasible, ABudgetAboveTheClusterPriceIsNotTheReason) {
  const Cluster c = load_cluster(source("clusters/dgx-a100.yaml"), Catalog::builtin());
  PlannerOptions o;
  o.objective = PlanObjective::kBudget;
  o.budget_per_hour = 1000;
  const PlannerResult r = plan_training(c, load_workload(source("workloads/gpt3-175b.yaml")), o);
  EXPECT_TRUE(r.top.empty());
  // By how much (s67 walkthrough: the reason had no figure): 175B x 16 bytes against 32 x 78 GiB.
  EXPECT_EQ(r.reason,
            "no feasible plan: the model does not fit on these GPUs: its weights, gradients and optimizer states are "
            "2.54 TiB, more than the 2.44 TiB all 32 GPUs hold (after each GPU's framework reserve)");
  o.budget_per_hour = 100;  // below the cluster's price: the budget may be why
  const PlannerResult under = plan_training(c, load_workload(source("workloads/gpt3-175b.yaml")), o);
  EXPECT_NE(under.reason.find("within the budget of $100.00/h (the whole cluster costs $163.88/h)"), std::string::npos)
      << under.reason;
}

// The reason names the stage furthest over its capacity: it named the first, so a larger batch
// could print a smaller need ("stage 0 needs 106 GiB" while stage 7 needed 514: s51 F7).
TEST(PlannerInfeasible, TheMemoryReasonNamesTheStageFurthestOver) {
  const Cluster c = load_cluster(source("clusters/dgx-a100.yaml"), Catalog::builtin());
  Workload w = load_workload(source("workloads/gpt3-6.7b.yaml"));
  w.training.global_batch = 4096;
  UniformPlanOptions o;
  o.schedule = Schedule::kGpipe;  // every stage holds every micro-batch: the LM head's stage the most
  o.recompute = Recompute::kFull;
  const Plan plan = std::get<Plan>(make_uniform_plan(c, w, 1, 8, 4, o));
  const Report r = predict(c, w, plan);
  ASSERT_FALSE(r.feasible);
  double worst = 0;
  int worst_stage = -1;
  for (const StageReport& s : r.stages)
    if (s.memory_bytes / s.memory_capacity_bytes > worst) worst = s.memory_bytes / s.memory_capacity_bytes, worst_stage = s.stage;
  EXPECT_EQ(worst_stage, 7);
  EXPECT_EQ(r.infeasible_reason.rfind("stage 7 of replica 0 needs", 0), 0u) << r.infeasible_reason;
}

}  // namespace
}  // namespace hetsim::models
