// SPDX-License-Identifier: Apache-2.0
// Flow patterns of the collectives, and the collectives on the cluster as the cost model picks them
// (see collective_flows.hpp for the citations).
#include "collective_flows.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "sim_topology.hpp"
#include "topology.hpp"

namespace hetsim::sim {
namespace {

std::vector<Phase> ring_steps(const std::vector<int>& ring, const std::vector<int>* node_of, double step_bytes,
                              int steps) {
  std::vector<Phase> out;
  const int p = static_cast<int>(ring.size());
  if (p < 2) return out;
  // Members of each node in ring order (for the channel split of node-leaving hops).
  std::map<int, std::vector<int>> members;
  if (node_of)
    for (int i = 0; i < p; ++i) members[(*node_of)[i]].push_back(ring[i]);
  Phase phase;
  for (int i = 0; i < p; ++i) {
    const int j = (i + 1) % p;
    if (!node_of || (*node_of)[i] == (*node_of)[j]) {
      phase.push_back({ring[i], ring[j], step_bytes});
      continue;
    }
    // One channel per member of the larger side, each entering or leaving the smaller side at
    // its members in turn: NCCL's channels cross at different NICs on each node, so a node
    // with one member (one NIC) sending to a node with eight spreads over the eight NICs, as
    // the cost model's hop (the lower of the two nodes' member x NIC shares; topology.cpp).
    // Each piece is the hop's data (Flow::hop_src, hop_dst): the ring's dependencies stay those
    // of one ring, which crosses each node boundary once a trip, as each of NCCL's channel
    // rings does, without simulating every channel's intra-node hops.
    const auto& ma = members[(*node_of)[i]];
    const auto& mb = members[(*node_of)[j]];
    const std::size_t k = std::max(ma.size(), mb.size());
    for (std::size_t c = 0; c < k; ++c)
      phase.push_back({ma[c % ma.size()], mb[c % mb.size()], step_bytes / static_cast<double>(k), ring[i], ring[j]});
  }
  for (int s = 0; s < steps; ++s) out.push_back(phase);
  return out;
}

}  // namespace

std::vector<Phase> ring_all_reduce(const std::vector<int>& ring, double bytes, const std::vector<int>* node_of) {
  const int p = static_cast<int>(ring.size());
  return ring_steps(ring, node_of, bytes / std::max(p, 1), 2 * (p - 1));
}

std::vector<Phase> ring_all_gather(const std::vector<int>& ring, double bytes, const std::vector<int>* node_of) {
  const int p = static_cast<int>(ring.size());
  return ring_steps(ring, node_of, bytes / std::max(p, 1), p - 1);
}

std::vector<Phase> ring_reduce_scatter(const std::vector<int>& ring, double bytes, const std::vector<int>* node_of) {
  return ring_all_gather(ring, bytes, node_of);
}

void spread_over_mesh_links(const Topology& topology, const std::vector<int>& members, Phase& phase) {
  const auto& c = topology.get_cluster();
  std::map<int, std::vector<int>> on_mesh_node;  // node -> the members on it, mesh nodes only
  for (int g : members) {
    const auto& nt = c.node_type_of_gpu(g);
    if (nt.intra.mesh && nt.gpus_per_node > 2) on_mesh_node[c.node_of_gpu(g)].push_back(g);
  }
  if (std::none_of(on_mesh_node.begin(), on_mesh_node.end(), [](const auto& e) { return e.second.size() > 2; }))
    return;
  Phase out;
  out.reserve(phase.size());
  for (const Flow& f : phase) {
    const int node = c.node_of_gpu(f.src);
    const auto it = on_mesh_node.find(node);
    if (node != c.node_of_gpu(f.dst) || it == on_mesh_node.end() || it->second.size() <= 2) {
      out.push_back(f);
      continue;
    }
    const double share = f.bytes / static_cast<double>(it->second.size() - 1);
    for (int peer : it->second)
      if (peer != f.src) out.push_back({f.src, peer, share, f.sender(), f.receiver()});
  }
  phase = std::move(out);
}

void merge_phases(std::vector<Phase>& into, const std::vector<Phase>& more) {
  if (into.size() < more.size()) into.resize(more.size());
  for (std::size_t i = 0; i < more.size(); ++i) into[i].insert(into[i].end(), more[i].begin(), more[i].end());
}

std::vector<Phase> hierarchical_all_reduce(const std::vector<int>& gpus, const std::vector<int>& node_of, double bytes) {
  // Members grouped by node, in order of first appearance.
  std::vector<int> nodes;
  std::map<int, std::vector<int>> by_node;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (!by_node.count(node_of[i])) nodes.push_back(node_of[i]);
    by_node[node_of[i]].push_back(gpus[i]);
  }
  const std::size_t k = by_node[nodes[0]].size();
  bool even = true;
  for (int n : nodes) even = even && by_node[n].size() == k;
  if (!even || nodes.size() < 2 || k < 2) return ring_all_reduce(gpus, bytes, &node_of);
  std::vector<Phase> out;
  std::vector<Phase> rs, ag, inter;
  for (int n : nodes) {
    merge_phases(rs, ring_reduce_scatter(by_node[n], bytes));
    merge_phases(ag, ring_all_gather(by_node[n], bytes));
  }
  for (std::size_t l = 0; l < k; ++l) {
    std::vector<int> ring;
    for (int n : nodes) ring.push_back(by_node[n][l]);
    merge_phases(inter, ring_all_reduce(ring, bytes / static_cast<double>(k)));
  }
  out.insert(out.end(), rs.begin(), rs.end());
  out.insert(out.end(), inter.begin(), inter.end());
  out.insert(out.end(), ag.begin(), ag.end());
  return out;
}

namespace {

/// The members of each node, nodes in order of first appearance; empty when the group has one
/// node or a node with a single member (then the plain rank trees apply).
std::vector<std::vector<int>> members_by_node(const std::vector<int>& gpus, const std::vector<int>& node_of) {
  std::vector<std::vector<int>> out;
  std::map<int, std::size_t> slot;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    auto [it, fresh] = slot.emplace(node_of[i], out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(gpus[i]);
  }
  if (out.size() < 2) return {};
  for (const auto& m : out)
    if (m.size() < 2) return {};
  return out;
}

}  // namespace

std::vector<Phase> tree_all_reduce(const std::vector<int>& gpus, double bytes, const std::vector<int>* node_of,
                                   bool one_channel) {
  const int p = static_cast<int>(gpus.size());
  if (p < 2) return {};
  const auto nodes = node_of ? members_by_node(gpus, *node_of) : std::vector<std::vector<int>>{};
  if (!nodes.empty()) {
    std::size_t k = nodes.front().size();
    for (const auto& m : nodes) k = std::min(k, m.size());
    const std::size_t channels = one_channel ? 1 : k;
    const double chunk = bytes / static_cast<double>(channels);
    const int n = static_cast<int>(nodes.size());
    Phase up, down;
    for (std::size_t c = 0; c < channels; ++c) {
      // Inside each node: every other member's share of chunk c to its head, and back.
      for (const auto& m : nodes)
        for (int g : m)
          if (g != m[c]) {
            up.push_back({g, m[c], chunk});
            down.push_back({m[c], g, chunk});
          }
      // Between the nodes' heads: two mirrored binary trees, half of chunk c each.
      for (int tree = 0; tree < 2; ++tree) {
        auto head = [&](int i) { return nodes[tree == 0 ? i : n - 1 - i][c]; };
        for (int i = 1; i < n; ++i) {
          up.push_back({head(i), head((i - 1) / 2), chunk / 2});
          down.push_back({head((i - 1) / 2), head(i), chunk / 2});
        }
      }
    }
    return {up, down};
  }
  // Two complementary binary trees in heap order: tree 0 over ranks 0..p-1, tree 1 over the
  // ranks mirrored (p-1-i), so an inner node of one is (mostly) a leaf of the other.
  Phase up, down;
  for (int tree = 0; tree < 2; ++tree) {
    auto rank = [&](int i) { return gpus[tree == 0 ? i : p - 1 - i]; };
    for (int i = 1; i < p; ++i) {
      const int parent = (i - 1) / 2;
      up.push_back({rank(i), rank(parent), bytes / 2});
      down.push_back({rank(parent), rank(i), bytes / 2});
    }
  }
  return {up, down};
}

int tree_fill_hops(int members) {
  int depth = 0;
  while ((1 << depth) < members) ++depth;
  return std::max(depth - 1, 0);
}

double tree_fill_latency_s(const models::GroupCost& g) {
  // Trees between node heads where tree_all_reduce builds them (members_by_node: two nodes or
  // more, two members or more on each).
  if (g.nodes < 2 || g.min_per_node < 2) return tree_fill_hops(g.size) * g.hop_latency_s;
  // The trees run between node heads (tree_all_reduce): a phase's flows pay one node crossing,
  // and the fill adds the rest of NCCL's per-phase latency, a chain through each node's members
  // and log2 N levels between nodes (models::tree_latency_s). Filling by all p members at the
  // worst hop's latency counted ceil(log2 p) - 1 node crossings: a TP group of 16 over two
  // nodes joined by a 30 ms WAN link paid 120 ms a phase for the model's 30 (s66 engine survey).
  const double per_node = static_cast<double>(g.size) / g.nodes;
  const int depth = tree_fill_hops(g.nodes) + 1;  // ceil(log2 N) for N >= 2
  return (per_node - 1) * g.intra_latency_s + (depth - 1) * g.inter_latency_s;
}

std::vector<Phase> dp_all_reduce(models::GradSyncAlgorithm algorithm, const std::vector<int>& gpus,
                                 const std::vector<int>& node_of, double bytes, bool one_channel) {
  switch (algorithm) {
    case models::GradSyncAlgorithm::kRing: return ring_all_reduce(gpus, bytes, one_channel ? nullptr : &node_of);
    case models::GradSyncAlgorithm::kTree: return tree_all_reduce(gpus, bytes, &node_of, one_channel);
    case models::GradSyncAlgorithm::kHierarchical: return hierarchical_all_reduce(gpus, node_of, bytes);
    case models::GradSyncAlgorithm::kAuto: break;  // resolved by the caller (models::resolve_algorithm)
  }
  return ring_all_reduce(gpus, bytes);
}

FoldedPhase fold_phase(const Topology& topology, const Phase& phase, bool fold) {
  FoldedPhase out{phase, {}, 0};
  if (!fold || phase.size() < 2) return out;
  // Load each link would carry if every flow ran at its rate alone; a link shared by several
  // flows keeps them all (exact) unless its capacity covers that load (then it binds none of them).
  std::map<int, double> load;
  std::set<std::tuple<double, double, double>> figures;
  std::vector<std::vector<int>> paths;
  for (const auto& f : phase) {
    paths.push_back(topology.path(f.src, f.dst));
    const double alone = topology.path_bandwidth_Bps(f.src, f.dst);
    for (int l : paths.back()) load[l] += alone;
    figures.insert({f.bytes, topology.path_latency_s(f.src, f.dst), alone});
  }
  if (figures.size() != 1) return out;
  for (const auto& [l, bps] : load)
    if (bps > topology.get_link(l).bandwidth_Bps * (1 + 1e-9)) return out;
  out.simulated = Phase{phase.front()};
  out.shadows.assign(phase.begin() + 1, phase.end());
  return out;
}

bool same_flows(const Phase& a, const Phase& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].src != b[i].src || a[i].dst != b[i].dst || a[i].bytes != b[i].bytes || a[i].sender() != b[i].sender() ||
        a[i].receiver() != b[i].receiver() || a[i].ring != b[i].ring)
      return false;
  return true;
}

namespace {

/// The latency of the heaviest chain of `n` consecutive hops of the rings that `flows` form
/// (a hop's latency: its slowest piece's path latency; Flow::sender, Flow::receiver), or -1
/// when they do not form whole rings (a rank sending to two ranks, or a hop out of a rank none
/// reaches: the rings of replicas folded away).
double heaviest_hop_chain_s(const Topology& topology, const FoldedPhase& phase, int n) {
  using RingRank = std::pair<int, int>;      // (Flow::ring, rank)
  std::map<RingRank, std::pair<int, double>> hop;  // sender -> (receiver, latency)
  for (const Phase* flows : {&phase.simulated, &phase.shadows})
    for (const Flow& f : *flows) {
      const double latency_s = topology.path_latency_s(f.src, f.dst);
      const auto [it, fresh] = hop.try_emplace({f.ring, f.sender()}, f.receiver(), latency_s);
      if (!fresh && it->second.first != f.receiver()) return -1;
      it->second.second = std::max(it->second.second, latency_s);
    }
  double heaviest_s = 0;
  std::set<RingRank> seen;
  std::vector<double> cycle;
  for (const auto& [start, unused] : hop) {
    if (seen.count(start)) continue;
    cycle.clear();
    for (RingRank r = start; !seen.count(r);) {
      const auto it = hop.find(r);
      if (it == hop.end()) return -1;
      seen.insert(r);
      cycle.push_back(it->second.second);
      r = {r.first, it->second.first};
    }
    const auto length = static_cast<int>(cycle.size());
    double trip_s = 0;
    for (double h : cycle) trip_s += h;
    // n hops from hop i: n / length whole trips and the next n % length hops (a sliding window).
    const int rest = n % length;
    double window_s = 0;
    for (int i = 0; i < rest; ++i) window_s += cycle[static_cast<std::size_t>(i)];
    double most_s = window_s;
    for (int i = 1; i < length; ++i) {
      window_s += cycle[static_cast<std::size_t>((i + rest - 1) % length)] - cycle[static_cast<std::size_t>(i - 1)];
      most_s = std::max(most_s, window_s);
    }
    heaviest_s = std::max(heaviest_s, (n / length) * trip_s + most_s);
  }
  return heaviest_s;
}

}  // namespace

std::vector<FoldedPhase> merge_repeated_phases(const Topology& topology, const std::vector<FoldedPhase>& phases) {
  std::vector<FoldedPhase> out;
  std::size_t i = 0;
  while (i < phases.size()) {
    std::size_t j = i + 1;
    while (j < phases.size() && same_flows(phases[j].simulated, phases[i].simulated) &&
           same_flows(phases[j].shadows, phases[i].shadows) && phases[j].delay_after_s == phases[i].delay_after_s)
      ++j;
    const double n = static_cast<double>(j - i);
    FoldedPhase merged = phases[i];
    if (n > 1 && !merged.simulated.empty()) {
      double weighted = 0, bytes = 0;  // byte-weighted mean path latency of a step (see the header)
      double paid_s = 0;               // what the merged flows pay: their path latency once
      for (const Phase* ph : {&merged.simulated, &merged.shadows})
        for (auto& f : *ph) {
          const double latency_s = topology.path_latency_s(f.src, f.dst);
          weighted += f.bytes * latency_s;
          bytes += f.bytes;
          paid_s = std::max(paid_s, latency_s);
        }
      const double latency = bytes > 0 ? weighted / bytes : 0;
      const double chain_s = heaviest_hop_chain_s(topology, merged, static_cast<int>(n));
      for (auto& f : merged.simulated) f.bytes *= n;
      for (auto& f : merged.shadows) f.bytes *= n;
      // One flow pays the path latency once; the other n-1 steps' latencies follow it: on whole
      // rings, the rest of the heaviest chain of n hops (what the dataflow's last step waits
      // for, the max-plus recurrence's transient: a short ring over one slow hop crosses it on
      // more of its steps than the mean says), elsewhere the mean hop latency a step.
      const double fill_s = n * merged.delay_after_s;
      const double chain_rest_s = std::max(0.0, chain_s - paid_s);
      merged.delay_after_s = fill_s + (chain_s >= 0 ? chain_rest_s : (n - 1) * latency);
      // Buckets back to back follow one another at the mean hop latency a step, but never wait
      // longer than a lone bucket's chain: on a long ring over a slow hop the flow that pays the
      // slow hop's latency once and the mean for every other step overcounts (a 16-member ring
      // over two 30 ms hops, 15 steps: 30 + 14 x 3.75 = 82.5 ms against the 60 ms chain, which the
      // dataflow's max-plus recurrence (phase_dataflow.hpp's rules) gives as its period too).
      if (chain_s >= 0) merged.delay_after_back_to_back_s = fill_s + std::min((n - 1) * latency, chain_rest_s);
    }
    out.push_back(std::move(merged));
    i = j;
  }
  return out;
}

CollectiveFlows collective_flows(const Topology& topo, models::CollectiveKind kind, models::GradSyncAlgorithm algorithm,
                                 const std::vector<int>& members, double bytes, const std::vector<models::NodeSenders>* concurrent_on_node,
                                 const std::vector<double>* wan_senders, const std::vector<bool>* sources) {
  CollectiveFlows out;
  const auto& cluster = topo.get_cluster();
  if (members.size() < 2 || bytes <= 0) return out;
  // The ring NCCL builds: each node's members in a row (the cost model prices the same ring).
  std::vector<int> gpus = members;
  models::order_ring_by_node(cluster, gpus.data(), static_cast<int>(gpus.size()));
  std::vector<int> node_of;
  for (int g : gpus) node_of.push_back(cluster.node_of_gpu(g));
  const models::GroupCost g =
      models::group_cost(cluster, gpus.data(), static_cast<int>(gpus.size()), 0, wan_senders, concurrent_on_node);
  // A ring on nodes shared with concurrent groups crosses each node boundary at its one
  // boundary member (models::GroupCost::node_shared): no per-member channel split.
  const std::vector<int>* split = g.node_shared ? nullptr : &node_of;
  if (kind != models::CollectiveKind::kAllReduce) {
    // The cost model's hierarchical and tree all-gather/reduce-scatter fall back to rings too
    // (ring_all_gather: p - 1 equal steps). One step is built and spread whole, then kept to
    // `sources` and repeated.
    const int p = static_cast<int>(gpus.size());
    std::vector<Phase> step = ring_steps(gpus, split, bytes / p, 1);
    spread_over_mesh_links(topo, gpus, step.front());
    if (sources) std::erase_if(step.front(), [&](const Flow& f) { return !(*sources)[static_cast<std::size_t>(f.src)]; });
    out.phases.assign(static_cast<std::size_t>(p - 1), step.front());
    return out;
  }
  algorithm = models::resolve_algorithm(kind, bytes, g, algorithm);  // the cost model's choice
  if (algorithm == models::GradSyncAlgorithm::kHierarchical && (g.nodes <= 1 || g.inter_bandwidth_Bps <= 0))
    algorithm = models::GradSyncAlgorithm::kRing;  // hierarchical_time's own fallback
  out.phases = dp_all_reduce(algorithm, gpus, node_of, bytes, g.node_shared);
  for (Phase& ph : out.phases) spread_over_mesh_links(topo, gpus, ph);
  if (algorithm == models::GradSyncAlgorithm::kTree) out.delay_after_s = tree_fill_latency_s(g);
  return out;
}

std::vector<FoldedPhase> folded_collective(const Topology& topo, models::CollectiveKind kind,
                                           models::GradSyncAlgorithm algorithm, const std::vector<int>& gpus,
                                           double bytes, bool fold, const std::vector<models::NodeSenders>* concurrent_on_node) {
  const CollectiveFlows c = collective_flows(topo, kind, algorithm, gpus, bytes, concurrent_on_node);
  return fold_collective_flows(topo, c, fold);
}

std::vector<FoldedPhase> fold_collective_flows(const Topology& topo, const CollectiveFlows& c, bool fold) {
  std::vector<FoldedPhase> out;
  for (const auto& ph : c.phases) {
    out.push_back(fold_phase(topo, ph, fold));
    out.back().delay_after_s = c.delay_after_s;
  }
  return fold ? merge_repeated_phases(topo, out) : out;
}

Phase group_transfer(const std::vector<int>& src, const std::vector<int>& dst, double bytes_per_rank) {
  Phase out;
  const std::size_t ns = src.size(), nd = dst.size();
  if (bytes_per_rank <= 0) return out;  // nothing to send (the cost model's p2p_time(0) = 0)
  for (std::size_t i = 0; i < ns; ++i)
    out.push_back({src[i], dst[models::pipeline_peer(static_cast<int>(i), static_cast<int>(ns), static_cast<int>(nd))],
                   bytes_per_rank});
  return out;
}

}  // namespace hetsim::sim
