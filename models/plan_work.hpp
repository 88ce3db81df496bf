// SPDX-License-Identifier: Apache-2.0
// The work of one training step of a Plan, as a schedule of timed ops per stage.
// Built once by the cost model (build_plan_work) and consumed by BOTH engines:
// the analytic predictor sums it in closed form; the SimGrid simulator replays it op by op.
// This is what keeps "same op costs" true between predict and simulate.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "plan.hpp"
#include "topology.hpp"

namespace hetsim::models {

enum class OpKind {
  kCompute,          ///< local kernel(s): duration_s is the modelled time on this stage's GPU type
  kTpAllReduce,      ///< collective over the stage's TP group, size_bytes per rank
  kTpAllGather,      ///< sequence-parallel all-gather (size_bytes = full gathered buffer per rank)
  kTpReduceScatter,  ///< sequence-parallel reduce-scatter (size_bytes = full input buffer per rank)
};
const char* to_string(OpKind k);

struct Op {
  OpKind kind = OpKind::kCompute;
  std::string name;        ///< e.g. "qkv", "mlp_in", "mlp_out", "tp_attn", "lm_head"
  double duration_s = 0;   ///< kCompute only
  double size_bytes = 0;   ///< collectives only
  // --- additive fields (cost model) ---
  // kCompute: duration_s is the GPU time of the op's kernels (roofline + launch gaps); the op
  // named "host_stall" (last op of a pass, present only when the pass is host-bound) is GPU
  // idle time waiting for the framework's host thread, so that a pass's ops sum to its wall
  // time. Collectives: duration_s is the analytic estimate on the TP group's links (the
  // simulator recomputes it on its network; the analytic engine uses it as is).
  int kernels = 0;         ///< kernels launched (host overhead = kernels x kFrameworkOpHost_s)
  double flop = 0;         ///< FLOPs executed by this op
  bool recompute = false;  ///< part of a recompute forward inside the backward pass
  /// Collectives only (Plan::tp_comm_overlap): runs during the GEMM beside it, an all-gather
  /// during the compute op after it, a reduce-scatter during the compute op before it.
  bool overlapped = false;
};

/// One (virtual) pipeline chunk on one stage's TP group, per micro-batch.
struct ChunkWork {
  std::vector<Op> forward;
  std::vector<Op> backward;  ///< includes the recompute forward when recompute is on
};

struct StageWork {
  int replica = 0;
  int stage = 0;
  std::vector<int> gpus;                 ///< TP group
  /// The ops of each chunk (size = interleave, 1 unless interleaved), shared by every stage of
  /// the same shape: build_plan_work builds a shape's ops once, so a plan of thousands of equal
  /// replicas holds a few op lists, not one per stage (4000 x 96 stages took 2 GB before).
  std::shared_ptr<const std::vector<ChunkWork>> chunk_ops;
  const std::vector<ChunkWork>& chunks() const {
    static const std::vector<ChunkWork> kNone;
    return chunk_ops ? *chunk_ops : kNone;
  }
  double activation_send_bytes = 0;      ///< per micro-batch per chunk boundary, to the next stage (per TP rank)
  /// Per micro-batch, all chunks: compute + TP comm + host stall + the stage's pipeline sends
  /// (the analytic engine's stage time, as StageReport::forward_s).
  double forward_s = 0;
  double backward_s = 0;                 ///< the same for the backward pass, recompute included
  double p2p_forward_s = 0;              ///< analytic time of one activation send to the next stage (0 on the last)
  double p2p_backward_s = 0;             ///< analytic time of one gradient send to the previous stage (0 on the first)
  double grad_sync_bytes = 0;            ///< gradient bytes per GPU to synchronise across DP
  double optimizer_s = 0;                ///< optimizer step time per GPU
  double memory_bytes = 0;               ///< peak per GPU
  double memory_capacity_bytes = 0;
};

/// A data-parallel group: GPUs holding the same parameter shard that must sync gradients.
struct DpGroup {
  std::vector<int> gpus;
  double size_bytes = 0;                 ///< gradient bytes per GPU
  // --- additive fields (cost model) ---
  int stage = 0;                         ///< pipeline stage index whose gradients it syncs
  /// all_reduce (ZeRO 0), or reduce-scatter of gradients + all-gather of updated weights (ZeRO >= 1,
  /// gather_bytes per GPU); or the tied-embedding all-reduce between first and last stage.
  bool embedding = false;
  double gather_bytes = 0;
  int buckets = 1;                       ///< gradient buckets of an overlapped sync (grad_bucket_count)
  double time_s = 0;                     ///< analytic time on the group's links
  /// Per member (as `gpus`): where in its stage's last backward pass the group's gradients are
  /// produced, fractions of the pass (DpSegments::backward_window); empty: the whole pass. A stage
  /// in several segments produces them one after the other, and a group's bucket is ready once
  /// every member has produced it (Megatron-Core's DistributedDataParallel per communicator).
  std::vector<double> ready_from, ready_to;
};

struct PlanWork {
  std::vector<std::vector<StageWork>> replicas;  ///< [replica][stage]
  std::vector<DpGroup> dp_groups;
  bool feasible = true;
  std::string infeasible_reason;
  // --- additive fields (cost model) ---
  /// Senders sharing each node's NICs in the gradient sync (models::dp_nic_channels per node),
  /// when the plan leaves GPUs idle or puts a GPU in several groups; empty: every GPU of a node.
  std::vector<NodeSenders> dp_nic_senders;
};

}  // namespace hetsim::models
