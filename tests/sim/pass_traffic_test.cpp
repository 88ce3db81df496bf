// SPDX-License-Identifier: Apache-2.0
// ZeRO-2's reduce-scatters in every micro-batch's backward pass (models::pass_traffic) when the
// stages of a node share its NICs: both engines by the bytes each stage moves.
#include <gtest/gtest.h>

#include <vector>

#include "engine_inputs.hpp"
#include "predictor.hpp"

namespace hetsim::sim {
namespace {

using testing::both_feasible;
using testing::BothEngines;
using testing::plan_of;

// ZeRO-2 on boxes that each hold both stages of a TP-4 pipeline (14 | 10 layers, one box a
// replica): the two stages' per-micro-batch reduce-scatters share the box's one NIC. The cost
// model gave each stage half the NIC for all its bytes (the larger stage 2 T_0 where the NIC
// carries T_0 + T_1): 66.3 s against 58.1 s simulated overlapped, 72.9 s against 64.8 s waited
// for (s59 what-if hunt). Processor sharing over the node's stages (grad_sync_pass_traffic.cpp
// shared_nic_scatter_s): 58.5 s and 65.1 s.
TEST(PassTraffic, ZeroTwoStagesOnOneNicShareItByTheirBytes) {
  testing::Inputs in = testing::load("consumer-4090-a100.yaml", "gpt3-1.3b.yaml");
  std::vector<models::Replica> replicas;
  for (const int box : {0, 8, 16, 32})  // three RTX 4090 boxes and the A100 node
    replicas.push_back(models::Replica{64, {models::Stage{14, {box, box + 1, box + 2, box + 3}},
                                            models::Stage{10, {box + 4, box + 5, box + 6, box + 7}}}});
  models::Plan p = plan_of("two TP-4 stages a box, ZeRO-2", 2, std::move(replicas));
  p.micro_batch = 2;
  for (const bool overlapped : {false, true}) {
    p.overlap_grad_sync = overlapped;
    const BothEngines e = both_feasible(in.cluster, in.workload, p);
    EXPECT_NEAR(e.analytic.iteration_time_s, e.sim.iteration_time_s, 0.02 * e.sim.iteration_time_s) << overlapped;
  }
}

}  // namespace
}  // namespace hetsim::sim
