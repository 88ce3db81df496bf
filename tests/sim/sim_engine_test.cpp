// SPDX-License-Identifier: Apache-2.0
// The simulator as an engine on real inputs (clusters/, workloads/, plans/ of the repository):
// agreement with the cost model on contention-free plans, determinism, the Report wire format
// and the Chrome trace.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <set>
#include <string>
#include <variant>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "predictor.hpp"
#include "sim_report.hpp"
#include "engine_inputs.hpp"
#include "test_clusters.hpp"
#include "trace_writer.hpp"

namespace hetsim::sim {
namespace {

using testing::a100_l4_mix;
using testing::both_feasible;
using testing::BothEngines;
using testing::Inputs;
using testing::load;
using testing::plan_of;

// Contention-free plans (each stage's traffic on its own links, one NIC per GPU, no WAN):
// the simulator and the cost model start from the same op costs and link figures and agree
// within 3% (the bound).
TEST(SimEngine, AgreesWithTheCostModelOnContentionFreePlans) {
  for (const auto& [cluster, workload, plan] :
       {std::tuple{"dgx-a100.yaml", "llama2-7b.yaml", "dgx-a100-tp4-pp2-dp4.yaml"},
        std::tuple{"dgx-a100.yaml", "llama2-7b.yaml", "dgx-a100-tp8-pp1-dp4.yaml"}}) {
    const Inputs in = load(cluster, workload, plan);
    const double analytic = models::predict(in.cluster, in.workload, in.plan).iteration_time_s;
    const models::Report sim = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{});
    ASSERT_TRUE(sim.feasible) << plan << ": " << sim.infeasible_reason;
    EXPECT_EQ(sim.engine, "sim");
    std::printf("%s: analytic %.4f s, simulated %.4f s\n", plan, analytic, sim.iteration_time_s);
    EXPECT_NEAR(sim.iteration_time_s, analytic, 0.03 * analytic) << plan;
  }
}

// TP communication overlapped with the GEMMs (Plan::tp_comm_overlap): the simulator runs each
// all-gather / reduce-scatter beside its GEMM as the cost model prices the pair, max(GEMM,
// collective); both engines agree, and the step is shorter than without the overlap but no
// shorter than with no TP traffic at all.
TEST(SimEngine, OverlappedTpCommunicationAgreesWithTheCostModel) {
  Inputs in = load("dgx-a100.yaml", "llama2-7b.yaml", "dgx-a100-tp8-pp1-dp4.yaml");
  in.plan.sequence_parallel = true;
  const models::Report plain = models::predict(in.cluster, in.workload, in.plan);
  in.plan.tp_comm_overlap = true;
  const models::Report overlapped = models::predict(in.cluster, in.workload, in.plan);
  ASSERT_TRUE(plain.feasible && overlapped.feasible);
  EXPECT_LT(overlapped.iteration_time_s, plain.iteration_time_s - 0.5 * plain.breakdown.tp_comm_s);
  EXPECT_LT(overlapped.breakdown.tp_comm_s, 0.2 * plain.breakdown.tp_comm_s);  // GEMMs outlast the collectives
  const models::Report sim = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{});
  ASSERT_TRUE(sim.feasible) << sim.infeasible_reason;
  std::printf("tp_comm_overlap: analytic %.4f s (%.4f without), simulated %.4f s\n", overlapped.iteration_time_s,
              plain.iteration_time_s, sim.iteration_time_s);
  EXPECT_NEAR(sim.iteration_time_s, overlapped.iteration_time_s, 0.03 * overlapped.iteration_time_s);
}

// Pipeline sends beside the compute and no host sync per pass (Plan::overlap_p2p_comm): the
// simulator posts each send from a helper actor and goes on with the next chunk, as the cost
// model prices a stage at max(passes, sends) with passes that carry no leading host stall; both
// engines find the interleaved step shorter than with Megatron-LM's waited sends, and agree.
TEST(SimEngine, OverlappedPipelineSendsAgreeWithTheCostModel) {
  Inputs in = load("dgx-a100.yaml", "llama2-7b.yaml", "dgx-a100-tp4-pp2-dp4.yaml");
  in.plan.schedule = models::Schedule::kInterleaved;
  in.plan.interleave = 4;
  const models::Report plain = models::predict(in.cluster, in.workload, in.plan);
  const models::Report plain_sim = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{});
  in.plan.overlap_p2p_comm = true;
  const models::Report overlapped = models::predict(in.cluster, in.workload, in.plan);
  const models::Report sim = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{});
  ASSERT_TRUE(plain.feasible && overlapped.feasible && plain_sim.feasible && sim.feasible) << sim.infeasible_reason;
  std::printf("overlap_p2p_comm: analytic %.4f s (%.4f without), simulated %.4f s (%.4f without)\n",
              overlapped.iteration_time_s, plain.iteration_time_s, sim.iteration_time_s, plain_sim.iteration_time_s);
  EXPECT_LT(overlapped.iteration_time_s, 0.97 * plain.iteration_time_s);
  EXPECT_LT(sim.iteration_time_s, 0.97 * plain_sim.iteration_time_s);
  EXPECT_EQ(overlapped.breakdown.pp_comm_s, 0.0);  // 25 GB/s a GPU: the sends hide behind the compute
  EXPECT_NEAR(sim.iteration_time_s, overlapped.iteration_time_s, 0.03 * overlapped.iteration_time_s);
}

// ZeRO-3 on a 2:1 fat tree: every replica's weight gathers and gradient reduce-scatters meet on
// the oversubscribed uplinks during every pass. Folded (a block of replicas, one flow per actor)
// the simulator left half of that traffic out and found the step twice as fast as both the cost
// model and its own unfolded run.
TEST(SimEngine, ZeroThreeOnAnOversubscribedFabricKeepsEveryReplicasTraffic) {
  testing::NodeSpec spec;
  spec.nics = 8;
  spec.nic_Bps = 25e9;
  models::Cluster c = testing::one_zone(8, spec, 5e-6, 2.0);
  const std::string root = HETSIM_SOURCE_DIR;
  const auto catalog = models::load_catalog_dir(root + "/clusters/catalog");
  c.node_types[0].gpu = catalog.by_name("a100-sxm4-80gb");
  models::Workload w = models::load_workload(root + "/workloads/llama2-7b.yaml");
  w.training.global_batch = 16;
  models::UniformPlanOptions o;
  o.zero = 3;
  const auto made = models::make_uniform_plan(c, w, 4, 1, 16, o);
  ASSERT_TRUE(std::holds_alternative<models::Plan>(made));
  const models::Plan& p = std::get<models::Plan>(made);
  const models::Report analytic = models::predict(c, w, p);
  const models::Report sim = simulate_report_in_child(c, w, p, SimOptions{});
  ASSERT_TRUE(analytic.feasible && sim.feasible) << sim.infeasible_reason;
  std::printf("zero3 on 2:1: analytic %.3f s, simulated %.3f s\n", analytic.iteration_time_s, sim.iteration_time_s);
  EXPECT_NEAR(sim.iteration_time_s, analytic.iteration_time_s, 0.03 * analytic.iteration_time_s);
}

// Replicas that split the model into different stages: each layer's gradients are reduced among
// the stages that hold it (models/dp_segments.hpp), so a DP group joins stage 0 of one replica
// with stage 1 of another; the simulator runs those groups as the cost model prices them.
TEST(SimEngine, ReplicasSplitDifferentlyAgreeWithTheCostModel) {
  Inputs in = load("dgx-a100.yaml", "llama2-7b.yaml", "dgx-a100-tp4-pp2-dp4.yaml");
  ASSERT_EQ(in.plan.replicas.size(), 4u);
  in.plan.replicas[1].stages[0].layers = 20;
  in.plan.replicas[1].stages[1].layers = 12;
  in.plan.replicas[2].stages[0].layers = 10;
  in.plan.replicas[2].stages[1].layers = 22;
  const models::Report analytic = models::predict(in.cluster, in.workload, in.plan);
  const models::Report sim = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{});
  ASSERT_TRUE(analytic.feasible && sim.feasible) << analytic.infeasible_reason << sim.infeasible_reason;
  std::printf("different splits: analytic %.4f s (dp %.4f s), simulated %.4f s (dp %.4f s)\n", analytic.iteration_time_s,
              analytic.breakdown.dp_comm_s, sim.iteration_time_s, sim.breakdown.dp_comm_s);
  EXPECT_GT(analytic.breakdown.dp_comm_s, 0.0);
  EXPECT_NEAR(sim.iteration_time_s, analytic.iteration_time_s, 0.03 * analytic.iteration_time_s);
}

// ZeRO-3 traffic where the ring is slower than a member's NIC share: between AMD and NVIDIA GPUs
// staged through 8 GB/s host links, and between two members on one MI300X node joined by one
// xGMI link of a 112 GB/s mesh (16 GB/s). The simulator sent each member's share over its NIC
// only, without the staging or the intra-node hop, and found these steps 4-7x faster than the
// cost model prices them.
TEST(SimEngine, ZeroThreeRingsPayHostStagingAndMeshLinks) {
  const std::string root = HETSIM_SOURCE_DIR;
  const auto catalog = models::load_catalog_dir(root + "/clusters/catalog");
  auto cluster = [&](const char* host, const char* xgmi, int nvidia_nodes) {
    std::string text = std::string("kind: cluster\nname: z3\nnode_types:\n") +
                       "  h: {gpu: h100-sxm5-80gb, gpus: 8, intra: {kind: nvswitch, bandwidth: 450GB/s, latency: 2us},"
                       " nics: {count: 8, bandwidth: 400Gbps, kind: infiniband, latency: 2us, gpu_direct: true},"
                       " host_link: " + host + "}\n"
                       "  m: {gpu: mi300x, gpus: 8, intra: {kind: xgmi, bandwidth: " + xgmi + ", latency: 2us, mesh: true},"
                       " nics: {count: 8, bandwidth: 400Gbps, kind: roce, latency: 2us, gpu_direct: true},"
                       " host_link: " + host + "}\n"
                       "zones:\n  - name: dc\n    fabric: {kind: fat-tree, oversubscription: 1, latency: 5us}\n    nodes:\n";
    if (nvidia_nodes > 0) text += "      - {type: h, count: " + std::to_string(nvidia_nodes) + "}\n";
    text += "      - {type: m, count: 2}\n";
    return models::parse_cluster(text, catalog);
  };
  models::Workload w = models::load_workload(root + "/workloads/llama2-7b.yaml");
  for (const auto& [label, c] : {std::pair{"cross-vendor, 8 GB/s host links", cluster("8GB/s", "448GB/s", 2)},
                                 std::pair{"MI300X, 112 GB/s xGMI mesh", cluster("63GB/s", "112GB/s", 0)}}) {
    const int dp = c.gpu_count() / 4;
    w.training.global_batch = 2 * dp;
    models::UniformPlanOptions o;
    o.zero = 3;
    o.sequence_parallel = true;
    const auto made = models::make_uniform_plan(c, w, 4, 1, dp, o);
    ASSERT_TRUE(std::holds_alternative<models::Plan>(made)) << label;
    const models::Plan& p = std::get<models::Plan>(made);
    const models::Report analytic = models::predict(c, w, p);
    const models::Report sim = simulate_report_in_child(c, w, p, SimOptions{});
    ASSERT_TRUE(analytic.feasible && sim.feasible) << label << ": " << sim.infeasible_reason;
    std::printf("zero3, %s: analytic %.3f s, simulated %.3f s\n", label, analytic.iteration_time_s, sim.iteration_time_s);
    EXPECT_GT(analytic.breakdown.dp_comm_s, 0.5 * analytic.iteration_time_s) << label << ": the ring should dominate";
    EXPECT_NEAR(sim.iteration_time_s, analytic.iteration_time_s, 0.05 * analytic.iteration_time_s) << label;
  }
}

// An overlapped gradient sync with few micro-batches: the reduction runs bucket by bucket during
// the last backward pass and the last bucket, filled at its end, is exposed. The cost model hid
// the whole reduction behind the pass while the simulator's buckets left the last one exposed
// (8% apart); both now take Megatron-Core's buckets.
TEST(SimEngine, OverlappedGradientSyncExposesItsLastBucketInBothEngines) {
  Inputs in = load("dgx-a100.yaml", "llama2-7b.yaml", "dgx-a100-tp8-pp1-dp4-overlap.yaml");
  in.workload.training.global_batch = 16;
  for (auto& r : in.plan.replicas) r.micro_batches = 16 / (in.plan.micro_batch * 4);
  ASSERT_TRUE(in.plan.overlap_grad_sync);
  const models::Report analytic = models::predict(in.cluster, in.workload, in.plan);
  const models::Report sim = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{});
  ASSERT_TRUE(analytic.feasible && sim.feasible) << analytic.infeasible_reason << sim.infeasible_reason;
  std::printf("overlapped sync, %d micro-batches: analytic %.4f s (dp %.4f s), simulated %.4f s (dp %.4f s)\n",
              in.plan.replicas[0].micro_batches, analytic.iteration_time_s, analytic.breakdown.dp_comm_s,
              sim.iteration_time_s, sim.breakdown.dp_comm_s);
  EXPECT_GT(analytic.breakdown.dp_comm_s, 0.0) << "the last bucket is exposed";
  EXPECT_NEAR(sim.iteration_time_s, analytic.iteration_time_s, 0.03 * analytic.iteration_time_s);
}

// ZeRO-3 pairs its per-pass gathers and reduce-scatters across replicas, so replicas of uneven
// micro-batch counts (V100s with 8 beside A100s with 16) cannot run: both engines say so. (They
// once priced it, each pass of each replica carrying its traffic.) With equal counts they agree.
TEST(SimEngine, ZeroThreeNeedsReplicasOfEqualMicroBatchCounts) {
  Inputs in = load("spot-mix.yaml", "gpt3-6.7b.yaml");
  const models::Cluster& c = in.cluster;
  models::Workload& w = in.workload;
  w.training.global_batch = 24;
  auto replica = [](int micro_batches, int first_gpu) {
    models::Replica r;
    r.micro_batches = micro_batches;
    r.stages = {models::Stage{16, {first_gpu, first_gpu + 1, first_gpu + 2, first_gpu + 3}},
                models::Stage{16, {first_gpu + 4, first_gpu + 5, first_gpu + 6, first_gpu + 7}}};
    return r;
  };
  // V100 node p3dn[0] (GPUs 16-23), A100 node p4de[0]
  models::Plan p = plan_of("zero3 8 + 16 micro-batches", 3, {replica(8, 16), replica(16, 0)});
  const models::Report uneven_analytic = models::predict(c, w, p);
  const models::Report uneven_sim = simulate_report_in_child(c, w, p, SimOptions{});
  for (const models::Report* r : {&uneven_analytic, &uneven_sim}) {
    EXPECT_FALSE(r->feasible) << r->engine;
    EXPECT_NE(r->infeasible_reason.find("ZeRO-3 needs every replica to run the same number of micro-batches (16 here, 8"),
              std::string::npos)
        << r->infeasible_reason;
  }
  p.replicas = {replica(12, 16), replica(12, 0)};
  p.name = "zero3 12 + 12 micro-batches";
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.05 * e.analytic.iteration_time_s);
}

// ZeRO-3 in a pipeline: the fast first stage (A100s, 48 ms of compute per micro-batch) gathers and
// reduce-scatters about 180 ms of weights and gradients per micro-batch, the L4 stage behind it
// computes 193 ms and moves 230 ms. The first stage's traffic hides in its slack (it gathers while
// it waits for its input); only the bottleneck stage's excess slows the pipeline. The cost model
// added the largest stage excess per micro-batch (1.57 s of DP time where the simulator finds
// 0.49 s); it now takes the pipeline's pace with traffic (grad_sync_cost.cpp).
TEST(SimEngine, ZeroThreeTrafficHidesInTheSlackOfFastStages) {
  const Inputs in = a100_l4_mix(24);
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  models::Plan p = plan_of(
      "zero3 pipeline", 3,
      {models::Replica{12, {models::Stage{10, {0, 1}}, models::Stage{14, {4, 5}}}},  // A100 pair, L4 pair
       models::Replica{12, {models::Stage{10, {12, 13, 14, 15}}, models::Stage{14, {20, 21, 22, 23}}}}});
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, e.sim.breakdown.dp_comm_s, 0.1 * e.sim.breakdown.dp_comm_s);
  EXPECT_NEAR(e.sim.iteration_time_s, e.analytic.iteration_time_s, 0.07 * e.analytic.iteration_time_s);
  // Without prefetch every pass waits for its traffic: slower in both engines, and alike.
  p.zero3_prefetch = false;
  p.name = "zero3 pipeline without prefetch";
  const BothEngines waiting = both_feasible(c, w, p);
  EXPECT_GT(waiting.analytic.iteration_time_s, 1.2 * e.analytic.iteration_time_s);
  EXPECT_NEAR(waiting.sim.iteration_time_s, waiting.analytic.iteration_time_s, 0.07 * waiting.analytic.iteration_time_s);
}

// ZeRO-2 keeps only a shard of the gradients, so every micro-batch but the last reduce-scatters
// them after its backward (DeepSpeed stage 2; models::pass_traffic), the last at the end of the
// step as ZeRO-1. Both engines price the extra reductions alike, waited for or beside the backward.
TEST(SimEngine, ZeroTwoReducesEveryMicroBatchInBothEngines) {
  const Inputs in = a100_l4_mix(16);
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  auto replicas = [] {
    return std::vector<models::Replica>{models::Replica{4, {models::Stage{24, {0, 1}}}},
                                        models::Replica{4, {models::Stage{24, {2, 3}}}},
                                        models::Replica{4, {models::Stage{24, {12, 13}}}},
                                        models::Replica{4, {models::Stage{24, {14, 15}}}}};
  };
  models::Plan z1 = plan_of("zero1, 4 micro-batches", 1, replicas());
  models::Plan z2 = plan_of("zero2, 4 micro-batches", 2, replicas());
  const BothEngines one = both_feasible(c, w, z1);
  const BothEngines two = both_feasible(c, w, z2);
  EXPECT_GT(two.analytic.iteration_time_s, one.analytic.iteration_time_s + 0.05);  // three more reductions
  EXPECT_GT(two.sim.iteration_time_s, one.sim.iteration_time_s + 0.05);
  EXPECT_NEAR(two.sim.iteration_time_s, two.analytic.iteration_time_s, 0.05 * two.analytic.iteration_time_s);
  z2.overlap_grad_sync = true;
  z2.name = "zero2 beside the backward";
  const BothEngines beside = both_feasible(c, w, z2);
  EXPECT_LT(beside.analytic.iteration_time_s, two.analytic.iteration_time_s);
  // Beside the backward the cost model takes max(backward, reduction) per pass and the last
  // micro-batch's buckets as ZeRO-1's; the simulator runs the flows: 2.10 s against 1.99 s.
  EXPECT_NEAR(beside.sim.iteration_time_s, beside.analytic.iteration_time_s, 0.07 * beside.analytic.iteration_time_s);
}

// A TP pair across the A100 box (where it sends alone) and an L4 box that holds four more plan
// GPUs in TP pairs of their own: the pair's traffic has each box's NIC to itself. The cost model
// divided the A100 box's NIC by the L4 box's five plan GPUs as well (4.5x the simulated TP time;
// predictor.cpp cross_node_tp_senders now counts each node's cross-node TP members).
TEST(SimEngine, ATpGroupAcrossNodesSharesEachNicOnlyWithItsOwnNodesSenders) {
  const Inputs in = a100_l4_mix(12);
  const models::Cluster& c = in.cluster;
  const models::Workload& w = in.workload;
  const models::Plan p = plan_of("tp across nodes beside tp in a node", 1,
                                 {models::Replica{4, {models::Stage{24, {3, 4}}}},  // A100 box GPU 3, L4 box GPU 0
                                  models::Replica{4, {models::Stage{24, {5, 6}}}},
                                  models::Replica{4, {models::Stage{24, {7, 8}}}}});
  const BothEngines e = both_feasible(c, w, p);
  EXPECT_NEAR(e.analytic.breakdown.tp_comm_s, e.sim.breakdown.tp_comm_s, 0.03 * e.sim.breakdown.tp_comm_s);
}

// Replicas of different TP degrees: 16 A100s at TP 1 beside 16 V100 pairs at TP 2, so each A100
// is in two gradient groups (one per shard), run side by side. Each group crosses a V100 node at
// its last member there, and the two groups' crossing members (GPUs 2k and 2k+1) share a NIC rail
// (4 NICs for 8 GPUs). The cost model summed the A100's groups one after the other (right here
// only by luck), then ran them side by side with a lone member's rail each (half the simulated DP
// time); it now shares the rail as the simulator does.
TEST(SimEngine, ReplicasOfDifferentTpDegreesAgreeWithTheCostModel) {
  Inputs in = load("mixed-a100-v100.yaml", "gpt3-1.3b.yaml");
  const models::Cluster& c = in.cluster;
  models::Workload& w = in.workload;
  w.training.global_batch = 16 * 2 + 16 * 1;
  models::Plan p;
  p.micro_batch = 1;
  p.zero = 1;
  for (int g = 0; g < 16; ++g) p.replicas.push_back(models::Replica{2, {models::Stage{24, {g}}}});  // A100s
  for (int g = 16; g < 48; g += 2) p.replicas.push_back(models::Replica{1, {models::Stage{24, {g, g + 1}}}});
  const models::Report analytic = models::predict(c, w, p);
  const models::Report sim = simulate_report_in_child(c, w, p, SimOptions{});
  ASSERT_TRUE(analytic.feasible && sim.feasible) << analytic.infeasible_reason << sim.infeasible_reason;
  std::printf("tp1 beside tp2: analytic %.4f s (dp %.4f s), simulated %.4f s (dp %.4f s)\n", analytic.iteration_time_s,
              analytic.breakdown.dp_comm_s, sim.iteration_time_s, sim.breakdown.dp_comm_s);
  EXPECT_GT(analytic.breakdown.dp_comm_s, 0.3 * analytic.iteration_time_s);
  EXPECT_NEAR(sim.iteration_time_s, analytic.iteration_time_s, 0.03 * analytic.iteration_time_s);
}

// Tied embeddings with TP: every TP rank of the first stage all-reduces its vocab/t shard with
// its peer in the last stage at once, the four shards sharing the one NIC of each node. The
// simulator must move all four (it once moved rank 0's only and finished the sync 4x early).
TEST(SimEngine, TiedEmbeddingSyncMovesEveryTpRanksShard) {
  testing::NodeSpec one_nic;
  one_nic.nics = 1;
  one_nic.nic_Bps = 2.5e9;  // 20 Gb/s Ethernet-class: the sync is a visible part of the step
  models::Cluster c = testing::one_zone(2, one_nic);
  const std::string root = HETSIM_SOURCE_DIR;
  const auto catalog = models::load_catalog_dir(root + "/clusters/catalog");
  c.node_types[0].gpu = catalog.by_name("a100-sxm4-80gb");
  models::Workload w = models::load_workload(root + "/workloads/gpt3-1.3b.yaml");
  w.training.global_batch = 4;
  models::Plan p;
  p.micro_batch = 1;
  models::Replica r;
  r.micro_batches = 4;
  r.stages.resize(2);
  r.stages[0].layers = r.stages[1].layers = 12;
  r.stages[0].gpus = {0, 1, 2, 3};
  r.stages[1].gpus = {8, 9, 10, 11};
  p.replicas = {r};
  const models::Report analytic = models::predict(c, w, p);
  ASSERT_TRUE(analytic.feasible) << analytic.infeasible_reason;
  const models::Report sim = simulate_report_in_child(c, w, p, SimOptions{});
  ASSERT_TRUE(sim.feasible) << sim.infeasible_reason;
  std::printf("tp4 pp2, one NIC per node: analytic %.4f s (dp %.4f s), simulated %.4f s\n", analytic.iteration_time_s,
              analytic.breakdown.dp_comm_s, sim.iteration_time_s);
  ASSERT_GT(analytic.breakdown.dp_comm_s, 0.1 * analytic.iteration_time_s);  // the sync matters here
  EXPECT_NEAR(sim.iteration_time_s, analytic.iteration_time_s, 0.03 * analytic.iteration_time_s);
}

// Two zones joined by one 100 Gb/s WAN link; every replica's pipeline crosses it, so the 32
// GPUs at the four replicas' boundaries share it (the cost model once gave each GPU a node's
// share, 1/8, and the simulator found the step 8% longer). The four replicas' sends take longer
// than one replica's alone (the 30 ms WAN latency of each send is the same), and the two
// engines agree.
TEST(SimEngine, AWanSharedByAllReplicasSlowsEachOfTheirSends) {
  const Inputs in = load("geo-two-zones.yaml", "llama2-7b.yaml", "geo-two-zones-tp8-pp2-dp4.yaml");
  const models::Report four = models::predict(in.cluster, in.workload, in.plan);
  Inputs alone = in;
  alone.plan.replicas.resize(1);
  alone.workload.training.global_batch = alone.plan.replicas[0].micro_batches * alone.plan.micro_batch;
  const models::Report one = models::predict(alone.cluster, alone.workload, alone.plan);
  ASSERT_TRUE(four.feasible && one.feasible);
  EXPECT_GT(four.breakdown.pp_comm_s, 1.2 * one.breakdown.pp_comm_s);
  const models::Report sim = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{});
  ASSERT_TRUE(sim.feasible) << sim.infeasible_reason;
  std::printf("geo: analytic %.4f s (pp %.3f s; one replica alone %.3f s), simulated %.4f s, WAN utilisation %.3f\n",
              four.iteration_time_s, four.breakdown.pp_comm_s, one.breakdown.pp_comm_s, sim.iteration_time_s,
              sim.extra.at("link_utilisation_max:wan"));
  EXPECT_NEAR(sim.iteration_time_s, four.iteration_time_s, 0.03 * four.iteration_time_s);
  EXPECT_GT(sim.extra.at("link_utilisation_max:wan"), 0.05);
}

// Interleaved across the WAN: a stage's forward sends and its wrap-around backward sends go the
// same way one after the other, so each stage counts once among a direction's senders. Counted
// once per boundary, the cost model gave each send half the WAN it gets and the step 10% longer.
TEST(SimEngine, InterleavedSendsAcrossAWanAgreeWithTheCostModel) {
  Inputs in = load("geo-two-zones.yaml", "gpt3-6.7b.yaml", "geo-two-zones-tp8-pp2-dp4.yaml");
  in.plan.schedule = models::Schedule::kInterleaved;
  in.plan.interleave = 2;
  in.workload.training.global_batch = 64;
  for (auto& r : in.plan.replicas) r.micro_batches = 16;
  const models::Report analytic = models::predict(in.cluster, in.workload, in.plan);
  const models::Report sim = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{});
  ASSERT_TRUE(analytic.feasible && sim.feasible) << analytic.infeasible_reason << sim.infeasible_reason;
  std::printf("interleaved over the WAN: analytic %.4f s (pp %.3f s), simulated %.4f s\n", analytic.iteration_time_s,
              analytic.breakdown.pp_comm_s, sim.iteration_time_s);
  EXPECT_NEAR(sim.iteration_time_s, analytic.iteration_time_s, 0.03 * analytic.iteration_time_s);
}

// Replicas that do not fold (uneven micro-batch counts) are simulated one by one, and their
// gradient rings grow as n^2 flows: 1136 replicas of Llama 3 405B ran for minutes towards 6 GB.
// Above the bound the plan is reported as not simulated, with the reason, at once.
TEST(SimEngine, RefusesLayoutsWhoseGradientRingsExceedItsFlowBound) {
  models::Cluster c = testing::one_zone(512, testing::NodeSpec{});  // 4096 GPUs
  const std::string root = HETSIM_SOURCE_DIR;
  const auto catalog = models::load_catalog_dir(root + "/clusters/catalog");
  c.node_types[0].gpu = catalog.by_name("a100-sxm4-80gb");
  models::Workload w = models::load_workload(root + "/workloads/tiny-gpt.yaml");
  models::Plan p;
  p.micro_batch = 1;
  long long global = 0;
  for (int g = 0; g < c.gpu_count(); ++g) {
    models::Replica r;
    r.micro_batches = 1 + g % 2;  // uneven: no two neighbouring replicas alike
    global += r.micro_batches;
    r.stages.resize(1);
    r.stages[0].layers = w.model.layers;
    r.stages[0].gpus = {g};
    p.replicas.push_back(r);
  }
  w.training.global_batch = static_cast<int>(global);
  ASSERT_TRUE(models::predict(c, w, p).feasible);
  const models::Report r = simulate_report(c, w, p, SimOptions{});
  EXPECT_FALSE(r.feasible);
  EXPECT_NE(r.infeasible_reason.find("4096 replicas to simulate one by one"), std::string::npos) << r.infeasible_reason;
  EXPECT_NE(r.infeasible_reason.find("above the simulator's bound"), std::string::npos) << r.infeasible_reason;
}

// A plan of 16M micro-batches simulated for half an hour towards 30 GB of memory; above the
// bound it is reported, unsimulated, with the reason.
TEST(SimEngine, RefusesPlansWithMoreMicroBatchPassesThanItsBound) {
  Inputs in = load("local-cpu.yaml", "tiny-gpt.yaml", "local-cpu-tp2-pp2-dp1.yaml");  // 2 stages
  in.workload.training.global_batch = static_cast<int>(kMaxSimulatedPasses);
  in.plan.replicas[0].micro_batches = static_cast<int>(kMaxSimulatedPasses);  // 2e6 passes
  ASSERT_TRUE(models::predict(in.cluster, in.workload, in.plan).feasible);
  const models::Report r = simulate_report(in.cluster, in.workload, in.plan, SimOptions{});
  EXPECT_FALSE(r.feasible);
  EXPECT_EQ(r.engine, "sim");
  EXPECT_NE(r.infeasible_reason.find("a replica has 2000000 micro-batch passes"), std::string::npos) << r.infeasible_reason;
}

// The bound holds for the passes of every replica simulated, not of one: 16 unfolded replicas of
// 980,000 micro-batches each (under the bound one by one) ran towards 8 GB and aborted.
TEST(SimEngine, RefusesPlansWhoseSimulatedReplicasTogetherHoldMorePassesThanItsBound) {
  Inputs in = load("local-cpu.yaml", "tiny-gpt.yaml", "local-cpu-tp1-pp1-dp2.yaml");  // 2 replicas, 1 stage
  const int each = static_cast<int>(kMaxSimulatedPasses * 3 / 5);
  for (auto& r : in.plan.replicas) r.micro_batches = each;
  in.workload.training.global_batch = 2 * each;
  ASSERT_TRUE(simulation_size_problem(in.plan).empty());  // each replica alone is within the bound
  ASSERT_TRUE(models::predict(in.cluster, in.workload, in.plan).feasible);
  const models::Report r = simulate_report(in.cluster, in.workload, in.plan, SimOptions{});
  EXPECT_FALSE(r.feasible);
  EXPECT_EQ(r.engine, "sim");
  EXPECT_NE(r.infeasible_reason.find("2 replicas to simulate (all of them"), std::string::npos) << r.infeasible_reason;
  EXPECT_NE(r.infeasible_reason.find("hold 1200000 micro-batch passes"), std::string::npos) << r.infeasible_reason;
}

// A million-GPU what-if (131,072 replicas) ran for a minute towards 11 GB laying out its work
// before its gradient rings were refused: the plan's size is checked before any work is built.
TEST(SimEngine, RefusesPlansWithMoreLayersToLayOutThanItsBound) {
  models::Plan p;
  for (int r = 0; r < 131072; ++r) {
    models::Replica rep;
    rep.micro_batches = 1;
    rep.stages.push_back({24, {8 * r}});
    p.replicas.push_back(rep);
  }
  const std::string problem = simulation_size_problem(p);
  EXPECT_NE(problem.find("131072 replicas hold 3145728 layers"), std::string::npos) << problem;
  EXPECT_NE(problem.find("bound of 524288"), std::string::npos) << problem;
  p.replicas.resize(kMaxLaidOutLayers / 24);  // at the bound: simulated
  EXPECT_EQ(simulation_size_problem(p), "");
}

// Found by the s23 audit: both engines gave 29.06 s on a pipeline whose middle stages set the
// pace through their sends over an oversubscribed fabric, but the simulator broke down the first
// stage (which finishes last in 1F1B): half the sends' time there showed up as bubble.
TEST(SimEngine, TheBreakdownIsThatOfTheStageThatSetsThePace) {
  const std::string root = HETSIM_SOURCE_DIR;
  const auto catalog = models::load_catalog_dir(root + "/clusters/catalog");
  const models::Cluster c = models::parse_cluster(
      "kind: cluster\nname: oversub\nnode_types:\n"
      "  box: {gpu: a100-sxm4-80gb, gpus: 8, intra: {kind: nvswitch, bandwidth: 300GB/s},"
      " nics: {count: 1, bandwidth: 100Gbps, kind: ethernet}}\n"
      "zones:\n  - {name: dc, fabric: {kind: fat-tree, oversubscription: 4, latency: 5us}, nodes: [{type: box, count: 8}]}\n",
      catalog);
  models::Workload w = models::load_workload(root + "/workloads/gpt3-6.7b.yaml");
  w.training.global_batch = 64;
  models::UniformPlanOptions u;
  u.micro_batch = 1;
  const auto made = models::make_uniform_plan(c, w, 8, 8, 1, u);
  ASSERT_TRUE(std::holds_alternative<models::Plan>(made));
  const models::Plan& p = std::get<models::Plan>(made);
  const models::Report analytic = models::predict(c, w, p);
  const models::Report sim = simulate_report_in_child(c, w, p, SimOptions{});
  ASSERT_TRUE(sim.feasible) << sim.infeasible_reason;
  EXPECT_NEAR(sim.iteration_time_s, analytic.iteration_time_s, 0.05 * analytic.iteration_time_s);
  EXPECT_GT(analytic.breakdown.pp_comm_s, 0.3 * analytic.iteration_time_s);  // the sends set the pace
  EXPECT_NEAR(sim.breakdown.pp_comm_s, analytic.breakdown.pp_comm_s, 0.1 * analytic.breakdown.pp_comm_s);
  EXPECT_NEAR(sim.breakdown.compute_s, analytic.breakdown.compute_s, 0.1 * analytic.breakdown.compute_s);
  EXPECT_LT(sim.breakdown.bubble_s, 0.5 * sim.breakdown.pp_comm_s);
}

TEST(SimEngine, SameInputSameOutputByteForByte) {
  const Inputs in = load("dgx-a100.yaml", "llama2-7b.yaml", "dgx-a100-tp4-pp2-dp4.yaml");
  const std::string a = models::to_json(simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{}));
  const std::string b = models::to_json(simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{}));
  EXPECT_EQ(a, b);
}

TEST(SimReport, WireFormatRoundTripsExactly) {
  models::Report r;
  r.engine = "sim";
  r.feasible = false;
  r.infeasible_reason = "stage 0 needs 91 GiB of 80 GiB";
  r.iteration_time_s = 1.0 / 3.0;
  r.micro_batch = 4;
  r.breakdown.bubble_s = 0.1;
  r.stages.push_back({1, 2, "a100-sxm4-80gb", 12, 8, 0.5, 0.25, 1e9, 8e10});
  r.extra["link_utilisation:x"] = 0.75;
  const models::Report d = decode_report(encode_report(r));
  EXPECT_EQ(models::to_json(d), models::to_json(r));
}

TEST(SimReport, TimeDependentFiguresFollowTheSimulatedTime) {
  models::Report analytic;
  analytic.iteration_time_s = 2;
  analytic.tokens_per_s = 100;
  analytic.mfu = 0.4;
  analytic.memory_peak_bytes = 5e9;
  SimResult sim;
  sim.iteration_time_s = 4;
  sim.stages.push_back({0, 0, 1.0, 0.5, 0, 0.25, 0.5, 0.25, 4});
  sim.stages.back().passes_end_s = 3.25;  // then the 0.5 s sync and the 0.25 s update
  const auto r = make_sim_report(analytic, sim);
  EXPECT_DOUBLE_EQ(r.iteration_time_s, 4);
  EXPECT_DOUBLE_EQ(r.tokens_per_s, 50);
  EXPECT_DOUBLE_EQ(r.mfu, 0.2);
  EXPECT_DOUBLE_EQ(r.memory_peak_bytes, 5e9);
  EXPECT_DOUBLE_EQ(r.breakdown.compute_s, 1.0);
  EXPECT_DOUBLE_EQ(r.breakdown.bubble_s, 4 - (1.0 + 0.5 + 0.25 + 0.5 + 0.25));
}

// The timeline is valid trace-event JSON (JSON is YAML 1.2, so yaml-cpp parses it): every
// event has the fields Perfetto needs, one track per simulated GPU and per busy link.
TEST(Trace, IsValidTraceEventJsonWithGpuAndLinkTracks) {
  testing::UniformWork u;
  u.tp = 2;
  u.pp = 2;
  u.dp = 2;
  u.micro_batches = 3;
  u.act_bytes = 1e6;
  u.tp_ar_bytes = 1e6;
  u.grad_bytes = 1e7;
  models::Plan plan;
  models::PlanWork work;
  testing::make_uniform(u, plan, work);
  const auto cluster = testing::one_zone(1, testing::NodeSpec{});
  SimOptions opt;
  opt.record_trace = true;
  const SimResult r = simulate_work(cluster, plan, work, opt);
  ASSERT_TRUE(r.ok) << r.error;
  const std::string path = ::testing::TempDir() + "/hetsim_trace_test.json";
  write_chrome_trace(r, path);
  const YAML::Node doc = YAML::LoadFile(path);
  ASSERT_TRUE(doc["traceEvents"].IsSequence());
  std::set<std::string> tracks;
  int complete = 0;
  // The trace writes microseconds with 3 decimals: times are exact to 0.5 ns, so allow 1 ns.
  const double end_s = r.iteration_time_s + 1e-9;
  for (const auto& ev : doc["traceEvents"]) {
    const std::string ph = ev["ph"].as<std::string>();
    ASSERT_TRUE(ph == "X" || ph == "M" || ph == "C");
    if (ph == "C") {
      const double busy = ev["args"]["busy"].as<double>();
      EXPECT_TRUE(busy >= 0 && busy <= 1) << busy;
      EXPECT_LE(ev["ts"].as<double>() * 1e-6, end_s);
    }
    ASSERT_TRUE(ev["pid"].IsScalar());
    if (ph == "M" && ev["name"].as<std::string>() == "thread_name") tracks.insert(ev["args"]["name"].as<std::string>());
    if (ph == "X") {
      ++complete;
      EXPECT_GE(ev["ts"].as<double>(), 0.0);
      EXPECT_GE(ev["dur"].as<double>(), 0.0);
      EXPECT_LE((ev["ts"].as<double>() + ev["dur"].as<double>()) * 1e-6, end_s);
      EXPECT_TRUE(ev["tid"].IsScalar());
      EXPECT_FALSE(ev["name"].as<std::string>().empty());
    }
  }
  int gpu_tracks = 0, link_tracks = 0;
  for (const auto& t : tracks) (t.rfind("gpu ", 0) == 0 ? gpu_tracks : link_tracks)++;
  EXPECT_EQ(gpu_tracks, 8);
  EXPECT_GT(link_tracks, 0);
  EXPECT_GE(complete, 2 * 3 * 8);  // every pass on every GPU track
  std::remove(path.c_str());
}

}  // namespace
}  // namespace hetsim::sim
