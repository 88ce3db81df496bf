// SPDX-License-Identifier: Apache-2.0
// One rank's part of a training step of a Plan: its model chunks forward and backward in the
// plan's pipeline schedule, TP collectives inside the blocks (Megatron-LM column/row
// parallelism), p2p between stages, tied-embedding and data-parallel gradient sync (all-reduce
// or ZeRO-1 reduce-scatter + all-gather), Adam; every op timed into a Measurement.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend.hpp"
#include "comm/communicator.hpp"
#include "plan.hpp"
#include "runner/measurement.hpp"
#include "runner/parameters.hpp"
#include "runner/rank_layout.hpp"
#include "runner/schedule.hpp"
#include "workload.hpp"

namespace hetsim::exec {

struct RunOptions {
  std::uint64_t seed = 1234;       ///< parameter initialisation and synthetic data
  AdamConfig adam;
  bool capture_gradients = false;  ///< keep a host copy of the gradients before the DP sync
  bool capture_parameters = false; ///< collect every replica's parameters after the last step
  bool poison_released_weights = false;  ///< ZeRO-3: fill released weights with NaN (tests: no pass
                                         ///< may use weights it did not gather)
  bool record_ops = true;          ///< record per-op measurements (step records always)
  /// Keep every step's records for RankOutcome::measurements (`run --out`, tests); without,
  /// run_rank folds each step's into the summary and drops them, so memory does not grow with
  /// the steps (10,000 steps of a 2-layer model held 1 GB).
  bool keep_measurements = true;
  /// Without keep_measurements (and without RunSpec::on_step_records), the records are folded
  /// into the summary whenever this many are held, within a step (run_rank).
  std::size_t fold_records_every = 4096;
  int fail_rank = -1;              ///< fault injection: this rank fails at the start of fail_step
  int fail_step = 1;
  std::string fail_mode = "throw"; ///< throw | kill (SIGKILL itself)
};

struct StepResult {
  double loss = 0;                 ///< mean next-token cross-entropy over the global batch
  double time_s = 0;
};

class RankRunner {
 public:
  RankRunner(const RankLayout& layout, const models::Workload& workload, const models::Plan& plan,
             Backend& backend, Communicator& comm, RunOptions options);
  ~RankRunner();
  RankRunner(const RankRunner&) = delete;
  RankRunner& operator=(const RankRunner&) = delete;

  /// One training step; a collective call: every rank of the layout must call it.
  StepResult step();

  const std::vector<Measurement>& get_measurements() const { return measurements_; }
  /// The records so far, handed over: the runner keeps none of them.
  std::vector<Measurement> take_measurements() { return std::exchange(measurements_, {}); }
  /// Shows the records held to `sink` whenever `batch` or more of them are, between the step's
  /// passes. A sink that takes them (folds them into a summary and clears them) keeps memory from
  /// growing with the micro-batches of a step (65,536 micro-batches of tiny-gpt held 4.6 GB of
  /// records); one that throws stops the step there. Without a sink they stay until taken.
  void hand_over_records(std::size_t batch, std::function<void(std::vector<Measurement>&)> sink) {
    records_batch_ = batch;
    records_sink_ = std::move(sink);
  }
  const std::vector<float>& get_captured_gradients() const { return captured_grads_; }
  /// The rank's parameters (flat buffer); under ZeRO-3 a collective call that gathers them first.
  std::vector<float> get_parameter_values();
  int get_rank() const { return rank_; }

 private:
  struct LayerWeights;  // device pointers of one block's parameters (and their gradients)
  struct LayerActs;     // what one block saves for its backward
  struct ChunkActs;     // one (micro-batch, chunk) forward's saved state
  class OpTimer;

  void maybe_fail();
  void forward(int micro_batch, int chunk);
  void backward(int micro_batch, int chunk);
  void layer_forward(int layer, const float* x, float* out, LayerActs& acts, int micro_batch, int chunk);
  /// Phase of layer_forward's ops: "forward", or "backward" while full recompute reruns a chunk
  /// inside its backward (the Report's backward_s includes recompute, models/report.hpp).
  const char* forward_phase_ = "forward";
  void layer_backward(int layer, LayerActs& acts, const float* dout, float* din, int micro_batch, int chunk);
  void head_forward(ChunkActs& acts, const float* x, int micro_batch, int chunk);
  void head_backward(ChunkActs& acts, float* dx, int micro_batch, int chunk);
  void run_chunk_forward(ChunkActs& acts, int micro_batch, int chunk);
  /// Sequence parallelism is active on a stage of this replica (plan flag and TP > 1).
  bool sequence_parallel(int stage) const;
  /// Activation rows this rank holds between blocks (tokens / TP with sequence parallelism).
  int local_rows() const;
  void tp_all_gather_rows(const float* local, float* full, int mb, int chunk, const char* phase, const char* op);
  /// Row-parallel output: all-reduce, or reduce-scatter by rows with sequence parallelism.
  void tp_reduce_rows(float* partial_full, float* local, int mb, int chunk, const char* phase, const char* op);
  void send_boundary(const float* local, int peer_stage, int tag, int mb, int chunk, const char* phase, const char* op);
  void recv_boundary(float* local, int peer_stage, int tag, int mb, int chunk, const char* phase, const char* op);
  /// Sums the LayerNorm gradients over the TP group (sequence parallelism) of the units for
  /// which `pick(unit)` holds.
  void sync_sequence_parallel_norms(const std::function<bool(int unit)>& pick);
  // Communicator calls on device buffers: direct when device memory is host memory, otherwise
  // staged through a host buffer (the host-staged path of DESIGN.md; NCCL/RCCL can replace it).
  void device_send(const float* buf, std::size_t count, int dst, int tag);
  void device_recv(float* buf, std::size_t count, int src, int tag);
  void device_all_reduce(float* buf, std::size_t count, const Group& group);
  void device_reduce_scatter(const float* in, float* out, std::size_t count_per_rank, const Group& group);
  void device_all_gather(const float* in, float* out, std::size_t count_per_rank, const Group& group);
  void tp_all_reduce(float* buf, std::size_t count, int micro_batch, int chunk, const char* phase, const char* op);
  /// A timed barrier over `group` (class bubble) before a gradient sync.
  void wait_for_group(const Group& group, const char* op, const char* phase = "grad_sync", int micro_batch = -1,
                      int chunk = -1);
  void sync_tied_embedding();
  void sync_gradients_and_update();
  void add_reduced_micro_batches(std::size_t i, std::size_t shard);
  /// The `parts` packed buckets from params_.buckets[first] (this replica's TP degree is lower
  /// than another's): each part gathered, synced and scattered back on the host.
  void sync_packed_buckets(std::size_t first, std::vector<int>& waited);
  // ZeRO-3 (runner/zero3.cpp; Rajbhandari et al. SC'20 section 5.3): each rank keeps its shard of
  // every bucket's weights; a chunk's full weights are gathered before each of its passes and
  // released after, its gradients reduce-scattered after each backward.
  bool zero3() const { return plan_.zero >= 3; }
  void zero3_init();
  // ZeRO-2 (runner/zero3.cpp; section 5.2): the weights stay whole, but a rank keeps only its
  // shard of the gradients, so every backward but the last micro-batch's reduce-scatters its
  // chunk's gradients into the shard (as ZeRO-3 does; models/comm_cost.hpp pass_traffic); the
  // last micro-batch's gradients are reduced at the end of the step, as ZeRO-1's.
  void sharded_gradients_init();
  /// Whether this backward reduces its chunk's gradients into the shards (ZeRO-3 always,
  /// ZeRO-2 but for the replica's last micro-batch).
  bool reduces_in_backward(int micro_batch) const;
  void gather_chunk_weights(int micro_batch, int chunk, const char* phase);
  void release_chunk_weights(int chunk);
  void reduce_chunk_gradients(int micro_batch, int chunk);
  /// Reduce-scatters `parts` buckets from `first` into their shard gradients (accumulated).
  void reduce_scatter_into_shards(std::size_t first, int micro_batch, int chunk, const char* phase);
  void zero3_sync_and_update();
  /// Bucket `i` reduces its gradients at the end of the step (it holds a tied-embedding copy).
  bool zero3_deferred(std::size_t i) const;
  const ParamSpec* head_weight() const;
  float* param(const std::string& name) const;
  float* grad(const std::string& name) const;
  Measurement make_record(const char* phase, const char* op, OpClass c, int micro_batch, int chunk) const;

  const RankLayout& layout_;
  models::ModelSpec model_;
  models::Plan plan_;
  Backend& backend_;
  Communicator& comm_;
  RunOptions options_;
  int rank_;
  RankPlace place_;
  RankParameters params_;
  std::vector<Action> schedule_;
  std::map<std::string, const ParamSpec*> by_name_;
  std::map<int, LayerWeights> layer_weights_;  // by global layer index

  DeviceArray<float> weights_, grads_, adam_m_, adam_v_, shard_grad_;
  DeviceArray<float> shard_weight_;          // ZeRO >= 1, packed buckets: the shard Adam updates
  std::vector<std::size_t> adam_offset_;     // per bucket, into adam_m_/adam_v_ (and the ZeRO-3 shards)
  DeviceArray<float> param_shard_;           // ZeRO-3: this rank's shard of each bucket's weights
  DeviceArray<float> grad_shard_;            // ZeRO-2/3: of its gradients, accumulated over the micro-batches
  std::vector<std::vector<std::size_t>> chunk_buckets_;  // ZeRO-2/3: [chunk] first bucket of each run of parts
  std::vector<float> captured_acc_;          // ZeRO-2/3 capture: local gradients before each reduce-scatter
  std::map<std::pair<int, int>, ChunkActs*> saved_;
  std::vector<float> captured_grads_;
  std::vector<float> staging_, staging_out_;  // host staging for non-host device memory
  std::vector<Measurement> measurements_;
  std::size_t records_batch_ = 0;
  std::function<void(std::vector<Measurement>&)> records_sink_;
  /// An exception of an OpTimer's destructor, thrown after the action it happened in.
  std::exception_ptr deferred_error_;
  void after_action();

  int step_ = 0;
  int tokens_per_micro_batch_ = 0;
  double loss_scale_ = 0;   // 1 / tokens of the global batch
  double loss_sum_ = 0;     // this rank's summed token losses of the step
  double epoch_s_ = 0;
};

}  // namespace hetsim::exec
