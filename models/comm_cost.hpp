// SPDX-License-Identifier: Apache-2.0
// Collective and point-to-point time from a group's link figures (alpha-beta model).
#pragma once
#include "plan.hpp"
#include "topology.hpp"

namespace hetsim::models {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter };

/// Fixed cost of one NCCL/RCCL collective call (kernel launch + protocol handshake): an 8-byte
/// all_reduce takes ~10-20 us on 8 NVSwitch-connected A100s (nccl-tests all_reduce_perf).
inline constexpr double kCollectiveLaunch_s = 10e-6;

/// Ring: all-reduce 2(n-1)/n * S/B + 2(n-1) alpha; all-gather / reduce-scatter (n-1)/n * S/B +
/// (n-1) alpha, S = the full buffer per rank (Thakur, Rabenseifner, Gropp, "Optimization of
/// collective communication operations in MPICH", IJHPCA 2005; Patarasuk & Yuan JPDC 2009).
double ring_time(CollectiveKind kind, double size_bytes, const GroupCost& g);
/// Latency terms (NCCL's tuning model, src/graph/tuning.cc). Ring: of its 2(n-1) all-reduce
/// steps ((n-1) for all-gather / reduce-scatter) a pipelined chunk takes 2(N-1) between the N
/// nodes and the rest inside them. Tree: up and down the chain of a node's members and a
/// binary tree of depth ceil(log2 N) between nodes; inside one node it is no shorter than the
/// ring, so the tree is chosen only across nodes, as NCCL does.
double ring_latency_s(CollectiveKind kind, const GroupCost& g);
double tree_latency_s(const GroupCost& g);
/// NCCL double binary tree all-reduce: reduce then broadcast, pipelined: ~2 S/B + tree_latency_s
/// (Sanders, Speck, Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and scan",
/// Parallel Computing 2009; NCCL 2.4 release notes). Other kinds fall back to the ring.
double tree_time(CollectiveKind kind, double size_bytes, const GroupCost& g);
/// Hierarchical: intra-node reduce-scatter over the k members of a node, inter-node ring
/// all-reduce of S/k per member over N nodes (each member on its own NIC share), intra-node
/// all-gather (Jia et al., "Highly scalable deep learning training system with mixed-precision",
/// 2018; Horovod hierarchical allreduce).
double hierarchical_time(CollectiveKind kind, double size_bytes, const GroupCost& g);
/// The algorithm a collective runs with: `requested`, or for kAuto the faster of ring and tree,
/// the two algorithms NCCL and RCCL choose between for these groups (NCCL 2.4+ tuner; NVLS and
/// CollNet need switch support the cluster format does not describe). Hierarchical
/// (Horovod-style) is never picked automatically: no NCCL/RCCL version runs it on its own, so a
/// framework must ask for it (`grad_sync: hierarchical`).
GradSyncAlgorithm resolve_algorithm(CollectiveKind kind, double size_bytes, const GroupCost& g,
                                    GradSyncAlgorithm requested = GradSyncAlgorithm::kAuto);
/// The time of the algorithm resolve_algorithm() picks.
double collective_time(CollectiveKind kind, double size_bytes, const GroupCost& g,
                       GradSyncAlgorithm algorithm = GradSyncAlgorithm::kAuto);
/// The data-parallel collectives inside one micro-batch's passes of a stage, in units of the
/// stage's full weights (gathers) and gradients (reduce-scatters). ZeRO-3 (Rajbhandari et al.,
/// "ZeRO: memory optimizations toward training trillion parameter models", SC'20 §5.3 and
/// §7.2.3): weights all-gathered before the forward and again before the backward, gradients
/// reduce-scattered as the backward produces them, 3x the weights per step instead of data
/// parallelism's 2x; with full activation recomputation the recompute forward inside the
/// backward gathers them once more (DeepSpeed stage 3 releases a module's gathered weights after
/// each forward of it); nothing is left for the end of the step but the optimizer on the local
/// shard. ZeRO-2 (§5.2): a rank keeps only its shard of the gradients, so they are
/// reduce-scattered after every backward too, not once per step (DeepSpeed stage 2:
/// "gradient reduction is required after every backward because of gradient partitioning",
/// deepspeedai/DeepSpeed#2252): the last micro-batch's reduction is the end-of-step one of
/// ZeRO-1 (same time, same overlap), the earlier ones run in their passes
/// (micro_batches_with_pass_traffic); its weights stay whole and are all-gathered once, after
/// the optimizer. ZeRO 0/1: nothing per pass (gradients accumulate whole and are reduced once).
struct PassTraffic {
  int forward_gathers = 0;
  int backward_gathers = 0;
  int backward_reduce_scatters = 0;
  bool any() const { return forward_gathers + backward_gathers + backward_reduce_scatters > 0; }
};
PassTraffic pass_traffic(int zero, Recompute recompute);
/// Whether a pass's compute hides its traffic (the pass lasts max(compute, traffic) instead of
/// their sum): ZeRO-3 with prefetch (Plan::zero3_prefetch), ZeRO-2 with the gradient sync
/// overlapped with the backward (Plan::overlap_grad_sync; DeepSpeed's `overlap_comm`).
bool pass_traffic_hidden(const Plan& plan);
/// How many of a replica's `micro_batches` carry pass_traffic: all of them under ZeRO-3, all
/// but the last under ZeRO-2 (whose last reduction runs at the end of the step), none below.
int micro_batches_with_pass_traffic(int zero, int micro_batches);
/// Whether micro-batch `micro_batch` (0-based, of `micro_batches`) carries pass_traffic: the
/// per-micro-batch form of micro_batches_with_pass_traffic, for engines that step through them.
bool micro_batch_carries_pass_traffic(int zero, int micro_batch, int micro_batches);
/// Time of one ZeRO-2/3 per-pass all-gather or reduce-scatter of `size_bytes` (the full stage's
/// weights or gradients). kMemberNic: a ring in which every member moves its (n-1)/n share over
/// its own share of its node's NICs, without the multi-NIC fan-out that NCCL reaches for one
/// large collective. What Narayanan et al. measured (SC'21 Table 2, DeepSpeed ZeRO-3 without
/// model parallelism) says so: the step takes as long on 1536 GPUs as on 768 (and for 530B on
/// 2240 as on 1120), so each GPU's traffic runs at one GPU's NIC rate; the node-aggregate rate
/// would be 8x faster on those DGX A100 nodes and would make the step shrink with the compute it
/// overlaps. kNodeNics: the group's ring at its bus bandwidth, which counts the members of a node
/// crossing its boundary together over their NICs (PyTorch FSDP; see ShardedCollectives).
double sharded_collective_time(CollectiveKind kind, double size_bytes, const GroupCost& g, ShardedCollectives how);

/// Point-to-point: latency + S/B.
double p2p_time(double size_bytes, const PathCost& path);

}  // namespace hetsim::models
