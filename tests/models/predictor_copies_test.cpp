// SPDX-License-Identifier: Apache-2.0
// The predictor reuses the figures of a replica that copies an earlier one (Evaluation::find_copies in
// models/predictor_copies.cpp). These tests check that the reuse changes no result by even one bit: each
// plan's report equals, field by field with EXPECT_EQ, the report of a variant that cannot take
// that path (every one-node TP group in reverse rank order: same nodes, same figures, but not
// consecutive GPUs), and its per-stage figures equal build_plan_work's, which never reuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "cost_test_util.hpp"
#include "input_loader.hpp"
#include "planner.hpp"
#include "predictor.hpp"

namespace hetsim::models {
namespace {

std::string source(const std::string& rel) { return std::string(HETSIM_SOURCE_DIR) + "/" + rel; }

/// The plan with every TP group that lies in one node in reverse rank order. The predictor
/// reads a one-node group through its node alone (GPU order inside a node changes no link or
/// type), so the report must not change; but the groups are no longer runs of consecutive GPUs,
/// so no replica is taken for a copy. Groups that span nodes are kept as they are, and a TP 1
/// group is its own reverse: plans made of those are checked against build_plan_work only.
Plan without_copies(const Plan& plan, const Cluster& c) {
  Plan p = plan;
  for (Replica& r : p.replicas)
    for (Stage& s : r.stages) {
      const int node = c.gpus[s.gpus.front()].node;
      if (std::all_of(s.gpus.begin(), s.gpus.end(), [&](int g) { return c.gpus[g].node == node; }))
        std::reverse(s.gpus.begin(), s.gpus.end());
    }
  return p;
}

void expect_same_report(const Report& a, const Report& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.engine, b.engine);
  EXPECT_EQ(a.feasible, b.feasible);
  EXPECT_EQ(a.infeasible_reason, b.infeasible_reason);
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.samples_per_s, b.samples_per_s);
  EXPECT_EQ(a.tokens_per_s, b.tokens_per_s);
  EXPECT_EQ(a.tflops_per_gpu, b.tflops_per_gpu);
  EXPECT_EQ(a.mfu, b.mfu);
  EXPECT_EQ(a.hfu, b.hfu);
  EXPECT_EQ(a.memory_peak_bytes, b.memory_peak_bytes);
  EXPECT_EQ(a.cost_per_hour, b.cost_per_hour);
  EXPECT_EQ(a.cost_per_million_tokens, b.cost_per_million_tokens);
  EXPECT_EQ(a.micro_batch, b.micro_batch);
  EXPECT_EQ(a.breakdown.compute_s, b.breakdown.compute_s);
  EXPECT_EQ(a.breakdown.tp_comm_s, b.breakdown.tp_comm_s);
  EXPECT_EQ(a.breakdown.pp_comm_s, b.breakdown.pp_comm_s);
  EXPECT_EQ(a.breakdown.dp_comm_s, b.breakdown.dp_comm_s);
  EXPECT_EQ(a.breakdown.bubble_s, b.breakdown.bubble_s);
  EXPECT_EQ(a.breakdown.optimizer_s, b.breakdown.optimizer_s);
  EXPECT_EQ(a.extra, b.extra);
  ASSERT_EQ(a.stages.size(), b.stages.size());
  for (std::size_t i = 0; i < a.stages.size(); ++i) {
    SCOPED_TRACE("stage report " + std::to_string(i));
    const StageReport &x = a.stages[i], &y = b.stages[i];
    EXPECT_EQ(x.replica, y.replica);
    EXPECT_EQ(x.stage, y.stage);
    EXPECT_EQ(x.gpu_type, y.gpu_type);
    EXPECT_EQ(x.layers, y.layers);
    EXPECT_EQ(x.tp, y.tp);
    EXPECT_EQ(x.forward_s, y.forward_s);
    EXPECT_EQ(x.backward_s, y.backward_s);
    EXPECT_EQ(x.memory_bytes, y.memory_bytes);
    EXPECT_EQ(x.memory_capacity_bytes, y.memory_capacity_bytes);
  }
}

/// build_plan_work evaluates every stage on its own (it records every op): its per-stage
/// figures are those of an evaluation without any reuse. Its stage times add up the recorded
/// ops, which rounds differently from predict's sums (before this change too): those are
/// compared to 1e-12 relative, the memory figures exactly.
void expect_same_as_work(const Report& report, const PlanWork& work, const std::string& what) {
  SCOPED_TRACE(what + " vs build_plan_work");
  EXPECT_EQ(report.feasible, work.feasible);
  if (!report.feasible) return;  // an infeasible report may stop before its stage rows
  std::size_t row = 0;
  for (const auto& stages : work.replicas)
    for (const StageWork& sw : stages) {
      ASSERT_LT(row, report.stages.size());
      const StageReport& sr = report.stages[row++];
      EXPECT_EQ(sr.replica, sw.replica);
      EXPECT_EQ(sr.stage, sw.stage);
      EXPECT_NEAR(sr.forward_s, sw.forward_s, 1e-12 * sw.forward_s);
      EXPECT_NEAR(sr.backward_s, sw.backward_s, 1e-12 * sw.backward_s);
      EXPECT_EQ(sr.memory_bytes, sw.memory_bytes);
      EXPECT_EQ(sr.memory_capacity_bytes, sw.memory_capacity_bytes);
    }
  EXPECT_EQ(row, report.stages.size());
}

/// Checks one plan against both references; returns how many plans it checked (1).
int check(const Cluster& c, const Workload& w, const Plan& p, const std::string& what) {
  const Report fast = predict(c, w, p);
  expect_same_report(fast, predict(c, w, without_copies(p, c)), what);
  expect_same_as_work(fast, build_plan_work(c, w, p), what);
  return 1;
}

/// Variants of a plan whose replicas stop being copies of one another in ways the model reads.
int check_variants(const Cluster& c, const Workload& w, const Plan& p, const std::string& what) {
  int n = check(c, w, p, what);
  if (p.dp() >= 2) {
    // Uneven micro-batches: the last replica gives one to the first (same global batch).
    Plan uneven = p;
    if (uneven.replicas.back().micro_batches > 1) {
      ++uneven.replicas.front().micro_batches;
      --uneven.replicas.back().micro_batches;
      n += check(c, w, uneven, what + " uneven");
    }
    // One replica in the middle is not a copy (reversed groups); those after it may be again.
    Plan one_off = p;
    Replica& mid = one_off.replicas[p.dp() / 2];
    for (Stage& s : mid.stages) std::reverse(s.gpus.begin(), s.gpus.end());
    n += check(c, w, one_off, what + " one replica reversed");
    // Replicas in another order: the copies' bases and node orders change.
    Plan swapped = p;
    std::swap(swapped.replicas.front(), swapped.replicas.back());
    n += check(c, w, swapped, what + " first and last replicas swapped");
  }
  // A stage of the last replica with one layer (one per chunk) more, its neighbour fewer. Its
  // own depth counts: replicas of a heterogeneous plan may have fewer stages than the first.
  if (p.replicas.back().stages.size() >= 2) {
    Plan shifted = p;
    std::vector<Stage>& stages = shifted.replicas.back().stages;
    const int v = std::max(1, p.interleave);
    if (stages[1].layers > v) {
      stages[0].layers += v;
      stages[1].layers -= v;
      n += check(c, w, shifted, what + " layers shifted");
    }
  }
  return n;
}

struct Case {
  const char* cluster;
  const char* workload;
};

/// Uniform plans over each cluster of clusters/: every (tp, pp) that fits, on all GPUs and on
/// part of them (idle GPUs share no NICs), with knobs that change what the stages read.
TEST(PredictorCopies, UniformPlansOnEveryClusterEqualTheReference) {
  const Case cases[] = {{"dgx-a100", "llama2-7b"},           {"mixed-a100-v100", "gpt3-1.3b"},
                        {"h100-mi300x", "llama2-7b"},         {"geo-two-zones", "llama2-7b"},
                        {"consumer-4090-a100", "llama2-7b"},  {"pcie-a100-l4-mix", "gpt3-1.3b"},
                        {"spot-mix", "llama2-7b"},            {"local-cpu", "tiny-gpt"},
                        {"bench1024", "gpt3-175b"}};
  int checked = 0;
  for (const Case& k : cases) {
    const Cluster c = load_cluster(source(std::string("clusters/") + k.cluster + ".yaml"), Catalog::builtin());
    const Workload w = load_workload(source(std::string("workloads/") + k.workload + ".yaml"));
    const int gpus = c.gpu_count();
    int variant = 0;
    for (int tp : {1, 2, 4, 8}) {
      for (int pp : {1, 2, 3, 4, 8}) {
        if (tp * pp > gpus) continue;
        const int full = gpus / (tp * pp);
        for (int dp : {full, full / 2, 3}) {
          if (dp < 1 || dp > full) continue;
          UniformPlanOptions o;
          o.micro_batch = 1 + variant % 2;
          o.recompute = variant % 3 == 0 ? Recompute::kSelective : Recompute::kNone;
          o.sequence_parallel = variant % 4 == 1;
          o.zero = variant % 5 == 0 ? 0 : variant % 5 == 1 ? 3 : 1;
          o.overlap_grad_sync = variant % 3 == 2;
          if (pp >= 2 && variant % 4 == 3 && w.model.layers % (2 * pp) == 0) {
            o.schedule = Schedule::kInterleaved;
            o.interleave = 2;
          }
          o.first_gpu = dp < full ? tp * pp * ((full - dp) / 2) : 0;  // partial: a block in the middle
          ++variant;
          const auto made = make_uniform_plan(c, w, tp, pp, dp, o);
          if (!std::holds_alternative<Plan>(made)) continue;
          const std::string what = std::string(k.cluster) + " tp" + std::to_string(tp) + " pp" + std::to_string(pp) +
                                   " dp" + std::to_string(dp) + " variant " + std::to_string(variant);
          checked += check_variants(c, w, std::get<Plan>(made), what);
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
}

/// The hand-written plans of plans/ (uneven micro-batches, heterogeneous pipelines, zones).
TEST(PredictorCopies, PlanFilesEqualTheReference) {
  const char* files[][3] = {
      {"consumer-4090-a100-tp4-pp2-dp4", "consumer-4090-a100", "llama2-7b"},
      {"consumer-4090-a100-tp4-pp2-dp5-uneven", "consumer-4090-a100", "llama2-7b"},
      {"dgx-a100-tp4-pp2-dp4", "dgx-a100", "llama2-7b"},
      {"dgx-a100-tp8-pp1-dp4", "dgx-a100", "llama2-7b"},
      {"geo-two-zones-tp8-pp1-dp4", "geo-two-zones", "llama2-7b"},
      {"geo-two-zones-tp8-pp2-dp4", "geo-two-zones", "llama2-7b"},
      {"h100-mi300x-tp8-pp1-dp4-uneven", "h100-mi300x", "llama2-7b"},
      {"h100-mi300x-tp8-pp2-dp2", "h100-mi300x", "llama2-7b"},
      {"mixed-a100-v100-tp8-pp1-dp6-uneven", "mixed-a100-v100", "llama2-7b"},
      {"mixed-a100-v100-tp8-pp3-dp2", "mixed-a100-v100", "llama2-7b"},
      {"spot-mix-tp4-pp2-dp10-uneven", "spot-mix", "llama2-7b"},
      {"spot-mix-tp4-pp2-dp4", "spot-mix", "llama2-7b"},
  };
  for (const auto& f : files) {
    const Cluster c = load_cluster(source(std::string("clusters/") + f[1] + ".yaml"), Catalog::builtin());
    const Workload w = load_workload(source(std::string("workloads/") + f[2] + ".yaml"));
    const Plan p = load_plan(source(std::string("plans/") + f[0] + ".yaml"), c, w);
    check_variants(c, w, p, f[0]);
  }
}

/// The planner's best plans: heterogeneous replicas (different node types, depths, layer
/// splits, micro-batch counts) next to copies of one another.
TEST(PredictorCopies, PlannerTopPlansEqualTheReference) {
  const Case cases[] = {{"mixed-a100-v100", "llama2-7b"}, {"h100-mi300x", "llama2-7b"}, {"spot-mix", "llama2-7b"}};
  int checked = 0;
  for (const Case& k : cases) {
    const Cluster c = load_cluster(source(std::string("clusters/") + k.cluster + ".yaml"), Catalog::builtin());
    const Workload w = load_workload(source(std::string("workloads/") + k.workload + ".yaml"));
    PlannerOptions o;
    o.top = 8;
    o.threads = 1;
    o.micro_batches = {1, 2};
    o.predict_candidates = 12;
    const PlannerResult result = plan_training(c, w, o);
    for (std::size_t i = 0; i < result.top.size(); ++i)
      checked += check_variants(c, w, result.top[i].plan, std::string(k.cluster) + " top " + std::to_string(i));
  }
  EXPECT_GT(checked, 10);
}

/// TP groups that span two nodes are never copies; a plan mixing them with one-node groups.
TEST(PredictorCopies, GroupsAcrossNodesEqualTheReference) {
  using testing::round_gpu;
  const Cluster c = testing::cluster_of({testing::node_type("four", round_gpu("g", 200e12), 4, 200e9, 25e9)}, {{0, 8}});
  const Workload w = testing::gpt_workload(8, 2048, 16, 1024, 64);
  Plan p;
  p.micro_batch = 1;
  for (int r = 0; r < 4; ++r) {
    Replica rep;
    rep.micro_batches = 16;
    Stage narrow, wide;  // replica r: nodes 2r and 2r + 1, GPUs 8r + 6 and 8r + 7 idle
    narrow.layers = 3;
    wide.layers = 5;
    for (int g = 0; g < 2; ++g) narrow.gpus.push_back(8 * r + g);
    for (int g = 2; g < 6; ++g) wide.gpus.push_back(8 * r + g);  // 2 on one node, 2 on the next
    rep.stages = {narrow, wide};
    p.replicas.push_back(rep);
  }
  check_variants(c, w, p, "tp4 across nodes");
  // The same with the wide stage first.
  for (Replica& rep : p.replicas) std::swap(rep.stages[0], rep.stages[1]);
  check_variants(c, w, p, "tp4 across nodes, first");
}

/// Replicas alike in everything but how many other GPUs share their nodes' NIC: the p2p
/// figures differ, so the second replica is no copy of the first.
TEST(PredictorCopies, SharedNicsEqualTheReference) {
  using testing::round_gpu;
  NodeType nt = testing::node_type("one-nic", round_gpu("g", 200e12), 8, 200e9, 25e9);
  nt.nics.count = 1;  // every sender of a node shares one NIC
  const Cluster c = testing::cluster_of({nt}, {{0, 5}});
  const Workload w = testing::gpt_workload(8, 2048, 16, 1024, 64);
  const auto replica = [](std::vector<int> first, std::vector<int> second) {
    Replica r;
    r.micro_batches = 16;
    Stage a, b;
    a.layers = b.layers = 4;
    a.gpus = std::move(first);
    b.gpus = std::move(second);
    r.stages = {a, b};
    return r;
  };
  Plan p;
  p.micro_batch = 1;
  // Nodes 0 -> 1 carry two replicas' sends, nodes 2 -> 3 one replica's.
  p.replicas = {replica({0, 1}, {8, 9}), replica({16, 17}, {24, 25}), replica({2, 3}, {10, 11})};
  const Report partial = predict(c, w, p);
  ASSERT_TRUE(partial.feasible) << partial.infeasible_reason;
  EXPECT_NE(partial.stages[0].forward_s, partial.stages[2].forward_s);  // replica 0 vs replica 1, stage 0
  check(c, w, p, "idle GPUs, NIC shared by two replicas");
  // A pipeline inside node 4: senders are then counted GPU by GPU.
  p.replicas.push_back(replica({32, 33}, {34, 35}));
  const Report counted = predict(c, w, p);
  EXPECT_NE(counted.stages[0].forward_s, counted.stages[2].forward_s);
  check(c, w, p, "senders counted per GPU, NIC shared by two replicas");
}

/// Replicas alike in everything but the zone of one stage's node: the second one's pipeline
/// crosses the slow link between zones, so it is no copy of the first.
TEST(PredictorCopies, ZonesEqualTheReference) {
  using testing::round_gpu;
  const Cluster c = testing::two_zones_of(testing::node_type("n", round_gpu("g", 200e12), 8, 200e9, 25e9));
  const Workload w = testing::gpt_workload(8, 2048, 16, 1024, 64);
  Plan p;
  p.micro_batch = 1;
  for (const auto& gpus : {std::vector<int>{0, 1, 8, 9}, std::vector<int>{10, 11, 16, 17}}) {
    Replica r;  // nodes 0 -> 1 (east -> east), then 1 -> 2 (east -> west)
    r.micro_batches = 32;
    Stage a, b;
    a.layers = b.layers = 4;
    a.gpus = {gpus[0], gpus[1]};
    b.gpus = {gpus[2], gpus[3]};
    r.stages = {a, b};
    p.replicas.push_back(r);
  }
  const Report report = predict(c, w, p);
  ASSERT_TRUE(report.feasible) << report.infeasible_reason;
  EXPECT_NE(report.stages[0].forward_s, report.stages[2].forward_s);
  check(c, w, p, "second replica across zones");
}

}  // namespace
}  // namespace hetsim::models
