// SPDX-License-Identifier: Apache-2.0
// The NIC rails of a gradient sync whose GPUs are in several data-parallel groups at once
// (grad_sync_cost.cpp GradSync, stages in several groups): each rail is a resource that carries
// the crossings of every group of every GPU on it, in the order their buckets become ready.
//
// Why: pricing each group at a fixed share of a rail (its channels over all the rail's channels)
// assumes every channel moves for the whole sync. Groups of unequal size do not: under fair
// sharing (NCCL channels are flows like any other; max-min fairness, Bertsekas & Gallager, "Data
// Networks" §6.5.2) the small groups finish and leave the rail to the large ones, and the rail is
// busy for the sum of its bytes over its rate. A WAN link between two zones is such a resource
// too, shared by every group whose ring crosses it. Two replicas split differently on one-NIC nodes
// (a 4090 box holding a stage of one replica and a TP-4 stage of another) were priced at 3.5 s of
// sync where the rail carries its bytes in 0.9 s (the simulator: 0.89 s).
#pragma once
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "cluster.hpp"
#include "step_cost.hpp"
#include "topology.hpp"

namespace hetsim::models {

class SyncRails {
 public:
  explicit SyncRails(const Cluster& c) : c_(c) {}

  /// The rail of GPU `gpu` (its NIC(s), rail_of_gpu), or -1 when its node has no NIC.
  int rail_of(int gpu) {
    const int local_rail = rail_of_gpu(c_, gpu);
    if (local_rail < 0) return -1;
    if (index_of_.empty()) index_of_.assign(c_.gpus.size(), -1);  // on first use: uniform plans never get here
    const int node = c_.gpus[gpu].node;
    const int id = c_.nodes[node].first_gpu + local_rail;
    if (index_of_[id] < 0) {
      index_of_[id] = static_cast<int>(rails_.size());
      rails_.push_back(Rail{rail_rate_Bps(c_, node)});
    }
    return index_of_[id];
  }

  /// The WAN link from zone za to zb as a resource of the same kind (one per direction), or -1
  /// when the zones have no link. Its rate is the link's achieved bandwidth (kWanLinkEfficiency).
  int wan_of(int za, int zb) {
    const InterZoneLink* link = c_.link_between(za, zb);
    if (link == nullptr) return -1;
    const int zones = static_cast<int>(c_.zones.size());
    const int key = za * zones + zb;
    for (const auto& [k, index] : wan_index_)
      if (k == key) return index;
    wan_index_.emplace_back(key, static_cast<int>(rails_.size()));
    rails_.push_back(Rail{link->bandwidth_Bps * kWanLinkEfficiency});
    return wan_index_.back().second;
  }
  double rate_Bps(int r) const { return rails_[r].rate_Bps; }
  int count() const { return static_cast<int>(rails_.size()); }

  /// Rail `r` carries `bytes` of a bucket of group `group` (an id of the caller's; -1: none)
  /// ready at `ready_s` (reduction), or of the weights' all-gather (`gather`). `latency_s`: the
  /// bucket's latency steps, during which its group waits without using the rail (a WAN link's
  /// tens of ms a step; see group_reduce_end_s). With 0 the caller has folded them into `bytes`.
  void add_reduce(int r, double ready_s, double bytes, int group = -1, double latency_s = 0) {
    Rail& rail = rails_[r];
    rail.reduce.push_back({ready_s, bytes / rail.rate_Bps});
    rail.group_of.push_back(group);
    rail.latency_of.push_back(latency_s);
    rail.in_phases = rail.in_phases || latency_s > 0;
    rail.end_known = rail.shares_known = false;
  }
  void add_gather(int r, double bytes, int group = -1) {
    Rail& rail = rails_[r];
    for (auto& [g, s] : rail.gathers)
      if (g == group) {
        s += bytes / rail.rate_Bps;
        return;
      }
    rail.gathers.emplace_back(group, bytes / rail.rate_Bps);
  }

  /// When rail r has sent its reductions' buckets (serial_buckets_end_s).
  double reduce_end_s(int r) {
    Rail& rail = rails_[r];
    if (!rail.end_known) {
      // On a copy: serial_buckets_end_s sorts its buckets, which would part them from group_of.
      own_.assign(rail.reduce.begin(), rail.reduce.end());
      rail.end_s = serial_buckets_end_s(own_.data(), own_.data() + own_.size());
      rail.end_known = true;
    }
    return rail.end_s;
  }
  /// When group `group`'s weight gather is done on rail r: every gather starts after the
  /// optimizer step, so in processor sharing a group ends once each group on the rail has moved
  /// min(its bytes, the group's) (the reduction's rule, group_reduce_end_s, with one arrival);
  /// a group not on the rail (or none, -1) waits for all of them.
  double group_gather_s(int r, int group) const {
    const Rail& rail = rails_[r];
    double mine = std::numeric_limits<double>::infinity();
    for (const auto& [g, s] : rail.gathers)
      if (g == group && group >= 0) mine = s;
    double end_s = 0;
    for (const auto& [g, s] : rail.gathers) end_s += g < 0 ? s : std::min(s, mine);
    return end_s;
  }

  /// When group `group` is done on rail r. The rail's groups share it fairly (NCCL's
  /// communicators are flows like any other: max-min fairness), so the rail serves the groups
  /// present at once in processor sharing, each from its first ready bucket with all its bytes
  /// (Kleinrock, "Queueing Systems" vol. 2, §4.4): a small segment's groups through a rail that a
  /// large segment's groups also cross end early, not when the whole rail is done (its last
  /// group only). Bounded by the group's own buckets alone and by the rail's end.
  /// A rail whose buckets carry latency steps (add_reduce's latency_s) is walked bucket by bucket
  /// instead (share_rail_in_phases): a group in its latency steps leaves the rail to the others,
  /// so groups that are not in step fill each other's waits, as the simulator's flows do.
  double group_reduce_end_s(int r, int group) {
    Rail& rail = rails_[r];
    if (rail.in_phases) {
      if (!rail.shares_known) share_rail_in_phases(rail);
      double last_s = -std::numeric_limits<double>::infinity();
      for (const GroupEnd& e : rail.group_ends) {
        if (group >= 0 && e.group == group) return e.shared_end_s;
        last_s = std::max(last_s, e.shared_end_s);
      }
      return last_s;
    }
    const double rail_end_s = reduce_end_s(r);
    if (group < 0) return rail_end_s;
    if (!rail.shares_known) share_rail(rail);
    for (const GroupEnd& e : rail.group_ends)
      if (e.group == group) return std::min(rail_end_s, std::max(e.alone_end_s, e.shared_end_s));
    return rail_end_s;
  }

 private:
  struct GroupEnd {
    int group;
    double arrival_s, work_s;   ///< its first ready bucket, its buckets' busy time on the rail
    double alone_end_s;         ///< its buckets alone on the rail (serial_buckets_end_s)
    double shared_end_s;        ///< in processor sharing with the rail's other groups
  };
  struct Rail {
    explicit Rail(double rate) : rate_Bps(rate) {}
    double rate_Bps;
    std::vector<SyncBucket> reduce;
    std::vector<std::pair<int, double>> gathers;  ///< (group, its gather's seconds on the rail)
    std::vector<int> group_of;  ///< [reduce bucket] its group (add_reduce)
    std::vector<double> latency_of;  ///< [reduce bucket] its latency steps (add_reduce)
    bool in_phases = false;     ///< some bucket has latency steps of its own (share_rail_in_phases)
    std::vector<GroupEnd> group_ends;
    bool shares_known = false;
    double end_s = 0;
    bool end_known = false;
  };
  struct GroupBuckets {
    int group;
    std::vector<std::size_t> buckets;  ///< indices into Rail::reduce, in the order added
  };
  /// The rail's buckets by group, groups in order of first appearance; a bucket of no group (-1)
  /// is a group of its own.
  static std::vector<GroupBuckets> buckets_by_group(const Rail& rail);
  /// The rail's groups in processor sharing (GroupEnd::shared_end_s): between events every group
  /// present gets an equal part of the rail; a group of several buckets arrives with its first.
  void share_rail(Rail& rail);
  /// The rail's groups bucket by bucket (GroupEnd::shared_end_s): each group sends its buckets in
  /// the order they become ready, each once ready and its previous one is done, first waiting its
  /// latency steps without the rail, then sharing the rail equally with the groups sending then.
  void share_rail_in_phases(Rail& rail);

  const Cluster& c_;
  std::vector<int> index_of_;  ///< [node first GPU + rail] -> rails_ index
  std::vector<std::pair<int, int>> wan_index_;  ///< (za * zones + zb, rails_ index)
  std::vector<Rail> rails_;
  std::vector<SyncBucket> own_;  ///< scratch of reduce_end_s and group_reduce_end_s
};

}  // namespace hetsim::models
