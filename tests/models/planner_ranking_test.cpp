// SPDX-License-Identifier: Apache-2.0
// The planner's final listing (planner_ranking.cpp top_plans): order by the objective, each plan
// once, and no two rows the user cannot tell apart.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner_ranking.hpp"

namespace hetsim::models::planner {
namespace {

RankedPlan ranked(const std::string& shape, double tokens_per_s, int gpus, double memory_peak_bytes = 1e9) {
  RankedPlan r;
  r.shape = shape;
  r.report.feasible = true;
  r.report.tokens_per_s = tokens_per_s;
  r.report.cost_per_hour = 10.0;
  r.report.memory_peak_bytes = memory_peak_bytes;
  Replica replica;
  replica.micro_batches = 1;
  Stage stage;
  for (int g = 0; g < gpus; ++g) stage.gpus.push_back(g);
  stage.layers = 1;
  replica.stages.push_back(stage);
  r.plan.replicas.push_back(replica);
  return r;
}

std::vector<double> tokens_of(const std::vector<RankedPlan>& top) {
  std::vector<double> out;
  for (const RankedPlan& r : top) out.push_back(r.report.tokens_per_s);
  return out;
}

TEST(TopPlans, FastestFirstAtMostTop) {
  PlannerOptions o;
  o.top = 2;
  const auto top = top_plans({ranked("a", 100, 8), ranked("b", 300, 8), ranked("c", 200, 8)}, o);
  EXPECT_EQ(tokens_of(top), (std::vector<double>{300, 200}));
}

// Two plans whose shapes read the same (5x[dgx-a100 tp1 x6 L6,7,7,7,7,6] m205-204 twice, the copies
// differing in which runs the 205th micro-batch; dgx-a100 gpt3-13b --zero 0 listed both, 65,335
// and 65,332 tokens/s): one row, the faster.
TEST(TopPlans, ShapesThatReadTheSameAreListedOnce) {
  PlannerOptions o;
  o.top = 5;
  const std::string shape = "5x[dgx-a100 tp1 x6 L6,7,7,7,7,6] m205-204 (micro 1, none, 1f1b, zero 0)";
  const auto top = top_plans({ranked(shape, 65332, 30, 2e9), ranked(shape, 65335, 30, 1e9), ranked("other", 65000, 30)}, o);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].report.tokens_per_s, 65335);
  EXPECT_EQ(top[1].shape, "other");
}

// The same figures to the last bit under another name (a uniform shape and Megatron's baseline of
// the same split) are one plan too; equal figures on other GPU counts are two.
TEST(TopPlans, EqualFiguresAreOnePlanOnlyOnEqualGpuCounts) {
  PlannerOptions o;
  o.top = 5;
  const auto same = top_plans({ranked("8x[dgx-a100 tp8 x1 L32] m64", 500, 64), ranked("megatron tp8-pp1-dp8", 500, 64)}, o);
  EXPECT_EQ(same.size(), 1u);
  const auto other = top_plans({ranked("x", 500, 64), ranked("y", 500, 32)}, o);
  EXPECT_EQ(other.size(), 2u);
}

}  // namespace
}  // namespace hetsim::models::planner
