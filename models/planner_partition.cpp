// SPDX-License-Identifier: Apache-2.0
// Min-max layer partition by bisection on the bottleneck, and micro-batch balancing.
#include "planner_partition.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

namespace hetsim::models::planner {

namespace {

/// Per-micro-batch time of stage s that does not grow with its layers: fixed costs, the
/// embedding / LM head, and the p2p of both its boundaries (the predictor adds the forward
/// send to the sender's forward and the backward send to the receiver's backward).
double extra_s(const std::vector<SlotCost>& slots, int s) {
  const int stages = static_cast<int>(slots.size());
  return slots[s].unit->extra_s(s, stages) + slots[s].send_s + (s > 0 ? slots[s - 1].send_s : 0.0);
}

double extra_bytes(const SlotCost& slot, int s, int stages) {
  return slot.unit->extra_bytes(s, stages, slot.weight_scale);
}

double stage_memory(const SlotCost& slot, int s, int stages, int layers, int micro_batches, int interleave) {
  const UnitCost& u = *slot.unit;
  const double f = inflight_factor(s, stages, micro_batches, interleave);
  return layers * (u.weight_bytes * slot.weight_scale + f * u.act_bytes) + extra_bytes(slot, s, stages);
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
  std::vector<int> max_units(stages);
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
  std::vector<int> k(stages);
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
    std::vector<double> a(stages), e(stages);
    using Next = std::pair<double, int>;  // (time of the stage with one more group, stage)
    std::vector<Next> heap;
    heap.reserve(stages);
    for (int s = 0; s < stages; ++s) {
      a[s] = slots[s].unit->layer_s * v;
      e[s] = extra_s(slots, s);
      k[s] = 1;
      if (max_units[s] > 1) heap.emplace_back(2 * a[s] + e[s], s);
    }
    const auto later = [](const Next& x, const Next& y) { return x.first > y.first; };
    std::make_heap(heap.begin(), heap.end(), later);
    for (int have = stages; have < units; ++have) {
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
  return micro_batches * r.bottleneck_s + (r.sum_s - r.bottleneck_s) / std::max(1, interleave);
}

std::vector<int> balance_micro_batches(const std::vector<ReplicaTiming>& replicas, int total, int interleave,
                                       bool uniform) {
  const int n = static_cast<int>(replicas.size());
  if (n == 0 || total < n) return {};
  if (uniform) {
    if (total % n != 0) return {};
    return std::vector<int>(n, total / n);
  }
  // Continuous optimum: m_r*tau_r + o_r = T for all r, sum m_r = total.
  double inv = 0, off = 0;
  for (const ReplicaTiming& r : replicas) {
    const double o = (r.sum_s - r.bottleneck_s) / std::max(1, interleave);
    inv += 1.0 / r.bottleneck_s;
    off += o / r.bottleneck_s;
  }
  const double target = (total + off) / inv;
  std::vector<int> m(n);
  long have = 0;
  for (int i = 0; i < n; ++i) {
    const double o = (replicas[i].sum_s - replicas[i].bottleneck_s) / std::max(1, interleave);
    m[i] = std::max(1, static_cast<int>(std::floor((target - o) / replicas[i].bottleneck_s)));
    have += m[i];
  }
  // Greedy rounding, one micro-batch at a time: take one from the slowest replica while there
  // are too many (only when some replica was lifted to 1), give one to the replica that stays
  // fastest with it while there are too few. Heaps keyed (time, index) make each move
  // O(log n) and pick what a scan would (lowest index on ties): thousands of replicas cost
  // n log n, not n^2.
  using Keyed = std::pair<double, int>;
  if (have > total) {
    auto slower = [](const Keyed& a, const Keyed& b) { return a.first < b.first || (a.first == b.first && a.second > b.second); };
    std::priority_queue<Keyed, std::vector<Keyed>, decltype(slower)> slowest(slower);
    for (int i = 0; i < n; ++i)
      if (m[i] > 1) slowest.push({replica_time_s(replicas[i], m[i], interleave), i});
    while (have > total) {
      const int i = slowest.top().second;
      slowest.pop();
      --m[i];
      --have;
      if (m[i] > 1) slowest.push({replica_time_s(replicas[i], m[i], interleave), i});
    }
  }
  if (have < total) {
    std::priority_queue<Keyed, std::vector<Keyed>, std::greater<Keyed>> fastest_next;
    for (int i = 0; i < n; ++i) fastest_next.push({replica_time_s(replicas[i], m[i] + 1, interleave), i});
    while (have < total) {
      const int i = fastest_next.top().second;
      fastest_next.pop();
      ++m[i];
      ++have;
      fastest_next.push({replica_time_s(replicas[i], m[i] + 1, interleave), i});
    }
  }
  return m;
}

}  // namespace hetsim::models::planner
