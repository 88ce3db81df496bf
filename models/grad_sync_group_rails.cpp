// SPDX-License-Identifier: Apache-2.0
// Data-parallel groups on the NIC rails and WAN links they cross (grad_sync_group_rails.hpp).
#include "grad_sync_group_rails.hpp"

#include <algorithm>
#include <limits>

namespace hetsim::models::grad_sync_detail {

double GroupsOnRails::add(const RailGroup& g, bool across_zones) {
  ++group_serial_;
  group_waits_.clear();
  const double over = across_zones ? add_wan_loads(g) : 0.0;
  add_rail_loads(g);
  add_group_waits(g);
  return over;
}

void GroupsOnRails::wait_for_groups(std::size_t slot, double& reduce_end_s, double& gather_s) {
  for (const int index : slot_groups_[slot]) {
    const auto& [group_reduce_end_s, group_gather_s] = group_end(index);
    reduce_end_s = std::max(reduce_end_s, group_reduce_end_s);
    gather_s = std::max(gather_s, group_gather_s);
  }
}

const std::pair<double, double>& GroupsOnRails::group_end(int index) {
  const std::size_t groups = group_first_wait_.size() - 1;
  if (group_ends_.size() < groups) {
    group_ends_.resize(groups);
    group_end_known_.resize(groups, 0);
  }
  std::pair<double, double>& end = group_ends_[static_cast<std::size_t>(index)];
  if (group_end_known_[static_cast<std::size_t>(index)]) return end;
  // A ring moves at its busiest crossing (tests/sim
  // AStageOnAnIdleNicWaitsForItsGroupsGathersThroughABusyOne), reduction and gather alike.
  end = {-std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (int w = group_first_wait_[index]; w < group_first_wait_[index + 1]; ++w) {
    const auto& [r, group] = waits_[static_cast<std::size_t>(w)];
    end.first = std::max(end.first, rails_.group_reduce_end_s(r, group));
    end.second = std::max(end.second, rails_.group_gather_s(r, group));
  }
  group_end_known_[static_cast<std::size_t>(index)] = 1;
  return end;
}

/// Each crossing of a WAN link carries V a bucket as a rail does (SyncRails::wan_of; for every TP
/// rank's group when one stands for all), here without its latency steps, which the link walks as
/// waits of their own (a 30 ms link's steps are not small beside a bucket's bytes, and groups of
/// segments ready at different times fill each other's; SyncRails::share_rail_in_phases).
double GroupsOnRails::add_wan_loads(const RailGroup& g) {
  // A ring may cross a link more than once (members of two zones in turn: NCCL orders a ring's
  // nodes as its ranks come); the crossings of one link move their bytes in the same collective,
  // so the link gets one bucket of their bytes together, its latency steps once.
  wan_crossings_.clear();
  for (int i = 0; i < g.count; ++i) {
    const int za = c_.nodes[c_.gpus[g.members[i]].node].zone;
    const int zb = c_.nodes[c_.gpus[g.members[(i + 1) % g.count]].node].zone;
    if (za == zb) continue;
    const int link = rails_.wan_of(za, zb);
    if (link < 0) continue;
    // Every TP rank's group as one on the link (their crossings are alike).
    const int copies = g.ranks == 1 ? tp_of_slot(g.slots[i]) : 1;
    auto it = std::find_if(wan_crossings_.begin(), wan_crossings_.end(), [&](const auto& w) { return w.first == link; });
    if (it == wan_crossings_.end()) wan_crossings_.emplace_back(link, copies);
    else it->second += copies;
  }
  const double bucket_bytes = (g.bucket_s - g.bucket_latency_s) * g.bus_bandwidth_Bps;
  const double gather_bytes = g.param_gather_s * g.bus_bandwidth_Bps;
  const int group = group_id(kMaxRanks - 1);
  double over = 0;
  for (const auto& [link, crossings] : wan_crossings_) {
    for (int b = 0; b < g.buckets; ++b)
      rails_.add_reduce(link, g.bucket_ready_s[b], crossings * bucket_bytes, group, g.bucket_latency_s);
    rails_.add_gather(link, crossings * gather_bytes, group);
    over = std::max(over, g.bus_bandwidth_Bps / rails_.rate_Bps(link));
    group_waits_.emplace_back(link, group);
  }
  return std::min(1.0, over);
}

/// A ring moves V = bucket time x bottleneck bytes a bucket over every hop; a node's members send
/// what crosses its boundary, each V / k over its own rail for k members there (one NCCL channel
/// each, as group_cost prices the hop), or V at the boundary member alone (GroupCost::node_shared).
/// One group standing for every TP rank's (ranks 1) loads the rails of all the stage's GPUs.
void GroupsOnRails::add_rail_loads(const RailGroup& g) {
  const int first_node = c_.gpus[g.members[0]].node;
  bool spans = false;
  for (int i = 1; i < g.count && !spans; ++i) spans = c_.gpus[g.members[i]].node != first_node;
  if (!spans) return;
  node_members_.resize(c_.nodes.size(), 0);
  for (int i = 0; i < g.count; ++i) ++node_members_[c_.gpus[g.members[i]].node];
  const double bucket_bytes = g.bucket_s * g.bus_bandwidth_Bps;
  const double gather_bytes = g.param_gather_s * g.bus_bandwidth_Bps;
  for (int i = 0; i < g.count; ++i) {
    const int node = c_.gpus[g.members[i]].node;
    double share = 1.0 / node_members_[node];
    if (g.node_shared) share = c_.gpus[g.members[(i + 1) % g.count]].node != node ? 1.0 : 0.0;
    if (share <= 0) continue;
    const int slot = g.slots[i];
    const Stage& st = plan_.replicas[slot / max_pp_].stages[slot % max_pp_];
    const auto load_rail_of = [&](int gpu, int rank) {
      const int r = rails_.rail_of(gpu);
      if (r < 0) return;
      const int group = group_id(rank);
      for (int b = 0; b < g.buckets; ++b) rails_.add_reduce(r, g.bucket_ready_s[b], share * bucket_bytes, group);
      rails_.add_gather(r, share * gather_bytes, group);
      group_waits_.emplace_back(r, group);
    };
    if (g.ranks == 1)
      for (int rank = 0; rank < st.tp(); ++rank) load_rail_of(st.gpus[rank], rank);
    else
      load_rail_of(g.members[i], 0);
  }
  for (int i = 0; i < g.count; ++i) node_members_[c_.gpus[g.members[i]].node] = 0;
}

void GroupsOnRails::add_group_waits(const RailGroup& g) {
  std::sort(group_waits_.begin(), group_waits_.end());
  group_waits_.erase(std::unique(group_waits_.begin(), group_waits_.end()), group_waits_.end());
  waits_.insert(waits_.end(), group_waits_.begin(), group_waits_.end());
  const int index = static_cast<int>(group_first_wait_.size()) - 1;
  group_first_wait_.push_back(static_cast<int>(waits_.size()));
  for (int i = 0; i < g.count; ++i) {
    std::vector<int>& mine = slot_groups_[static_cast<std::size_t>(g.slots[i])];
    if (mine.empty() || mine.back() != index) mine.push_back(index);
  }
}

}  // namespace hetsim::models::grad_sync_detail
