// SPDX-License-Identifier: Apache-2.0
// Host-staged (AMD <-> NVIDIA) transfers: an overlapped gradient sync, each bucket's copies
// through host memory, in both engines and both simulator modes; pipeline sends into one GPU.
#include <gtest/gtest.h>

#include <cstdio>

#include "engine_inputs.hpp"
#include "sim_report.hpp"
#include "simulator.hpp"
#include "test_clusters.hpp"

namespace hetsim::sim {
namespace {

// GPT-3 2.7B data parallel over one H100 and one MI300X, ZeRO-0, the gradient all-reduce
// overlapped with the backward pass in Megatron-Core's buckets. With 16 GB/s host links the
// staged copies (12.8 GB/s) are slower than the 50 GB/s NICs, so each bucket's hop waits its
// copies' excess over the network transfer. A bucket copies its own share of the gradient: the
// simulator waited the whole gradient's excess after every bucket: 10.9 s a step, folded and
// unfolded, of which 9.5 s exposed sync, against 1.73 s and 0.30 s analytic; now 1.73 and 0.30.
TEST(StagedSync, ABucketWaitsTheCopiesOfItsOwnShare) {
  testing::Inputs in = testing::load("h100-mi300x.yaml", "gpt3-2.7b.yaml");
  for (auto& type : in.cluster.node_types) type.host_link_Bps = 16e9;
  in.workload.training.global_batch = 16;
  models::Plan p = testing::plan_of("one H100 and one MI300X, ZeRO-0, overlapped", 0,
                                    {models::Replica{8, {models::Stage{32, {0}}}},
                                     models::Replica{8, {models::Stage{32, {16}}}}});
  p.overlap_grad_sync = true;
  p.recompute = models::Recompute::kFull;
  const testing::BothEngines folded = testing::both_feasible(in.cluster, in.workload, p);
  testing::expect_syncs_agree(folded, 0.1, 0.05, 0.02);
  SimOptions unfold;
  unfold.fold = false;
  const models::Report unfolded = simulate_report_in_child(in.cluster, in.workload, p, unfold);
  ASSERT_TRUE(unfolded.feasible) << unfolded.infeasible_reason;
  std::printf("unfolded %.4f s (dp %.4f s)\n", unfolded.iteration_time_s, unfolded.breakdown.dp_comm_s);
  EXPECT_NEAR(unfolded.breakdown.dp_comm_s, folded.sim.breakdown.dp_comm_s, 0.05 * folded.sim.breakdown.dp_comm_s);
}

// A pipeline send from a TP-8 H100 stage to a TP-4 MI300X stage: each MI300X rank receives two
// of the activation's eight slices and copies both through its host link. The simulator waited
// each flow's own copy (the flows into one GPU shared nothing); both engines now share the
// receiver's host link (models::staged_send_path, Runtime::send_staging_delay).
TEST(StagedSends, FlowsIntoOneGpuShareItsHostLink) {
  testing::Inputs in = testing::load("h100-mi300x.yaml", "gpt3-2.7b.yaml");
  for (auto& type : in.cluster.node_types) type.host_link_Bps = 16e9;
  in.workload.training.global_batch = 8;
  const models::Plan p = testing::plan_of(
      "TP 8 H100 stage to a TP 4 MI300X stage", 0,
      {models::Replica{8, {models::Stage{16, {0, 1, 2, 3, 4, 5, 6, 7}}, models::Stage{16, {16, 17, 18, 19}}}}});
  const testing::BothEngines both = testing::both_feasible(in.cluster, in.workload, p);
  // The copies the share adds are ~0.1 ms of a 0.39 s step (the forward sends of 1.3 MB slices at
  // 12.8 GB/s, twice): the engines agree far closer than that.
  EXPECT_NEAR(both.sim.iteration_time_s, both.analytic.iteration_time_s, 1e-4 * both.analytic.iteration_time_s);
}

}  // namespace
}  // namespace hetsim::sim
