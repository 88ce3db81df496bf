// SPDX-License-Identifier: Apache-2.0
// Pipeline sends of a plan that leaves GPUs idle go out on the rails of the GPUs it uses: a node
// with a NIC per pair of GPUs gives pipelines on GPUs 0 and 2 a NIC each, on GPUs 0 and 1 one
// NIC between them (Evaluation::path_senders; sim/sim_topology.cpp wires GPUs to rails alike).
#include <gtest/gtest.h>

#include "cost_test_util.hpp"
#include "predictor.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::gpt_workload;
using testing::node_type;
using testing::round_gpu;

/// Two one-GPU-a-stage pipelines of two stages: stage 0 on node 0's `first` GPUs, stage 1 on
/// the same GPUs of node 1 (GPU + 8).
Plan two_pipelines_on(int first_a, int first_b) {
  Plan p;
  p.micro_batch = 1;
  for (int g : {first_a, first_b}) {
    Replica r;
    r.micro_batches = 4;
    r.stages.resize(2);
    r.stages[0].layers = r.stages[1].layers = 2;
    r.stages[0].gpus = {g};
    r.stages[1].gpus = {g + 8};
    p.replicas.push_back(r);
  }
  return p;
}

TEST(PipelineRails, IdleGpusLeaveTheUsedGpusTheirOwnRails) {
  NodeType box = node_type("box", round_gpu("a", 100e12), 8, 300e9, 25e9);
  box.nics.count = 4;  // GPUs 0-1 on rail 0, 2-3 on rail 1, ...
  const Cluster c = cluster_of({box}, {{0, 2}});
  Workload w = gpt_workload(4, 4096, 32, 2048, 8);
  w.model.tied_embeddings = false;
  const Report own_rails = predict(c, w, two_pipelines_on(0, 2));
  const Report one_rail = predict(c, w, two_pipelines_on(0, 1));
  ASSERT_TRUE(own_rails.feasible) << own_rails.infeasible_reason;
  ASSERT_TRUE(one_rail.feasible) << one_rail.infeasible_reason;
  // One NIC each moves the sends in about half the time of one NIC shared (latency aside).
  EXPECT_NEAR(own_rails.breakdown.pp_comm_s / one_rail.breakdown.pp_comm_s, 0.5, 0.02);
}

}  // namespace
}  // namespace hetsim::models
