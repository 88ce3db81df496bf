// SPDX-License-Identifier: Apache-2.0
// Data-parallel gradient sync and the Adam update of a rank's buckets (runner/parameters.hpp).
#include <algorithm>

#include "runner/rank_runner.hpp"
#include "runner/rank_runner_detail.hpp"

namespace hetsim::exec {
namespace {

// Once per group, before its first collective, on every member alike (so barriers match).
bool first_use(std::vector<int>& waited, const Group& group) {
  if (std::find(waited.begin(), waited.end(), group.id) != waited.end()) return false;
  waited.push_back(group.id);
  return true;
}

}  // namespace

// ZeRO-2: the shard of bucket i that the backward passes of the earlier micro-batches reduced
// (reduce_chunk_gradients) joins the last micro-batch's, just reduce-scattered into shard_grad_.
void RankRunner::add_reduced_micro_batches(std::size_t i, std::size_t shard) {
  if (plan_.zero == 2) backend_.axpy(shard, 1.0f, grad_shard_.get() + adam_offset_[i], shard_grad_.get());
}

// Data-parallel sync per bucket, then Adam. ZeRO-1 (Rajbhandari et al. SC'20, section 5.1):
// reduce-scatter the gradients, update only this rank's shard, all-gather the parameters;
// ZeRO-2 (section 5.2) adds the shard its earlier micro-batches reduced before the update.
void RankRunner::sync_gradients_and_update() {
  std::vector<int> waited;  // groups whose slowest member this rank has waited for
  for (std::size_t i = 0; i < params_.buckets.size(); ++i) {
    const Bucket& b = params_.buckets[i];
    if (b.is_packed()) {
      sync_packed_buckets(i, waited);
      i += static_cast<std::size_t>(b.parts) - 1;
      continue;
    }
    const Group& group = layout_.dp_group(b.first_unit, b.shard);
    const std::size_t n = static_cast<std::size_t>(group.size());
    if (first_use(waited, group)) wait_for_group(group, "dp_sync_wait");
    float* w = weights_.get() + b.offset;
    float* g = grads_.get() + b.offset;
    float* m = adam_m_.get() + adam_offset_[i];
    float* v = adam_v_.get() + adam_offset_[i];
    if (plan_.zero == 0) {
      if (n > 1) {
        OpTimer t(*this, "grad_sync", "dp_all_reduce", OpClass::kDpComm, -1, -1, bytes_shape(b.count));
        device_all_reduce(g, b.count, group);
      }
      OpTimer t(*this, "optimizer", "adam", OpClass::kOptimizer, -1, -1, std::to_string(b.count));
      backend_.adam_step(b.count, options_.adam, step_, w, g, m, v);
      continue;
    }
    const std::size_t shard = b.count / n;
    const std::size_t pos = static_cast<std::size_t>(group.position_of(rank_));
    {
      OpTimer t(*this, "grad_sync", "dp_reduce_scatter", OpClass::kDpComm, -1, -1, bytes_shape(b.count));
      device_reduce_scatter(g, shard_grad_.get(), shard, group);
    }
    add_reduced_micro_batches(i, shard);
    {
      OpTimer t(*this, "optimizer", "adam", OpClass::kOptimizer, -1, -1, std::to_string(shard));
      backend_.adam_step(shard, options_.adam, step_, w + pos * shard, shard_grad_.get(), m, v);
    }
    OpTimer t(*this, "grad_sync", "dp_all_gather", OpClass::kDpComm, -1, -1, bytes_shape(b.count));
    device_all_gather(w + pos * shard, w, shard, group);
  }
}

// This rank holds its units at a lower TP degree than another replica (tp1 beside tp2), so it is
// in one DP group per shard of the higher degree. Each part is gathered from the region into the
// layout the higher-TP member holds contiguously, synced over that part's group on the host, and
// scattered back. A replicated tensor (norms) is in every part; every group sums the same
// gradients for it, so its copies come back equal (each part is packed from the values before
// the sync, hence separate buffers in and out). ZeRO-0 then runs Adam once over the region;
// ZeRO-1/2 updates this rank's shard of each packed part (its own moments) and all-gathers it.
void RankRunner::sync_packed_buckets(std::size_t first, std::vector<int>& waited) {
  const Bucket& head = params_.buckets[first];
  std::vector<float> grads(head.region_count), weights, packed, shard_host;
  backend_.download(grads.data(), grads_.get() + head.offset, head.region_count);
  std::vector<float> synced = grads;  // ZeRO-0: summed gradients; ZeRO >= 1: updated weights
  if (plan_.zero >= 1) {
    weights.resize(head.region_count);
    backend_.download(weights.data(), weights_.get() + head.offset, head.region_count);
    synced = weights;
  }
  for (int part = 0; part < head.parts; ++part) {
    const std::size_t i = first + static_cast<std::size_t>(part);
    const Bucket& b = params_.buckets[i];
    const Group& group = layout_.dp_group(b.first_unit, b.shard);
    const std::size_t n = static_cast<std::size_t>(group.size());
    if (first_use(waited, group)) wait_for_group(group, "dp_sync_wait");
    packed.assign(b.count, 0.0f);
    pack_bucket(b, grads.data(), packed.data());
    if (plan_.zero == 0) {
      OpTimer t(*this, "grad_sync", "dp_all_reduce", OpClass::kDpComm, -1, -1, bytes_shape(b.count));
      comm_.all_reduce(packed.data(), b.count, group);
      unpack_bucket(b, packed.data(), synced.data());
      continue;
    }
    const std::size_t shard = b.count / n;
    const std::size_t pos = static_cast<std::size_t>(group.position_of(rank_));
    shard_host.resize(shard);
    {
      OpTimer t(*this, "grad_sync", "dp_reduce_scatter", OpClass::kDpComm, -1, -1, bytes_shape(b.count));
      comm_.reduce_scatter(packed.data(), shard_host.data(), shard, group);
    }
    backend_.upload(shard_grad_.get(), shard_host.data(), shard);
    add_reduced_micro_batches(i, shard);
    pack_bucket(b, weights.data(), packed.data());
    backend_.upload(shard_weight_.get(), packed.data() + pos * shard, shard);
    {
      OpTimer t(*this, "optimizer", "adam", OpClass::kOptimizer, -1, -1, std::to_string(shard));
      backend_.adam_step(shard, options_.adam, step_, shard_weight_.get(), shard_grad_.get(),
                         adam_m_.get() + adam_offset_[i], adam_v_.get() + adam_offset_[i]);
    }
    backend_.download(shard_host.data(), shard_weight_.get(), shard);
    {
      OpTimer t(*this, "grad_sync", "dp_all_gather", OpClass::kDpComm, -1, -1, bytes_shape(b.count));
      comm_.all_gather(shard_host.data(), packed.data(), shard, group);
    }
    unpack_bucket(b, packed.data(), synced.data());
  }
  if (plan_.zero >= 1) {
    backend_.upload(weights_.get() + head.offset, synced.data(), head.region_count);
    return;
  }
  backend_.upload(grads_.get() + head.offset, synced.data(), head.region_count);
  const std::size_t last = first + static_cast<std::size_t>(head.parts) - 1;
  OpTimer t(*this, "optimizer", "adam", OpClass::kOptimizer, -1, -1, std::to_string(head.region_count));
  backend_.adam_step(head.region_count, options_.adam, step_, weights_.get() + head.offset,
                     grads_.get() + head.offset, adam_m_.get() + adam_offset_[last], adam_v_.get() + adam_offset_[last]);
}

}  // namespace hetsim::exec
