// SPDX-License-Identifier: Apache-2.0
// Replica kinds of one (knobs, TP per pool) branch of the shape search (planner_search.cpp runs
// the branches): per-pool pipelines and their depth options, mixed pipelines across pools with
// their lower bounds and memory check, layer partitions of a kind (see planner_search.cpp's
// header for the two families).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "memory_cost.hpp"
#include "planner_search.hpp"

namespace hetsim::models::planner {
namespace {

constexpr size_t kExactCombinations = 256;  // per-pool depth combinations tried exhaustively
constexpr size_t kTopDepthsPerPool = 3;     // otherwise: the best depths of each pool
// At most this many combinations in all: 3 depths over 13 pools are 1.6 M, enumerated whole even
// past the time limit (minutes on clusters of many node types or identical zones); beyond it the
// pools with the most options keep fewer (their best first).
constexpr size_t kMaxCombinations = 4096;
// Mixed pipelines over at most this many pools are tried in every order (5! = 120); over more,
// in a few orders only (pipeline_orders): 8 pools have 40,320 orders per subset and replica
// count, which took every search of a cluster of eight node types to its time limit before it
// reached the subsets of many pools, where its best plans are.
constexpr size_t kEveryOrderMembers = 5;
// Branches of at most this many pools try mixed pipelines over every subset of them (1,013 for
// ten); more try all pools, each zone's, each GPU type's and every pair (mixed_subsets).
constexpr size_t kEverySubsetPools = 10;

/// A replica kind of `copies` pipelines over `blocks`, from its layer partition.
Kind make_kind(const std::vector<KindBlock>& blocks, int copies, const PartitionResult& part) {
  Kind k;
  k.blocks = blocks;
  k.copies = copies;
  k.layers = part.layers;
  k.timing = ReplicaTiming{part.bottleneck_s, part.sum_s};
  k.stage_s = part.stage_s;
  k.headroom = part.min_headroom_fraction;
  return k;
}

/// FNV-1a (Fowler-Noll-Vo; IETF draft-eastlake-fnv) over a few small ints (the memo keys).
size_t hash_ints(const int* begin, const int* end) {
  size_t h = 1469598103934665603ull;
  for (const int* x = begin; x != end; ++x) h = (h ^ static_cast<size_t>(static_cast<unsigned>(*x))) * 1099511628211ull;
  return h;
}
}  // namespace

size_t ShapeSearch::IntsHash::operator()(const std::vector<int>& v) const { return hash_ints(v.data(), v.data() + v.size()); }

size_t ShapeSearch::BoundaryKeyHash::operator()(const BoundaryKey& k) const {
  const int fields[] = {k.from_pool, k.from_tp, k.to_pool, k.to_tp, k.wan_pipelines, k.copies_out, k.copies_in};
  return hash_ints(std::begin(fields), std::end(fields)) ^ std::hash<double>()(k.bytes);
}

size_t ShapeSearch::PoolKeyHash::operator()(const PoolKey& k) const {
  const int fields[] = {k.pool,        k.tp,         k.units, k.replicas_hint,
                        k.micro_batch, k.recompute,  k.interleave, k.zero,
                        static_cast<int>(k.sequence_parallel) * 2 + static_cast<int>(k.uniform)};
  return hash_ints(std::begin(fields), std::end(fields));
}

double ShapeSearch::mixed_step_lower_bound_s(const std::vector<int>& members, const std::vector<int>& units,
                                             const std::vector<int>& tp, const Knobs& knobs, int copies,
                                             const std::vector<std::pair<int, const PoolOption*>>& rest) {
  // Each member pool p holds n_p = units_p / copies stages of per-layer time a_p, each stage at
  // least v layers. The slowest stage takes at least L / sum(n_p / a_p) (the layers split in
  // proportion to speed) and at least v * a_p; the other stages at least v * min a each, which
  // is a fill of (stages - 1) * min a.
  const int v = knobs.interleave;
  double speed = 0, slowest_floor = 0, fastest_layer = std::numeric_limits<double>::infinity();
  int stages = 0;
  for (int p : members) {
    const double a = costs_.get(pools_[p].node_type, tp[p], knobs).layer_s;
    const int n = units[p] / copies;
    speed += n / a;
    slowest_floor = std::max(slowest_floor, v * a);
    fastest_layer = std::min(fastest_layer, a);
    stages += n;
  }
  const double tau_lb = std::max(workload_.model.layers / speed, slowest_floor);
  const double fill_lb = (stages - 1) * fastest_layer;
  std::vector<TimingGroup>& others = timing_scratch_;
  others.clear();
  for (const auto& [p, o] : rest) others.push_back({ReplicaTiming{o->part.bottleneck_s, o->part.sum_s}, o->copies});
  return step_lower_bound_s(tau_lb, fill_lb, copies, others, workload_.training.global_batch / knobs.micro_batch, v);
}

bool ShapeSearch::mixed_may_fit(const std::vector<int>& members, const std::vector<int>& units,
                                const std::vector<int>& tp, const Knobs& knobs, int copies) {
  // partition_layers() caps each stage at the layer groups its memory holds and fails when the
  // caps sum to less than the model. Here every stage gets the cap of its most favourable
  // position (the last stage's in-flight activations, the smallest fixed memory of any
  // position), which no order can exceed.
  const int v = knobs.interleave;
  int stages = 0;
  for (int p : members) stages += units[p] / copies;
  const int total_mb = workload_.training.global_batch / knobs.micro_batch;
  const int m_hint = std::max(1, total_mb / std::max(1, copies));  // as partition_kind()
  const double weight_scale = zero_weight_scale(knobs.zero, copies, workload_.training);
  const double inflight = inflight_factor(stages - 1, stages, m_hint, v);
  const long groups = workload_.model.layers / v;
  long room_for = 0;
  for (int p : members) {
    const UnitCost& u = costs_.get(pools_[p].node_type, tp[p], knobs);
    double fixed = u.extra_bytes(stages - 1, stages, weight_scale);
    if (stages > 1) fixed = std::min(fixed, u.extra_bytes(0, stages, weight_scale));
    if (stages > 2) fixed = std::min(fixed, u.extra_bytes(1, stages, weight_scale));
    const double per_group = v * (u.weight_bytes * weight_scale + inflight * u.act_bytes);
    const double room = u.capacity_bytes * options_.memory_fraction - fixed;
    const long cap = per_group > 0 ? static_cast<long>(std::min<double>(groups, std::floor(room / per_group))) : groups;
    if (cap < 1) return false;  // its stages cannot hold one group of layers anywhere
    room_for += static_cast<long>(units[p] / copies) * cap;
  }
  return room_for >= groups;
}

bool ShapeSearch::pool_option(int pool, int tp, int units, const Knobs& knobs, int replicas_hint, bool uniform, int pp,
                              PoolOption& out) {
  const int v = knobs.interleave;
  const int total_mb = workload_.training.global_batch / knobs.micro_batch;
  const int copies = units / pp;
  std::vector<int> tps(pools_.size(), 0);
  tps[pool] = tp;
  PartitionResult part =
      partition_kind({KindBlock{pool, pp}}, tps, knobs, copies, std::max(copies, replicas_hint), uniform);
  ++evaluated;
  if (!part.ok) {
    ++pruned;
    return false;
  }
  out.pp = pp;
  out.copies = copies;
  const int m = std::max(1, total_mb * units / std::max(1, replicas_hint * pp) / std::max(1, copies));
  out.rate = copies * m / replica_time_s(ReplicaTiming{part.bottleneck_s, part.sum_s}, m, v);
  out.part = std::move(part);
  return true;
}

const std::vector<ShapeSearch::PoolOption>& ShapeSearch::pool_options(int pool, int tp, int units,
                                                                      const Knobs& knobs, int replicas_hint,
                                                                      bool uniform) {
  const PoolKey key{pool, tp, units, replicas_hint, knobs.micro_batch, static_cast<int>(knobs.recompute),
                    knobs.interleave, knobs.zero, knobs.sequence_parallel, uniform};
  if (auto it = pool_memo_.find(key); it != pool_memo_.end()) return it->second;
  std::vector<PoolOption> out;
  const int max_pp = std::min(units, workload_.model.layers / knobs.interleave);
  bool cut_short = false;
  for (int pp = knobs.interleave > 1 ? 2 : 1; pp <= max_pp; ++pp) {  // interleaving needs a pipeline
    if (uniform && units % pp != 0) continue;
    // Each depth partitions a pipeline of pp stages: a pool of 8,192 GPUs and a 100,000-layer
    // model (every depth possible) spent 12 s here past --time-limit 2 (s57 bad-input hunt). Cut
    // short, the options found are used but not kept: a later phase lists them all.
    if ((cut_short = past_deadline())) break;
    PoolOption o;
    if (pool_option(pool, tp, units, knobs, replicas_hint, uniform, pp, o)) out.push_back(std::move(o));
  }
  // Best rate first; equal rates: the shallower pipeline (best_pool_option() picks the same).
  std::stable_sort(out.begin(), out.end(), [](const PoolOption& a, const PoolOption& b) { return a.rate > b.rate; });
  if (cut_short) return partial_options_ = std::move(out);
  return pool_memo_[key] = std::move(out);
}

const ShapeSearch::PoolOption* ShapeSearch::best_pool_option(int pool, int tp, int units, const Knobs& knobs) {
  const PoolKey key{pool, tp, units, 1, knobs.micro_batch, static_cast<int>(knobs.recompute),
                    knobs.interleave, knobs.zero, knobs.sequence_parallel, false};
  if (auto it = pool_memo_.find(key); it != pool_memo_.end()) return it->second.empty() ? nullptr : &it->second[0];
  auto [it, fresh] = best_memo_.try_emplace(key);
  if (!fresh) return it->second.pp > 0 ? &it->second : nullptr;
  // Best first by an upper bound on each depth's rate, exact partitions only while a bound can
  // still beat the best found. The stages' times add up to at least W = L*layer_s + the fixed
  // and first/last (or single-stage) costs (sends only add), so the slowest takes at least
  // tau = W/pp, and at least the last (or first) stage's one group of v layers; a copy with m
  // micro-batches takes m*tau + (sum - tau)/v (replica_time_s) >= (m - 1/v)*tau + W/v.
  const int v = knobs.interleave;
  const UnitCost& u = costs_.get(pools_[pool].node_type, tp, knobs);
  const int total_mb = workload_.training.global_batch / knobs.micro_batch;
  std::vector<std::pair<double, int>> by_bound;  // (bound, pp)
  for (int pp = v > 1 ? 2 : 1; pp <= std::min(units, workload_.model.layers / v); ++pp) {
    const int copies = units / pp;
    const int m = std::max(1, total_mb * units / std::max(1, pp) / std::max(1, copies));
    const double work_s = workload_.model.layers * u.layer_s + pp * u.fixed_s + (pp == 1 ? u.solo_s : u.first_s + u.last_s);
    const double tau_s = std::max(work_s / pp, pp == 1 ? work_s : v * u.layer_s + u.fixed_s + std::max(u.first_s, u.last_s));
    by_bound.emplace_back(copies * m / ((m - 1.0 / v) * tau_s + work_s / v), pp);
  }
  std::stable_sort(by_bound.begin(), by_bound.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  PoolOption& best = it->second;  // pp 0: none found
  for (const auto& [bound, pp] : by_bound) {
    if (best.pp > 0 && bound * (1 + 1e-9) < best.rate) break;  // slack: the bound is computed another way
    if (past_deadline()) {  // as pool_options, not kept: none (the search is over)
      best_memo_.erase(it);
      return nullptr;
    }
    PoolOption o;
    if (!pool_option(pool, tp, units, knobs, 1, false, pp, o)) continue;
    if (best.pp == 0 || o.rate > best.rate || (o.rate == best.rate && o.pp < best.pp)) best = std::move(o);
  }
  return best.pp > 0 ? &best : nullptr;
}

double ShapeSearch::in_pool_send_s(int p, int tp, int j, int copies, int stages, bool before, bool after,
                                   bool steady, double boundary_bytes, RecentSends& recent) {
  const int units_per_node = std::max(1, pools_[p].gpus_per_node / tp);
  const int from = unit_gpu(p, tp, j * copies), to = unit_gpu(p, tp, (j + 1) * copies);
  const bool same_node = cluster_.gpus[from].node == cluster_.gpus[to].node;
  // Through the node's fabric no NIC counts matter. A node of one stage index (copies a multiple
  // of its units, the usual large-pool case) has every unit crossing and its two ends at one
  // boundary: no arithmetic.
  BoundaryCrossings shared;
  if (!same_node) {
    if (copies % units_per_node == 0) {
      shared = {units_per_node, units_per_node};
    } else {
      shared = boundary_crossings(j, copies, units_per_node, false);
      if (steady) shared = with_same_parity_exchanges(shared, j, copies, units_per_node, stages, before, after);
    }
  }
  // The block's last few figures first: a hash lookup for every stage made bench1024's search a
  // third slower.
  for (int i = 0; i < recent.count; ++i) {
    const RecentSends::Entry& e = recent.entries[i];
    if (e.same_node == same_node && e.out == shared.out && e.in == shared.in) return e.send_s;
  }
  const BoundaryKey key{p, tp, p, tp, same_node ? -1 : 0, shared.out, shared.in, boundary_bytes};
  auto [it, fresh] = boundary_memo_.try_emplace(key);
  if (fresh) it->second.first = p2p_estimate_s(cluster_, from, tp, to, tp, boundary_bytes, 1, shared.out, shared.in);
  recent.entries[recent.next] = {same_node, shared.out, shared.in, it->second.first};
  recent.next = (recent.next + 1) % RecentSends::kSize;
  recent.count = std::min(recent.count + 1, RecentSends::kSize);
  return it->second.first;
}

PartitionResult ShapeSearch::partition_kind(const std::vector<KindBlock>& blocks, const std::vector<int>& tp,
                                            const Knobs& knobs, int copies, int replicas, bool uniform) {
  const double weight_scale = zero_weight_scale(knobs.zero, replicas, workload_.training);
  const double boundary_bytes = boundary_activation_bytes(workload_.model, knobs.micro_batch, workload_.training.dtype);
  std::vector<SlotCost>& slots = slot_scratch_;
  slots.clear();
  const int m_hint = std::max(1, workload_.training.global_batch / knobs.micro_batch / std::max(1, replicas));
  int total_stages = 0;
  for (const KindBlock& kb : blocks) total_stages += kb.stages;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const int p = blocks[b].pool;
    const UnitCost& u = costs_.get(pools_[p].node_type, tp[p], knobs);
    if (!u.ok) {
      PartitionResult r;
      r.reason = u.reason;
      return r;
    }
    // Most of the schedule is 1F1B's steady state (m - S + 1 of m slots, Narayanan et al. SC'21
    // sec. 2.2.1): its exchanges of one parity share NICs (with_same_parity_exchanges).
    const bool steady = knobs.interleave == 1 && 2 * (m_hint - total_stages + 1) >= m_hint;
    RecentSends recent;
    for (int j = 0; j < blocks[b].stages; ++j) {
      SlotCost slot{&u, weight_scale, 0.0, 0.0};
      if (j + 1 < blocks[b].stages) {
        slot.send_s = slot.back_send_s = in_pool_send_s(p, tp[p], j, copies, blocks[b].stages, b > 0,
                                                        b + 1 < blocks.size(), steady, boundary_bytes, recent);
      } else if (b + 1 < blocks.size()) {
        // Between two pools (other nodes, of their node types and zones) the sends depend on the
        // pools, TP degrees, bytes and the copies sharing the two nodes only: kept, as mixed
        // pipelines meet the same boundaries in their many orders (a third of a search of eight
        // node types went into pricing them).
        const int units_per_node = std::max(1, pools_[p].gpus_per_node / tp[p]);
        const BoundaryCrossings crossings = boundary_crossings(j, copies, units_per_node, true);
        const int from = unit_gpu(p, tp[p], j * copies);
        const int q = blocks[b + 1].pool;
        const int wan_pipelines = pools_[p].zone != pools_[q].zone ? copies : 0;
        const int in = std::min(copies, std::max(1, pools_[q].gpus_per_node / tp[q]));  // the first node of q
        const BoundaryKey key{p, tp[p], q, tp[q], wan_pipelines, crossings.out, in, boundary_bytes};
        auto [it, fresh] = boundary_memo_.try_emplace(key);
        if (fresh) {
          const int to = unit_gpu(q, tp[q], 0);
          it->second = {p2p_estimate_s(cluster_, from, tp[p], to, tp[q], boundary_bytes, wan_pipelines, crossings.out, in),
                        p2p_estimate_s(cluster_, to, tp[q], from, tp[p], boundary_bytes, wan_pipelines, in, crossings.out)};
        }
        slot.send_s = it->second.first;
        slot.back_send_s = it->second.second;
      }
      slot.send_s *= knobs.interleave;  // every chunk boundary is crossed once per virtual stage
      slot.back_send_s *= knobs.interleave;
      slots.push_back(slot);
    }
  }
  return partition_layers(slots, workload_.model.layers, knobs.interleave, m_hint, options_.memory_fraction, uniform);
}

void ShapeSearch::search_tp(const Knobs& knobs, const std::vector<int>& pool_nodes, const std::vector<int>& tp,
                            bool uniform, const std::function<void(const Shape&)>& sink,
                            const std::function<double()>& bound) {
  const int n = static_cast<int>(pools_.size());
  if (branch_bound(knobs, pool_nodes, tp) < bound()) {
    ++pruned;
    return;
  }
  sync_memo_.clear();  // its keys hold this branch's TP degrees and layer splits
  // The inner bounds below are in tokens/s: they apply to the throughput and budget objectives.
  const bool by_tokens = bound_in_tokens_ || options_.objective != PlanObjective::kCost;
  const std::function<double()> tokens_bound = [&] {
    return by_tokens ? bound() : -std::numeric_limits<double>::infinity();
  };
  TpBranch b{knobs, tp, uniform, {}, std::vector<int>(n, 0), 0, {}};
  for (int p = 0; p < n; ++p) {
    if (tp[p] == 0) continue;
    b.active.push_back(p);
    b.units[p] = pool_nodes[p] * pools_[p].gpus_per_node / tp[p];
    b.total_units += b.units[p];
  }
  if (b.active.empty()) return;
  b.base.knobs = knobs;
  b.base.pool_tp = tp;
  b.base.pool_nodes = pool_nodes;
  b.base.uniform = uniform;
  search_per_pool_kinds(b, sink, tokens_bound);
  if (b.active.size() < 2) return;
  search_mixed_kinds(b, sink, tokens_bound);
}

// (A) of search_tp(): per-pool kinds only: the best few depths of each pool, all combinations
// (uniform: one depth everywhere, Megatron's shape on each pool).
void ShapeSearch::search_per_pool_kinds(const TpBranch& b, const std::function<void(const Shape&)>& sink,
                                        const std::function<double()>& tokens_bound) {
  std::vector<std::vector<PoolOption>> opts;
  for (int p : b.active) {
    const int replicas_hint = std::max(1, b.total_units / std::max(1, b.units[p]));
    auto o = pool_options(p, b.tp[p], b.units[p], b.knobs, replicas_hint, b.uniform);
    if (o.empty()) {
      opts.clear();
      break;
    }
    opts.push_back(std::move(o));
  }
  // Exact where the product of depths is small; else each pool's best few steady-state rates.
  size_t combinations = 1;
  for (const auto& o : opts) combinations *= o.size();
  if (!b.uniform && combinations > kExactCombinations) {
    combinations = 1;
    for (auto& o : opts) {
      o.resize(std::min<size_t>(o.size(), kTopDepthsPerPool));
      combinations *= o.size();
    }
    while (combinations > kMaxCombinations) {
      auto widest = std::max_element(opts.begin(), opts.end(),
                                     [](const auto& a, const auto& b) { return a.size() < b.size(); });
      if (widest->size() <= 1) break;
      combinations = combinations / widest->size() * (widest->size() - 1);
      widest->pop_back();
    }
  }
  const auto try_pick = [&](const std::vector<const PoolOption*>& pick) {
    Shape s = b.base;
    for (size_t i = 0; i < pick.size(); ++i) {
      s.kinds.push_back(make_kind({KindBlock{b.active[i], pick[i]->pp}}, pick[i]->copies, pick[i]->part));
    }
    if (!out_of_time() && finish(s, tokens_bound())) emit(s, sink);
  };
  if (!opts.empty() && b.uniform) {
    for (const PoolOption& first : opts[0]) {
      std::vector<const PoolOption*> pick = {&first};
      for (size_t i = 1; i < opts.size(); ++i) {
        for (const PoolOption& o : opts[i]) {
          if (o.pp == first.pp) pick.push_back(&o);
        }
      }
      if (pick.size() == opts.size()) try_pick(pick);
    }
  } else if (!opts.empty()) {
    std::vector<size_t> index(opts.size(), 0);
    while (!out_of_time()) {
      std::vector<const PoolOption*> pick;
      for (size_t i = 0; i < index.size(); ++i) pick.push_back(&opts[i][index[i]]);
      try_pick(pick);
      size_t i = 0;
      while (i < index.size() && ++index[i] == opts[i].size()) index[i++] = 0;
      if (i == index.size()) break;
    }
  }
}

std::vector<std::vector<int>> ShapeSearch::mixed_subsets(const TpBranch& b) const {
  const std::size_t n = b.active.size();
  if (b.uniform) return n >= 2 ? std::vector<std::vector<int>>{b.active} : std::vector<std::vector<int>>{};
  std::vector<std::vector<int>> out;
  if (n <= kEverySubsetPools) {
    for (unsigned mask = 1; mask < (1u << n); ++mask) {
      std::vector<int> members;
      for (std::size_t i = 0; i < n; ++i)
        if (mask & (1u << i)) members.push_back(b.active[i]);
      if (members.size() >= 2) out.push_back(std::move(members));
    }
    // Past kEveryOrderMembers pools, the subsets of most pools first: the best mixed pipelines
    // of many node types span many of them, and a search cut by its time limit should have met
    // them (in mask order they came last). Few pools keep the mask order.
    if (n > kEveryOrderMembers)
      std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.size() > y.size(); });
    return out;
  }
  // 2^n subsets are too many (and 1 << n overflows past 31): all pools, the pools of each zone
  // and of each GPU type, and every pair.
  const auto add = [&](std::vector<int> members) {
    if (members.size() >= 2 && std::find(out.begin(), out.end(), members) == out.end()) out.push_back(std::move(members));
  };
  add(b.active);
  std::map<int, std::vector<int>> by_zone;
  std::map<std::string, std::vector<int>> by_gpu;
  for (int p : b.active) {
    by_zone[pools_[p].zone].push_back(p);
    by_gpu[cluster_.node_types[pools_[p].node_type].gpu.name].push_back(p);
  }
  for (auto& [zone, members] : by_zone) add(members);
  for (auto& [gpu, members] : by_gpu) add(members);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) add({b.active[i], b.active[j]});
  return out;
}

std::vector<std::vector<int>> ShapeSearch::pipeline_orders(const std::vector<int>& members, const TpBranch& b) {
  std::vector<std::vector<int>> orders;
  // The uniform baseline tries the same orders: a Megatron-LM user chooses the hostfile's node
  // order, and a baseline fixed to the cluster file's order made "best plan vs uniform" change
  // when the file listed its node types the other way round.
  // Every order of a few pools; on a branch of many pools (hundreds of subsets) only of three.
  const std::size_t every_order_up_to = b.active.size() <= kEveryOrderMembers ? kEveryOrderMembers : 3;
  if (members.size() <= every_order_up_to) {
    std::vector<int> order = members;  // sorted (active is), so next_permutation visits all orders
    do orders.push_back(order);
    while (std::next_permutation(order.begin(), order.end()));
    return orders;
  }
  // A few orders, zones kept together (each zone boundary of a pipeline crosses a WAN): within
  // a zone, most memory first (the first stages of 1F1B hold the most micro-batches in flight,
  // Narayanan et al. SC'21, sec. 2.2.1), fastest first, slowest first; and the rank order. The
  // layer split (partition_layers) balances the stages of any order; what the order changes is
  // which stage's memory caps it and the sends between pools.
  const auto sorted_by = [&](auto&& key) {
    std::vector<int> order = members;
    std::stable_sort(order.begin(), order.end(), [&](int p, int q) {
      if (pools_[p].zone != pools_[q].zone) return pools_[p].zone < pools_[q].zone;
      return key(p) < key(q);
    });
    return order;
  };
  const auto unit = [&](int p) -> const UnitCost& { return costs_.get(pools_[p].node_type, b.tp[p], b.knobs); };
  for (std::vector<int> order : {sorted_by([&](int p) { return -unit(p).capacity_bytes; }),
                                 sorted_by([&](int p) { return unit(p).layer_s; }),
                                 sorted_by([&](int p) { return -unit(p).layer_s; }), members})
    if (std::find(orders.begin(), orders.end(), order) == orders.end()) orders.push_back(std::move(order));
  return orders;
}

// (B) of search_tp(): mixed kinds over a subset of >= 2 pools, in every order (a few orders over
// more than kEveryOrderMembers pools), + per-pool kinds on the rest.
void ShapeSearch::search_mixed_kinds(const TpBranch& b, const std::function<void(const Shape&)>& sink,
                                     const std::function<double()>& tokens_bound) {
  const int n = static_cast<int>(pools_.size());
  const int v = b.knobs.interleave;
  for (const std::vector<int>& members : mixed_subsets(b)) {
    if (out_of_time()) return;
    const std::vector<std::vector<int>> pipelines = pipeline_orders(members, b);
    const long orders = static_cast<long>(pipelines.size());
    int max_copies = std::numeric_limits<int>::max();
    for (int p : members) max_copies = std::min(max_copies, b.units[p]);
    // The pools outside the subset run per-pool kinds on all their units, whatever the copies.
    std::vector<char> is_member(n, 0);
    for (int p : members) is_member[p] = 1;
    std::vector<const PoolOption*> outside(n, nullptr);
    std::vector<double> outside_rate(n, 0.0);
    for (int p : b.active) {
      if (b.uniform || is_member[p]) continue;
      const double layer_s = costs_.get(pools_[p].node_type, b.tp[p], b.knobs).layer_s;
      outside_rate[p] = b.units[p] / (workload_.model.layers * layer_s);
      outside[p] = best_pool_option(p, b.tp[p], b.units[p], b.knobs);
    }
    for (int d = 1; d <= max_copies && !out_of_time(); ++d) {
      int stages = 0;
      bool exact = true;
      for (int p : members) {
        stages += b.units[p] / d;
        exact &= b.units[p] % d == 0;
      }
      if (stages > workload_.model.layers / v || (b.uniform && !exact)) {
        ++pruned;
        continue;
      }
      // Leftover units of the members and the pools outside the subset, as per-pool kinds
      // (independent of the order of the mixed pipeline), and their bound.
      std::vector<std::pair<int, const PoolOption*>> rest;
      double rest_rate = 0;
      for (int p : b.active) {
        if (is_member[p] == 0) {
          rest_rate += outside_rate[p];
          if (outside[p]) rest.emplace_back(p, outside[p]);
          continue;
        }
        const int left = b.units[p] - d * (b.units[p] / d);
        if (left == 0 || b.uniform) continue;
        rest_rate += left / (workload_.model.layers * costs_.get(pools_[p].node_type, b.tp[p], b.knobs).layer_s);
        if (const PoolOption* o = best_pool_option(p, b.tp[p], left, b.knobs)) rest.emplace_back(p, o);
      }
      const double tokens_per_mb = static_cast<double>(b.knobs.micro_batch) * workload_.model.seq_len;
      if (!b.uniform && tokens_per_step(workload_) / mixed_step_lower_bound_s(members, b.units, b.tp, b.knobs, d, rest) <
                          tokens_bound()) {
        pruned += orders;  // no order of this pipeline, with or without the rest, can enter
        continue;
      }
      if (!mixed_may_fit(members, b.units, b.tp, b.knobs, d)) {
        pruned += orders;  // too little memory in any order
        continue;
      }
      for (const std::vector<int>& order : pipelines) {
        if (out_of_time()) return;
        std::vector<KindBlock> blocks;
        for (int p : order) blocks.push_back(KindBlock{p, b.units[p] / d});
        PartitionResult part = partition_kind(blocks, b.tp, b.knobs, d, d, b.uniform);
        ++evaluated;
        if (!part.ok) {
          ++pruned;
          continue;
        }
        const double mixed_rate = d / part.bottleneck_s;  // micro-batches per second, no bubble
        if ((mixed_rate + rest_rate) * tokens_per_mb < tokens_bound()) {
          ++pruned;
          continue;
        }
        Shape s = b.base;
        s.kinds.push_back(make_kind(blocks, d, part));
        if (mixed_rate * tokens_per_mb >= tokens_bound() && finish(s, tokens_bound())) emit(s, sink);
        if (rest.empty()) continue;
        for (const auto& [p, o] : rest) s.kinds.push_back(make_kind({KindBlock{p, o->pp}}, o->copies, o->part));
        if (finish(s, tokens_bound())) emit(s, sink);
      }
    }
  }
}

}  // namespace hetsim::models::planner
