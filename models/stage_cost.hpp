// SPDX-License-Identifier: Apache-2.0
// Cost of one pipeline stage per micro-batch: the ops of its chunks (compute + TP collectives),
// host overhead, FLOPs, parameters. Shared by build_plan_work() (which keeps the ops) and
// predict() (which only keeps the sums).
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "comm_cost.hpp"
#include "compute_cost.hpp"
#include "plan.hpp"
#include "pipeline_time.hpp"
#include "plan_work.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// Sums of one pass (forward or backward of one chunk, one micro-batch).
/// The host thread launches ops in order, spending host time on each; the GPU runs an op once
/// it is launched and the previous op is done. `lag_s` is how far the GPU's queue runs behind
/// the host. Per op (host h, GPU g): lag = max(lag - h, 0) + g. The pass ends when the GPU
/// drains: wall = host + lag. A GPU-bound pass is its GPU time; a launch-bound pass shows GPU
/// idle gaps (PyTorch Performance Tuning Guide, "CUDA graphs"; Lu et al., "Understanding the
/// overheads of launching CUDA kernels", ICPP'19 poster) plus the GPU time of its final kernels.
struct PassCost {
  double gpu_s = 0;       ///< compute kernels on the GPU
  double tp_comm_s = 0;   ///< TP collectives (not overlapped with compute in Megatron-LM)
  double host_s = 0;      ///< framework host time (kernels x kFrameworkOpHost_s)
  double lag_s = 0;       ///< GPU queue behind the host at the end of what was launched so far
  double stall_s = 0;     ///< GPU idle time waiting for the host; set by close_pass()
  double flop = 0;        ///< FLOPs executed (recompute included)
  double model_flop = 0;  ///< FLOPs excluding recompute
  double wall_s() const { return gpu_s + tp_comm_s + stall_s; }

  /// One op: host time, then GPU (or collective) time.
  void launch(double host, double gpu) {
    host_s += host;
    lag_s = std::max(lag_s - host, 0.0) + gpu;
  }
  /// `n` repetitions of a unit pass (e.g. a layer) that was measured from an empty queue. One
  /// unit maps lag x to max(x + A, B) with A = its GPU - host time, B = its final lag from
  /// x = 0; n units compose to max(x + nA, B + (n - 1) max(A, 0)) (max-plus algebra, Baccelli
  /// et al., "Synchronization and Linearity", 1992, ch. 3).
  void launch_repeated(const PassCost& unit, int n) {
    if (n <= 0) return;
    const double a = unit.gpu_s + unit.tp_comm_s - unit.host_s;
    lag_s = std::max(lag_s + n * a, unit.lag_s + (n - 1) * std::max(a, 0.0));
    host_s += n * unit.host_s;
    gpu_s += n * unit.gpu_s;
    tp_comm_s += n * unit.tp_comm_s;
    flop += n * unit.flop;
    model_flop += n * unit.model_flop;
  }
  void close_pass() { stall_s = std::max(0.0, host_s + lag_s - gpu_s - tp_comm_s); }
  /// The pass when the host is not synchronized with the GPU between passes
  /// (Plan::overlap_p2p_comm): the host prepares it while the GPU runs the passes queued before,
  /// so it takes max(GPU, host), the cycle time of the host and the GPU in series (Baccelli et
  /// al., "Synchronization and Linearity", 1992, ch. 3), instead of starting on an empty queue.
  void close_pass_unsynchronized() { stall_s = std::max(0.0, host_s - gpu_s - tp_comm_s); }
  void close_pass(bool host_synchronized) {
    if (host_synchronized) close_pass();
    else close_pass_unsynchronized();
  }
};

/// What a stage looks like to the cost model; stages with equal keys have equal costs.
struct StageShape {
  const NodeType* node_type = nullptr;  ///< slowest GPU type of the TP group
  int layers = 0;                       ///< per chunk (layers / interleave)
  int tp = 1;
  bool first = false, last = false;     ///< holds the embedding / the LM head
  GroupCost tp_group;                   ///< link figures of the TP group
  bool operator==(const StageShape&) const = default;  ///< every field, the TP group's figures whole
};

/// Per micro-batch cost of one stage (all chunks together).
struct StageCost {
  PassCost forward, backward;  ///< summed over the stage's chunks
  double params = 0;           ///< parameters per GPU (before ZeRO sharding)
  /// Wall time of the first and the last chunk's passes (interleaved: chunk 0 holds the first
  /// stage's embedding, chunk v-1 the last stage's LM head; the chunks between only layers). One
  /// chunk: both are the stage's.
  StageTimes first_chunk, last_chunk;
};

/// The GPU type a TP group computes at: the slowest one at the training's matmul dtype.
const NodeType& slowest_node_type(const Cluster& cluster, const std::vector<int>& gpus, const TrainingSpec& training);

/// Parameters held per GPU of a stage of `layers` blocks with TP t (embedding on the first
/// stage; final norm and, when untied or pp > 1, an LM-head copy on the last). The word
/// embedding and the LM head are vocab-parallel (split over the TP ranks) unless
/// `whole_vocab` (the execution engine's: TrainingSpec::engine_kernels).
double stage_params(const ModelSpec& m, int layers, int tp, bool first, bool last, int pp, bool whole_vocab = false);

/// Layer shape of the plan's micro-batch on a TP group of size tp.
LayerShape layer_shape(const Workload& w, const Plan& plan, int tp);

/// One decoder layer's forward and backward sums (stage_cost's fast path) per node type and TP
/// group figures. They do not depend on the stage's layer count or ends, so the stages of one
/// evaluation that share them (a uniform plan's first, middle and last stages) emit the layer's
/// ops once. A memo serves one workload and plan, which are not in its key: predict() keeps one
/// per evaluation.
class LayerCostMemo {
 public:
  struct Entry {
    const NodeType* node_type = nullptr;
    GroupCost tp_group;
    PassCost forward, backward;
  };
  const Entry* find(const NodeType* node_type, const GroupCost& tp_group) const {
    for (int i = 0; i < count_; ++i)
      if (entries_[i].node_type == node_type && entries_[i].tp_group == tp_group) return &entries_[i];
    return nullptr;
  }
  /// Keeps `e` when there is room (a plan meets a few node types and TP groups; inline storage
  /// keeps the evaluation free of allocations) and returns where it is kept, or nullptr.
  const Entry* add(const Entry& e) {
    if (count_ == kCapacity) return nullptr;
    entries_[count_] = e;
    return &entries_[count_++];
  }

 private:
  static constexpr int kCapacity = 4;
  std::array<Entry, kCapacity> entries_;
  int count_ = 0;
};

/// Cost of a stage from its shape. When `ops` is given, the ops of every chunk are appended
/// to it (one ChunkWork per chunk), with a trailing "host_stall" compute op per pass when the
/// pass is host-bound, so that the ops' durations sum to the pass wall time.
/// Throws std::out_of_range when the GPU type has no peak in the dtype.
/// `layers`, when given, keeps the layer sums of the fast path (without `ops`) for the next stages
/// of the same plan.
StageCost stage_cost(const StageShape& shape, const Workload& w, const Plan& plan, int pp,
                     std::vector<ChunkWork>* ops = nullptr, LayerCostMemo* layers = nullptr);

}  // namespace hetsim::models
