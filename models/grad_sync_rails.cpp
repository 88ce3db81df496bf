// SPDX-License-Identifier: Apache-2.0
// SyncRails' processor sharing of a rail among its groups (grad_sync_rails.hpp).
#include "grad_sync_rails.hpp"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace hetsim::models {

/// An event walk over the groups' arrivals (each with its first ready bucket and all its bytes)
/// and departures; between events every group present gets an equal part of the rail.
void SyncRails::share_rail(Rail& rail) {
  rail.group_ends.clear();
  for (std::size_t i = 0; i < rail.reduce.size(); ++i) {
    const int g = rail.group_of[i];
    auto it = std::find_if(rail.group_ends.begin(), rail.group_ends.end(),
                           [&](const GroupEnd& e) { return g >= 0 && e.group == g; });
    if (it == rail.group_ends.end()) {
      rail.group_ends.push_back({g, rail.reduce[i].ready_s, 0, 0, 0});
      it = rail.group_ends.end() - 1;
    }
    it->arrival_s = std::min(it->arrival_s, rail.reduce[i].ready_s);
    it->work_s += rail.reduce[i].busy_s;
  }
  for (GroupEnd& e : rail.group_ends) {  // each group's buckets alone
    own_.clear();
    for (std::size_t i = 0; i < rail.reduce.size(); ++i)
      if (rail.group_of[i] == e.group) own_.push_back(rail.reduce[i]);
    e.alone_end_s = own_.empty() ? e.arrival_s + e.work_s : serial_buckets_end_s(own_.data(), own_.data() + own_.size());
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

}  // namespace hetsim::models
