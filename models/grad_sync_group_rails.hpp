// SPDX-License-Identifier: Apache-2.0
// The data-parallel groups of a gradient sync whose stages are in several groups at once, put on
// the NIC rails and WAN links they cross (grad_sync_cost.cpp GradSync; the resources themselves
// are SyncRails, grad_sync_rails.hpp), and what each stage then waits for: every rail and WAN link
// of every group it is in, since a ring moves only as all its members send.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

#include "cluster.hpp"
#include "grad_sync_rails.hpp"
#include "plan.hpp"
#include "scratch_vector.hpp"

namespace hetsim::models::grad_sync_detail {

/// One DP group as the rails see it: its GPUs in ring order and their slots (replica * max_pp +
/// stage), its bottleneck's figures, and when its buckets become ready.
struct RailGroup {
  const int* members = nullptr;
  const int* slots = nullptr;
  int count = 0;
  /// 1: this group stands for every TP rank's group of its stages (all alike), else one rank's.
  int ranks = 1;
  bool node_shared = false;      ///< GroupCost::node_shared: a node's crossing at one member
  double bus_bandwidth_Bps = 0;  ///< the group's bottleneck (GroupCost::bus_bandwidth_Bps)
  double bucket_s = 0;           ///< a bucket's time at the bottleneck, latency steps included
  double bucket_latency_s = 0;   ///< of which latency steps
  double param_gather_s = 0;     ///< the ZeRO-1/2 weight all-gather's time, 0 without one
  const double* bucket_ready_s = nullptr;  ///< [bucket] from the slowest replica's end
  int buckets = 0;
};

class GroupsOnRails {
 public:
  /// `slots`: the plan's replica x max_pp stage slots (each gets the list of what it waits for).
  GroupsOnRails(const Cluster& c, const Plan& plan, int max_pp, std::size_t slots)
      : c_(c), plan_(plan), max_pp_(max_pp), rails_(c), slot_groups_(slots) {
    group_first_wait_.push_back(0);
  }

  /// Puts group `g` on the rails and, when its members' zones differ, on the WAN links its ring
  /// crosses. Returns the group's bottleneck over the slowest WAN link it crosses alone (at most 1;
  /// 0 when it crosses none): what its WAN part takes without the other groups.
  double add(const RailGroup& g, bool across_zones);

  /// Slot `slot`'s reduction end and weight gather, raised to the ends of its groups on every rail
  /// and WAN link they cross (each group's in processor sharing with the link's other groups).
  void wait_for_groups(std::size_t slot, double& reduce_end_s, double& gather_s);

 private:
  /// The group's crossings of WAN links (see add).
  double add_wan_loads(const RailGroup& g);
  /// The group's crossings of its members' NIC rails.
  void add_rail_loads(const RailGroup& g);
  /// Every member of the group waits for the group's end on every rail and WAN link it crosses.
  void add_group_waits(const RailGroup& g);
  /// Group `index`'s latest reduction end and gather over every rail and WAN link it crosses,
  /// worked out once (after every group is on the rails) and kept for its other members.
  const std::pair<double, double>& group_end(int index);
  /// The id of the current group on the rails (SyncRails::group_reduce_end_s): one per TP rank's
  /// group where one group stands for all (`rank`), else the group's own.
  int group_id(int rank) const { return group_serial_ * kMaxRanks + std::min(rank, kMaxRanks - 1); }
  static constexpr int kMaxRanks = 1024;
  int tp_of_slot(int slot) const { return plan_.replicas[slot / max_pp_].stages[slot % max_pp_].tp(); }

  const Cluster& c_;
  const Plan& plan_;
  const int max_pp_;
  SyncRails rails_;
  /// [slot]: the index of every group it is in (add order). A group's waits are kept once, not
  /// per member: a 336-member group crossing ~1,000 rails made each member's copy the planner's
  /// main cost (cubic in the group's size with the de-duplication per member).
  ScratchVector<std::vector<int>> slot_groups_;
  ScratchVector<std::pair<int, int>> waits_;  ///< every group's (rail, group id), one group after the other
  ScratchVector<int> group_first_wait_;       ///< [group index] its first entry in waits_; one past the last at the end
  ScratchVector<std::pair<double, double>> group_ends_;  ///< group_end's cache: (reduce end, gather)
  ScratchVector<char> group_end_known_;                  ///< [group index] group_ends_ holds its figures
  ScratchVector<std::pair<int, int>> group_waits_;    ///< the current group's (rail, group id)
  ScratchVector<std::pair<int, int>> wan_crossings_;  ///< add_wan_loads scratch: (WAN link, crossings)
  ScratchVector<int> node_members_;                   ///< add_rail_loads scratch: members per node
  int group_serial_ = 0;                              ///< counts the groups put on the rails
};

}  // namespace hetsim::models::grad_sync_detail
