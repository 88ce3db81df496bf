// SPDX-License-Identifier: Apache-2.0
// SyncRails' processor sharing of a rail among its groups (grad_sync_rails.hpp).
#include "grad_sync_rails.hpp"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace hetsim::models {

std::vector<SyncRails::GroupBuckets> SyncRails::buckets_by_group(const Rail& rail) {
  std::vector<GroupBuckets> groups;
  for (std::size_t i = 0; i < rail.reduce.size(); ++i) {
    const int g = rail.group_of[i];
    auto it = std::find_if(groups.begin(), groups.end(), [&](const GroupBuckets& e) { return g >= 0 && e.group == g; });
    if (it == groups.end()) {
      groups.push_back({g, {}});
      it = groups.end() - 1;
    }
    it->buckets.push_back(i);
  }
  return groups;
}

/// An event walk over the groups' arrivals (each with its first ready bucket and all its bytes)
/// and departures; between events every group present gets an equal part of the rail.
void SyncRails::share_rail(Rail& rail) {
  rail.group_ends.clear();
  for (const GroupBuckets& gb : buckets_by_group(rail)) {
    GroupEnd e{gb.group, std::numeric_limits<double>::infinity(), 0, 0, 0};
    own_.clear();
    for (std::size_t i : gb.buckets) {
      e.arrival_s = std::min(e.arrival_s, rail.reduce[i].ready_s);
      e.work_s += rail.reduce[i].busy_s;
      own_.push_back(rail.reduce[i]);
    }
    e.alone_end_s = serial_buckets_end_s(own_.data(), own_.data() + own_.size());  // its buckets alone
    rail.group_ends.push_back(e);
  }
  std::vector<GroupEnd*> order;  // by arrival
  for (GroupEnd& e : rail.group_ends) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const GroupEnd* a, const GroupEnd* b) { return a->arrival_s < b->arrival_s; });
  std::vector<std::pair<GroupEnd*, double>> active;  // (group, work left)
  std::size_t next = 0;
  double t = order.empty() ? 0 : order.front()->arrival_s;
  while (next < order.size() || !active.empty()) {
    if (active.empty()) t = std::max(t, order[next]->arrival_s);
    while (next < order.size() && order[next]->arrival_s <= t) {
      active.emplace_back(order[next], order[next]->work_s);
      ++next;
    }
    double least = std::numeric_limits<double>::infinity();
    for (const auto& a : active) least = std::min(least, a.second);
    const double n = static_cast<double>(active.size());
    const double until_arrival = next < order.size() ? order[next]->arrival_s - t : std::numeric_limits<double>::infinity();
    const double dt = std::min(least * n, until_arrival);  // the next departure or arrival
    t += dt;
    for (auto& a : active) a.second -= dt / n;
    for (auto it = active.begin(); it != active.end();) {
      if (it->second <= 1e-12 * std::max(1.0, it->first->work_s)) {
        it->first->shared_end_s = t;
        it = active.erase(it);
      } else {
        ++it;
      }
    }
  }
  rail.shares_known = true;
}

/// An event walk over every bucket's three moments: ready, latency steps done, bytes sent. A group
/// (NCCL's communicator: one collective at a time, in order) starts its next bucket once that is
/// ready and its previous one is done; during the bucket's latency steps its flows are in flight
/// and the rail is free for others (an alpha-beta collective, Hockney 1994: alpha per step, the
/// bytes at the link's rate); then it shares the rail equally with every group sending at the
/// time. Groups in step (the TP ranks' groups of one segment) thus pay their latency once between
/// them, and groups out of step (segments ready at different times) fill each other's waits.
void SyncRails::share_rail_in_phases(Rail& rail) {
  struct Flow {
    int group;
    std::vector<std::size_t> buckets;  ///< indices into rail.reduce, in ready order
    std::size_t next = 0;              ///< the bucket in progress or next to start
    enum class State { kWaiting, kLatency, kSending, kDone } state = State::kWaiting;
    double latency_end_s = 0, work_left_s = 0;
  };
  std::vector<Flow> flows;
  for (GroupBuckets& gb : buckets_by_group(rail)) flows.push_back(Flow{gb.group, std::move(gb.buckets)});
  for (Flow& f : flows)
    std::stable_sort(f.buckets.begin(), f.buckets.end(),
                     [&](std::size_t a, std::size_t b) { return rail.reduce[a].ready_s < rail.reduce[b].ready_s; });
  rail.group_ends.assign(flows.size(), GroupEnd{});
  const double inf = std::numeric_limits<double>::infinity();
  double t = inf;
  for (const Flow& f : flows) t = std::min(t, rail.reduce[f.buckets.front()].ready_s);
  std::size_t done = 0;
  while (done < flows.size()) {
    // Every transition due at t, until none is left (a bucket of no latency and no bytes ends at once).
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t k = 0; k < flows.size(); ++k) {
        Flow& f = flows[k];
        const std::size_t b = f.state == Flow::State::kDone ? 0 : f.buckets[f.next];
        if (f.state == Flow::State::kWaiting && rail.reduce[b].ready_s <= t) {
          f.state = Flow::State::kLatency;
          f.latency_end_s = t + rail.latency_of[b];
          changed = true;
        }
        if (f.state == Flow::State::kLatency && f.latency_end_s <= t) {
          f.state = Flow::State::kSending;
          f.work_left_s = rail.reduce[b].busy_s;
          changed = true;
        }
        if (f.state == Flow::State::kSending && f.work_left_s <= 1e-12 * std::max(1.0, rail.reduce[b].busy_s)) {
          changed = true;
          if (++f.next < f.buckets.size()) {
            f.state = Flow::State::kWaiting;
          } else {
            f.state = Flow::State::kDone;
            rail.group_ends[k] = GroupEnd{f.group, 0, 0, 0, t};
            ++done;
          }
        }
      }
    }
    if (done == flows.size()) break;
    // The next moment: a bucket ready, a latency wait over, or the first sender done.
    int sending = 0;
    double least_left_s = inf, next_s = inf;
    for (const Flow& f : flows) {
      if (f.state == Flow::State::kWaiting) next_s = std::min(next_s, rail.reduce[f.buckets[f.next]].ready_s);
      if (f.state == Flow::State::kLatency) next_s = std::min(next_s, f.latency_end_s);
      if (f.state == Flow::State::kSending) ++sending, least_left_s = std::min(least_left_s, f.work_left_s);
    }
    if (sending > 0) next_s = std::min(next_s, t + least_left_s * sending);
    if (!(next_s < inf)) {  // no moment ahead (a ready time that is not a number): end where we are
      for (std::size_t k = 0; k < flows.size(); ++k)
        if (flows[k].state != Flow::State::kDone) rail.group_ends[k] = GroupEnd{flows[k].group, 0, 0, 0, t};
      break;
    }
    double dt = next_s - t;
    // The first sender's end below the clock's resolution at t (a step of ~1e-12 s at t ~1e4 s,
    // after a WAN latency of hours): t cannot move, but the senders still share the rail that
    // long, or the walk would repeat the same moment for ever (s66 fuzz: `predict` hung).
    if (dt <= 0 && sending > 0) dt = least_left_s * sending;
    for (Flow& f : flows)
      if (f.state == Flow::State::kSending) f.work_left_s -= dt / sending;
    t = std::max(t, next_s);
  }
  rail.shares_known = true;
}

}  // namespace hetsim::models
