// SPDX-License-Identifier: Apache-2.0
// Every parallel layout of the same model must give the single-device loss and gradients
// (step 1, before the optimizer) within fp32 tolerance, the same loss after an update, and after
// two updates every replica must hold the single device's parameters (the DP sync is exact).
#include <gtest/gtest.h>

#include <cmath>

#include "exec_test_support.hpp"
#include "runner/run.hpp"

namespace hetsim::exec {
namespace {

using models::Activation;
using models::Schedule;
using testing::plan;
using testing::replica;
using testing::stage;

struct Case {
  std::string name;
  models::Plan plan;
  int fast = 8, slow = 0;
  Activation activation = Activation::kGelu;
  int kv_heads = 4;
  bool tied = true;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

RunOutcome run(const models::Plan& p, int fast, int slow, const models::Workload& w, int steps) {
  RunSpec spec;
  spec.cluster = testing::cpu_cluster(fast, slow);
  spec.workload = w;
  spec.plan = p;
  spec.steps = steps;
  spec.options.capture_gradients = true;
  spec.options.capture_parameters = true;
  spec.options.poison_released_weights = true;  // ZeRO-3: a pass must use only what it gathered
  // epsilon far above the gradients makes Adam's update nearly linear in them (lr * m / eps),
  // so the parameters after two steps reflect any error of the DP sum, not only its sign
  // (at epsilon 1e-8 the first update is lr * sign(g), blind to a wrong sum and noisy near 0).
  spec.options.adam.learning_rate = 1.0f;
  spec.options.adam.epsilon = 1.0f;
  return run_in_process(spec);
}

void expect_same(const NamedTensors& ref, const NamedTensors& got, const std::string& what) {
  // 2 embeddings + 4 layers x (2 norms x 2 + 4 attention + 2 or 3 MLP) + final norm (+ head)
  ASSERT_GE(ref.size(), 2u + 4u * 10u + 2u);
  ASSERT_EQ(ref.size(), got.size());
  for (const auto& [name, r] : ref) {
    ASSERT_TRUE(got.count(name)) << name;
    const auto& g = got.at(name);
    ASSERT_EQ(r.size(), g.size()) << name;
    int bad = 0;
    for (std::size_t i = 0; i < r.size() && bad < 5; ++i) {
      if (std::fabs(g[i] - r[i]) > 1e-6 + 1e-4 * std::fabs(r[i])) {
        ADD_FAILURE() << what << " " << name << "[" << i << "]: " << g[i] << " vs single-rank " << r[i];
        ++bad;
      }
    }
  }
}

class RunnerEquivalenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(RunnerEquivalenceTest, MatchesSingleRank) {
  const Case& c = GetParam();
  const models::Workload w = testing::tiny_workload(c.activation, c.kv_heads, c.tied);
  const models::Plan single = plan("single", {replica(4, {stage(4, 0)})});
  const RunOutcome ref = run(single, 1, 0, w, 2);
  const RunOutcome got = run(c.plan, c.fast, c.slow, w, 2);
  ASSERT_EQ(got.steps.size(), 2u);
  EXPECT_NEAR(got.steps[0].loss, ref.steps[0].loss, 1e-4 * ref.steps[0].loss);
  EXPECT_NEAR(got.steps[1].loss, ref.steps[1].loss, 1e-4 * ref.steps[1].loss);
  EXPECT_GT(ref.steps[0].loss - ref.steps[1].loss, 0.0) << "the update lowers the loss";
  EXPECT_NEAR(ref.steps[0].loss, std::log(61.0), 0.5) << "an untrained model is near uniform";
  expect_same(ref.gradients, got.gradients, "gradient");
  ASSERT_EQ(ref.parameters.size(), 1u);
  ASSERT_EQ(got.parameters.size(), c.plan.replicas.size());
  for (std::size_t r = 0; r < got.parameters.size(); ++r) {
    expect_same(ref.parameters[0], got.parameters[r], "replica " + std::to_string(r) + " parameter");
  }
}

models::Plan with(models::Plan p, int zero, models::Recompute recompute = models::Recompute::kNone) {
  p.zero = zero;
  p.recompute = recompute;
  return p;
}

models::Plan sequence_parallel(models::Plan p) {
  p.sequence_parallel = true;
  return p;
}

models::Plan interleaved(models::Plan p, int v) {
  p.schedule = Schedule::kInterleaved;
  p.interleave = v;
  return p;
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, RunnerEquivalenceTest,
    ::testing::Values(
        Case{"tp2", plan("tp2", {replica(4, {stage(4, 0, 2)})})},
        Case{"pp2", plan("pp2", {replica(4, {stage(2, 0), stage(2, 1)})})},
        Case{"dp2", plan("dp2", {replica(2, {stage(4, 0)}), replica(2, {stage(4, 1)})})},
        Case{"tp2pp2", plan("tp2pp2", {replica(4, {stage(2, 0, 2), stage(2, 2, 2)})})},
        Case{"pp2_gpipe", plan("pp2g", {replica(4, {stage(3, 0), stage(1, 1)})}, Schedule::kGpipe)},
        Case{"pp2_interleaved", interleaved(plan("pp2i", {replica(4, {stage(2, 0), stage(2, 1)})}), 2)},
        Case{"pp4_1f1b", plan("pp4", {replica(4, {stage(1, 0), stage(1, 1), stage(1, 2), stage(1, 3)})})},
        Case{"dp2_zero1", with(plan("dp2z", {replica(2, {stage(4, 0)}), replica(2, {stage(4, 1)})}), 1)},
        Case{"tp2_full_recompute", with(plan("tp2r", {replica(4, {stage(4, 0, 2)})}), 0, models::Recompute::kFull)},
        Case{"pp2_selective_recompute",
             with(plan("pp2s", {replica(4, {stage(2, 0), stage(2, 1)})}), 0, models::Recompute::kSelective)},
        // Sequence parallelism (Korthikanti et al. 2022): rows split over TP between blocks.
        Case{"tp2_sequence_parallel", sequence_parallel(plan("tp2sp", {replica(4, {stage(4, 0, 2)})}))},
        Case{"tp4_sequence_parallel_full_recompute",
             sequence_parallel(with(plan("tp4sp", {replica(4, {stage(4, 0, 4)})}), 0, models::Recompute::kFull))},
        Case{"tp2pp2_sequence_parallel_interleaved",
             sequence_parallel(interleaved(plan("tp2pp2spi", {replica(4, {stage(2, 0, 2), stage(2, 2, 2)})}), 2))},
        Case{"sequence_parallel_tp_differs_between_stages",
             sequence_parallel(plan("spmix", {replica(4, {stage(1, 0, 2), stage(2, 2, 1), stage(1, 3, 2)})}))},
        Case{"tp_differs_between_stages", plan("tpmix", {replica(4, {stage(2, 0, 2), stage(2, 2, 1)})})},
        // Heterogeneous: fast and slow devices, uneven layers, uneven micro-batches, ZeRO-1.
        Case{"uneven_heterogeneous",
             with(plan("hetero", {replica(3, {stage(3, 0, 2), stage(1, 2)}), replica(1, {stage(3, 3, 2), stage(1, 5)})}),
                  1),
             3, 3},
        Case{"replicas_partitioned_differently",
             plan("repart", {replica(3, {stage(3, 0), stage(1, 1)}), replica(1, {stage(1, 2), stage(3, 3)})}), 2, 2},
        // Replicas of different TP degrees for the same layers: the lower-TP rank is in one DP
        // group per shard of the highest degree.
        Case{"replicas_of_different_tp", plan("dptp", {replica(2, {stage(4, 0, 2)}), replica(2, {stage(4, 2, 1)})}), 3, 0},
        Case{"replicas_of_different_tp_zero1",
             with(plan("dptpz", {replica(1, {stage(2, 0, 4), stage(2, 4, 2)}), replica(3, {stage(2, 6, 1), stage(2, 7, 1)})}),
                  1),
             6, 2},
        Case{"replicas_tp4_tp2_tp1_sequence_parallel_swiglu_untied",
             sequence_parallel(plan("dptp421", {replica(2, {stage(4, 0, 4)}), replica(1, {stage(4, 4, 2)}),
                                                replica(1, {stage(4, 6, 1)})})),
             7, 0, Activation::kSwiglu, 4, false},
        Case{"replicas_split_differently_with_different_tp",
             plan("dptpsplit", {replica(2, {stage(3, 0, 2), stage(1, 2, 1)}), replica(2, {stage(1, 3, 1), stage(3, 4, 2)})}),
             6, 0},
        // Replicas of different pipeline depths (a one-stage replica keeps no tied copy).
        Case{"replicas_of_different_depths",
             plan("depths", {replica(2, {stage(4, 0)}), replica(2, {stage(2, 1), stage(2, 2)})}), 3, 0},
        Case{"different_depths_and_tp_zero1_untied",
             with(plan("depthstp", {replica(1, {stage(4, 0, 2)}), replica(3, {stage(1, 2), stage(2, 3), stage(1, 4)})}), 1),
             5, 0, Activation::kGelu, 4, false},
        Case{"different_depths_gpipe_heterogeneous",
             plan("depthsg", {replica(2, {stage(3, 0), stage(1, 1)}), replica(2, {stage(1, 2), stage(1, 3), stage(2, 4)})},
                  Schedule::kGpipe),
             3, 2},
        Case{"swiglu_gqa_untied_tp2pp2", plan("llama", {replica(4, {stage(2, 0, 2), stage(2, 2, 2)})}), 8, 0,
             Activation::kSwiglu, 2, false},
        // ZeRO-3: weights gathered before every pass, gradients reduce-scattered after every
        // backward; the tied embedding's buckets reduce at the end of the step.
        Case{"dp2_zero3", with(plan("dp2z3", {replica(2, {stage(4, 0)}), replica(2, {stage(4, 1)})}), 3)},
        Case{"pp2dp2_zero3_tied", with(plan("pp2dp2z3", {replica(2, {stage(3, 0), stage(1, 1)}),
                                                         replica(2, {stage(3, 2), stage(1, 3)})}),
                                       3)},
        Case{"tp2dp2_zero3_sequence_parallel",
             sequence_parallel(with(plan("tp2dp2z3sp", {replica(2, {stage(4, 0, 2)}), replica(2, {stage(4, 2, 2)})}), 3))},
        Case{"pp2dp2_zero3_interleaved_full_recompute_untied",
             with(interleaved(plan("z3ir", {replica(2, {stage(2, 0), stage(2, 1)}), replica(2, {stage(2, 2), stage(2, 3)})}), 2),
                  3, models::Recompute::kFull),
             8, 0, Activation::kGelu, 4, false},
        Case{"replicas_of_different_tp_zero3_heterogeneous",
             with(plan("dptpz3", {replica(2, {stage(2, 0, 2), stage(2, 2, 2)}), replica(2, {stage(2, 4, 1), stage(2, 5, 1)})}),
                  3),
             3, 3},
        Case{"replicas_tp2_tp1_zero3_sequence_parallel_swiglu",
             sequence_parallel(with(plan("dptpz3sp", {replica(2, {stage(4, 0, 2)}), replica(2, {stage(4, 2, 1)})}), 3)),
             3, 0, Activation::kSwiglu, 2, true}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace hetsim::exec
