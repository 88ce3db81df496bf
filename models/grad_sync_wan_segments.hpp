// SPDX-License-Identifier: Apache-2.0
// The end-of-step gradient reductions of DP groups that cross WAN links, when each stage is in
// one group (grad_sync_cost.cpp GradSync): the groups of different stages do not start at once.
#pragma once
#include <cstddef>
#include <vector>

#include "cluster.hpp"
#include "grad_sync_rails.hpp"

namespace hetsim::models::grad_sync_detail {

/// Why: a WAN link's share per group (group_cost's `wan_senders`) takes every group that crosses
/// it to be on it for the whole sync. The stages of a 1F1B pipeline end their backward passes
/// one after the other, the last stage first, so their groups come to the link in turn; priced
/// as sharing it from the first to start to the last to end, sixteen TP-1 PP-4 Llama-2-7B
/// pipelines over two zones 30 ms apart synced 0.44 s longer than simulated (overlapped, 0.9 s).
/// So each segment's reduction is priced twice, with every group on the links and with its own
/// groups alone, its buckets are put on the links it crosses (SyncRails, walked bucket by bucket:
/// a group in its latency steps leaves the link to the others, and the groups sending at a time
/// share it equally, as the simulator's flows), and its end lies between: no earlier than alone
/// or than the links let its buckets through, no later than with every group throughout.
class WanSegments {
 public:
  explicit WanSegments(const Cluster& c) : c_(c), rails_(c) {}

  /// Segment k's own load of each zone pair's link (dp_segments.hpp wan_load_of's figure), to
  /// be filled before the segments are priced.
  std::vector<double>& load_of(int k);
  /// Whether segment k's groups cross a WAN link.
  bool crosses(int k) const;

  /// Segment k's reduction, each figure from the slowest replica's end: `shared_end_s` with
  /// every group on the links throughout, `alone_end_s` with the links to its own groups;
  /// `gather_s` is what its weight all-gather exposes (unchanged here: every gather starts after
  /// the optimizer step, together).
  struct Reduction {
    double shared_end_s = 0, alone_end_s = 0, gather_s = 0;
    double latency_s = 0;    ///< a bucket's latency steps
    double bytes_s = 0;      ///< a bucket's bytes at the shared figure
  };
  /// Segment k's `buckets`, ready at `ready_s`, onto the links it crosses: on each, its share of
  /// the link's load (`all_load`, every segment's) of a bucket's bytes at the shared figure is
  /// what the bucket holds the link alone.
  void add(int k, const Reduction& r, const std::vector<double>& all_load, const double* ready_s, int buckets);

  /// Each added segment's reduction end, in the order added: note(k, reduce_end_s, gather_s).
  template <class Note>
  void ends(Note&& note) {
    for (const Added& a : added_) note(a.k, reduction_end_s(a), a.reduction.gather_s);
  }

 private:
  struct Added {
    int k;
    Reduction reduction;
  };
  double reduction_end_s(const Added& a);
  /// link(pair, rail, segment k's load of it) for each WAN link segment k's groups cross.
  template <class Link>
  void for_each_link(int k, Link&& link);

  const Cluster& c_;
  std::vector<std::vector<double>> loads_;  ///< [segment] load_of
  std::vector<Added> added_;
  SyncRails rails_;  ///< the WAN links, one resource per zone pair
};

}  // namespace hetsim::models::grad_sync_detail
