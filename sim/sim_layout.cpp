// SPDX-License-Identifier: Apache-2.0
// Folding analysis and DP components (see sim_layout.hpp).
#include "sim_layout.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <tuple>

#include "dp_segments.hpp"

namespace hetsim::sim {
namespace {

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
  void unite(int a, int b) {
    a = find(a), b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

bool same_ops(const std::vector<models::Op>& a, const std::vector<models::Op>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].duration_s != b[i].duration_s || a[i].size_bytes != b[i].size_bytes ||
        a[i].overlapped != b[i].overlapped)
      return false;
  return true;
}

bool same_stage_work(const models::StageWork& a, const models::StageWork& b) {
  if (a.chunks().size() != b.chunks().size() || a.gpus.size() != b.gpus.size()) return false;
  if (a.chunk_ops != b.chunk_ops)  // stages of one shape share their ops (build_plan_work)
    for (std::size_t c = 0; c < a.chunks().size(); ++c)
      if (!same_ops(a.chunks()[c].forward, b.chunks()[c].forward) || !same_ops(a.chunks()[c].backward, b.chunks()[c].backward))
        return false;
  return a.activation_send_bytes == b.activation_send_bytes && a.grad_sync_bytes == b.grad_sync_bytes &&
         a.optimizer_s == b.optimizer_s;
}

// Blocks of replicas that share nodes; returns replicas per block when the blocks are
// consecutive, equal in size and congruent, else 0.
int congruent_block_size(const Topology& topo, const models::Plan& plan, const models::PlanWork& work) {
  const auto& cluster = topo.get_cluster();
  const int d = static_cast<int>(work.replicas.size());
  if (d < 3) return 0;
  std::map<int, int> first_replica_of_node;
  UnionFind uf(d);
  std::set<int> zones;
  for (int r = 0; r < d; ++r)
    for (const auto& st : work.replicas[r])
      for (int g : st.gpus) {
        zones.insert(cluster.zone_of_gpu(g));
        auto [it, fresh] = first_replica_of_node.emplace(cluster.node_of_gpu(g), r);
        if (!fresh) uf.unite(it->second, r);
      }
  if (zones.size() != 1) return 0;  // WAN-spanning plans: simulated unfolded (exact)
  // ZeRO-2/3 move gradients (and weights) between all replicas during every pass: on an
  // oversubscribed fabric the other blocks' traffic shares the simulated block's uplinks, which
  // a folded run would leave empty (half the step of a 2:1 fat tree went missing).
  if (plan.zero >= 2 && cluster.zones[*zones.begin()].fabric.oversubscription > 1) return 0;
  int size = 0;
  while (size < d && uf.find(size) == 0) ++size;
  if (size == 0 || d % size != 0 || d / size < 3) return 0;
  for (int r = 0; r < d; ++r) {
    if (uf.find(r) != (r / size) * size) return 0;
    const int r0 = r % size;
    if (plan.replicas[r].micro_batches != plan.replicas[r0].micro_batches) return 0;
    if (work.replicas[r].size() != work.replicas[r0].size()) return 0;
    for (std::size_t s = 0; s < work.replicas[r].size(); ++s) {
      const auto& a = work.replicas[r][s];
      const auto& b = work.replicas[r0][s];
      if (!same_stage_work(a, b)) return 0;
      for (std::size_t i = 0; i < a.gpus.size(); ++i) {
        const auto& na = cluster.nodes[cluster.node_of_gpu(a.gpus[i])];
        const auto& nb = cluster.nodes[cluster.node_of_gpu(b.gpus[i])];
        if (na.node_type != nb.node_type || cluster.gpus[a.gpus[i]].local != cluster.gpus[b.gpus[i]].local) return 0;
      }
    }
  }
  return size;
}

/// Tied embeddings: one group per TP rank of the first stage; the ranks of one (first, last)
/// stage pair run at once, so their flows make one sync, phase by phase (lay.embeddings).
void add_embedding_syncs(const Topology& topo, const models::Plan& plan, const models::PlanWork& work,
                         const std::vector<int>& actor_of_gpu, bool fold, SimLayout& lay) {
  std::map<std::pair<int, int>, CollectiveFlows> embedding_flows;
  for (const auto& grp : work.dp_groups) {
    if (!grp.embedding || grp.gpus.size() < 2 || grp.size_bytes <= 0) continue;
    const int a = actor_of_gpu[grp.gpus.front()], b = actor_of_gpu[grp.gpus.back()];
    if (a < 0 || b < 0 || a == b) continue;  // a replica not simulated (folded)
    const CollectiveFlows c =
        collective_flows(topo, models::CollectiveKind::kAllReduce, plan.grad_sync, grp.gpus, grp.size_bytes);
    auto [it, fresh] = embedding_flows.try_emplace({a, b}, c);
    if (fresh) continue;
    CollectiveFlows& all = it->second;
    if (all.phases.size() < c.phases.size()) all.phases.resize(c.phases.size());
    for (std::size_t i = 0; i < c.phases.size(); ++i)
      all.phases[i].insert(all.phases[i].end(), c.phases[i].begin(), c.phases[i].end());
    all.delay_after_s = std::max(all.delay_after_s, c.delay_after_s);
  }
  for (const auto& [actors, flows] : embedding_flows) {
    EmbeddingSync e;
    e.first_actor = actors.first;
    e.last_actor = actors.second;
    e.phases = fold_collective_flows(topo, flows, fold);
    lay.embedding_of_actor[actors.first] = lay.embedding_of_actor[actors.second] = static_cast<int>(lay.embeddings.size());
    lay.embeddings.push_back(std::move(e));
  }
}

/// ZeRO-2/3: the flows of each simulated actor's share of one chunk's collectives in a forward
/// and in a backward pass (lay.zero3_forward/backward, see sim_layout.hpp; models::pass_traffic).
/// False when a flow's destination is outside the platform (the caller then simulates unfolded).
bool add_pass_traffic(const Topology& topo, const models::Plan& plan, const models::PlanWork& work,
                            const std::vector<int>& groups_with_flows, const std::vector<bool>& gpu_in_sim,
                            const std::vector<bool>& gpu_in_platform, const std::vector<int>& actor_of_gpu, bool fold,
                            SimLayout& lay) {
  const auto& cluster = topo.get_cluster();
  const models::PassTraffic traffic = models::pass_traffic(plan.zero, plan.recompute);
  std::vector<Phase> forward(lay.actors.size()), backward(lay.actors.size());
  for (int k : groups_with_flows) {
    const auto& grp = work.dp_groups[k];
    const int n = static_cast<int>(grp.gpus.size());
    std::map<int, std::vector<int>> members_on_node;  // node -> its members' positions in the group
    for (int i = 0; i < n; ++i) members_on_node[cluster.node_of_gpu(grp.gpus[i])].push_back(i);
    // Each member sends to the member `step` places on: with equal counts per node, the same
    // position on the next node. Groups of replicas of different TP degrees have unequal counts
    // (4 members on an A100 node, 2 on a V100 node): a step of the node's own count sent 4 flows
    // into the next small node, two per member, and its NICs ran at twice the members' shares
    // (mixed-TP ZeRO-3: 5.10 s simulated against 2.77 s predicted; s56 engine hunt). The largest
    // count is a permutation that leaves every node of a node-contiguous group.
    std::size_t most_on_node = 0;
    for (const auto& [node, positions] : members_on_node) most_on_node = std::max(most_on_node, positions.size());
    const int step = static_cast<int>(most_on_node) < n ? static_cast<int>(most_on_node) : 1;
    for (int i = 0; i < n; ++i) {
      const int g = grp.gpus[i];
      if (!gpu_in_sim[g]) continue;
      const int a = actor_of_gpu[g];
      const double chunks = static_cast<double>(std::max<std::size_t>(1, work.replicas[lay.actors[a].replica][lay.actors[a].stage].chunks().size()));
      // Each member's traffic crosses its own NIC share (models::sharded_collective_time): its
      // flow goes to the member as many places on as its node has members (the same position
      // on the next node of a node-contiguous group), or to its ring successor in a one-node group.
      const std::vector<int>& local = members_on_node[cluster.node_of_gpu(g)];
      const int on_node = static_cast<int>(local.size());
      // The shift is a permutation: every member receives one flow, as every member of a ring
      // does. Where a node holds more than half the group the shift lands some members on their
      // own node, whose flow then stays inside it. Sending those across as well (to the next
      // member off the node) had the smaller node's members receive two or three flows each:
      // A100 + V100 stages of gpt3-6.7b TP 4 PP 4 DP 3 ZeRO-3, two members of a group on one node
      // and one on the next, simulated 10.6 s against the cost model's 5.2 s (s63 metamorphic
      // hunt), where a ring crosses that member's NIC once each way.
      const int dst = grp.gpus[(i + step) % n];
      if (!gpu_in_platform[dst]) return false;
      // A member's whole ring traffic of each collective, (n-1)/n of the chunk's bytes, as one
      // flow to its successor.
      const double share = (n - 1.0) / n / chunks;
      const double forward_bytes = traffic.forward_gathers * grp.gather_bytes * share;
      const double backward_bytes =
          (traffic.backward_gathers * grp.gather_bytes + traffic.backward_reduce_scatters * grp.size_bytes) * share;
      // Fanned out over the node's NICs (models::ShardedCollectives::kNodeNics), the ring's
      // channels cross each node boundary once between them: each member's crossing carries
      // 1/on_node of the share, while its hop inside the node still carries all of it.
      const double crossing = on_node < n && plan.sharded_collectives == models::ShardedCollectives::kNodeNics ? 1.0 / on_node : 1.0;
      Phase f{{g, dst, forward_bytes * crossing}};
      Phase b{{g, dst, backward_bytes * crossing}};
      if (on_node > 1 && on_node < n) {
        // The rings' hops inside the node carry the same share at the same time (the cost model
        // takes the slower of the intra-node ring and the NIC share): on a mesh of point-to-point
        // links (MI300X xGMI) such a hop can be slower than the NIC.
        const int peer = grp.gpus[local[(std::find(local.begin(), local.end(), i) - local.begin() + 1) % on_node]];
        f.push_back({g, peer, forward_bytes});
        b.push_back({g, peer, backward_bytes});
      }
      for (Phase* ph : {&f, &b}) spread_over_mesh_links(topo, grp.gpus, *ph);
      if (forward_bytes > 0) forward[a].insert(forward[a].end(), f.begin(), f.end());  // ZeRO-2 gathers nothing
      backward[a].insert(backward[a].end(), b.begin(), b.end());
    }
  }
  // An actor's flows fold when they would not load a link they share beyond its capacity, but
  // on an oversubscribed fabric every actor's flows meet on the uplinks at once: simulated as
  // one flow per actor they left the uplinks half empty (half a 2:1 fat tree's ZeRO-3 step).
  bool shared_uplinks = false;
  for (const auto& z : cluster.zones) shared_uplinks = shared_uplinks || z.fabric.oversubscription > 1;
  for (std::size_t a = 0; a < forward.size(); ++a) {
    lay.zero3_forward[a] = fold_phase(topo, forward[a], fold && !shared_uplinks);
    lay.zero3_backward[a] = fold_phase(topo, backward[a], fold && !shared_uplinks);
  }
  return true;
}

/// Refuses a layout whose data-parallel rings would move more flows than kMaxSimulatedFlows:
/// a ring all-reduce of n members is 2(n - 1) steps of n flows, for each stage and TP rank.
/// Replicas that cannot be folded into blocks (uneven micro-batch counts, a WAN) are simulated
/// one by one: 1136 replicas of Llama 3 405B ran for minutes towards 6 GB before this bound.
/// Also refuses more micro-batch passes over the simulated replicas (0 .. simulated-1) than
/// kMaxSimulatedPasses.
void check_simulation_size(const models::Plan& plan, const models::PlanWork& work, int simulated) {
  long long passes = 0;
  for (int r = 0; r < simulated && r < static_cast<int>(plan.replicas.size()); ++r)
    passes += simulated_passes(plan, plan.replicas[r]);
  if (passes > kMaxSimulatedPasses)
    throw std::invalid_argument(
        std::to_string(simulated) + " replicas to simulate (" +
        (simulated < plan.dp() ? "of " + std::to_string(plan.dp()) + ", folded"
                               : std::string("all of them: they do not fold into a few simulated blocks")) +
        ") hold " + std::to_string(passes) +
        " micro-batch passes (micro-batches x stages x interleave) between them, above the simulator's bound of " +
        std::to_string(kMaxSimulatedPasses) +
        " (expected fewer, larger micro-batches; `hetsim predict` answers without simulating)");
  if (simulated < 2) return;
  double groups = 0;  // (stage, TP rank) pairs of the widest replica
  for (const auto& stages : work.replicas) {
    double g = 0;
    for (const auto& st : stages) g += static_cast<double>(st.gpus.size());
    groups = std::max(groups, g);
  }
  const double n = simulated;
  const double flows = groups * 2.0 * (n - 1) * n;
  if (flows <= kMaxSimulatedFlows) return;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", flows);
  throw std::invalid_argument(
      std::to_string(simulated) + " replicas to simulate one by one (" +
      (plan.dp() == simulated ? std::string("they do not fold into a few simulated blocks: micro-batch counts or "
                                            "links differ, or their gradient rings leave any block")
                              : std::string("unfolded")) +
      "): their gradient rings move about " + buf + " flows, above the simulator's bound of " +
      std::to_string(static_cast<long long>(kMaxSimulatedFlows)) +
      " (expected fewer replicas, or equal micro-batch counts; `hetsim predict` answers without simulating)");
}

// Empty result (no actors) when folding by blocks was asked and a DP flow leaves the blocks.
/// The DP groups' load of the WAN links, in bytes and in senders (lay.dp_wan_load,
/// lay.dp_wan_senders). The gradient groups the cost model formed (per segment and shard) cross
/// the WAN together; the figure only picks each group's algorithm here (the links share
/// themselves), as grad_sync_cost.cpp (load_wan_links) derives it.
void load_dp_wan(const models::Cluster& cluster, const models::PlanWork& work, SimLayout& lay) {
  std::vector<double> bytes, senders, count;
  for (const auto& grp : work.dp_groups) {
    if (grp.embedding) continue;
    const int n = static_cast<int>(grp.gpus.size());
    models::add_wan_crossings(cluster, grp.gpus.data(), n, grp.size_bytes, bytes);
    models::add_wan_crossings(cluster, grp.gpus.data(), n, 1.0, senders);
  }
  models::wan_load_of(cluster, bytes, lay.dp_wan_load);
  models::wan_load_of(cluster, senders, count);
  models::wan_senders_for(count, 1.0, lay.dp_wan_senders);
}

/// The GPUs the simulation runs (those of the simulated replicas) and those the platform holds
/// (every GPU of a node that the simulated and ghost blocks use); marks those nodes in
/// lay.node_used.
struct GpuSets {
  std::vector<bool> in_sim, in_platform;
};
GpuSets mark_gpus(const models::Cluster& cluster, const models::PlanWork& work, int simulated, int block,
                  SimLayout& lay) {
  const int d = static_cast<int>(work.replicas.size());
  GpuSets out{std::vector<bool>(cluster.gpus.size(), false), std::vector<bool>(cluster.gpus.size(), false)};
  lay.node_used.assign(cluster.nodes.size(), false);
  for (int r = 0; r < d; ++r)
    for (const auto& st : work.replicas[r])
      for (int g : st.gpus) {
        if (r < simulated) out.in_sim[g] = true;
        if (r < simulated + (block > 0 ? block : 0)) lay.node_used[cluster.node_of_gpu(g)] = true;
      }
  for (int g = 0; g < cluster.gpu_count(); ++g) out.in_platform[g] = lay.node_used[cluster.node_of_gpu(g)];
  return out;
}

/// One actor per (simulated replica, stage); returns the GPU -> actor map (-1: no actor).
std::vector<int> place_actors(const models::Cluster& cluster, const models::PlanWork& work, SimLayout& lay) {
  std::vector<int> actor_of_gpu(cluster.gpus.size(), -1);
  for (int r : lay.replicas)
    for (std::size_t s = 0; s < work.replicas[r].size(); ++s) {
      for (int g : work.replicas[r][s].gpus) actor_of_gpu[g] = static_cast<int>(lay.actors.size());
      lay.actors.push_back({r, static_cast<int>(s), -1});
    }
  return actor_of_gpu;
}

/// A DP group's end-of-step flows into its sync class's phases (gradients, and with ZeRO >= 1
/// the updated weights' all-gather), those that start in the simulated replicas. Returns false
/// when one of them ends outside the platform (the caller then simulates unfolded).
bool add_group_flows(const Topology& topo, const models::Plan& plan, const models::PlanWork& work,
                     const models::DpGroup& grp, const GpuSets& gpus, const SimLayout& lay, DpSyncClass& cls) {
  cls.buckets = std::max(cls.buckets, grp.buckets);
  if (grp.size_bytes > 0)
    cls.min_group_bytes = cls.min_group_bytes > 0 ? std::min(cls.min_group_bytes, grp.size_bytes) : grp.size_bytes;
  // ZeRO >= 1 shards the optimizer state: gradients are reduce-scattered and the updated
  // weights all-gathered (Rajbhandari et al., SC'20 §5.1-5.2), as the cost model prices it.
  // Each node's NICs are shared by the senders the cost model counts (all of the node's GPUs
  // when the plan uses them all, each in one group; models::dp_nic_channels otherwise).
  const std::vector<models::NodeSenders>* concurrent = work.dp_nic_senders.empty() ? nullptr : &work.dp_nic_senders;
  std::vector<double> wan_senders = lay.dp_wan_senders;
  if (!grp.embedding) models::wan_senders_for(lay.dp_wan_load, grp.size_bytes, wan_senders);
  const std::vector<double>* wan = wan_senders.empty() ? nullptr : &wan_senders;
  // ZeRO-3 moves its whole gradient and weight traffic into the passes (add_pass_traffic);
  // ZeRO-2 its earlier micro-batches' gradients only, the last ones are reduced here.
  if (plan.zero >= 3) return true;
  // Only the flows that start in the simulated replicas are kept (below): the ZeRO rings are
  // built for those alone (collective_flows' `sources`).
  const CollectiveFlows grad = collective_flows(
      topo, plan.zero >= 1 ? models::CollectiveKind::kReduceScatter : models::CollectiveKind::kAllReduce,
      plan.grad_sync, grp.gpus, grp.size_bytes, concurrent, wan, &gpus.in_sim);
  CollectiveFlows params;
  if (plan.zero >= 1) {
    const double bytes = grp.gather_bytes > 0 ? grp.gather_bytes : grp.size_bytes;
    params = collective_flows(topo, models::CollectiveKind::kAllGather, plan.grad_sync, grp.gpus, bytes, concurrent,
                              wan, &gpus.in_sim);
  }
  bool inside = true;
  const int ring = 1 + static_cast<int>(&grp - work.dp_groups.data());  // Flow::ring
  const auto add = [&](const CollectiveFlows& cf, std::vector<FoldedPhase>& into) {
    if (into.size() < cf.phases.size()) into.resize(cf.phases.size());
    for (std::size_t i = 0; i < cf.phases.size(); ++i) {
      for (Flow f : cf.phases[i]) {
        if (!gpus.in_sim[f.src]) continue;
        if (!gpus.in_platform[f.dst]) inside = false;
        f.ring = ring;
        into[i].simulated.push_back(f);
      }
      into[i].delay_after_s = std::max(into[i].delay_after_s, cf.delay_after_s);
    }
  };
  add(grad, cls.grad_phases);
  add(params, cls.param_phases);
  return inside;
}

/// What decides a DP group's class (DpSyncClass): its component (union-find root) and, per
/// simulated member actor, where its gradients are ready in that actor's last backward pass.
struct ReadyKey {
  int root = -1;
  std::vector<std::tuple<int, double, double>> members;  ///< (actor, ready_from, ready_to), by actor
  bool operator<(const ReadyKey& o) const { return std::tie(root, members) < std::tie(o.root, o.members); }
};

ReadyKey ready_key(const models::DpGroup& grp, const std::vector<bool>& in_sim, const std::vector<int>& actor_of_gpu,
                   UnionFind& uf) {
  ReadyKey key;
  for (std::size_t i = 0; i < grp.gpus.size(); ++i) {
    const int g = grp.gpus[i];
    if (!in_sim[g]) continue;
    if (key.root < 0) key.root = uf.find(actor_of_gpu[g]);
    key.members.emplace_back(actor_of_gpu[g], grp.ready_from.empty() ? 0.0 : grp.ready_from[i],
                             grp.ready_to.empty() ? 1.0 : grp.ready_to[i]);
  }
  std::sort(key.members.begin(), key.members.end());
  return key;
}

DpSyncClass sync_class(const ReadyKey& key) {
  DpSyncClass cls;
  for (const auto& [actor, from, to] : key.members) {
    cls.actors.push_back(actor);
    cls.ready_from.push_back(from);
    cls.ready_to.push_back(to);
  }
  return cls;
}

/// One simulation's layout: the replicas it runs (with `blocks`, one block of congruent
/// replicas when folding), their actors, and the DP components with their flows. Empty when a
/// flow leaves the platform's nodes (make_layout then lays it out without blocks).
SimLayout layout(const Topology& topo, const models::Plan& plan, const models::PlanWork& work, bool fold, bool blocks) {
  const auto& cluster = topo.get_cluster();
  SimLayout lay;
  const int d = static_cast<int>(work.replicas.size());
  const int block = fold && blocks ? congruent_block_size(topo, plan, work) : 0;
  const int simulated = block > 0 ? block : d;
  check_simulation_size(plan, work, simulated);
  lay.replica_simulated.assign(d, false);
  for (int r = 0; r < simulated; ++r) {
    lay.replicas.push_back(r);
    lay.replica_simulated[r] = true;
  }
  lay.tp_senders_on_node = models::cross_node_tp_senders(plan, cluster);
  load_dp_wan(cluster, work, lay);
  const GpuSets gpus = mark_gpus(cluster, work, simulated, block, lay);
  const std::vector<int> actor_of_gpu = place_actors(cluster, work, lay);

  // DP components: union of simulated actors over each group's simulated GPUs. Tied-embedding
  // groups are separate: they run after the DP sync of their two stages.
  UnionFind uf(static_cast<int>(lay.actors.size()));
  std::vector<int> groups_with_flows;
  lay.embedding_of_actor.assign(lay.actors.size(), -1);
  add_embedding_syncs(topo, plan, work, actor_of_gpu, fold, lay);
  for (std::size_t k = 0; k < work.dp_groups.size(); ++k) {
    const auto& grp = work.dp_groups[k];
    if (grp.gpus.size() < 2 || grp.size_bytes <= 0 || grp.embedding) continue;
    int first = -1;
    for (int g : grp.gpus)
      if (gpus.in_sim[g]) {
        if (first < 0) first = actor_of_gpu[g];
        else uf.unite(first, actor_of_gpu[g]);
      }
    if (first >= 0) groups_with_flows.push_back(static_cast<int>(k));
  }
  std::map<int, int> component_of_root;
  std::map<ReadyKey, int> class_of_key;  // per component: its classes by their members' readiness
  bool leaves = false;
  for (int k : groups_with_flows) {
    const auto& grp = work.dp_groups[k];
    const ReadyKey key = ready_key(grp, gpus.in_sim, actor_of_gpu, uf);
    auto [it, fresh] = component_of_root.emplace(key.root, static_cast<int>(lay.components.size()));
    if (fresh) lay.components.emplace_back();
    DpComponent& comp = lay.components[it->second];
    auto [cit, new_class] = class_of_key.emplace(key, static_cast<int>(comp.classes.size()));
    if (new_class) comp.classes.push_back(sync_class(key));
    if (!add_group_flows(topo, plan, work, grp, gpus, lay, comp.classes[cit->second])) leaves = true;
  }
  if (leaves) return {};  // a DP flow leaves the simulated and ghost blocks: caller simulates unfolded
  lay.zero3_forward.assign(lay.actors.size(), {});
  lay.zero3_backward.assign(lay.actors.size(), {});
  if (models::pass_traffic(plan.zero, plan.recompute).any() &&
      !add_pass_traffic(topo, plan, work, groups_with_flows, gpus.in_sim, gpus.in_platform, actor_of_gpu, fold, lay))
    return {};  // a ZeRO-2/3 flow leaves the simulated and ghost blocks
  for (auto& [root, c] : component_of_root) {
    auto& comp = lay.components[c];
    for (int a = 0; a < static_cast<int>(lay.actors.size()); ++a)
      if (uf.find(a) == root) {
        comp.actors.push_back(a);
        lay.actors[a].component = c;
      }
    std::vector<std::vector<FoldedPhase>*> all_phases;
    for (auto& cls : comp.classes) {
      all_phases.push_back(&cls.grad_phases);
      all_phases.push_back(&cls.param_phases);
    }
    for (auto* phases : all_phases) {
      for (auto& ph : *phases) {
        const double delay = ph.delay_after_s;
        ph = fold_phase(topo, ph.simulated, fold);
        ph.delay_after_s = delay;
      }
      if (fold) *phases = merge_repeated_phases(topo, *phases);
    }
  }
  lay.folded = block > 0;
  return lay;
}

}  // namespace

SimLayout make_layout(const Topology& topo, const models::Plan& plan, const models::PlanWork& work, bool fold) {
  SimLayout lay = layout(topo, plan, work, fold, true);
  if (lay.actors.empty()) lay = layout(topo, plan, work, fold, false);
  return lay;
}

}  // namespace hetsim::sim
