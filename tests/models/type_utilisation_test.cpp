// SPDX-License-Identifier: Apache-2.0
// Throughput and MFU per GPU type (models/type_utilisation.hpp), on hand-computed cases.
#include <gtest/gtest.h>

#include "cost_test_util.hpp"
#include "type_utilisation.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::gpt_workload;
using testing::node_type;
using testing::round_gpu;

/// Node 0: four "fast" GPUs (400 TFLOP/s fp16), node 1: four "slow" (100 TFLOP/s).
Cluster fast_and_slow() {
  return cluster_of({node_type("f4", round_gpu("fast", 400e12), 4, 300e9, 25e9),
                     node_type("s4", round_gpu("slow", 100e12), 4, 300e9, 25e9)},
                    {{0, 1}, {1, 1}});
}

/// One replica: stage 0 = `first` layers on GPUs 0-3 (TP 4, fast), stage 1 the rest on 4-5 (TP 2, slow).
Plan two_stage_plan(int first, int layers, int micro_batches) {
  Plan p;
  p.micro_batch = 2;
  p.replicas.push_back({micro_batches, {{first, {0, 1, 2, 3}}, {layers - first, {4, 5}}}});
  return p;
}

TEST(TypeUtilisation, EachTypeDoesItsStagesModelFlops) {
  const Cluster c = fast_and_slow();
  const Workload w = gpt_workload(8, 1024, 16, 512, 16);
  const Plan p = two_stage_plan(6, 8, 8);
  const double step_s = 2.0;
  const std::vector<TypeUtilisation> u = utilisation_by_type(c, w, p, step_s);
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].gpu_type, "fast");
  EXPECT_EQ(u[0].gpus, 4);
  EXPECT_EQ(u[1].gpu_type, "slow");
  EXPECT_EQ(u[1].gpus, 2);
  // By hand: tokens = 8 micro-batches x 2 x 512 = 8192. Per token, a block does
  // 3 x (2 x 12 h^2 + 4 s h) = 3 x (25,165,824 + 2,097,152) = 81,788,928 FLOPs; the LM head
  // 3 x 2 x h x V = 6 x 1024 x 51200 = 314,572,800.
  const double tokens = 8192, block = 81788928.0, head = 314572800.0;
  const double fast_flop = tokens * 6 * block, slow_flop = tokens * (2 * block + head);
  EXPECT_NEAR(u[0].tflops_per_gpu, fast_flop / step_s / 4 / 1e12, 1e-9);
  EXPECT_NEAR(u[1].tflops_per_gpu, slow_flop / step_s / 2 / 1e12, 1e-9);
  EXPECT_NEAR(u[0].mfu, fast_flop / step_s / 4 / 400e12, 1e-12);
  EXPECT_NEAR(u[1].mfu, slow_flop / step_s / 2 / 100e12, 1e-12);
  // The types' FLOPs sum to the Report's model FLOPs of the step.
  const double per_type_sum = (u[0].tflops_per_gpu * 4 + u[1].tflops_per_gpu * 2) * 1e12 * step_s;
  EXPECT_NEAR(per_type_sum / (w.model.flops_per_token() * tokens), 1.0, 1e-12);
}

TEST(TypeUtilisation, PeakDtypeAndUnevenReplicas) {
  const Cluster c = fast_and_slow();
  const Workload w = gpt_workload(8, 1024, 16, 512, 16);
  // Two single-stage replicas of unequal micro-batch counts: GPU 0 (fast) 3, GPU 4 (slow) 1.
  Plan p;
  p.micro_batch = 4;
  p.replicas.push_back({3, {{8, {0}}}});
  p.replicas.push_back({1, {{8, {4}}}});
  const std::vector<TypeUtilisation> u = utilisation_by_type(c, w, p, 1.0, Dtype::kFp32);
  ASSERT_EQ(u.size(), 2u);
  EXPECT_NEAR(u[0].tflops_per_gpu / u[1].tflops_per_gpu, 3.0, 1e-12);
  // Over the fp32 peaks (a sixteenth of fp16 for round_gpu), as `run` reports MFU.
  EXPECT_NEAR(u[0].mfu, u[0].tflops_per_gpu * 1e12 / (400e12 / 16), 1e-12);
  EXPECT_TRUE(utilisation_by_type(c, w, p, 0.0).front().mfu == 0);  // no step, no rate
}

}  // namespace
}  // namespace hetsim::models
