// SPDX-License-Identifier: Apache-2.0
// The planner's allotments: which nodes of each pool a search may use (planner_allotments.hpp).
#include "planner_allotments.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "planner_capacity.hpp"
#include "planner_ranking.hpp"

namespace hetsim::models::planner {

namespace {

/// The most node-count combinations the throughput search tries: 2-3 pools of up to
/// 4-8 nodes (spot-mix: 75). Beyond, every subset of whole pools: the search time grows with the
/// allotments (bench1024's 3 pools of ~40 nodes: 1,728 combinations, 1.9 -> 9.2 s one thread),
/// and one node of a large pool changes its replicas' share of the batch little.
constexpr long kMaxPartialAllotments = 128;

/// Node-count choices per pool: every count up to 8, then doublings (and the pool's count).
/// The throughput search tries them too, not only whole pools: a pool's last node can slow the plan
/// down where its replicas' micro-batch counts cannot shrink (global batch / micro-batch split
/// over more replicas) while the data-parallel sync grows (spot-mix gpt3-1.3b with a 4th p4de
/// node: 864,371 tokens/s on all 96 GPUs where 3 nodes gave 889,691; s51 plausibility hunt F3).
std::vector<int> node_count_choices(int nodes) {
  std::vector<int> out;
  for (int n = 0; n <= nodes; n = n < 8 ? n + 1 : n * 2) out.push_back(n);
  if (out.back() != nodes) out.push_back(nodes);
  return out;
}

/// Every non-empty subset of whole pools (each with the nodes the workload can keep busy); above
/// 10 pools, 2^n subsets is too many: all pools, the pools of each GPU type together (a cluster
/// split into many node types or zones of the same GPU), and one pool at a time.
std::vector<std::vector<int>> whole_pool_subsets(const Cluster& cluster, const std::vector<Pool>& pools,
                                                 const std::vector<int>& usable) {
  std::vector<std::vector<int>> out;
  const int n = static_cast<int>(pools.size());
  if (n <= 10) {
    for (int mask = 1; mask < (1 << n); ++mask) {
      std::vector<int> a(n, 0);
      for (int p = 0; p < n; ++p) {
        if (mask & (1 << p)) a[p] = usable[p];
      }
      out.push_back(a);
    }
    return out;
  }
  out.push_back(usable);
  std::map<std::string, std::vector<int>> by_gpu;
  for (int p = 0; p < n; ++p) {
    auto [it, fresh] = by_gpu.try_emplace(cluster.node_types[pools[p].node_type].gpu.name, std::vector<int>(n, 0));
    it->second[p] = usable[p];
  }
  if (by_gpu.size() > 1)
    for (const auto& [gpu, nodes] : by_gpu)
      if (std::count_if(nodes.begin(), nodes.end(), [](int k) { return k > 0; }) > 1) out.push_back(nodes);
  for (int p = 0; p < n; ++p) {
    std::vector<int> one(n, 0);
    one[p] = usable[p];
    out.push_back(one);
  }
  return out;
}

/// Every combination of node_count_choices per pool but none at all; empty when they are more
/// than kMaxPartialAllotments.
std::vector<std::vector<int>> every_node_count(const std::vector<int>& usable) {
  const int n = static_cast<int>(usable.size());
  std::vector<std::vector<int>> choices(n);
  long combinations = 1;
  for (int p = 0; p < n && combinations <= kMaxPartialAllotments; ++p) {
    choices[p] = node_count_choices(usable[p]);
    combinations *= static_cast<long>(choices[p].size());
  }
  std::vector<std::vector<int>> out;
  if (combinations > kMaxPartialAllotments) return out;
  std::vector<int> a(n, 0);
  std::function<void(int)> every = [&](int p) {
    if (p == n) {
      if (std::any_of(a.begin(), a.end(), [](int k) { return k > 0; })) out.push_back(a);
      return;
    }
    for (int c : choices[p]) {
      a[p] = c;
      every(p + 1);
    }
  };
  every(0);
  return out;
}

/// Which nodes of each pool the search may use. Throughput: every_node_count, or where those are
/// too many whole_pool_subsets. Cost: whole_pool_subsets (every node count made the cost search
/// 13x longer on spot-mix, whose pools a smaller plan is cheaper on: its pruning bound is the
/// 48th best dollars per token, which smaller allotments do not fall below). A budget: the
/// affordable ones of every_node_count, or where those are too many every affordable combination
/// of node counts that cannot take one more step of any pool it uses.
std::vector<std::vector<int>> every_allotment(const Cluster& cluster, const std::vector<Pool>& pools,
                                         const Workload& workload, const PlannerOptions& o) {
  const int n = static_cast<int>(pools.size());
  std::vector<int> usable(n);
  for (int p = 0; p < n; ++p) usable[p] = useful_nodes(cluster, pools[p], workload, o);
  if (o.objective == PlanObjective::kThroughput) {
    std::vector<std::vector<int>> counts = every_node_count(usable);
    if (!counts.empty()) return counts;
  }
  if (o.objective == PlanObjective::kCost) {
    // Whole pools, and each pool alone at every node count: a plan on part of one pool is often
    // the cheapest per token (fewer replicas, a smaller data-parallel sync for the same price per
    // GPU), and one more node of it made the cheapest plan dearer in 49 of 165 node-count steps of
    // the example clusters (up to 19%). Mixed partial counts stay out (every combination made
    // spot-mix's cost search 13x longer).
    std::vector<std::vector<int>> out = whole_pool_subsets(cluster, pools, usable);
    for (int p = 0; p < n; ++p)
      for (int c : node_count_choices(usable[p])) {
        if (c == 0 || c == usable[p]) continue;  // none, or the whole pool: a subset above
        std::vector<int> one(n, 0);
        one[p] = c;
        out.push_back(std::move(one));
      }
    return out;
  }
  if (o.objective != PlanObjective::kBudget) return whole_pool_subsets(cluster, pools, usable);
  const auto price = [&](int p) {
    const NodeType& t = cluster.node_types[pools[p].node_type];
    return t.price_per_hour_at(o.spot);
  };
  // A budget: every affordable node count where they are few, not only the maximal ones. The
  // search prices a shape by its nodes, the predictor adds egress between zones: once a budget
  // covered every node, the maximal allotments were whole pools, whose plans across zones the
  // egress put over it, and a budget $0.10/h larger gave 16% fewer tokens/s (geo-two-zones
  // llama2-70b: 38,882 at $557.1/h, 32,648 at $557.2/h; s52 planner monotonicity hunt F1).
  if (std::vector<std::vector<int>> counts = every_node_count(usable); !counts.empty()) {
    std::erase_if(counts, [&](const std::vector<int>& a) {
      double spent = 0;
      for (int p = 0; p < n; ++p) spent += a[p] * price(p);
      return over_node_budget(spent, o);
    });
    return counts;
  }
  std::vector<std::vector<int>> out;
  std::vector<std::vector<int>> choices(n);
  for (int p = 0; p < n; ++p) choices[p] = node_count_choices(usable[p]);
  std::vector<int> a(n, 0);
  std::function<void(int, double)> rec = [&](int p, double spent) {
    if (over_node_budget(spent, o)) return;
    if (p == n) {
      bool any = false, maximal = true;
      for (int q = 0; q < n; ++q) {
        any |= a[q] > 0;
        // Maximal among the pools it uses: a pool left out entirely is that subset's choice (as
        // the throughput objective tries every subset of pools). Maximal over all pools forced a
        // node in that could not compute the dtype (a V100 in a bf16 run) or whose zone added
        // egress, and a larger budget then gave a worse plan, or none (s51 plausibility hunt F1).
        if (a[q] == 0) continue;
        const auto& c = choices[q];
        const auto it = std::find(c.begin(), c.end(), a[q]);
        if (it + 1 != c.end() && !over_node_budget(spent + (*(it + 1) - a[q]) * price(q), o)) maximal = false;
      }
      if (any && maximal) out.push_back(a);
      return;
    }
    for (int c : choices[p]) {
      a[p] = c;
      rec(p + 1, spent + c * price(p));
    }
    a[p] = 0;
  };
  rec(0, 0.0);
  return out;
}

}  // namespace

int useful_nodes(const Cluster& cluster, const Pool& pool, const Workload& w, const PlannerOptions& o) {
  const NodeType& t = cluster.node_types[pool.node_type];
  const long busy = busy_gpus(w, widest_tp(w, t.gpus_per_node, o));
  const long nodes = std::max(1L, busy / std::max(1, t.gpus_per_node));
  return static_cast<int>(std::min<long>(static_cast<long>(pool.nodes.size()), nodes));
}

std::vector<Vendor> pool_vendors(const Cluster& cluster, const std::vector<Pool>& pools) {
  std::vector<Vendor> out;
  for (const Pool& p : pools) out.push_back(cluster.node_types[p.node_type].gpu.vendor);
  return out;
}

std::vector<std::vector<int>> split_by_vendor(const std::vector<int>& nodes, const std::vector<Vendor>& vendors) {
  std::vector<std::vector<int>> out;
  std::vector<Vendor> seen;
  for (size_t p = 0; p < nodes.size(); ++p) {
    if (nodes[p] == 0 || std::find(seen.begin(), seen.end(), vendors[p]) != seen.end()) continue;
    seen.push_back(vendors[p]);
    std::vector<int> part(nodes.size(), 0);
    for (size_t q = p; q < nodes.size(); ++q)
      if (vendors[q] == vendors[p]) part[q] = nodes[q];
    out.push_back(std::move(part));
  }
  return out;
}

std::vector<std::vector<int>> allotments(const Cluster& cluster, const std::vector<Pool>& pools,
                                         const Workload& workload, const PlannerOptions& o) {
  std::vector<std::vector<int>> all = every_allotment(cluster, pools, workload, o);
  if (o.one_zone) {
    const auto zones_used = [&](const std::vector<int>& a) {
      std::set<int> zones;
      for (std::size_t p = 0; p < a.size(); ++p)
        if (a[p] > 0) zones.insert(pools[p].zone);
      return zones.size();
    };
    all.erase(std::remove_if(all.begin(), all.end(), [&](const std::vector<int>& a) { return zones_used(a) > 1; }),
              all.end());
  }
  if (!o.one_vendor) return all;
  const std::vector<Vendor> vendors = pool_vendors(cluster, pools);
  std::vector<std::vector<int>> out;
  for (const std::vector<int>& a : all)
    for (std::vector<int>& part : split_by_vendor(a, vendors))
      if (std::find(out.begin(), out.end(), part) == out.end()) out.push_back(std::move(part));
  return out;
}

}  // namespace hetsim::models::planner
