// SPDX-License-Identifier: Apache-2.0
// The planner's search space restricted to what a training stack runs (`hetsim plan
// --tp-degrees ... --zero ...`, a sweep's `search:`; docs/planner.md "Restricting the search").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "planner.hpp"
#include "planner_space.hpp"
#include "sweep_run.hpp"
#include "sweep_spec.hpp"

namespace hetsim::models {
namespace {

using ::testing::HasSubstr;

std::string source(const std::string& rel) { return std::string(HETSIM_SOURCE_DIR) + "/" + rel; }

/// Plans `workload` on `cluster` (example files) with `options`, one thread.
PlannerResult plan_example(const char* cluster, const char* workload, PlannerOptions options) {
  options.threads = 1;
  return plan_training(load_cluster(source(cluster), Catalog::builtin()), load_workload(source(workload)), options);
}

/// The plans offered: the top list and the baselines found.
std::vector<const RankedPlan*> offered(const PlannerResult& r) {
  std::vector<const RankedPlan*> out;
  for (const RankedPlan& p : r.top) out.push_back(&p);
  for (const PlannerBaseline* b : {&r.uniform, &r.fastest_type_only})
    if (b->found) out.push_back(&b->best);
  return out;
}

TEST(SearchSpace, ValuesOutsideWhatThePlannerSearchesAreNamed) {
  EXPECT_EQ(search_value_problem(SearchKnob::kTpDegrees, 8), "");
  EXPECT_EQ(search_value_problem(SearchKnob::kTpDegrees, 3), "");  // valid; the model may rule it out
  EXPECT_THAT(search_value_problem(SearchKnob::kTpDegrees, 0), HasSubstr("0 is no TP degree (expected 1 to 1024)"));
  EXPECT_THAT(search_value_problem(SearchKnob::kMicroBatches, -2), HasSubstr("-2 is no micro-batch size"));
  EXPECT_EQ(search_value_problem(SearchKnob::kInterleave, 1), "");
  EXPECT_THAT(search_value_problem(SearchKnob::kInterleave, 0), HasSubstr("1 is plain 1F1B"));
  EXPECT_EQ(search_value_problem(SearchKnob::kZero, 0), "");
  EXPECT_EQ(search_value_problem(SearchKnob::kZero, 1), "");
  EXPECT_EQ(search_value_problem(SearchKnob::kZero, 3), "");
  EXPECT_THAT(search_value_problem(SearchKnob::kZero, 2), HasSubstr("does not search ZeRO-2"));
  EXPECT_THAT(search_value_problem(SearchKnob::kZero, 4), HasSubstr("expected 0, 1 or 3"));
}

TEST(SearchSpace, AnEmptySpaceSaysWhichListLeftNothing) {
  const Cluster c = load_cluster(source("clusters/mixed-a100-v100.yaml"), Catalog::builtin());
  const Workload w = load_workload(source("workloads/gpt3-6.7b.yaml"));  // 32 heads, 32 layers, batch 1024
  PlannerOptions o;
  EXPECT_EQ(search_space_reason(c, w, o), "");
  o.tp_degrees = {3, 16};  // 3 divides no head count, 16 no node
  EXPECT_THAT(search_space_reason(c, w, o), HasSubstr("no TP degree searched (3, 16) suits the model"));
  o = PlannerOptions{};
  o.micro_batches = {3};
  EXPECT_THAT(search_space_reason(c, w, o), HasSubstr("divides the global batch of 1024"));
  o = PlannerOptions{};
  o.interleaves = {3, 5};
  EXPECT_THAT(search_space_reason(c, w, o), HasSubstr("no interleave factor searched (3, 5) divides the 32 layers"));
  const PlannerResult r = plan_training(c, w, o);
  EXPECT_TRUE(r.top.empty());
  EXPECT_THAT(r.reason, HasSubstr("no interleave factor searched"));
  // Interleaving only, with one micro-batch in all: no pipeline can run it (it was reported as
  // "the model does not fit on these GPUs"; s60 hunt). Two micro-batches can.
  o = PlannerOptions{};
  o.interleaves = {2};
  Workload one = w;
  one.training.global_batch = 1;
  EXPECT_THAT(search_space_reason(c, one, o),
              HasSubstr("the interleaved schedule (interleave 2 searched) needs pipelines of 2 or more stages"));
  EXPECT_THAT(plan_training(c, one, o).reason, HasSubstr("gives at most 1 micro-batch of the 32 layers"));
  one.training.global_batch = 2;
  EXPECT_EQ(search_space_reason(c, one, o), "");
}

TEST(SearchSpace, EveryPlanOfferedUsesTheKnobsSearched) {
  PlannerOptions o;
  o.tp_degrees = {4};
  o.micro_batches = {2};
  o.interleaves = {1};
  o.recomputes = {Recompute::kSelective};
  o.zero_stages = {0};
  o.top = 10;
  const PlannerResult r = plan_example("clusters/mixed-a100-v100.yaml", "workloads/gpt3-6.7b.yaml", o);
  ASSERT_FALSE(r.top.empty()) << r.reason;
  for (const RankedPlan* p : offered(r)) {
    EXPECT_EQ(p->plan.micro_batch, 2) << p->shape;
    EXPECT_EQ(p->plan.recompute, Recompute::kSelective) << p->shape;
    EXPECT_LE(p->plan.interleave, 1) << p->shape;
    EXPECT_EQ(p->plan.zero, 0) << p->shape;
    for (const Replica& rep : p->plan.replicas)
      for (const Stage& st : rep.stages) EXPECT_EQ(st.tp(), 4) << p->shape;
  }
}

TEST(SearchSpace, AStackWithoutSequenceParallelismGetsPlansWithoutIt) {
  PlannerOptions o;
  o.top = 10;
  o.sequence_parallel = false;
  const PlannerResult r = plan_example("clusters/dgx-a100.yaml", "workloads/gpt3-13b.yaml", o);
  ASSERT_FALSE(r.top.empty()) << r.reason;
  bool some_tp = false;
  for (const RankedPlan* p : offered(r)) {
    EXPECT_FALSE(p->plan.sequence_parallel) << p->shape;
    some_tp = some_tp || p->plan.replicas[0].stages[0].tp() > 1;
  }
  EXPECT_TRUE(some_tp);  // TP itself is still searched
}

// ZeRO-3 as FSDP and DeepSpeed run it: no pipeline, and replicas that pair their per-pass
// collectives run equal micro-batch counts (plan.hpp zero3_asymmetry).
TEST(SearchSpace, ZeroThreePlansAreOneStageReplicasOfEqualMicroBatches) {
  PlannerOptions o;
  o.zero_stages = {3};
  o.top = 8;
  const PlannerResult r = plan_example("clusters/mixed-a100-v100.yaml", "workloads/gpt3-6.7b.yaml", o);
  ASSERT_FALSE(r.top.empty()) << r.reason;
  for (const RankedPlan& p : r.top) {
    EXPECT_TRUE(p.report.feasible) << p.shape;
    if (p.plan.dp() == 1) continue;
    EXPECT_EQ(p.plan.zero, 3) << p.shape;
    for (const Replica& rep : p.plan.replicas) {
      EXPECT_EQ(rep.stages.size(), 1u) << p.shape;
      EXPECT_EQ(rep.micro_batches, p.plan.replicas.front().micro_batches) << p.shape;
    }
  }
}

TEST(SearchSpace, AZeroThreeTwinSplitsTheMicroBatchesEvenly) {
  Plan p;
  p.zero = 1;
  p.replicas = {Replica{}, Replica{}};
  p.replicas[0].micro_batches = 3;
  p.replicas[0].stages = {Stage{}};
  p.replicas[1].micro_batches = 5;
  p.replicas[1].stages = {Stage{}};
  const std::optional<Plan> twin = planner::zero3_twin(p, ShardedCollectives::kMemberNic);
  ASSERT_TRUE(twin.has_value());
  EXPECT_EQ(twin->zero, 3);
  EXPECT_EQ(twin->sharded_collectives, ShardedCollectives::kMemberNic);
  EXPECT_EQ(planner::zero3_twin(p, ShardedCollectives::kNodeNics)->sharded_collectives, ShardedCollectives::kNodeNics);
  EXPECT_EQ(twin->replicas[0].micro_batches, 4);
  EXPECT_EQ(twin->replicas[1].micro_batches, 4);
  p.replicas[1].micro_batches = 4;  // 7 micro-batches do not split over two replicas
  EXPECT_FALSE(planner::zero3_twin(p, ShardedCollectives::kMemberNic).has_value());
  p.replicas[1].micro_batches = 5;
  p.replicas[1].stages.push_back(Stage{});  // a pipeline: no ZeRO-3 twin
  EXPECT_FALSE(planner::zero3_twin(p, ShardedCollectives::kMemberNic).has_value());
  EXPECT_EQ(planner::with_micro_batches("2x[a tp4 x1 L32] m68 + 8x[b tp4 x1 L32] m31-30", 4),
            "2x[a tp4 x1 L32] m4 + 8x[b tp4 x1 L32] m4");
}

// The uniform baseline also tries ZeRO-0, as the papers ran it; a ZeRO-0 plan of several
// replicas is not offered when the search is ZeRO-1 only (the default).
TEST(SearchSpace, PlansOfAZeroStageLeftOutAreNotOffered) {
  PlannerOptions o;
  o.top = 20;
  const PlannerResult r = plan_example("clusters/dgx-a100.yaml", "workloads/gpt3-13b.yaml", o);
  ASSERT_FALSE(r.top.empty()) << r.reason;
  for (const RankedPlan& p : r.top) EXPECT_TRUE(p.plan.zero == 1 || p.plan.dp() == 1) << p.shape;
}

TEST(SearchSpace, ASweepSearchMapNarrowsEveryPointAndKeysItsRows) {
  const std::string head = "kind: sweep\nname: t\ncluster: c.yaml\nworkloads: [w.yaml]\n";
  const SweepSpec plain = parse_sweep_spec(head, "s.yaml");
  const SweepSpec narrow = parse_sweep_spec(
      head + "search: {tp_degrees: [8, 4], micro_batches: [1], interleave: [1], recompute: [full, none], zero: [0], "
             "sequence_parallel: false}\n",
      "s.yaml");
  PlannerOptions o;
  plain.search.apply_to(o);
  EXPECT_EQ(o.tp_degrees, PlannerOptions{}.tp_degrees);  // no `search:`: the defaults
  narrow.search.apply_to(o);
  EXPECT_EQ(o.tp_degrees, (std::vector<int>{8, 4}));
  EXPECT_EQ(o.micro_batches, (std::vector<int>{1}));
  EXPECT_EQ(o.interleaves, (std::vector<int>{1}));
  EXPECT_EQ(o.recomputes, (std::vector<Recompute>{Recompute::kFull, Recompute::kNone}));
  EXPECT_EQ(o.zero_stages, (std::vector<int>{0}));
  EXPECT_FALSE(o.sequence_parallel);
  // A checkpoint row planned in another search space is not resumed; a spec without `search:`
  // keeps the key it had before the map existed.
  const std::string key_plain = sweep_row_key(plain, "c", "w", "", {}, 0, "");
  const std::string key_narrow = sweep_row_key(narrow, "c", "w", "", {}, 0, "");
  EXPECT_NE(key_plain, key_narrow);
  EXPECT_THAT(key_plain, ::testing::Not(HasSubstr("tp_degrees")));
  EXPECT_THAT(key_narrow, HasSubstr("\"tp_degrees\":[8,4]"));
  EXPECT_THAT(key_narrow, HasSubstr("\"recompute\":[\"full\",\"none\"]"));
  EXPECT_THAT(key_narrow, HasSubstr("\"sequence_parallel\":false"));
}

}  // namespace
}  // namespace hetsim::models
