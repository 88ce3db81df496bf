// SPDX-License-Identifier: Apache-2.0
// Min-max layer partition by bisection on the bottleneck, and micro-batch balancing.
#include "planner_partition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hetsim::models::planner {

namespace {

/// Per-micro-batch time of stage s that does not grow with its layers: fixed costs, the
/// embedding / LM head, and the p2p of both its boundaries (the predictor adds the forward
/// send to the sender's forward and the backward send to the receiver's backward).
double extra_s(const std::vector<SlotCost>& slots, int s) {
  const int stages = static_cast<int>(slots.size());
  const UnitCost& u = *slots[s].unit;
  return u.fixed_s + (s == 0 ? u.first_s : 0.0) + (s == stages - 1 ? u.last_s : 0.0) + slots[s].send_s +
         (s > 0 ? slots[s - 1].send_s : 0.0);
}

double extra_bytes(const SlotCost& slot, int s, int stages) {
  const UnitCost& u = *slot.unit;
  return u.fixed_bytes + (s == 0 ? u.first_bytes : 0.0) + (s == stages - 1 ? u.last_bytes : 0.0);
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
    const auto take = [&](int s, double tau) {
      const double a = slots[s].unit->layer_s * v;
      const double room = tau - extra_s(slots, s);
      const double fit = a > 0 ? std::floor(room / a + 1e-9) : units;
      return static_cast<int>(std::clamp<double>(fit, 0.0, max_units[s]));
    };
    const auto total = [&](double tau) {
      long n = 0;
      for (int s = 0; s < stages; ++s) n += take(s, tau);
      return n;
    };
    double lo = 0, hi = 0;
    for (int s = 0; s < stages; ++s) {
      lo = std::max(lo, slots[s].unit->layer_s * v + extra_s(slots, s));
      hi = std::max(hi, slots[s].unit->layer_s * v * max_units[s] + extra_s(slots, s));
    }
    if (total(lo) >= units) hi = lo;
    for (int it = 0; it < 60 && hi - lo > 1e-12 * hi; ++it) {
      const double mid = 0.5 * (lo + hi);
      (total(mid) >= units ? hi : lo) = mid;
    }
    long have = 0;
    for (int s = 0; s < stages; ++s) {
      k[s] = std::max(1, take(s, hi));
      have += k[s];
    }
    // Hand back the surplus from the slowest stages, keeping every stage >= 1 group.
    while (have > units) {
      int worst = -1;
      double worst_t = -1;
      for (int s = 0; s < stages; ++s) {
        const double t = k[s] * slots[s].unit->layer_s * v + extra_s(slots, s);
        if (k[s] > 1 && t > worst_t) worst = s, worst_t = t;
      }
      if (worst < 0) break;
      --k[worst];
      --have;
    }
    // And place any shortfall (rounding) on the stages that stay fastest.
    while (have < units) {
      int best = -1;
      double best_t = std::numeric_limits<double>::infinity();
      for (int s = 0; s < stages; ++s) {
        const double t = (k[s] + 1) * slots[s].unit->layer_s * v + extra_s(slots, s);
        if (k[s] < max_units[s] && t < best_t) best = s, best_t = t;
      }
      if (best < 0) {
        out.reason = "the model does not fit on these stages";
        return out;
      }
      ++k[best];
      ++have;
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
  while (have > total) {  // only when some replica was lifted to 1
    int worst = -1;
    double worst_t = -1;
    for (int i = 0; i < n; ++i) {
      const double t = replica_time_s(replicas[i], m[i], interleave);
      if (m[i] > 1 && t > worst_t) worst = i, worst_t = t;
    }
    --m[worst];
    --have;
  }
  while (have < total) {
    int best = 0;
    double best_t = std::numeric_limits<double>::infinity();
    for (int i = 0; i < n; ++i) {
      const double t = replica_time_s(replicas[i], m[i] + 1, interleave);
      if (t < best_t) best = i, best_t = t;
    }
    ++m[best];
    ++have;
  }
  return m;
}

}  // namespace hetsim::models::planner
