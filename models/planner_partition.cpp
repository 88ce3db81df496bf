// SPDX-License-Identifier: Apache-2.0
// Min-max layer partition by bisection on the bottleneck, and micro-batch balancing.
#include "planner_partition.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

#include "pipeline_time.hpp"

namespace hetsim::models::planner {

namespace {

/// Per-micro-batch time of stage s that does not grow with its layers: fixed costs, the
/// embedding / LM head, and the sends it makes: its activations forward to the next stage and
/// its input's gradient back to the previous one (slot s-1's back_send_s), each charged to the
/// sending stage as the predictor does.
double extra_s(const std::vector<SlotCost>& slots, int s) {
  const int stages = static_cast<int>(slots.size());
  return slots[s].unit->extra_s(s, stages) + slots[s].send_s + (s > 0 ? slots[s - 1].back_send_s : 0.0);
}

double extra_bytes(const SlotCost& slot, int s, int stages) {
  return slot.unit->extra_bytes(s, stages, slot.weight_scale);
}

double stage_memory(const SlotCost& slot, int s, int stages, int layers, int micro_batches, int interleave) {
  const UnitCost& u = *slot.unit;
  const double f = inflight_factor(s, stages, micro_batches, interleave);
  return layers * (u.weight_bytes * slot.weight_scale + f * u.act_bytes) + extra_bytes(slot, s, stages);
}

/// The groups a stage holds when every group whose stage time (k a + e for its k-th group) is at
/// most T is placed, at least one (partition_layers' start), at most `max_units`.
int groups_within(double t, double a, double e, int max_units) {
  if (!(a > 0)) return t >= a + e ? max_units : 1;
  const double k = std::floor((t - e) / a);
  return static_cast<int>(std::clamp(k, 1.0, static_cast<double>(max_units)));
}

/// partition_layers' water-filling, fast-forwarded: the largest threshold T (by bisection) within
/// which fewer than `units` groups lie, so T is below the time of the greedy's last group and
/// every group within it is one the greedy places; `k` takes them. Returns how many are placed.
int fast_forward_groups(const std::vector<double>& a, const std::vector<double>& e, const std::vector<int>& max_units,
                        int units, std::vector<int>& k) {
  const std::size_t stages = a.size();
  const auto count = [&](double t) {
    long n = 0;
    for (std::size_t s = 0; s < stages; ++s) n += groups_within(t, a[s], e[s], max_units[s]);
    return n;
  };
  double lo = 0, hi = 0;
  for (std::size_t s = 0; s < stages; ++s) hi = std::max(hi, max_units[s] * a[s] + e[s]);
  if (count(lo) >= units) return static_cast<int>(stages);  // nothing to skip: one group each
  for (int it = 0; it < 200; ++it) {
    const double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    (count(mid) < units ? lo : hi) = mid;
  }
  for (std::size_t s = 0; s < stages; ++s) k[s] = groups_within(lo, a[s], e[s], max_units[s]);
  return static_cast<int>(count(lo));
}

}  // namespace

PartitionResult partition_layers(const std::vector<SlotCost>& slots, int layers, int interleave, int micro_batches,
                                 double memory_fraction, bool uniform) {
  PartitionResult out;
  const int stages = static_cast<int>(slots.size());
  const int v = std::max(1, interleave);
  if (stages == 0 || layers % v != 0 || layers / v < stages) {
    out.reason = "fewer layer groups than stages";
    return out;
  }
  const int units = layers / v;  // partition in groups of v layers (interleave divides each stage)
  // Scratch kept per thread: the planner partitions millions of pipelines per search.
  thread_local std::vector<int> max_units, k;
  thread_local std::vector<double> a, e;
  max_units.resize(stages);
  for (int s = 0; s < stages; ++s) {
    const SlotCost& slot = slots[s];
    const UnitCost& u = *slot.unit;
    const double f = inflight_factor(s, stages, micro_batches, v);
    const double per_unit = v * (u.weight_bytes * slot.weight_scale + f * u.act_bytes);
    const double room = u.capacity_bytes * memory_fraction - extra_bytes(slot, s, stages);
    max_units[s] = per_unit > 0 ? static_cast<int>(std::min<double>(units, std::floor(room / per_unit))) : units;
    if (max_units[s] < 1) {
      out.reason = "stage " + std::to_string(s) + " cannot hold one layer";
      return out;
    }
  }
  k.resize(stages);
  if (uniform) {
    for (int s = 0; s < stages; ++s) {
      k[s] = units / stages + (s < units % stages ? 1 : 0);
      if (k[s] > max_units[s]) {
        out.reason = "uniform split does not fit stage " + std::to_string(s);
        return out;
      }
    }
  } else {
    long capacity = 0;
    for (int m : max_units) capacity += m;
    if (capacity < units) {
      out.reason = "the model does not fit on these stages";
      return out;
    }
    // Water-filling: every stage starts with one group; each further group goes to the stage
    // whose time after taking it is smallest. For a sum constraint and increasing per-stage
    // costs this greedy is optimal for the min-max objective (Ibaraki & Katoh, "Resource
    // Allocation Problems", MIT Press 1988, ch. 4), in O(U log S).
    a.resize(stages);
    e.resize(stages);
    using Next = std::pair<double, int>;  // (time of the stage with one more group, stage)
    thread_local std::vector<Next> heap;
    heap.clear();
    for (int s = 0; s < stages; ++s) {
      a[s] = slots[s].unit->layer_s * v;
      e[s] = extra_s(slots, s);
      k[s] = 1;
      if (max_units[s] > 1) heap.emplace_back(2 * a[s] + e[s], s);
    }
    const auto later = [](const Next& x, const Next& y) { return x.first > y.first; };
    int have = stages;
    // Very deep models (more than kFastForwardUnits groups): the greedy pops the groups in
    // increasing order of the time they give their stage, so every group whose time is at most a
    // threshold T that leaves S groups to place goes first, whatever the ties among them; they are
    // placed at once (T by bisection, O(S log)) and the greedy places the rest. A 100,000-layer
    // model spent 70 s of a search in this loop (s57 bad-input hunt). Below the threshold the
    // greedy runs alone, so the ties of ordinary models break as they always have.
    constexpr int kFastForwardUnits = 1024;
    if (units > kFastForwardUnits) {
      have = fast_forward_groups(a, e, max_units, units, k);
      heap.clear();
      for (int st = 0; st < stages; ++st)
        if (k[st] < max_units[st]) heap.emplace_back((k[st] + 1) * a[st] + e[st], st);
    }
    std::make_heap(heap.begin(), heap.end(), later);
    for (; have < units; ++have) {
      if (heap.empty()) {
        out.reason = "the model does not fit on these stages";
        return out;
      }
      std::pop_heap(heap.begin(), heap.end(), later);
      const int s = heap.back().second;
      heap.pop_back();
      if (++k[s] < max_units[s]) {
        heap.emplace_back((k[s] + 1) * a[s] + e[s], s);
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
  }
  out.layers.resize(stages);
  out.stage_s.resize(stages);
  for (int s = 0; s < stages; ++s) {
    out.layers[s] = k[s] * v;
    const double t = out.layers[s] * slots[s].unit->layer_s + extra_s(slots, s);
    out.stage_s[s] = t;
    out.bottleneck_s = std::max(out.bottleneck_s, t);
    out.sum_s += t;
    const double mem = stage_memory(slots[s], s, stages, out.layers[s], micro_batches, v);
    out.min_headroom_fraction = std::min(out.min_headroom_fraction, 1.0 - mem / slots[s].unit->capacity_bytes);
  }
  out.ok = true;
  return out;
}

double replica_time_s(const ReplicaTiming& r, int micro_batches, int interleave) {
  return pipeline_closed_form_s(r.sum_s, r.bottleneck_s, micro_batches, interleave);
}

std::vector<GroupMicroBatches> balance_micro_batches(const std::vector<TimingGroup>& groups, int total,
                                                     int interleave, bool uniform) {
  const int g_count = static_cast<int>(groups.size());
  long replicas = 0;
  for (const TimingGroup& g : groups) replicas += std::max(0, g.copies);
  if (replicas == 0 || total < replicas) return {};
  std::vector<GroupMicroBatches> out(g_count);
  if (uniform) {
    if (total % replicas != 0) return {};
    for (GroupMicroBatches& o : out) o = {0, 0, static_cast<int>(total / replicas)};
    return out;
  }
  const int v = std::max(1, interleave);
  const auto fill_s = [v](const ReplicaTiming& r) { return (r.sum_s - r.bottleneck_s) / v; };
  // Continuous optimum: m_r*tau_r + o_r = T for all r, sum m_r = total.
  double inv = 0, off = 0;
  for (const TimingGroup& g : groups) {
    inv += g.copies / g.timing.bottleneck_s;
    off += g.copies * fill_s(g.timing) / g.timing.bottleneck_s;
  }
  const double target = (total + off) / inv;
  // Per group: every copy at `level`, then `moved` leading copies one step away from it.
  std::vector<int> level(g_count), moved(g_count, 0), first_index(g_count);
  long have = 0, index = 0;
  for (int k = 0; k < g_count; ++k) {
    level[k] = std::max(1, static_cast<int>(std::floor((target - fill_s(groups[k].timing)) /
                                                        groups[k].timing.bottleneck_s)));
    have += static_cast<long>(level[k]) * groups[k].copies;
    first_index[k] = static_cast<int>(index);
    index += groups[k].copies;
  }
  // Greedy rounding, as one micro-batch at a time over single replicas would do it: take one
  // from the slowest replica while there are too many (only when some replica was lifted to 1),
  // give one to the replica that stays fastest with it while there are too few; ties to the
  // lowest index. All copies of a group at one level have the same time, and the next copy of
  // the group has the lowest index among them, so a group takes (or gives) as many copies at
  // once as it can: no other replica can come between (another group with the same time has
  // all its indices below, and would have gone first, or all above). Heaps keyed (time, index)
  // make each move O(log G).
  using Keyed = std::pair<double, int>;  // (time, index of the group's next copy), group found by index
  const auto group_of = [&](int replica) {
    return static_cast<int>(std::upper_bound(first_index.begin(), first_index.end(), replica) - first_index.begin()) - 1;
  };
  if (have > total) {
    auto slower = [](const Keyed& a, const Keyed& b) { return a.first < b.first || (a.first == b.first && a.second > b.second); };
    std::priority_queue<Keyed, std::vector<Keyed>, decltype(slower)> slowest(slower);
    for (int k = 0; k < g_count; ++k)
      if (level[k] > 1 && groups[k].copies > 0) slowest.push({replica_time_s(groups[k].timing, level[k], v), first_index[k]});
    while (have > total) {
      const int k = group_of(slowest.top().second);
      slowest.pop();
      const int take = static_cast<int>(std::min<long>(groups[k].copies - moved[k], have - total));
      moved[k] += take;  // the leading `moved` copies now run level - 1
      have -= take;
      if (moved[k] == groups[k].copies) --level[k], moved[k] = 0;
      if (level[k] > 1) slowest.push({replica_time_s(groups[k].timing, level[k], v), first_index[k] + moved[k]});
    }
    for (int k = 0; k < g_count; ++k) out[k] = {level[k] - 1, moved[k], level[k]};
    return out;
  }
  std::priority_queue<Keyed, std::vector<Keyed>, std::greater<Keyed>> fastest_next;
  for (int k = 0; k < g_count; ++k)
    if (groups[k].copies > 0) fastest_next.push({replica_time_s(groups[k].timing, level[k] + 1, v), first_index[k]});
  while (have < total) {
    const int k = group_of(fastest_next.top().second);
    fastest_next.pop();
    const int give = static_cast<int>(std::min<long>(groups[k].copies - moved[k], total - have));
    moved[k] += give;  // the leading `moved` copies now run level + 1
    have += give;
    if (moved[k] == groups[k].copies) ++level[k], moved[k] = 0;
    fastest_next.push({replica_time_s(groups[k].timing, level[k] + 1, v), first_index[k] + moved[k]});
  }
  for (int k = 0; k < g_count; ++k) out[k] = {level[k] + 1, moved[k], level[k]};
  return out;
}

double step_lower_bound_s(double tau_lb_s, double fill_lb_s, int copies, const std::vector<TimingGroup>& others,
                          int total, int interleave) {
  // With the others' sum_k c_k o_k / tau_k = B and sum_k c_k / tau_k = C, the copies' slowest
  // stage tau and fill o: T(tau, o) = (M tau + d o + B tau) / (d + C tau). T grows with o; in
  // tau it grows when M + B >= C o, else it falls towards (M + B) / C. So T >= min(T(tau_lb,
  // o_lb), (M + B) / C). Alone (C = 0): T = M tau / d + o.
  const int v = std::max(1, interleave);
  double b = 0, c = 0;
  for (const TimingGroup& g : others) {
    b += g.copies * (g.timing.sum_s - g.timing.bottleneck_s) / v / g.timing.bottleneck_s;
    c += g.copies / g.timing.bottleneck_s;
  }
  const double d = copies, m = total;
  const double alone = m * tau_lb_s / d + fill_lb_s;
  if (c <= 0) return alone;
  const double together = std::min((m * tau_lb_s + d * fill_lb_s + b * tau_lb_s) / (d + c * tau_lb_s), (m + b) / c);
  return std::min(alone, together);
}

std::vector<int> balance_micro_batches(const std::vector<ReplicaTiming>& replicas, int total, int interleave,
                                       bool uniform) {
  std::vector<TimingGroup> groups;
  groups.reserve(replicas.size());
  for (const ReplicaTiming& r : replicas) groups.push_back({r, 1});
  const std::vector<GroupMicroBatches> per_group = balance_micro_batches(groups, total, interleave, uniform);
  std::vector<int> m;
  m.reserve(per_group.size());
  for (const GroupMicroBatches& g : per_group) m.push_back(g.of_copy(0));
  return m;
}

}  // namespace hetsim::models::planner
