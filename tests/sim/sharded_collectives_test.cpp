// SPDX-License-Identifier: Apache-2.0
// ZeRO-3 gathers and reduce-scatters of a data-parallel group that fills its nodes, at each
// GPU's NIC share (DeepSpeed ZeRO-3) or fanned out over the node's NICs (PyTorch FSDP;
// models::ShardedCollectives). Without prefetch every pass waits for its traffic, so the
// traffic shows in the step: the simulator's flows and the cost model's rings agree either way.
#include <gtest/gtest.h>

#include <variant>

#include "engine_inputs.hpp"
#include "predictor.hpp"

namespace hetsim::sim {
namespace {

using testing::both_feasible;
using testing::BothEngines;
using testing::load;

TEST(ShardedCollectives, FanOutOverTheNodesNicsAgreesWithTheSimulatedFlows) {
  // GPT-3 13B on 32 A100s of 4 DGX nodes (8 x 25 GB/s NICs each), two micro-batches per GPU.
  testing::Inputs in = load("dgx-a100.yaml", "gpt3-13b.yaml");
  in.workload.training.global_batch = 64;
  models::UniformPlanOptions o;
  o.micro_batch = 1;
  o.recompute = models::Recompute::kFull;
  o.zero = 3;
  models::Plan p = std::get<models::Plan>(models::make_uniform_plan(in.cluster, in.workload, 1, 1, 32, o));
  p.zero3_prefetch = false;
  p.name = "zero3 at each GPU's NIC share";
  const BothEngines member = both_feasible(in.cluster, in.workload, p);
  p.sharded_collectives = models::ShardedCollectives::kNodeNics;
  p.name = "zero3 over the nodes' NICs";
  const BothEngines fanned = both_feasible(in.cluster, in.workload, p);
  for (const BothEngines* e : {&member, &fanned}) {
    EXPECT_GT(e->analytic.breakdown.dp_comm_s, 0.1 * e->analytic.iteration_time_s) << "the traffic is what this test is about";
    EXPECT_NEAR(e->sim.iteration_time_s, e->analytic.iteration_time_s, 0.05 * e->analytic.iteration_time_s);
  }
  // Eight NICs instead of one per GPU's share: the traffic is several times shorter (the node's
  // fabric, 300 GB/s at NVSwitch efficiency, caps the fan-out below 8x).
  EXPECT_LT(fanned.analytic.breakdown.dp_comm_s, 0.25 * member.analytic.breakdown.dp_comm_s);
  EXPECT_LT(fanned.sim.breakdown.dp_comm_s, 0.25 * member.sim.breakdown.dp_comm_s);
}

}  // namespace
}  // namespace hetsim::sim
