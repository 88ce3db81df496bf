// SPDX-License-Identifier: Apache-2.0
// Overlapped gradient sync of replicas split differently: each model segment's groups reduce a
// bucket once every member has produced it (Megatron-Core's DistributedDataParallel, one per
// communicator), not once every stage of the DP component has.
#include <gtest/gtest.h>

#include "dp_segments.hpp"
#include "engine_inputs.hpp"
#include "step_cost.hpp"
#include "topology.hpp"

namespace hetsim::sim {
namespace {

using testing::both_feasible;
using testing::BothEngines;
using testing::plan_of;

// An A100 pipeline of two stages (layers 1-12, 13-24; 10 micro-batches, the slower replica)
// beside a V100 holding the whole model (3 micro-batches, done long before): segment 1's groups
// (A100 stage 1 + V100) can reduce from the start of stage 1's last backward, about one backward
// of each stage before the step's end; segment 0's (A100 stage 0 + V100) during stage 0's last.
// Both cross the same V100 GPUs' NICs, which carry the whole sync: T, the cost model's time for it
// from the step's end (its sum over the V100's groups). The overlap hides at most the two last
// backwards, so the exposed sync is at least T - (b0 + b1) (less the sends between them), and as
// segment 1's reduction starts before stage 0's last backward, at most T - b0. The simulator
// gated every bucket on every stage of the DP component, so segment 1 waited for stage 0's last
// backward: T - b0 + 4 ms (107 ms). Without overlap, segment 1's groups start when stage 1 has
// finished its passes (one backward before stage 0): T - b0 at most there too. The cost model
// sends a stage's buckets in the order they become ready (grad_sync_cost.cpp
// GradSync::stages_in_several_groups_ends): without overlap T - b0 (the V100s' NICs never idle once
// segment 1 starts), so T is its figure + b0;
// both engines agree within 5 ms (before, it gave T without overlap and spread the V100's buckets
// over its own last backward, long done, with: 122 and 67 ms against 103 and 87 simulated).
TEST(SegmentSync, ASegmentsBucketsWaitOnlyForTheStagesHoldingIt) {
  testing::Inputs in = testing::load("mixed-a100-v100.yaml", "gpt3-1.3b.yaml");
  models::Workload& w = in.workload;
  w.model.tied_embeddings = false;  // no embedding sync after the DP sync: the groups alone
  w.training.global_batch = 13;
  models::Plan p = plan_of("A100 pp2 beside a V100 pp1", 0,
                           {models::Replica{10, {models::Stage{12, {0, 1, 2, 3}}, models::Stage{12, {4, 5, 6, 7}}}},
                            models::Replica{3, {models::Stage{24, {16, 17, 18, 19}}}}});
  const BothEngines after = both_feasible(in.cluster, w, p);
  p.overlap_grad_sync = true;
  p.name += ", overlapped";
  const BothEngines overlapped = both_feasible(in.cluster, w, p);
  const double b0_s = overlapped.sim.stages[0].backward_s, b1_s = overlapped.sim.stages[1].backward_s;
  const double t_s = after.analytic.breakdown.dp_comm_s + b0_s;
  ASSERT_GT(t_s, 2 * (b0_s + b1_s)) << "the V100s' NICs must pace the sync for the bounds to hold";
  EXPECT_LE(after.sim.breakdown.dp_comm_s, t_s - b0_s);
  EXPECT_LE(overlapped.sim.breakdown.dp_comm_s, t_s - b0_s);
  EXPECT_GE(overlapped.sim.breakdown.dp_comm_s, t_s - (b0_s + b1_s) - 0.002);
  EXPECT_NEAR(after.analytic.breakdown.dp_comm_s, after.sim.breakdown.dp_comm_s, 0.005);
  EXPECT_NEAR(overlapped.analytic.breakdown.dp_comm_s, overlapped.sim.breakdown.dp_comm_s, 0.005);
}

// Found by scripts/engine_diff.py. Llama-2 7B on the H100 + MI300X cluster (8 RoCE NICs a node,
// one per GPU's rail), without overlap: replica 0 at TP 2 on MI300X GPUs 30-31 (layers 1-27) then
// TP 8 on H100s 0-7 (28-32); replica 1 at TP 2 on MI300X GPUs 18-19 (1-8) then TP 1 on MI300X 22
// (9-32). GPU 22 is in the two groups of segment 9-27 (7.7 GB of FP32 gradients each) and the
// eight of segment 28-32 (H100 shards): ten channels, all through its own rail, which carries all
// their bytes in ~0.40 s. The cost model had priced every group of the node at its busiest rail,
// so GPUs 18-19 (a rail each, segment 1-8) at an eighth of a NIC, and each big group at the eight
// channels GPU 22 has in the other segment, as if they all ran for the whole sync: 1.32 s against
// the simulator's 0.40 s. Now each GPU's hops take its own rail (node_senders_of on_rail_of_gpu),
// and a group alone takes its bytes over its most loaded member side (add_slot_loads).
TEST(SegmentSync, GroupsOfUnequalSegmentsShareAGpusRailByTheirBytes) {
  testing::Inputs in = testing::load("h100-mi300x.yaml", "llama2-7b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 12;
  const models::Plan p =
      plan_of("MI300X tp2 + H100 tp8 beside MI300X tp2 + tp1", 0,
              {models::Replica{4, {models::Stage{27, {30, 31}}, models::Stage{5, {0, 1, 2, 3, 4, 5, 6, 7}}}},
               models::Replica{8, {models::Stage{8, {18, 19}}, models::Stage{24, {22}}}}});
  const BothEngines e = both_feasible(in.cluster, w, p);
  testing::expect_syncs_agree(e, 0.1, 0.05, 0.02);
}

// Found by scripts/engine_diff.py (seed 3). GPT-3 1.3B on the 4090 + A100 lab cluster, one
// 25 Gb/s NIC a node, ZeRO-1 without overlap: replica 0 on GPU 23 (layers 1-7), the 4090 box of
// GPUs 24-31 at TP 8 (8-16) and A100 GPU 33 (17-24); replica 1 on GPU 6 (1-11) then GPUs 16-19 at
// TP 4 (12-24). Node 2's one NIC carries GPU 23's single group (the 7 layers and the embedding,
// ~0.9 GB) and the twelve small groups of GPUs 16-19: ~2.4 GB in all, 0.9 s at the NIC's rate. The
// cost model had priced GPU 23's group at a ninth of the NIC for its whole length (3.5 s of sync,
// with the tied-embedding pairs likewise at a fifth); the rails now carry their bytes
// (grad_sync_rails.hpp) and the simulator agrees.
TEST(SegmentSync, ARailSharedByGroupsOfUnequalSizeCarriesTheirBytes) {
  testing::Inputs in = testing::load("consumer-4090-a100.yaml", "gpt3-1.3b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 14;  // 7 micro-batches of 2
  models::Plan p = plan_of("4090 + A100 pipelines split differently", 1,
                           {models::Replica{2, {models::Stage{7, {23}}, models::Stage{9, {24, 25, 26, 27, 28, 29, 30, 31}},
                                                models::Stage{8, {33}}}},
                            models::Replica{5, {models::Stage{11, {6}}, models::Stage{13, {16, 17, 18, 19}}}}});
  p.micro_batch = 2;
  p.recompute = models::Recompute::kFull;
  const BothEngines e = both_feasible(in.cluster, w, p);
  EXPECT_GT(e.sim.breakdown.dp_comm_s, 0.2 * e.sim.iteration_time_s) << "the sync is what this test is about";
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, e.sim.breakdown.dp_comm_s, 0.05 * e.sim.breakdown.dp_comm_s);
}

// Found by scripts/engine_diff.py (seed 2). GPT-3 1.3B on the two zones joined by one 100 Gb/s
// WAN link, ZeRO-1 with full recompute: replica 0 in the west (H100s 32-35, layers 1-12), the east
// (A100s 12-15, layer 13) and the west again (H100s 36-39, 14-24); replica 1 in the east (A100s
// 24-27, 1-16; A100s 4-5, 17-24). Every segment's groups cross the WAN link, in shards of unequal
// size (a one-layer segment beside an eleven-layer one). Each group was priced at a fixed share
// of the link for its whole length: 0.325 s of sync against the simulator's 0.263 s. The link is
// now a resource like a rail (SyncRails::wan_of): it carries the sum of its crossings' bytes.
TEST(SegmentSync, AWanLinkCarriesTheBytesOfTheGroupsThatCrossIt) {
  testing::Inputs in = testing::load("geo-two-zones.yaml", "gpt3-1.3b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 13;
  models::Plan p = plan_of("pipelines across two zones, split differently", 1,
                           {models::Replica{9, {models::Stage{12, {32, 33, 34, 35}}, models::Stage{1, {12, 13, 14, 15}},
                                                models::Stage{11, {36, 37, 38, 39}}}},
                            models::Replica{4, {models::Stage{16, {24, 25, 26, 27}}, models::Stage{8, {4, 5}}}}});
  p.recompute = models::Recompute::kFull;
  const BothEngines e = both_feasible(in.cluster, w, p);
  testing::expect_syncs_agree(e, 0.2, 0.05, 0.02);
}

// A stage's backward produces its first layers last: replica 0 holds Llama-2 7B whole on A100s
// 10-11 (TP 2), replica 1 layers 1-7 on H100s 46-47 in the other zone and 8-32 on A100s 12-15
// (beside replica 0, so segment 8-32 stays in the node). Segment 1-7's two groups cross the
// 100 Gb/s, 30 ms WAN link: each all-reduce of two moves V = its FP32 gradients each way, so the
// link carries 2V a direction at its achieved rate, and each of the B buckets takes the ring's two
// steps of 30 ms: T = 2V / rate + B x 60 ms. Replica 0 produces the segment (layers 1-7 and the
// embedding, 23% of its parameters) in the last 23% of its last backward, so at most that much
// of T hides. Both engines had the windows mirrored (DpSegments::backward_window): the
// segment ready in the first quarter of the pass, 0.24 s of T hidden (dp 1.47 s, now 1.71 s).
TEST(SegmentSync, TheFirstLayersAreReadyAtTheEndOfTheBackward) {
  testing::Inputs in = testing::load("geo-two-zones.yaml", "llama2-7b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 13;
  models::Plan p = plan_of("whole model beside a pipeline across zones", 0,
                           {models::Replica{7, {models::Stage{32, {10, 11}}}},
                            models::Replica{6, {models::Stage{7, {46, 47}}, models::Stage{25, {12, 13, 14, 15}}}}});
  p.overlap_grad_sync = true;
  const BothEngines e = both_feasible(in.cluster, w, p);
  const double params = models::DpSegments(p, w.model).params(0, 1, w.model);  // per GPU, layers 1-7 + embedding
  const double v_bytes = params * models::grad_sync_bytes_per_param(w.training);
  const models::InterZoneLink& link = in.cluster.links.at(0);
  const double rate_Bps = link.bandwidth_Bps * models::kWanLinkEfficiency;
  const int buckets = models::grad_bucket_count(params, 2);
  const double t_s = 2 * v_bytes / rate_Bps + buckets * 2 * link.latency_s;
  const double window_s = 0.25 * e.sim.stages[0].backward_s;  // the segment's share of replica 0's pass, rounded up
  for (const models::Report* r : {&e.analytic, &e.sim}) {
    EXPECT_LE(r->breakdown.dp_comm_s, t_s + 0.01) << r->engine;
    EXPECT_GE(r->breakdown.dp_comm_s, t_s - window_s) << r->engine;
  }
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, e.sim.breakdown.dp_comm_s, 0.02 * e.sim.breakdown.dp_comm_s);
}

// Found by scripts/engine_diff.py (seed 2). Llama-2 7B, ZeRO-1 overlapped: replica 0 whole on
// A100s 10-11 (TP 2), replica 1 layers 1-7 on H100s 46-47 in the other zone and 8-32 on A100s
// 24-27 (TP 4). The weights' all-gather puts three flows on GPU 10's NIC: 0.77 GB across the
// 30 ms WAN link (to GPU 46) and 1.30 GB to each of GPUs 24-25 inside its zone. Shared equally,
// the NIC carries its 3.37 GB in 0.14 s and the WAN link its 1.55 GB a direction in 0.15 s: the
// gather takes 0.15 s. SimGrid's CM02 weighted each flow's share by its route's latency (TCP's RTT
// unfairness), so the WAN flow got a few thousandths of the NIC until the local flows were done:
// 0.25 s, and the step's sync 1.06 s against the cost model's 0.95 s. Every route now carries the
// same latency token in SimGrid (platform_builder.cpp route_latency_tokens).
TEST(SegmentSync, AWanFlowSharesANicEquallyWithFlowsInsideItsZone) {
  testing::Inputs in = testing::load("geo-two-zones.yaml", "llama2-7b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 13;
  models::Plan p = plan_of("whole model beside a pipeline across zones, ZeRO-1", 1,
                           {models::Replica{7, {models::Stage{32, {10, 11}}}},
                            models::Replica{6, {models::Stage{7, {46, 47}}, models::Stage{25, {24, 25, 26, 27}}}}});
  p.overlap_grad_sync = true;
  const BothEngines e = both_feasible(in.cluster, w, p);
  EXPECT_GT(e.sim.breakdown.dp_comm_s, 0.15 * e.sim.iteration_time_s) << "the sync is what this test is about";
  EXPECT_NEAR(e.analytic.breakdown.dp_comm_s, e.sim.breakdown.dp_comm_s, 0.05 * e.sim.breakdown.dp_comm_s);
}

// Found by running `hetsim plan` on every example cluster and simulating its best plan: GPT-3
// 1.3B on spot-mix, ZeRO-1 overlapped, A100 pipelines of two stages (layers 1-13 on p4de node 0,
// 14-24 on node 1) beside V100s holding the whole model on one p3dn box, whose single 100 Gb/s
// NIC carries both segments' groups of all eight V100s. The A100 stages' own rails are nearly
// idle, so the cost model gave their weight all-gathers (after the update, hidden only behind
// the short A100 first forward) the time of their own rails: 0.19 s of sync against the
// simulator's 0.28 s (the planned plan: 0.17 against 0.29 s), where every ring waits for the p3dn
// NIC to carry both segments' gathers.
// A stage now waits for its groups' gathers on every rail they cross, as for their reductions.
TEST(SegmentSync, AStageOnAnIdleNicWaitsForItsGroupsGathersThroughABusyOne) {
  testing::Inputs in = testing::load("spot-mix.yaml", "gpt3-1.3b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 2 * 9 * 2 + 8 * 2 * 2;  // 9 micro-batches of 2 per A100 pipeline, 2 per V100
  std::vector<models::Replica> replicas;
  for (int g = 0; g < 2; ++g) replicas.push_back(models::Replica{9, {models::Stage{13, {g}}, models::Stage{11, {8 + g}}}});
  for (int g = 16; g < 24; ++g) replicas.push_back(models::Replica{2, {models::Stage{24, {g}}}});
  models::Plan p = plan_of("A100 pipelines beside whole-model V100s on one NIC, ZeRO-1", 1, std::move(replicas));
  p.micro_batch = 2;
  p.overlap_grad_sync = true;
  const BothEngines e = both_feasible(in.cluster, w, p);
  testing::expect_syncs_agree(e, 0.1, 0.05, 0.02);
}

// Found by scripts/engine_diff.py (seed 7). GPT-3 2.7B on the two zones, ZeRO-1 overlapped, three
// replicas split four, four and two ways (3, 6 and 5 micro-batches of 2). The last replica paces
// the step, and its first stage (H100s 44-47, five layers: a 7 ms first forward) hides almost
// none of its weight gathers, which share its node's rails with the gathers of other segments'
// groups. The cost model took the sum of every gather through each of the stage's own rails,
// 0.385 s, where the simulator's gather took 0.331 s: under fair sharing the stage's groups end
// once each group on the rail has moved min(its bytes, theirs). Now each group's gather ends so
// (SyncRails::group_gather_s), on every rail it crosses: 1.950 s against 1.879 s simulated
// became 1.897 s. Since the WAN link walks its groups' latency steps as waits
// (SyncRails::share_rail_in_phases, which took engine_diff's worst plans from 18% and 10.7% to
// 4.3% and 6.3%), 1.921 s: its twenty groups' buckets are mostly latency (60 ms against 2-5 ms
// of bytes), and what remains is how folding counts the latency of a ring of three across the
// link: the cost model the hops the last chunk passes (two crossings, 60 ms a bucket), as the
// unfolded simulator's dataflow rings did (1.939 s with --no-fold; 1.881 s since its buckets run
// rank by rank, sim/README), folding a merged flow's path and then the mean step (30 + 20 ms;
// sim/collective_flows.cpp merge_repeated_phases), 10 ms a bucket over five buckets.
TEST(SegmentSync, AGroupsGatherSharesARailByProcessorSharing) {
  testing::Inputs in = testing::load("geo-two-zones.yaml", "gpt3-2.7b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 28;
  models::Plan p = plan_of("three replicas split differently across zones, ZeRO-1", 1,
                           {models::Replica{3, {models::Stage{10, {25}}, models::Stage{5, {4, 5}},
                                                models::Stage{10, {0, 1, 2, 3}}, models::Stage{7, {36, 37}}}},
                            models::Replica{6, {models::Stage{9, {20, 21, 22, 23}}, models::Stage{6, {10, 11}},
                                                models::Stage{16, {16, 17, 18, 19}}, models::Stage{1, {52, 53}}}},
                            models::Replica{5, {models::Stage{5, {44, 45, 46, 47}}, models::Stage{27, {42}}}}});
  p.micro_batch = 2;
  p.overlap_grad_sync = true;
  const BothEngines e = both_feasible(in.cluster, w, p);
  testing::expect_syncs_agree(e, 0.2, 0.06, 0.025);
}

// Found by scripts/engine_diff.py (seed 12). Llama-2 7B on the H100 + MI300X cluster, overlapped:
// replica 0 on an H100 (layers 1-11), eight H100s (12-14) and two MI300Xs (24-25: 15-32); replica 1
// whole on MI300X 26. GPU 26 is in ten groups: the first segment's and the eight shards of the
// second with H100s (host-staged across vendors, through its NIC), and two of the third with its
// xGMI peers 24 and 25. The cost model queued all their buckets on the GPU's one side: 1.153 s
// (dp 0.366 s) against 0.958 s simulated. Its NIC, its link to 24 and its link to 25 are three
// sides, each a queue of its own (own_sides_of, models/grad_sync_own_sides.hpp).
TEST(SegmentSync, AGpusGroupsInsideItsNodeAndThroughItsNicRunSideBySide) {
  testing::Inputs in = testing::load("h100-mi300x.yaml", "llama2-7b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 5;
  models::Plan p = plan_of("MI300X in cross-vendor and mesh groups", 0,
                           {models::Replica{3, {models::Stage{11, {11}}, models::Stage{3, {0, 1, 2, 3, 4, 5, 6, 7}},
                                                models::Stage{18, {24, 25}}}},
                            models::Replica{2, {models::Stage{32, {26}}}}});
  p.overlap_grad_sync = true;
  const BothEngines e = both_feasible(in.cluster, w, p);
  testing::expect_syncs_agree(e, 0.1, 0.05, 0.02);
}


// Llama-2 7B on the H100 + MI300X cluster: replica 0 on MI300Xs 24 (layers 1-16) and 25 (17-32),
// replicas 1 and 2 whole on MI300Xs 26 and 27, all on one xGMI mesh node. GPUs 26 and 27 are in
// both segments' groups, {24, 26, 27} and {25, 26, 27}. A ring hop inside a mesh node is spread
// over the links to every member there (sim spread_over_mesh_links), so GPU 26's link to 27
// carries half of each group's hop, one group's bytes in all. The cost model put each hop whole on
// the link to the next member, 26 -> 27 for both groups: 1.272 s (dp 0.283 s) against 1.190 s
// (dp 0.201 s) simulated. Its own sides now spread as the simulator does (grad_sync_own_sides.cpp).
TEST(SegmentSync, AHopInsideAMeshNodeIsSpreadOverItsLinks) {
  testing::Inputs in = testing::load("h100-mi300x.yaml", "llama2-7b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 8;
  models::Plan p = plan_of("MI300X groups of three on one mesh node", 0,
                           {models::Replica{4, {models::Stage{16, {24}}, models::Stage{16, {25}}}},
                            models::Replica{2, {models::Stage{32, {26}}}},
                            models::Replica{2, {models::Stage{32, {27}}}}});
  const BothEngines e = both_feasible(in.cluster, w, p);
  testing::expect_syncs_agree(e, 0.1, 0.05, 0.02);
}


// Llama-2 7B on the H100 + MI300X cluster, interleaved (two chunks a stage), overlapped, ZeRO-1:
// an H100 pipeline (GPUs 0, 8) beside a MI300X one (16, 24), two micro-batches each; each stage's
// gradients sync with the other vendor's through host staging. A stage's chunk 1 has its last
// backward a chunk-backward per stage before chunk 0's (the interleaved cool-down), and Megatron-Core
// syncs each chunk's buckets from its own last backward. The simulator released all of a stage's
// buckets in its very last backward (chunk 0's), the cost model over a whole stage's backward
// (both chunks' time): 0.644 s (dp 0.099 s) simulated against 0.577 s (dp 0.032 s); both now take
// each chunk's buckets at its own last backward (models::bucket_ready_before_end_s).
TEST(SegmentSync, AnInterleavedStagesChunksSyncFromTheirOwnLastBackward) {
  testing::Inputs in = testing::load("h100-mi300x.yaml", "llama2-7b.yaml");
  models::Workload& w = in.workload;
  w.training.global_batch = 4;
  models::Plan p = plan_of("H100 and MI300X interleaved pipelines", 1,
                           {models::Replica{2, {models::Stage{16, {0}}, models::Stage{16, {8}}}},
                            models::Replica{2, {models::Stage{16, {16}}, models::Stage{16, {24}}}}});
  p.schedule = models::Schedule::kInterleaved;
  p.interleave = 2;
  p.overlap_grad_sync = true;
  const BothEngines e = both_feasible(in.cluster, w, p);
  testing::expect_syncs_agree(e, 0.04, 0.1, 0.02);
}

}  // namespace
}  // namespace hetsim::sim
