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
/// ending at the pass's end releases its last bucket there.
class BucketReleases {
 public:
  BucketReleases(const SimLayout& lay, Runtime& rt, int actor);

  bool empty() const { return events_.empty(); }
  /// The next release inside the pass, as compute time of a pass of `total_s`; false when the
  /// rest come at its end.
  bool next_inside(double total_s, double& at_s) const;
  void release_next() { events_[next_++].ready->release(); }
  /// Releases every bucket not yet released (the pass's end; without overlap, the passes' end).
  void release_rest() {
    while (next_ < events_.size()) release_next();
  }
  /// Waits until every class of the actor has reduced its gradients.
  void wait_for_grads() const {
    for (const auto* cls : classes_) cls->grads_done->acquire();
  }

 private:
  struct Event {
    double numerator = 0;  ///< (from B + (to - from)(i + 1)): the threshold is total * numerator / B
    int buckets = 1;
    bool at_end = false;   ///< the window's last bucket at the pass's end
    sg4::SemaphorePtr ready;
  };
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
