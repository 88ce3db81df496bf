// SPDX-License-Identifier: Apache-2.0
// ZeRO-3 (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
// Models", SC'20, section 5.3): each rank keeps only its shard of every bucket's weights, Adam
// moments and gradients. Before each forward and each backward of a model chunk the chunk's
// weights are all-gathered over their data-parallel group (twice in a backward with full
// recompute: once for the rerun forward, once for the backward itself, as DeepSpeed releases them
// in between; models/comm_cost.hpp pass_traffic counts the same), and after each backward its
// gradients are reduce-scattered into the shard, where they accumulate over the micro-batches.
// The buckets of a tied word embedding (each a bucket of its own, runner/parameters.cpp) keep
// their gradients whole until the end of the step, since the tie sum (first and last stage) must
// precede their reduction. ZeRO-2 (section 5.2) shares the gradient half: its weights stay whole,
// and every backward but the last micro-batch's reduce-scatters into the shard
// (reduces_in_backward), which the end-of-step sync adds in (runner/gradient_sync.cpp).
#include <limits>
#include <optional>

#include "runner/rank_runner.hpp"
#include "runner/rank_runner_detail.hpp"

namespace hetsim::exec {

namespace {

/// Elements the flat buffer holds for a bucket's region: a contiguous bucket carries its padding.
std::size_t region_elements(const Bucket& b) { return b.is_packed() ? b.region_count : b.count; }

}  // namespace

bool RankRunner::zero3_deferred(std::size_t i) const {
  if (!layout_.has_tied_copy(place_.replica)) return false;
  const int unit = params_.buckets[i].first_unit;
  return unit == 0 || unit == model_.layers + 2;  // UnitPlace numbering, runner/rank_layout.hpp
}

bool RankRunner::reduces_in_backward(int micro_batch) const {
  if (zero3()) return true;
  return plan_.zero == 2 && micro_batch + 1 < plan_.replicas[place_.replica].micro_batches;
}

void RankRunner::sharded_gradients_init() {
  grad_shard_ = DeviceArray<float>(backend_, adam_m_.size());
  backend_.fill(grad_shard_.get(), grad_shard_.size(), 0.0f);
  chunk_buckets_.assign(layout_.chunks(place_.replica, place_.stage).size(), {});
  for (std::size_t i = 0; i < params_.buckets.size(); ++i) {
    const Bucket& b = params_.buckets[i];
    if (b.part == 0) chunk_buckets_.at(layout_.unit_place(place_.replica, b.first_unit).chunk).push_back(i);
  }
}

void RankRunner::zero3_init() {
  param_shard_ = DeviceArray<float>(backend_, adam_m_.size());
  sharded_gradients_init();
  const std::vector<float> full = backend_.to_host(weights_.get(), params_.total);
  std::vector<float> packed;
  for (std::size_t i = 0; i < params_.buckets.size(); ++i) {
    const Bucket& b = params_.buckets[i];
    const Group& group = layout_.dp_group(b.first_unit, b.shard);
    const std::size_t shard = b.count / static_cast<std::size_t>(group.size());
    const std::size_t pos = static_cast<std::size_t>(group.position_of(rank_));
    const float* source = full.data() + b.offset;
    if (b.is_packed()) {
      packed.assign(b.count, 0.0f);
      pack_bucket(b, source, packed.data());
      source = packed.data();
    }
    backend_.upload(param_shard_.get() + adam_offset_[i], source + pos * shard, shard);
  }
  release_chunk_weights(-1);
}

// Gathers every bucket of the chunk into the flat buffer. A packed bucket (this rank's TP degree is
// lower than another replica's) gathers each part over its own group and scatters it into place.
// No barrier before the per-pass collectives (unlike the end-of-step sync, wait_for_group): one
// costs as much as these small gathers themselves, and the replicas run in step anyway; their
// time includes any wait for the slowest member.
void RankRunner::gather_chunk_weights(int micro_batch, int chunk, const char* phase) {
  const bool timed = micro_batch >= 0;  // the untimed gather before parameters are read out
  std::vector<float> host, packed, shard_host;
  for (std::size_t first : chunk_buckets_.at(chunk)) {
    const Bucket& head = params_.buckets[first];
    if (head.is_packed()) host.assign(head.region_count, 0.0f);
    for (int part = 0; part < head.parts; ++part) {
      const std::size_t i = first + static_cast<std::size_t>(part);
      const Bucket& b = params_.buckets[i];
      const Group& group = layout_.dp_group(b.first_unit, b.shard);
      const std::size_t shard = b.count / static_cast<std::size_t>(group.size());
      const float* mine = param_shard_.get() + adam_offset_[i];
      std::optional<OpTimer> t;
      if (timed) t.emplace(*this, phase, "zero3_all_gather", OpClass::kDpComm, micro_batch, chunk, bytes_shape(b.count));
      if (!b.is_packed()) {
        device_all_gather(mine, weights_.get() + b.offset, shard, group);
        continue;
      }
      shard_host.resize(shard);
      packed.resize(b.count);
      backend_.download(shard_host.data(), mine, shard);
      comm_.all_gather(shard_host.data(), packed.data(), shard, group);
      unpack_bucket(b, packed.data(), host.data());
    }
    if (head.is_packed()) backend_.upload(weights_.get() + head.offset, host.data(), head.region_count);
  }
}

// Released weights are not freed (the flat buffer stays allocated); with poison_released_weights
// they are overwritten with NaN so that a pass that forgot its gather fails the equivalence tests.
void RankRunner::release_chunk_weights(int chunk) {
  if (!options_.poison_released_weights) return;
  for (std::size_t c = 0; c < chunk_buckets_.size(); ++c) {
    if (chunk >= 0 && static_cast<int>(c) != chunk) continue;
    for (std::size_t first : chunk_buckets_[c]) {
      const Bucket& b = params_.buckets[first];
      backend_.fill(weights_.get() + b.offset, region_elements(b), std::numeric_limits<float>::quiet_NaN());
    }
  }
}

void RankRunner::reduce_scatter_into_shards(std::size_t first, int micro_batch, int chunk, const char* phase) {
  const Bucket& head = params_.buckets[first];
  const char* op = micro_batch < 0 ? "dp_reduce_scatter" : zero3() ? "zero3_reduce_scatter" : "zero2_reduce_scatter";
  std::vector<float> grads, packed, shard_host;
  if (head.is_packed()) grads = backend_.to_host(grads_.get() + head.offset, head.region_count);
  for (int part = 0; part < head.parts; ++part) {
    const std::size_t i = first + static_cast<std::size_t>(part);
    const Bucket& b = params_.buckets[i];
    const Group& group = layout_.dp_group(b.first_unit, b.shard);
    const std::size_t shard = b.count / static_cast<std::size_t>(group.size());
    if (micro_batch < 0) wait_for_group(group, "dp_sync_wait", phase, micro_batch, chunk);
    {
      OpTimer t(*this, phase, op, OpClass::kDpComm, micro_batch, chunk, bytes_shape(b.count));
      if (!b.is_packed()) {
        device_reduce_scatter(grads_.get() + b.offset, shard_grad_.get(), shard, group);
      } else {
        packed.assign(b.count, 0.0f);
        pack_bucket(b, grads.data(), packed.data());
        shard_host.resize(shard);
        comm_.reduce_scatter(packed.data(), shard_host.data(), shard, group);
        backend_.upload(shard_grad_.get(), shard_host.data(), shard);
      }
    }
    backend_.axpy(shard, 1.0f, shard_grad_.get(), grad_shard_.get() + adam_offset_[i]);
  }
}

// After a chunk's backward: its norm gradients summed over TP (sequence parallelism), then every
// bucket that is not deferred reduce-scattered into its shard and zeroed for the next micro-batch.
void RankRunner::reduce_chunk_gradients(int micro_batch, int chunk) {
  const auto& runs = chunk_buckets_.at(chunk);
  sync_sequence_parallel_norms([&](int unit) {
    for (std::size_t first : runs) {
      const Bucket& b = params_.buckets[first];
      if (!zero3_deferred(first) && b.first_unit <= unit && unit <= b.last_unit) return true;
    }
    return false;
  });
  for (std::size_t first : runs) {
    if (zero3_deferred(first)) continue;
    const Bucket& b = params_.buckets[first];
    float* region = grads_.get() + b.offset;
    if (options_.capture_gradients) {
      const std::vector<float> local = backend_.to_host(region, b.region_count);
      for (std::size_t k = 0; k < local.size(); ++k) captured_acc_[b.offset + k] += local[k];
    }
    reduce_scatter_into_shards(first, micro_batch, chunk, "backward");
    backend_.fill(region, region_elements(b), 0.0f);
  }
}

// End of the step: the deferred buckets (tied embedding) get their norm and tie sums and are
// reduce-scattered; then Adam updates every shard. The weights stay sharded: the next step's
// passes gather them.
void RankRunner::zero3_sync_and_update() {
  sync_sequence_parallel_norms([&](int unit) {
    for (std::size_t i = 0; i < params_.buckets.size(); ++i) {
      const Bucket& b = params_.buckets[i];
      if (zero3_deferred(i) && b.first_unit <= unit && unit <= b.last_unit) return true;
    }
    return false;
  });
  sync_tied_embedding();
  if (options_.capture_gradients) {
    captured_grads_ = backend_.to_host(grads_.get(), params_.total);
    for (std::size_t k = 0; k < captured_grads_.size(); ++k) captured_grads_[k] += captured_acc_[k];
  }
  for (std::size_t i = 0; i < params_.buckets.size(); ++i) {
    if (params_.buckets[i].part == 0 && zero3_deferred(i)) reduce_scatter_into_shards(i, -1, -1, "grad_sync");
  }
  for (std::size_t i = 0; i < params_.buckets.size(); ++i) {
    const Bucket& b = params_.buckets[i];
    const std::size_t shard = b.count / static_cast<std::size_t>(layout_.dp_group(b.first_unit, b.shard).size());
    const std::size_t off = adam_offset_[i];
    OpTimer t(*this, "optimizer", "adam", OpClass::kOptimizer, -1, -1, std::to_string(shard));
    backend_.adam_step(shard, options_.adam, step_, param_shard_.get() + off, grad_shard_.get() + off,
                       adam_m_.get() + off, adam_v_.get() + off);
  }
}

}  // namespace hetsim::exec
