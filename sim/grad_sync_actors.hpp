// SPDX-License-Identifier: Apache-2.0
// The end-of-step gradient sync's actors (one per DP sync class: a model segment's groups) and
// where a stage releases their buckets in its last backward pass. Calls SimGrid.
#pragma once
#include <vector>

#include "sim_layout.hpp"
#include "sim_runtime.hpp"

namespace hetsim::sim {

/// The buckets one stage actor releases, over all its sync classes, in the order its last
/// backward produces them. A class's bucket i of B is complete at from + (to - from)(i+1)/B of
/// the pass (from, to: the class's window, DpSyncClass::ready_from/ready_to; gradients appear
/// as backward proceeds, PyTorch DDP / Megatron-Core buckets, Li et al., VLDB 2020); a window
/// ending at the pass's end releases its last bucket there. A stage of v > 1 chunks (interleaved)
/// produces its gradients in v last backwards, one a chunk, chunk v-1's first: bucket i of B is
/// complete (i+1) v / B chunks' worth into them (models::bucket_ready_before_end_s).
class BucketReleases {
 public:
  BucketReleases(const SimLayout& lay, Runtime& rt, int actor, int chunks);

  bool empty() const { return events_.empty(); }
  /// The next release inside the last backward of chunk `chunk`, as compute time of a pass of
  /// `total_s`; false when the rest of that chunk's come at its end.
  bool next_inside(double total_s, int chunk, double& at_s) const;
  void release_next() { events_[next_++].ready->release(); }
  /// Releases every bucket of chunk `chunk` and those before it not yet released (the end of its
  /// last backward).
  void release_through(int chunk) {
    while (next_ < events_.size() && events_[next_].order <= order_of(chunk)) release_next();
  }
  /// Releases every bucket not yet released (without overlap, the passes' end).
  void release_rest() {
    while (next_ < events_.size()) release_next();
  }
  /// Waits until every class of the actor has reduced its gradients.
  void wait_for_grads() const {
    for (const auto* cls : classes_) cls->grads_done->acquire();
  }

 private:
  struct Event {
    int order = 0;         ///< which chunk's last backward releases it, in production order (0: chunk v-1)
    double fraction = 0;   ///< of that pass's compute
    bool at_end = false;   ///< at the pass's end
    sg4::SemaphorePtr ready;
  };
  int order_of(int chunk) const { return chunks_ - 1 - chunk; }
  int chunks_ = 1;
  std::vector<Event> events_;
  std::vector<const SyncClassRt*> classes_;
  std::size_t next_ = 0;
};

/// Sync class k of component c: bucket by bucket, once every member has released it, its groups'
/// reduction (1/B of the bytes each); then tells its members.
void sync_class_actor(Runtime& rt, const DpSyncClass& spec, SyncClassRt& cls);

/// Component c's ZeRO-1/2 weight all-gather after every member's optimizer step.
void param_gather_actor(Runtime& rt, const DpSyncClass& spec, SyncClassRt& cls);

}  // namespace hetsim::sim
