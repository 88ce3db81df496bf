// SPDX-License-Identifier: Apache-2.0
// The data-parallel part of a training step: gradient sync per DP group (ZeRO 0-3), the tied
// embedding sync, the optimizer step, memory per stage, and the plan's price and peak FLOP/s.
#pragma once
#include <string>
#include <vector>

#include "pipeline_time.hpp"
#include "plan_work.hpp"
#include "scratch_vector.hpp"
#include "stage_cost.hpp"

namespace hetsim::models {

/// Optimizer step memory traffic per parameter (bytes read + written), from the kernels
/// Megatron-LM runs (optimizer.py with apex multi_tensor_apply): unscale + inf check of fp32
/// main grads (8), grad norm (4), Adam read p,g,m,v / write p,m,v (28), copy of the fp32 main
/// weights to the 16-bit model weights (6) -> 46, rounded to 48 with the clip; fp32 Adam has no
/// master copy (32). SGD with momentum: read p,g,m / write p,m instead of Adam's 28 (20).
double optimizer_bytes_per_param(Dtype dtype, Optimizer optimizer);
/// Bytes per parameter of the gradient all-reduce: the gradient buffer's (memory_cost.hpp
/// StateBytes::grads): 16-bit for fp16 (Megatron-DeepSpeed, Megatron-LM default), fp32 for bf16
/// (Megatron-LM forces accumulate_allreduce_grads_in_fp32 with bf16), fp32, and fp16 with
/// TrainingSpec::fp32_grad_allreduce.
double grad_sync_bytes_per_param(const TrainingSpec& training);

/// Gradient buckets of an overlapped DP sync: Megatron-Core's DistributedDataParallel reduces
/// each bucket of max(40M, 1M x dp) parameters as soon as the backward has filled it (its default
/// bucket_size with overlap_grad_reduce), so the last bucket, filled at the backward's end, is
/// exposed. At most kMaxGradBuckets: the simulator runs every bucket's collective, and beyond it
/// the exposed tail changes by under 1/kMaxGradBuckets of the sync.
inline constexpr int kMaxGradBuckets = 32;
int grad_bucket_count(double params_per_gpu, int dp);

/// Exposed part of an overlapped gradient reduction in `buckets` buckets of `bucket_s` each
/// (one collective per bucket, latency terms included) during a last backward pass of
/// `backward_s`: bucket k is ready at k/B of the pass and the reductions run one after another,
/// so the end lies max(t, B t - backward (1 - 1/B)) after the pass's end (PyTorch DDP's
/// bucketing, Li et al. VLDB 2020). Interleaved (v chunks a stage, `depth` stages), the buckets
/// come from each chunk's own last backward (bucket_ready_before_end_s).
double overlapped_sync_exposed_s(double bucket_s, double backward_s, int buckets, int interleave = 1, int depth = 1);

/// How long before the end of its stage's last backward pass bucket i of the stage's B is complete;
/// `backward_s` a micro-batch's backward of the whole stage. Without interleaving, (1 - (i+1)/B)
/// of the pass. Interleaved over v chunks, each chunk's gradients are complete at its own last
/// backward (Megatron-Core's interleaved schedule enables a chunk's grad sync at its last
/// micro-batch), and those come chunk v-1 first: the last group of `depth` micro-batches runs
/// through chunk v-1, then v-2, ..., then 0 (Narayanan et al. SC'21 §2.2.2), so chunk v-1-q's
/// last backward ends (v-1-q) x depth chunk backwards before the stage's last. The buckets are
/// cut in the order the gradients are produced, (i+1) v / B chunks' worth complete bucket i.
double bucket_ready_before_end_s(int i, int buckets, double backward_s, int interleave, int depth);

/// Where bucket i of B of an interleaved stage is complete: in the last backward of the chunk
/// `order` places in production order (0: chunk v-1, whose last backward comes first), `into`
/// that pass (0..1]. Both engines place the buckets by it (bucket_ready_before_end_s, the
/// simulator's BucketReleases).
struct BucketChunkPoint {
  int order = 0;
  double into = 1;
};
BucketChunkPoint bucket_chunk_point(int i, int buckets, int interleave);

/// One gradient bucket on a GPU's link: when its group may start it (every member has produced
/// it) and how long it holds the link, both in seconds.
struct SyncBucket {
  double ready_s = 0, busy_s = 0;
};
/// When a link that sends the range's buckets one after the other, each as soon as it is ready
/// and the link is free, in the order they become ready, is done: t = max(t, ready) + busy (a
/// single server; the end is max over buckets of ready + the busy time of it and those after it).
/// Reorders the range; -infinity when it is empty. Buckets ready at k/B of a pass of backward_s
/// ending at 0, each busy bucket_s, end at overlapped_sync_exposed_s(bucket_s, backward_s, B).
double serial_buckets_end_s(SyncBucket* first, SyncBucket* last);

struct StepInput {
  const Cluster& cluster;
  const Workload& workload;
  const Plan& plan;
  int max_pp;
  const std::vector<int>& shape_of;            ///< [replica * max_pp + stage]
  const std::vector<StageCost>& costs;
  const std::vector<StageTimes>& times;        ///< [replica * max_pp + stage]
  /// [replica] pipeline time: a DP group starts once the last of its members has finished that
  /// stage's backward, whichever replicas they are.
  const std::vector<double>& replica_time_s;
  const std::vector<char>& tp_in_one_node;     ///< [replica * max_pp + stage]
  /// [replica * max_pp + stage] the stage's first GPU, -1 where the replica has no such stage
  /// (read in one array instead of through every stage's GPU list: the gradient sync's groups).
  const std::vector<int>& front_gpu;
  int slowest_replica;
  /// GPUs of the plan in each node, for plans that leave GPUs idle (they do not share the
  /// NICs); nullptr when the plan uses every GPU of the cluster.
  const std::vector<int>* used_on_node;
  /// [replica] -> an earlier replica whose per-stage figures this one's equal (the predictor's
  /// find_copies), -1: none; nullptr: no copies.
  const std::vector<int>* copy_of = nullptr;
  /// [replica * max_pp + stage] node of the stage's first GPU; required with copy_of.
  const std::vector<int>* front_node = nullptr;
};

/// The peak a GPU's MFU is counted against: the dense datasheet figure at the dtype its matmuls
/// run in (GpuType::matmul_dtype: TF32 for FP32 training on parts that have it, FP32 for FP16
/// on Pascal); 0 when the part does not support it.
double mfu_peak_flop_per_s(const GpuType& gpu, const TrainingSpec& training);

struct StepCost {
  double dp_exposed_s = 0;       ///< gradient sync + ZeRO collectives not hidden by the pipeline
  /// The replica whose passes end last once the weights' gathers that start the step delay them
  /// (gathers_lead_the_step), where not the slowest replica; -1: the slowest. Its stages give the
  /// breakdown, and the rest of the step beyond its pipeline is DP time.
  int paced_replica = -1;
  double optimizer_s = 0;        ///< slowest stage's optimizer step
  double hardware_flop = 0;      ///< all FLOPs executed in the step (recompute included)
  double peak_sum_flops = 0;     ///< sum of the dtype peaks of the plan's GPUs
  double cost_per_hour = 0;      ///< price of the nodes the plan uses (whole nodes)
  double memory_peak_bytes = 0;
  ScratchVector<double> stage_memory_bytes, stage_capacity_bytes;  ///< [replica * max_pp + stage]
  std::string memory_reason;     ///< first stage over capacity, empty when all fit
};

/// Computes the step; when `work` is given, also fills its dp_groups and the per-stage fields.
StepCost step_cost(const StepInput& in, PlanWork* work);

/// When each stage's gradient reductions end, for what follows them on that stage alone: the
/// tied-embedding all-reduce of a replica starts once its own first and last stages have
/// reduced (Megatron-LM finalize_model_grads: the DP sync, then _allreduce_embedding_grads, on
/// each rank), not once every stage of the plan has.
struct GradSyncEnds {
  /// [replica * max_pp + stage]: the end of the stage's reductions (ZeRO 0-2 gradient all-reduce
  /// or reduce-scatter, exposed part), from the slowest replica's end; may be negative.
  ScratchVector<double> reduce_end_s;
  /// The ZeRO-1/2 weight all-gather after the optimizer, its slowest group's exposed part.
  double gather_s = 0;
};

/// The gradient sync's part of a step not hidden by the pipeline (grad_sync_cost.cpp): DP groups
/// per segment and shard (dp_segments.hpp), ZeRO 0-2 at the end of the step, ZeRO-3 inside every
/// pass; with `work`, each group is recorded for the simulator; with `ends`, each stage's
/// reduction end.
/// With `paced_replica`: the replica whose passes end last as the gathers delay them (StepCost).
double grad_sync_exposed_s(const StepInput& in, PlanWork* work, GradSyncEnds* ends = nullptr, int* paced_replica = nullptr);

/// Whether a step of `plan` is priced as its steady-state cycle that starts with the ZeRO-1/2
/// weight all-gather of the last update, which the stages' first forward passes run beside
/// (overlapped sync, one chunk per stage; interleaved stages keep the gather after the step,
/// hidden behind the next first forward: grad_sync_cost.cpp). The simulator runs it so too.
bool gathers_lead_the_step(const Plan& plan);

/// How much each replica's passes start late when each stage's first forward pass, which starts
/// once the stages before it have run theirs, waits for its weight all-gather of
/// `gather_of_slot` ([replica * max_pp + stage] seconds): the largest shortfall over its stages.
std::vector<double> replica_gather_delay_s(const StepInput& in, const std::vector<double>& gather_of_slot);

}  // namespace hetsim::models
