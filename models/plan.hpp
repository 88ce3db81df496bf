// SPDX-License-Identifier: Apache-2.0
// A parallel plan: data-parallel replicas, each a pipeline of stages on explicit GPUs.
// A homogeneous Megatron (tp, pp, dp) plan is the special case built by make_uniform_plan().
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hetsim::models {

struct Cluster;
struct NodeSenders;  // topology.hpp
struct Workload;

enum class Schedule { kGpipe, k1f1b, kInterleaved };
enum class Recompute { kNone, kSelective, kFull };
enum class GradSyncAlgorithm { kAuto, kRing, kTree, kHierarchical };
/// How the ZeRO-2/3 per-pass collectives (weight all-gathers, gradient reduce-scatters) of a
/// data-parallel group that spans nodes use the nodes' NICs. Which one a stack gets is a matter
/// of its implementation, not of the hardware, so a plan states it (Plan::sharded_collectives):
/// - kMemberNic: every member moves its (n-1)/n share over its own share of its node's NICs, as
///   many small per-parameter gathers do. DeepSpeed ZeRO-3 as measured in Narayanan et al.,
///   SC'21 Table 2: the step takes as long on 1536 GPUs as on 768 (and for 530B on 2240 as on
///   1120), ~16 GB/s per GPU on nodes of eight 25 GB/s NICs; DeepSpeed issues #1174 and #5047
///   trace it to gathers per nn.Linear.
/// - kNodeNics: one large collective per wrapped block (PyTorch FSDP's flat parameters) is a
///   ring over NCCL's channels, one per NIC: a node's boundary is crossed once per channel, so
///   the collective runs at the node's NICs together (bus bandwidth = members on the node x
///   NIC, capped by the node's fabric; NCCL tests PERFORMANCE.md). MosaicML llm-foundry's FSDP
///   runs of MPT-13B/70B on 16-64 A100s and H100s measure 37+ GB/s per GPU, above one NIC.
enum class ShardedCollectives { kMemberNic, kNodeNics };
const char* to_string(Schedule s);
const char* to_string(Recompute r);
/// The recompute that to_string names `name`; nullopt for any other text.
std::optional<Recompute> recompute_named(std::string_view name);
const char* to_string(GradSyncAlgorithm a);
const char* to_string(ShardedCollectives c);
/// The ShardedCollectives that to_string names `name`; nullopt for any other text.
std::optional<ShardedCollectives> sharded_collectives_named(std::string_view name);

/// One pipeline stage of one replica: `layers` transformer blocks on `gpus` (TP = gpus.size()).
/// The first stage also holds the embedding; the last the final norm, LM head and loss.
struct Stage {
  int layers = 0;
  std::vector<int> gpus;  ///< global GPU indices (Cluster::gpus order), TP rank order
  int tp() const { return static_cast<int>(gpus.size()); }
};

/// The rank of a receiving stage of TP degree `to_tp` that rank `rank` of a sending stage of TP
/// degree `from_tp` hands its pipeline slice to (the activation forward, its gradient back):
/// rank * to_tp / from_tp. With sequence parallelism rank i holds rows [i s / t, (i + 1) s / t)
/// of the sequence (Korthikanti et al., MLSys'23 §4.2.2), which lie in the rows of receiving rank
/// i t' / t when t' divides t; when t' > t the slice reaches the first rank of the rows it spans,
/// one flow a sender. Rank-wise between equal degrees. Both engines send by it (the cost model's
/// NIC counts, models/predictor.cpp; the simulator's flows, sim group_transfer).
inline int pipeline_peer(int rank, int from_tp, int to_tp) { return rank * to_tp / from_tp; }

struct Replica {
  int micro_batches = 0;  ///< micro-batches this replica processes per step (uneven across replicas allowed)
  std::vector<Stage> stages;
};

struct Plan {
  std::string name;
  int micro_batch = 1;                    ///< sequences per micro-batch
  Schedule schedule = Schedule::k1f1b;
  int interleave = 1;                     ///< virtual stages per GPU (Schedule::kInterleaved)
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  int zero = 0;                           ///< ZeRO stage 0-3
  GradSyncAlgorithm grad_sync = GradSyncAlgorithm::kAuto;
  bool overlap_grad_sync = false;         ///< overlap DP gradient sync with backward
  /// Sequence-parallel all-gathers and reduce-scatters of the transformer blocks run during the
  /// GEMM they feed or reduce (Megatron-Core --tp-comm-overlap, Transformer Engine userbuffers;
  /// Wang et al., "Overlap Communication with Dependent Computation via Decomposition", ASPLOS
  /// 2023): a pair takes max(GEMM, collective). Needs sequence_parallel.
  bool tp_comm_overlap = false;
  /// Pipeline sends and receives run asynchronously beside the chunks' compute and the host is
  /// not synchronized with the GPU at them (Megatron-Core overlap_p2p_comm, which turns off
  /// batch_p2p_comm and its device synchronize; NVIDIA Megatron Bridge "Communication Overlap",
  /// PP mode): a pass's host work runs while the GPU drains the work queued before it, and a
  /// stage's transfers take only what they need beyond its compute. Interleaved schedule only,
  /// as in Megatron-Core (its non-interleaved 1F1B rejects it).
  bool overlap_p2p_comm = false;
  /// ZeRO-3 gathers the next layers' weights while the current ones compute (DeepSpeed's
  /// stage3_prefetch_bucket_size, PyTorch FSDP's backward/forward prefetch): a pass lasts
  /// max(compute, traffic). False: each pass waits for its weights and its reduce-scatter, and
  /// lasts compute + traffic (no prefetch; hetsim's execution engine, exec/README.md).
  bool zero3_prefetch = true;
  /// ZeRO-2/3 per-pass collectives across nodes: at each member's NIC share (default, DeepSpeed
  /// ZeRO-3) or fanned out over the node's NICs (PyTorch FSDP). See ShardedCollectives.
  ShardedCollectives sharded_collectives = ShardedCollectives::kMemberNic;
  std::vector<Replica> replicas;

  int pp() const { return replicas.empty() ? 0 : static_cast<int>(replicas[0].stages.size()); }
  int dp() const { return static_cast<int>(replicas.size()); }
  int gpu_count() const;
  /// Sequences per step = micro_batch * sum of micro_batches.
  long long global_batch() const;
};

/// A plan that is well-formed but cannot run (does not fit, degrees do not divide...).
struct Infeasible {
  std::string reason;
};

struct UniformPlanOptions {
  int micro_batch = 1;
  Schedule schedule = Schedule::k1f1b;
  int interleave = 1;
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;
  bool overlap_p2p_comm = false;  ///< Plan::overlap_p2p_comm (interleaved schedules only)
  int zero = 0;
  bool overlap_grad_sync = false;
  ShardedCollectives sharded_collectives = ShardedCollectives::kMemberNic;  ///< Plan::sharded_collectives
  int first_gpu = 0;  ///< use GPUs [first_gpu, first_gpu + tp*pp*dp)
};

/// Megatron-style plan on tp*pp*dp GPUs of the cluster in rank order (TP fastest, then DP,
/// then PP); layers split as evenly as possible, the first `layers mod pp` stages take one more;
/// global_batch / (dp * micro_batch) micro-batches per replica.
std::variant<Plan, Infeasible> make_uniform_plan(const Cluster& cluster, const Workload& workload,
                                                 int tp, int pp, int dp, const UniformPlanOptions& options);



/// GPUs of each node (by node index) whose stage's TP group spans nodes: they send their TP
/// traffic through the node's NICs at once, each node its own count and busiest rail (a TP group
/// inside one node sends none there). Both engines share NICs by it (topology.hpp group_cost
/// concurrent_on_node).
std::vector<NodeSenders> cross_node_tp_senders(const Plan& plan, const Cluster& cluster);

/// ZeRO-3 gathers a layer's weights at every pass and reduce-scatters its gradients after every
/// backward over the layer's data-parallel group (ZeRO-2 the gradients; comm_cost.hpp
/// pass_traffic), and the members pair those collectives up in order (DeepSpeed stages 2 and 3
/// and PyTorch FSDP hang when ranks run different numbers of passes): every replica must run the
/// same stages (layers per stage) and the same number of micro-batches; TP degrees may differ.
/// Returns why a ZeRO-2/3 plan breaks that, empty when it does not (or the plan is ZeRO-0/1, or
/// ZeRO-2 with one micro-batch per replica, which reduces only at the end of the step).
/// The predictors report it as infeasible, exec refuses it.
std::string zero3_asymmetry(const Plan& plan);

/// A plan setting that needs another one (tp_comm_overlap needs sequence parallelism; overlapped
/// sends and interleave > 1 need the interleaved schedule): the field to report it at and why.
/// The one rule table of check_plan() and of the plan file's reader, which reports these at
/// their lines even when other fields of the file did not read.
struct FlagConflict {
  std::string field;
  std::string message;  ///< "what is wrong (expected ...)"
};
std::vector<FlagConflict> flag_conflicts(const Plan& plan);

/// Structural checks that need the cluster and workload (GPU indices exist and are used once,
/// layers sum to the model's, TP divides heads, micro-batches sum to the global batch...).
/// Returns every problem found, each as "field: what (expected ...)"; empty when valid.
std::vector<std::string> check_plan(const Plan& plan, const Cluster& cluster, const Workload& workload);

}  // namespace hetsim::models
