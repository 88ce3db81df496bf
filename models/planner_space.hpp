// SPDX-License-Identifier: Apache-2.0
// The planner's search space: GPU pools, knob settings, per-stage unit costs, link estimates.
// Internal to the planner (planner_*.cpp); the public entry point is planner.hpp.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "workload.hpp"

namespace hetsim::models::planner {

/// GPUs of one node type inside one zone: the unit the search picks from.
struct Pool {
  int zone = 0;
  int node_type = 0;
  std::vector<int> nodes;           ///< cluster node indices, rank order
  int gpus_per_node = 0;
  std::string label;                ///< "zone/node-type"
  int gpu_count() const { return static_cast<int>(nodes.size()) * gpus_per_node; }
};

/// Pools in rank order of their first node; node types of identical hardware in a zone share one.
std::vector<Pool> make_pools(const Cluster& cluster);

/// When a phase of the search that may take `time_limit_s` (PlannerOptions::time_limit_s; 0: none)
/// from `start` must stop. A limit beyond what the clock can add to `start` (about 292 years of
/// nanoseconds from its epoch) is none: converted, `--time-limit 1e10` overflowed into the past
/// and stopped every search at once, with a worse plan.
std::chrono::steady_clock::time_point search_deadline(double time_limit_s, std::chrono::steady_clock::time_point start);

/// Plan-wide settings searched in the outer loop.
struct Knobs {
  int micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = true;
  int interleave = 1;               ///< 1 = 1F1B
  int zero = 0;
  bool tp_comm_overlap = false;     ///< PlannerOptions::tp_comm_overlap (with sequence parallel only)
  bool overlap_p2p_comm = false;    ///< PlannerOptions::overlap_p2p_comm (interleaved only)
  auto key() const {
    return std::tuple(micro_batch, static_cast<int>(recompute), sequence_parallel, interleave, tp_comm_overlap,
                      overlap_p2p_comm);
  }
};

/// ZeRO-3 planning (planner_zero3.cpp). The twin of a plan under ZeRO-3: every replica one stage,
/// the micro-batches split evenly (nullopt when the plan has one replica, a pipeline, or a
/// micro-batch total that does not divide by the replicas).
std::optional<Plan> zero3_twin(const Plan& plan, ShardedCollectives how);
/// A shape description ("2x[a tp4 x1 L32] m68 + 8x[b tp4 x1 L32] m31-30") with every kind's
/// micro-batch count replaced by `micro_batches`.
std::string with_micro_batches(const std::string& shape, int micro_batches);
/// The ZeRO stages the shape search runs for the stages the user searches: ZeRO-3 as ZeRO-1,
/// whose shapes get ZeRO-3 twins.
std::vector<int> shape_search_zero_stages(const std::vector<int>& searched);

/// TP degrees valid for a node type and model: divide the node's GPUs, heads, ffn_hidden,
/// and divide or are divided by kv_heads (the same rules as check_plan()). Sequence parallelism
/// does not narrow them: a shape whose TP degrees do not all divide seq_len runs without it
/// (sequence_parallel_fits).
std::vector<int> valid_tp_degrees(const ModelSpec& model, int gpus_per_node, const std::vector<int>& wanted);

/// Whether sequence parallelism can split the sequence over every TP degree of a shape (0: a pool
/// not used). The searched knob turns it on only where it can: dropping every TP shape of a
/// sequence of 4095 tokens made `--no-sequence-parallel` find plans 7-24% faster (s60 hunt).
bool sequence_parallel_fits(const ModelSpec& model, const std::vector<int>& tp_degrees);

/// Linear cost of one pipeline stage on a TP group ("unit") of one node type, fitted to what
/// models::predict() reports for small probe pipelines (planner_stage_cost.cpp):
///   time(k layers)   = k*layer_s + fixed_s (+ first_s on stage 0, + last_s on the last stage)
///   memory(k layers) = k*weight_bytes + k*inflight*act_bytes + fixed_bytes (+ first/last)
/// where inflight is the activation multiplier of the stage's position (inflight_factor()).
/// A one-stage pipeline has its own extras (solo_*): with tied embeddings it keeps one copy of
/// the embedding where a longer pipeline keeps one on its first and one on its last stage.
/// *_state_bytes: the parameter-state part of the extras (weights, gradients, optimizer state of
/// the embedding / LM head), which ZeRO shards like the layers' weight_bytes.
struct UnitCost {
  bool ok = false;
  std::string reason;
  double layer_s = 0, fixed_s = 0, first_s = 0, last_s = 0, solo_s = 0;  ///< forward + backward per micro-batch
  double weight_bytes = 0, act_bytes = 0, fixed_bytes = 0, first_bytes = 0, last_bytes = 0, solo_bytes = 0;
  double first_state_bytes = 0, last_state_bytes = 0, solo_state_bytes = 0;
  double capacity_bytes = 0;

  /// Time of stage s of `stages` that does not grow with its layers (p2p excluded).
  double extra_s(int s, int stages) const {
    if (stages == 1) return fixed_s + solo_s;
    return fixed_s + (s == 0 ? first_s : 0.0) + (s == stages - 1 ? last_s : 0.0);
  }
  /// Memory of stage s that does not grow with its layers, its parameter states scaled like
  /// the layers' weights (`weight_scale`, ZeRO).
  double extra_bytes(int s, int stages, double weight_scale) const {
    const double keep = weight_scale - 1.0;  // negative: the sharded-away part
    if (stages == 1) return fixed_bytes + solo_bytes + keep * solo_state_bytes;
    return fixed_bytes + (s == 0 ? first_bytes + keep * first_state_bytes : 0.0) +
           (s == stages - 1 ? last_bytes + keep * last_state_bytes : 0.0);
  }
};

/// Activation multiplier of stage s of S with m micro-batches: 1F1B keeps min(S - s, m)
/// micro-batches in flight (Narayanan et al. SC'21, sec. 2.2.1); the interleaved schedule's
/// warm-up holds 2(S - s - 1) + (v - 1)S + 1 chunks of 1/v of the stage (Megatron-LM's
/// interleaved schedule, sec. 2.2.2), capped by the m*v chunks that exist.
double inflight_factor(int s, int stages, int micro_batches, int interleave);

/// Fraction of the weight+gradient+optimizer bytes that ZeRO stage z shards over the DP
/// group. Mixed-precision Adam keeps 2 (fp16 weights) + 2 (grads) + 12 (fp32 master, m, v)
/// = 16 bytes/param (Rajbhandari et al., ZeRO, SC'20, sec. 3.1 and Fig. 1): stage 1 shards
/// the 12, stage 2 also the 2 of gradients, stage 3 everything; other dtypes and optimizers
/// in the proportions of state_bytes_per_param (fp32 Adam: 8 of 16, then 12 of 16).
double zero_sharded_fraction(int zero, const TrainingSpec& training);
/// What remains per GPU of a layer's unsharded weight-related bytes with ZeRO `zero` over `dp`
/// replicas: 1 - f + f/dp of zero_sharded_fraction f.
double zero_weight_scale(int zero, int dp, const TrainingSpec& training);

/// Time of one pipeline boundary transfer (one micro-batch's activations, or their gradient,
/// `boundary_bytes` in all) from the TP group starting at GPU `from` to the one starting at `to`,
/// as the predictor prices it: each rank of the sending group sends its 1/tp_from slice
/// (Megatron-LM scatter-gather, Narayanan et al. SC'21 sec. 4.1; between TP degrees the whole
/// tensor crosses once, split over the senders), over topology.hpp's path (host-staged between
/// vendors without RDMA, WAN between zones). `wan_pipelines`: the pipelines whose same boundary
/// crosses the WAN link between the two GPUs' zones at once (their tensors share it, as the
/// predictor counts them: count_pipeline_wan_senders); ignored within a zone. `copies_out` /
/// `copies_in`: the pipelines whose same boundary leaves `from`'s node / enters `to`'s node at once
/// (each with the sender's tp_from flows, as the predictor counts a send's own flows:
/// count_pipeline_nic_senders); 0: every GPU of the node sends (a node full of one stage index).
double p2p_estimate_s(const Cluster& cluster, int from, int tp_from, int to, int tp_to, double boundary_bytes,
                      int wan_pipelines = 1, int copies_out = 0, int copies_in = 0);

/// Of `copies` pipelines laid out as a pool's units are (stage j of copy c is unit j*copies + c,
/// `units_per_node` consecutive units a node), how many of stage j's units on the node of copy 0's
/// send to a unit of stage j + 1 on another node (`out`), and how many of stage j + 1's units on
/// the node of copy 0's receive from another node (`in`). Stage j the pool's last (`last_in_pool`):
/// its units send to another pool's nodes, so every one of them on that node crosses, and `in` is
/// not set.
struct BoundaryCrossings {
  int out = 0;
  int in = 0;
};
BoundaryCrossings boundary_crossings(int j, int copies, int units_per_node, bool last_in_pool);

/// In a 1F1B steady state, pipeline exchanges at boundaries of one parity run together (stage b
/// pairs with b + 1 in Megatron-LM's send_forward_recv_backward, and stages alternate forward and
/// backward passes), so a node holding stages a..z of a pool whose other end also crosses nodes
/// sends (or receives) that end's tensor at the same time as boundary j's when the two boundaries
/// have one parity. The search's estimate counts those flows too: the simulator shows them
/// sharing the NIC (consumer-4090-a100 llama2-7b, 4 copies over boxes of two stages each: 61.4 s
/// simulated, 53.3 s with each boundary alone, 66.6 s with the pairs shared), and the predictor,
/// which prices each boundary alone, rates such plans above their simulation. Returns `c` with
/// `out` (`in`) doubled where the sending (receiving) node of boundary j, in a pool of `stages`
/// stages with or without stages `before` / `after` it in the pipeline, holds such a pair.
BoundaryCrossings with_same_parity_exchanges(BoundaryCrossings c, int j, int copies, int units_per_node,
                                             int stages, bool before, bool after);

/// Gradient sync of `bytes` of gradients per GPU over `members` (one GPU per replica), with
/// comm_cost.hpp's collective model on topology.hpp's group figures, in its two parts: the
/// gradients' reduction (a ring all-reduce, or under ZeRO >= 1 a reduce-scatter) and the updated
/// weights' all-gather (ZeRO >= 1 only; ZeRO, SC'20, sec. 5), whose bytes are the weights' width
/// (zero_gather_per_grad_byte: 16-bit weights beside FP32 gradients gather half, as the
/// predictor's GradSync prices them). `overlapped` (the plan's overlap_grad_sync): the reduction
/// also as Megatron-Core's buckets (grad_bucket_count), one collective each with its latency
/// terms, `bucketed_reduce_s` in all.
struct SyncEstimate {
  double reduce_s = 0, gather_s = 0;
  double bucketed_reduce_s = 0;
  int buckets = 1;
};
SyncEstimate sync_estimate(const Cluster& cluster, const std::vector<int>& members, double bytes, int zero,
                           const TrainingSpec& training, bool overlapped);
/// What a stage's sync leaves exposed, the better of the two ways the ranking prices a plan
/// (planner_ranking.cpp): overlapped (Megatron-Core overlap_grad_sync with overlap_param_gather, as
/// the predictor's GradSync prices it), the bucketed reduction beyond the last backward pass
/// (overlapped_sync_exposed_s) and the all-gather beyond the next step's first forward pass; or
/// all of it after the backward (one ring instead of a bucket's latency steps each, which wins
/// across a WAN). `stage_s` is the stage's forward + backward per micro-batch (backward = 2x
/// forward, Narayanan et al. SC'21 eq. 3); `before_s`, the first forward passes of the stages
/// before it, which hide its gather too (the gather starts the step: models::gathers_lead_the_step).
double exposed_sync_s(const SyncEstimate& sync, double stage_s, double before_s = 0);
/// The tied embedding's gradient all-reduce between a pipeline's first and last stage, after the
/// data-parallel sync (Megatron-LM finalize_model_grads; the predictor's
/// tied_embedding_sync_end_s): the stages' TP degrees cut the vocabulary-parallel gradient into
/// lcm(tp_first, tp_last) shards, each all-reduced between `first_gpu` and `last_gpu`, whose nodes
/// have `senders` GPUs in such pairs at once (0: all of theirs); the pairs of the
/// `crossing_replicas` pipelines whose ends lie in different zones share the WAN link between
/// them (ignored within a zone).
double tied_embedding_estimate_s(const Cluster& cluster, const Workload& workload, int first_gpu, int tp_first,
                                 int last_gpu, int tp_last, int senders, int crossing_replicas);
/// Bytes of weights a ZeRO all-gather moves per byte of gradients the reduce-scatter moved.
double zero_gather_per_grad_byte(const TrainingSpec& training);

/// Dollars per hour of the nodes that hold any of `gpus`.
double nodes_price_per_hour(const Cluster& cluster, const std::vector<int>& gpus, bool spot);

}  // namespace hetsim::models::planner
