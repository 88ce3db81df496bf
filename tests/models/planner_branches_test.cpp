// SPDX-License-Identifier: Apache-2.0
// A search keeps a bounded set of branches (ShapeSearch::keep_task, kMaxSearchBranches): those of
// the highest bounds, in the order a stable sort by bound gives; and a cluster of many node types
// (4 TP degrees ^ types x 48 knob settings) is planned within its time limit, where enumerating
// every branch took gigabytes before the first plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "planner.hpp"
#include "planner_search.hpp"

namespace hetsim::models {
namespace {

using Task = planner::ShapeSearch::Task;

TEST(PlannerBranches, TheBranchesKeptAreThoseOfTheHighestBoundsInStableOrder) {
  const std::size_t n = planner::ShapeSearch::kMaxTasks + 5000;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> coarse(0, 999);  // many equal bounds: the tie-break matters
  std::vector<Task> all, kept;
  double best_dropped = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    Task t;
    t.bound = i == 17 ? std::nan("") : coarse(rng);  // a NaN bound ranks last, as -inf
    t.order = i;
    all.push_back(t);
    best_dropped = std::max(best_dropped, planner::ShapeSearch::keep_task(kept, t));
  }
  ASSERT_EQ(kept.size(), planner::ShapeSearch::kMaxTasks);
  for (Task& t : all)
    if (std::isnan(t.bound)) t.bound = -std::numeric_limits<double>::infinity();
  std::stable_sort(all.begin(), all.end(), [](const Task& a, const Task& b) { return a.bound > b.bound; });
  std::sort(kept.begin(), kept.end(), planner::ShapeSearch::better_task);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    ASSERT_EQ(kept[i].order, all[i].order) << i;
  }
  EXPECT_EQ(best_dropped, all[kept.size()].bound);  // the best bound left out
}

/// `types` node types of one A100 node each, differing only in their NVSwitch figure.
std::string many_types_cluster(int types) {
  std::ostringstream o;
  o << "kind: cluster\nname: many-types\nnode_types:\n";
  for (int t = 0; t < types; ++t)
    o << "  t" << t << ":\n    gpu: a100-sxm4-80gb\n    gpus: 8\n    intra: {kind: nvswitch, bandwidth: \""
      << 300 + t << "GB/s\"}\n    nics: {count: 8, bandwidth: \"200Gbps\"}\n";
  o << "zones:\n  - name: dc\n    fabric: {kind: fat-tree}\n    nodes:\n";
  for (int t = 0; t < types; ++t) o << "      - {type: t" << t << ", count: 1}\n";
  return o.str();
}

/// A Llama-2-7B-shaped workload (32 layers of 4096, 512 sequences of 4096 tokens a step).
Workload llama2_7b_shape() {
  Workload w;
  w.model.layers = 32;
  w.model.hidden = 4096;
  w.model.heads = 32;
  w.model.ffn_hidden = 11008;
  w.model.seq_len = 4096;
  w.model.vocab = 32000;
  w.training.global_batch = 512;
  return w;
}

TEST(PlannerBranches, TenNodeTypesArePlannedWithinTheTimeLimit) {
  const Cluster c = parse_cluster(many_types_cluster(10), Catalog::builtin(), "many-types.yaml");
  ASSERT_EQ(c.node_types.size(), 10u);
  const Workload w = llama2_7b_shape();
  PlannerOptions o;
  o.threads = 1;
  o.time_limit_s = 0.2;
  // 4^10 x 48 branches: enumerated whole, 5 GB and minutes; now the limit stops it with a plan.
  const PlannerResult r = plan_training(c, w, o);
  EXPECT_GT(r.searches_stopped, 0);
  ASSERT_FALSE(r.top.empty());
  EXPECT_GT(r.top.front().report.tokens_per_s, 0);
}

// Past the time limit the final ranking predicts only the first few candidates of each list (a
// stopped search's fragmented shapes took up to a second each: bench1024 at --time-limit 1 spent
// 14-24 s there); without a limit every candidate is predicted.
TEST(PlannerBranches, PastTheLimitOnlyTheBestCandidatesArePredicted) {
  const Cluster c = parse_cluster(many_types_cluster(3), Catalog::builtin(), "three-types.yaml");
  const Workload w = llama2_7b_shape();
  PlannerOptions o;
  o.threads = 1;
  o.time_limit_s = 1e-9;  // past before anything
  const PlannerResult cut = plan_training(c, w, o);
  EXPECT_GT(cut.predictions_skipped, 0);
  EXPECT_LE(cut.plans_predicted, 4 * 8);  // four lists (best, fastest type, uniform, Megatron), 8 each
  ASSERT_FALSE(cut.top.empty());          // the Megatron configurations still answer
  o.time_limit_s = 0;
  const PlannerResult all = plan_training(c, w, o);
  EXPECT_EQ(all.predictions_skipped, 0);
  EXPECT_GE(all.top.front().report.tokens_per_s, cut.top.front().report.tokens_per_s);
}

}  // namespace
}  // namespace hetsim::models
