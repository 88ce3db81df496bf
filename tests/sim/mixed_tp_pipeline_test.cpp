// SPDX-License-Identifier: Apache-2.0
// Pipeline sends between stages of different TP degrees: each rank of the sending stage sends
// its 1/t slice, so the boundary tensor crosses once each way (the activation forward from the
// TP-2 stage in two halves, its gradient back from the TP-1 stage whole). Both engines move these
// bytes; before, the cost model sent the whole tensor from every rank, and the simulator sent the
// gradient in slices of the receiver's TP degree (twice the tensor from a TP-2 stage to a TP-1 one).
// Each send shares the NICs, their rails and the WAN links only with the flows of its own boundary
// (and of the same boundary of other replicas), each checked against a hand figure.
#include <gtest/gtest.h>

#include <string>

#include "engine_inputs.hpp"
#include "plan_work.hpp"
#include "predictor.hpp"
#include "topology.hpp"

namespace hetsim::sim {
namespace {

using testing::a100_l4_mix;
using testing::both_feasible;
using testing::BothEngines;
using testing::plan_of;

/// GPT-3 1.3B on a cluster of clusters/, at a global batch of `global_batch` sequences.
testing::Inputs gpt3_on(const std::string& cluster, int global_batch) {
  testing::Inputs in = testing::load(cluster, "gpt3-1.3b.yaml");
  in.workload.training.global_batch = global_batch;
  return in;
}

/// The tensor a stage hands to the next for a micro-batch of one sequence: s*b*h, 16-bit.
double boundary_bytes(const models::Workload& w) { return static_cast<double>(w.model.seq_len) * w.model.hidden * 2; }

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
  const double boundary = boundary_bytes(w);
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

// A TP-2 stage on a 4090 box (GPUs 16-17) between a TP-2 stage (GPUs 6-7) and a TP-4 stage
// (GPUs 0-3) of another box: both its neighbours sit on node 0, one 25 Gb/s port a node. Its
// activation leaves in two halves (GPUs 16, 17 to ranks pipeline_peer 0 and 2 of the TP-4 stage),
// its gradient in two halves to GPUs 6 and 7: two flows through node 2's port and two into node
// 0's each time, one send after the other (each once its pass is done); no other stage sends out
// of node 2 or into node 0. Hand figure of each send: s h b 2 bytes = 8 MiB through one port at
// 25 Gb/s x 0.85 = 2.656 GB/s, 3.158 ms, plus 2 x 20 us of NIC and 5 us of switch latency:
// 3.203 ms. (The cost model counted every flow into node 0 as concurrent, four, and priced each
// send at 6.36 ms: 153 ms of pipeline sends against the simulator's 77 ms.)
TEST(MixedTpPipeline, AStageSendsItsActivationAndItsGradientOneAfterTheOther) {
  testing::Inputs in = gpt3_on("consumer-4090-a100.yaml", 12);
  // Untied: the first and last stages' embedding sync inside node 0 is not what this test is about
  // (the engines differ on it by 4 ms).
  in.workload.model.tied_embeddings = false;
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  const models::Plan p = plan_of("tp2 | tp2 | tp4, two stages on node 0", 1,
                                 {models::Replica{12, {models::Stage{4, {6, 7}}, models::Stage{16, {16, 17}},
                                                       models::Stage{4, {0, 1, 2, 3}}}}});
  const models::PlanWork work = models::build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const models::NodeType& box = c.node_types[c.nodes[c.gpus[16].node].node_type];
  const double boundary = boundary_bytes(w);
  const double latency = 2 * box.nics.latency_s + c.zones[0].fabric.latency_s;
  const double send = latency + boundary / models::achieved_bandwidth_Bps(box.nics);  // two halves, one port
  EXPECT_NEAR(send, 3.203e-3, 1e-6);
  const models::StageWork& middle = work.replicas[0][1];
  EXPECT_NEAR(middle.p2p_forward_s, send, 1e-3 * send);
  EXPECT_NEAR(middle.p2p_backward_s, send, 1e-3 * send);
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_NEAR(e.analytic.breakdown.pp_comm_s, 12 * 2 * send, 0.01 * 12 * 2 * send);
  EXPECT_NEAR(e.sim.breakdown.pp_comm_s, 12 * 2 * send, 0.01 * 12 * 2 * send);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.002 * e.analytic.iteration_time_s);
}

// One pipeline across two zones and back, TP 1 (H100 GPU 43, us-west) | TP 8 (A100 GPUs 0-7,
// us-east) | TP 2 (H100 GPUs 56-57, us-west): every send of each boundary crosses the 100 Gb/s WAN
// link with the whole tensor, one flow per rank of the sending stage, while the other boundary
// computes. Hand figure of each send: 8 MiB at 100 Gb/s x 0.85 = 10.625 GB/s, 0.790 ms, plus the
// link's 30 ms, 2 x 2 us of NICs and 5 us of fabric: 30.798 ms. (The cost model summed the TP
// degrees of every boundary crossing the link, 16, and sent the first stage's one flow at 1/16
// of it: 42.6 ms.)
TEST(MixedTpPipeline, EachBoundaryHasTheWanLinkToItself) {
  const testing::Inputs in = gpt3_on("geo-two-zones.yaml", 8);
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  const models::Plan p = plan_of("tp1 west | tp8 east | tp2 west", 1,
                                 {models::Replica{8, {models::Stage{8, {43}}, models::Stage{8, {0, 1, 2, 3, 4, 5, 6, 7}},
                                                      models::Stage{8, {56, 57}}}}});
  const models::PlanWork work = models::build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  ASSERT_EQ(c.links.size(), 1u);
  const double boundary = boundary_bytes(w);
  const double latency = c.links[0].latency_s + 2 * 2e-6 + 5e-6;
  const double send = latency + boundary / (c.links[0].bandwidth_Bps * models::kWanLinkEfficiency);
  EXPECT_NEAR(send, 30.798e-3, 1e-6);
  const auto& stages = work.replicas[0];
  EXPECT_NEAR(stages[0].p2p_forward_s, send, 1e-3 * send) << "one whole tensor";
  EXPECT_NEAR(stages[1].p2p_forward_s, send, 1e-3 * send) << "eight eighths";
  EXPECT_NEAR(stages[1].p2p_backward_s, send, 1e-3 * send) << "eight eighths into GPU 43";
  EXPECT_NEAR(stages[2].p2p_backward_s, send, 1e-3 * send) << "two halves";
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_NEAR(e.sim.breakdown.pp_comm_s, e.analytic.breakdown.pp_comm_s, 0.01 * e.analytic.breakdown.pp_comm_s);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.002 * e.analytic.iteration_time_s);
}

// TP 8 on a DGX A100 (GPUs 0-7, a 200 Gb/s HDR rail each) to TP 1 on the next one (GPU 8): the
// eight eighths of the activation leave through eight rails but all arrive through GPU 8's one.
// Hand figure: 8 MiB at 200 Gb/s x 0.94 = 23.5 GB/s, 0.357 ms, plus 2 x 2 us of NICs and 5 us
// of fabric: 0.366 ms. (Counted as eight receivers filling the rails in order, one a rail, the
// cost model took 0.054 ms.)
TEST(MixedTpPipeline, FlowsIntoOneGpuShareItsRail) {
  const testing::Inputs in = gpt3_on("geo-two-zones.yaml", 8);
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  const models::Plan p = plan_of("tp8 | tp1 on the next DGX", 0,
                                 {models::Replica{8, {models::Stage{12, {0, 1, 2, 3, 4, 5, 6, 7}}, models::Stage{12, {8}}}}});
  const models::PlanWork work = models::build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const models::NodeType& dgx = c.node_types[c.nodes[0].node_type];
  const double boundary = boundary_bytes(w);
  const double send = 2 * dgx.nics.latency_s + c.zones[0].fabric.latency_s + boundary / models::achieved_bandwidth_Bps(dgx.nics);
  EXPECT_NEAR(send, 0.366e-3, 1e-6);
  EXPECT_NEAR(work.replicas[0][0].p2p_forward_s, send, 1e-3 * send);
  EXPECT_NEAR(work.replicas[0][1].p2p_backward_s, send, 1e-3 * send) << "one whole tensor out of GPU 8's rail";
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.0002 * e.analytic.iteration_time_s);
}

// Found by scripts/engine_diff.py (seed 3). Two replicas send their boundary across the WAN link
// from the east at once (in step, as the cost model takes a boundary's replicas): replica 0 from
// TP 4 (A100s 20-23) to TP 1 (H100 48), replica 1 from TP 2 (A100s 14-15) to TP 8 (H100s 56-63).
// Back, replica 0's one flow carries the whole gradient and replica 1's eight an eighth each.
// Shared by their bytes, the link carries two tensors each way: hand figure 30 ms + 2 tensors at
// 100 Gb/s x 0.85 + NIC and fabric latency, for every send of either replica. (By flow count,
// replica 0's one flow got a ninth of the link: 44 ms a send, 88 ms too much in the step.)
TEST(MixedTpPipeline, ReplicasShareAWanLinkByTheirBytes) {
  const testing::Inputs in = gpt3_on("geo-two-zones.yaml", 26);
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  models::Plan p = plan_of("tp4 east | tp1 west beside tp2 east | tp8 west", 0,
                           {models::Replica{7, {models::Stage{6, {20, 21, 22, 23}}, models::Stage{18, {48}}}},
                            models::Replica{6, {models::Stage{5, {14, 15}}, models::Stage{19, {56, 57, 58, 59, 60, 61, 62, 63}}}}});
  p.micro_batch = 2;
  p.recompute = models::Recompute::kFull;
  const models::PlanWork work = models::build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const double tensor = 2 * boundary_bytes(w);  // micro-batch 2
  const double send = c.links[0].latency_s + 2 * 2e-6 + 5e-6 + 2 * tensor / (c.links[0].bandwidth_Bps * models::kWanLinkEfficiency);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NEAR(work.replicas[r][0].p2p_forward_s, send, 1e-3 * send) << "replica " << r;
    EXPECT_NEAR(work.replicas[r][1].p2p_backward_s, send, 1e-3 * send) << "replica " << r;
  }
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_NEAR(e.sim.breakdown.pp_comm_s, e.analytic.breakdown.pp_comm_s, 0.05 * e.sim.breakdown.pp_comm_s);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.02 * e.sim.iteration_time_s);
}

// Found by scripts/engine_diff.py (seed 3). Two replicas in step on the 4090 + A100 lab cluster
// (one 25 Gb/s port a node): replica 0 from TP 8 on a 4090 box (GPUs 0-7) to TP 2 on an A100 node
// (GPUs 32-33), replica 1 from TP 4 on another box (GPUs 20-23) to TP 2 on the same A100 node
// (GPUs 36-37). Eight eighths and four quarters of the activation arrive through the A100 node's
// one port: two tensors. Shared by their bytes, every flow ends with the port's two tensors:
// hand figure 2 tensors at 25 Gb/s x 0.85 + 2 x 20 us of NICs + 5 us of switch, for either
// replica's forward send. (By flow count a quarter got a twelfth of the port: 1.5x that.)
TEST(MixedTpPipeline, ReplicasShareANicByTheirBytes) {
  const testing::Inputs in = gpt3_on("consumer-4090-a100.yaml", 16);
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  models::Plan p = plan_of("tp8 box | tp2 A100 beside tp4 box | tp2 A100", 0,
                           {models::Replica{8, {models::Stage{12, {0, 1, 2, 3, 4, 5, 6, 7}}, models::Stage{12, {32, 33}}}},
                            models::Replica{8, {models::Stage{12, {20, 21, 22, 23}}, models::Stage{12, {36, 37}}}}});
  const models::PlanWork work = models::build_plan_work(c, w, p);
  ASSERT_TRUE(work.feasible) << work.infeasible_reason;
  const models::NodeType& a100 = c.node_types[c.nodes[c.gpus[32].node].node_type];
  const double send = 2 * a100.nics.latency_s + c.zones[0].fabric.latency_s +
                      2 * boundary_bytes(w) / models::achieved_bandwidth_Bps(a100.nics);
  for (int r = 0; r < 2; ++r) EXPECT_NEAR(work.replicas[r][0].p2p_forward_s, send, 1e-3 * send) << "replica " << r;
  // The replicas' stages compute at different speeds, so the simulator's sends meet only in
  // part (its pipeline sends take half the cost model's, which takes them in step: the known
  // limit of docs/cost_model.md); the step agrees within 2%.
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.02 * e.sim.iteration_time_s);
}


// Llama-2 7B interleaved (two chunks a stage) over an H100 (12 layers), four MI300Xs at TP 4 (10)
// and another H100 (10), 12 micro-batches: stages of unequal times. The cost model took the
// interleaved closed form m x slowest + (sum - slowest) / v, 1.95 s against 1.88 s simulated
// (bubble 96 against 26 ms); it now times the schedule's passes as the simulator runs them
// (models::pipeline_time, interleaved_makespan).
TEST(MixedTpPipeline, InterleavedStagesOfUnequalTimesRunTheirSchedule) {
  testing::Inputs in = testing::load("h100-mi300x.yaml", "llama2-7b.yaml");
  in.workload.training.global_batch = 12;
  models::Plan p = plan_of("interleaved H100 | MI300X TP4 | H100", 0,
                           {models::Replica{12, {models::Stage{12, {0}}, models::Stage{10, {16, 17, 18, 19}},
                                                 models::Stage{10, {8}}}}});
  p.schedule = models::Schedule::kInterleaved;
  p.interleave = 2;
  const BothEngines e = both_feasible(in.cluster, in.workload, p);
  EXPECT_NEAR(e.analytic.iteration_time_s, e.sim.iteration_time_s, 0.01 * e.sim.iteration_time_s);
  EXPECT_NEAR(e.analytic.breakdown.bubble_s, e.sim.breakdown.bubble_s, 0.02 * e.sim.iteration_time_s);
}


// GPT-3 6.7B interleaved over a MI300X (24 layers) and an H100 (8), two micro-batches: the
// last stage's last chunk carries the LM head and its loss (51200-word vocabulary: about a
// layer's work), so the chunks of that stage are not alike. The cost model had cut each stage's
// time evenly over its chunks: 0.367 s against 0.371 s simulated (bubble 7.0 against 10.9 ms;
// with an A100 in the H100's place, clusters/bench1024.yaml, 0.437 against 0.453 s); it now times
// the first and last chunk as computed (StageCost::first_chunk, last_chunk), and the engines agree.
TEST(MixedTpPipeline, AnInterleavedStagesLastChunkCarriesTheHead) {
  testing::Inputs in = testing::load("h100-mi300x.yaml", "gpt3-6.7b.yaml");
  in.workload.training.global_batch = 2;
  models::Plan p = plan_of("interleaved MI300X | H100", 0, {models::Replica{2, {models::Stage{24, {16}}, models::Stage{8, {0}}}}});
  p.schedule = models::Schedule::kInterleaved;
  p.interleave = 2;
  const BothEngines e = both_feasible(in.cluster, in.workload, p);
  EXPECT_NEAR(e.analytic.iteration_time_s, e.sim.iteration_time_s, 0.005 * e.sim.iteration_time_s);
  EXPECT_NEAR(e.analytic.breakdown.bubble_s, e.sim.breakdown.bubble_s, 0.002 * e.sim.iteration_time_s);
}

}  // namespace
}  // namespace hetsim::sim
