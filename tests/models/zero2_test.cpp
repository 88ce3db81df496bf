// SPDX-License-Identifier: Apache-2.0
// ZeRO-2 keeps a rank's shard of the gradients only, so it reduce-scatters them after every
// backward (DeepSpeed stage 2, deepspeedai/DeepSpeed#2252): every micro-batch but the last in its
// passes, the last at the end of the step as ZeRO-1 does (models/comm_cost.hpp pass_traffic).
#include <gtest/gtest.h>

#include "comm_cost.hpp"
#include "cost_test_util.hpp"
#include "predictor.hpp"
#include "topology.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::node_type;
using testing::round_gpu;

struct Case {
  Cluster cluster = cluster_of({node_type("box", round_gpu("box", 300e12), 8, 300e9, 25e9)}, {{0, 2}});
  Workload workload = testing::gpt_workload(8, 4096, 32, 2048, 64);

  Plan plan(int zero, int micro_batch, bool overlap = false) const {
    UniformPlanOptions o;
    o.micro_batch = micro_batch;
    o.zero = zero;
    o.overlap_grad_sync = overlap;
    return std::get<Plan>(make_uniform_plan(cluster, workload, 1, 1, 16, o));
  }
  /// One reduce-scatter of a stage's gradients as every pass runs it.
  double pass_reduce_scatter_s(const Plan& p) const {
    const PlanWork work = build_plan_work(cluster, workload, p);
    const DpGroup& grp = work.dp_groups.front();
    return sharded_collective_time(CollectiveKind::kReduceScatter, grp.size_bytes, group_cost(cluster, grp.gpus), ShardedCollectives::kMemberNic);
  }
};

TEST(ZeroTwo, EveryMicroBatchButTheLastReducesInItsBackwardPass) {
  const Case c;
  // 64 sequences over 16 replicas: micro-batch 4 is one micro-batch each, 1 is four.
  const Report one_z1 = predict(c.cluster, c.workload, c.plan(1, 4));
  const Report one_z2 = predict(c.cluster, c.workload, c.plan(2, 4));
  ASSERT_TRUE(one_z2.feasible) << one_z2.infeasible_reason;
  EXPECT_DOUBLE_EQ(one_z2.iteration_time_s, one_z1.iteration_time_s);  // one micro-batch: ZeRO-1's sync
  const Plan z2 = c.plan(2, 1);
  ASSERT_EQ(z2.replicas[0].micro_batches, 4);
  const Report four_z1 = predict(c.cluster, c.workload, c.plan(1, 1));
  const Report four_z2 = predict(c.cluster, c.workload, z2);
  ASSERT_TRUE(four_z2.feasible) << four_z2.infeasible_reason;
  // Not hidden (no overlapped sync): three more reduce-scatters, each after its backward.
  EXPECT_NEAR(four_z2.iteration_time_s - four_z1.iteration_time_s, 3 * c.pass_reduce_scatter_s(z2), 1e-9);
  EXPECT_NEAR(four_z2.breakdown.dp_comm_s - four_z1.breakdown.dp_comm_s, 3 * c.pass_reduce_scatter_s(z2), 1e-9);
  // Overlapped with the backward, a pass lasts max(backward, reduce-scatter).
  const Report hidden = predict(c.cluster, c.workload, c.plan(2, 1, true));
  const double b = hidden.stages[0].backward_s;
  const Report hidden_z1 = predict(c.cluster, c.workload, c.plan(1, 1, true));
  EXPECT_NEAR(hidden.iteration_time_s - hidden_z1.iteration_time_s,
              3 * std::max(0.0, c.pass_reduce_scatter_s(z2) - b), 1e-9);
}

TEST(ZeroTwo, ReplicasPairTheirPerPassReductionsUp) {
  const Case c;
  Plan p = c.plan(2, 1);
  p.replicas[0].micro_batches = 5;  // 5 + 3 + 4 x 14 = 64: uneven counts
  p.replicas[1].micro_batches = 3;
  const Report uneven = predict(c.cluster, c.workload, p);
  EXPECT_FALSE(uneven.feasible);
  EXPECT_NE(uneven.infeasible_reason.find("ZeRO-2 needs every replica to run the same number of micro-batches"),
            std::string::npos)
      << uneven.infeasible_reason;
  // One micro-batch each: the only reduction is the end-of-step one, which uneven plans can run.
  Plan single = c.plan(2, 4);
  EXPECT_EQ(zero3_asymmetry(single), "");
  EXPECT_TRUE(predict(c.cluster, c.workload, single).feasible);
}

}  // namespace
}  // namespace hetsim::models
