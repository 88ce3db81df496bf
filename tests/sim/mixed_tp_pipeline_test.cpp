// SPDX-License-Identifier: Apache-2.0
// Pipeline sends between stages of different TP degrees: each rank of the sending stage sends
// its 1/t slice, so the boundary tensor crosses once each way (the activation forward from the
// TP-2 stage in two halves, its gradient back from the TP-1 stage whole). Both engines move these
// bytes; before, the cost model sent the whole tensor from every rank, and the simulator sent the
// gradient in slices of the receiver's TP degree (twice the tensor from a TP-2 stage to a TP-1 one).
#include <gtest/gtest.h>

#include "engine_inputs.hpp"
#include "plan_work.hpp"
#include "predictor.hpp"

namespace hetsim::sim {
namespace {

using testing::a100_l4_mix;
using testing::both_feasible;
using testing::BothEngines;
using testing::plan_of;

TEST(MixedTpPipeline, EachSendingRankSendsItsSliceBothWays) {
  // Stage 0: TP 2 on the A100 box (GPUs 0-1); stage 1: TP 1 on an L4 box (GPU 4). One Ethernet
  // NIC per node: each direction moves the whole boundary tensor through one NIC.
  const testing::Inputs in = a100_l4_mix(24);
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  const int half = w.model.layers / 2;
  const models::Plan p = plan_of("tp2 | tp1", 1, {models::Replica{24, {models::Stage{half, {0, 1}},
                                                                       models::Stage{w.model.layers - half, {4}}}}});
  const models::PlanWork work = models::build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const models::StageWork& tp2 = work.replicas[0][0];
  const models::StageWork& tp1 = work.replicas[0][1];
  const double boundary = static_cast<double>(w.model.seq_len) * w.model.hidden * 2;  // s*b*h, 16-bit
  EXPECT_DOUBLE_EQ(tp2.activation_send_bytes, boundary / 2);
  EXPECT_DOUBLE_EQ(tp1.activation_send_bytes, boundary);
  // Forward, two halves at once out of the A100 box's NIC and into the L4 box's (two flows on each
  // side); backward, one whole tensor, one flow on each side: the same time each way. (Priced at
  // the busier node's GPU count both ways, the backward took twice that until 2026-12-02.)
  EXPECT_GT(tp2.p2p_forward_s, 0.0);
  EXPECT_NEAR(tp1.p2p_backward_s, tp2.p2p_forward_s, 0.05 * tp1.p2p_backward_s);  // latency counted once each
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_GT(e.analytic.breakdown.pp_comm_s, 0.0);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.005 * e.analytic.iteration_time_s);
}

// Two replicas, TP 1 on an L4 box sending to TP 2 on the A100 box: forward, two whole tensors
// leave the L4 box and arrive at the two first ranks of the A100 box (two flows a side);
// backward, four halves leave the A100 box and arrive two each at the L4 GPUs (four flows a
// side). Each side of a NIC is shared by the flows crossing it that way, as the simulator's
// up and down links are: the two engines agree.
TEST(MixedTpPipeline, EachSideOfANicIsSharedByTheFlowsCrossingItThatWay) {
  const testing::Inputs in = a100_l4_mix(24);
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  const int half = w.model.layers / 2;
  const models::Plan p = plan_of("tp1 | tp2, twice", 1,
                                 {models::Replica{12, {models::Stage{half, {4}}, models::Stage{w.model.layers - half, {0, 1}}}},
                                  models::Replica{12, {models::Stage{half, {5}}, models::Stage{w.model.layers - half, {2, 3}}}}});
  const models::PlanWork work = models::build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const models::StageWork& tp1 = work.replicas[0][0];
  const models::StageWork& tp2 = work.replicas[0][1];
  // Forward: a whole tensor at half of each NIC; backward: a half at a quarter: the same time.
  EXPECT_GT(tp1.p2p_forward_s, 0.0);
  EXPECT_NEAR(tp2.p2p_backward_s, tp1.p2p_forward_s, 0.05 * tp1.p2p_forward_s);
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_GT(e.analytic.breakdown.pp_comm_s, 0.0);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.02 * e.analytic.iteration_time_s);
}

}  // namespace
}  // namespace hetsim::sim
