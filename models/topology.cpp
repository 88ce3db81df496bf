// SPDX-License-Identifier: Apache-2.0
// Link figures between GPUs: path bandwidth/latency and ring bottlenecks of collective groups.
#include "topology.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hetsim::models {

double link_efficiency(IntraFabricKind kind) {
  switch (kind) {
    case IntraFabricKind::kNvswitch:
    case IntraFabricKind::kNvlink: return 0.65;  // nccl-tests all_reduce busbw on DGX A100: ~235 of 300 GB/s at 1 GB, ~190-200 at the 16-128 MB of TP messages
    // xGMI: a 64 GB/s link carries ~48 GB/s after CRC and protocol overhead, 75% (AMD ROCm blog,
    // "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X", 2025);
    // assumption: RCCL collectives a little below that link figure, 0.70.
    case IntraFabricKind::kXgmi: return 0.70;
    case IntraFabricKind::kPcie: return 0.40;    // GPU<->GPU through the root complex (topology.hpp)
    case IntraFabricKind::kNone: return 0.80;
  }
  return 0.80;
}

double link_efficiency(NicKind kind) {
  switch (kind) {
    case NicKind::kInfiniband: return 0.94;  // HDR 200 Gb/s: ~23.5 GB/s in ib_write_bw / nccl-tests
    case NicKind::kRoce: return 0.90;        // RoCEv2 with DCQCN, ~90% of line rate (Zhu et al. SIGCOMM'15)
    case NicKind::kEthernet: return 0.85;    // TCP sockets (NCCL socket transport), iperf3 typical
  }
  return 0.85;
}

double link_efficiency(const IntraFabric& intra) {
  if (intra.kind == IntraFabricKind::kPcie && intra.peer_to_peer) return kPciePeerToPeerEfficiency;
  return link_efficiency(intra.kind);
}

double achieved_bandwidth_Bps(const IntraFabric& intra) {
  return intra.measured ? intra.bandwidth_Bps : intra.bandwidth_Bps * link_efficiency(intra);
}

double achieved_bandwidth_Bps(const NicSpec& nics) {
  return nics.measured ? nics.bandwidth_Bps : nics.bandwidth_Bps * link_efficiency(nics.kind);
}

double intra_bandwidth_Bps(const NodeType& nt, int members) {
  const double all = achieved_bandwidth_Bps(nt.intra);
  const int peers = nt.gpus_per_node - 1;
  if (!nt.intra.mesh || peers <= 1) return all;
  return all * std::clamp(members - 1, 1, peers) / peers;
}

namespace {

struct HopFigures {
  double bandwidth_Bps;
  double latency_s;
  bool intra;
  bool staged;
};

/// Per-GPU share of a node's NICs when `concurrent` GPUs of it send across nodes at once.
/// `concurrent` may exceed the node's GPUs: a GPU in several data-parallel groups at once (one
/// per gradient shard, dp_nic_channels) is a sender of each, one ring channel apiece.
/// `senders.on_busiest_rail` > 0: the senders' own busiest rail (NodeSenders, node_senders_of),
/// in place of the rails filled in order.
double nic_share(const Cluster& c, int node, NodeSenders senders) {
  const NodeType& nt = c.node_types[c.nodes[node].node_type];
  const Zone& zone = c.zones[c.nodes[node].zone];
  const int n = senders.senders > 0 ? senders.senders : nt.gpus_per_node;
  double one_nic = achieved_bandwidth_Bps(nt.nics);
  // A switch fabric's per-port figure caps each NIC (the simulator's NIC links alike).
  if (zone.fabric.kind == ZoneFabricKind::kSwitch && zone.fabric.bandwidth_Bps > 0)
    one_nic = std::min(one_nic, zone.fabric.bandwidth_Bps);
  // A GPU reaches the network through its own rail: the NIC(s) on its PCIe switch (one per GPU
  // in the DGX A100/H100 designs; NVIDIA DGX A100 User Guide, "Network Connections"), over its
  // own x16 link, which carries about one NIC's line rate (PCIe 4.0 x16 31.5 GB/s vs HDR 25 GB/s,
  // PCIe 5.0 x16 63 GB/s vs NDR 50 GB/s). So a GPU alone on a node gets its rail's NICs, not all
  // of them. With fewer NICs than GPUs, contiguous GPUs share a rail's NIC, and the node's
  // sending GPUs fill the rails in order (a plan's GPUs of a node are usually its first ones):
  // the busiest rail carries min(n, GPUs per rail) of them, unless the caller counted the rails
  // (node_senders_of). sim/sim_topology.cpp wires each GPU to its rail (rail_of_gpu), so both
  // engines agree.
  const int gpus = std::max(1, nt.gpus_per_node);
  const int count = std::max(1, nt.nics.count);
  const double rail_nics = std::max(1.0, static_cast<double>(count) / gpus);
  const int gpus_per_rail = count < gpus ? (gpus + count - 1) / count : 1;
  // More senders than GPUs (channels of GPUs in several groups) spread over the rails in turn.
  const int rails = (gpus + gpus_per_rail - 1) / gpus_per_rail;
  const int on_busiest_rail = senders.on_busiest_rail > 0 ? senders.on_busiest_rail
                              : n <= gpus                  ? std::min(std::max(1, n), gpus_per_rail)
                                                           : (n + rails - 1) / rails;
  double bw = rail_nics * one_nic / on_busiest_rail;
  // A fat-tree with oversubscription o gives each node 1/o of its NIC bandwidth at the core
  // (Leiserson, "Fat-trees", IEEE ToC 1985; Al-Fares et al. SIGCOMM'08), shared by the node's
  // senders; a sender alone keeps its rail's rate when that is less (the simulator's node uplink
  // alike, sim/sim_topology.cpp). Dividing each sender's rail share by o charged one GPU of a
  // node of eight NICs at o = 4 a quarter of its NIC, for the node's 2 NICs of core bandwidth.
  if (zone.fabric.kind == ZoneFabricKind::kFatTree && zone.fabric.oversubscription > 1)
    bw = std::min(bw, count * one_nic / zone.fabric.oversubscription / std::max(1, n));
  if (!nt.nics.gpu_direct && nt.host_link_Bps > 0) bw = std::min(bw, nt.host_link_Bps * kHostLinkEfficiency);
  return bw;
}

/// One side of an inter-node hop: what `members` GPUs of `node` crossing together can send (its
/// NIC share each; a node's own fabric caps what its GPUs move towards the NICs, and a one-GPU
/// node, or one without an intra fabric, has none to cross).
double nic_share(const Cluster& c, int node, int concurrent) { return nic_share(c, node, NodeSenders{concurrent, 0}); }

double node_side_Bps(const Cluster& c, int node, NodeSenders concurrent, int members) {
  const NodeType& t = c.node_types[c.nodes[node].node_type];
  double bw = nic_share(c, node, concurrent) * members;
  if (t.gpus_per_node > 1 && t.intra.bandwidth_Bps > 0) bw = std::min(bw, achieved_bandwidth_Bps(t.intra));
  return bw;
}

/// `wan_senders` > 0: GPUs of the whole plan that cross this zone pair's WAN link at once (all
/// replicas' pipeline sends, or all DP groups' crossing members); 0: a's node's senders share it.
/// `concurrent_a`, `concurrent_b`: the senders of a's and b's nodes (0: all of the node's GPUs).
HopFigures hop(const Cluster& c, int a, int b, NodeSenders concurrent_a, NodeSenders concurrent_b, int members_a, int members_b,
               double wan_senders = 0) {
  const int na = c.gpus[a].node, nb = c.gpus[b].node;
  const NodeType& ta = c.node_types[c.nodes[na].node_type];
  const NodeType& tb = c.node_types[c.nodes[nb].node_type];
  if (na == nb) return {intra_bandwidth_Bps(ta, std::max(2, members_a)), ta.intra.latency_s, true, false};
  double bw = std::min(node_side_Bps(c, na, concurrent_a, members_a), node_side_Bps(c, nb, concurrent_b, members_b));
  double lat = ta.nics.latency_s + tb.nics.latency_s;
  const int za = c.nodes[na].zone, zb = c.nodes[nb].zone;
  // Each node's side crosses half its zone's fabric (the simulator's uplinks carry half each,
  // sim/sim_topology.cpp): the zone's figure inside one zone, the mean of the two across zones.
  lat += (c.zones[za].fabric.latency_s + c.zones[zb].fabric.latency_s) / 2;
  if (za != zb) {
    if (const InterZoneLink* link = c.link_between(za, zb)) {
      const double n = wan_senders > 0                ? wan_senders
                       : concurrent_a.senders > 0 ? concurrent_a.senders
                                                  : ta.gpus_per_node;
      bw = std::min(bw, link->bandwidth_Bps * kWanLinkEfficiency * members_a / std::max(1.0, n));
      lat += link->latency_s;
    }
  }
  const HostStaging staging = host_staging(c, a, b);
  if (staging.staged) {
    if (staging.rate_Bps > 0) bw = std::min(bw, staging.rate_Bps * std::min(members_a, members_b));
    lat += staging.extra_latency_s;
  }
  return {bw, lat, false, staging.staged};
}

}  // namespace

PathCost staged_send_path(const Cluster& cluster, int from_gpu, int to_gpu, int from_tp, int to_tp, PathCost path) {
  if (!path.host_staged || from_tp <= to_tp || to_tp <= 0) return path;
  const HostStaging staging = host_staging(cluster, from_gpu, to_gpu);
  if (staging.rate_Bps > 0)
    path.bandwidth_Bps = std::min(path.bandwidth_Bps, staging.rate_Bps * to_tp / static_cast<double>(from_tp));
  return path;
}

HostStaging host_staging(const Cluster& c, int gpu_a, int gpu_b) {
  if (c.cross_vendor_rdma || c.gpus[gpu_a].node == c.gpus[gpu_b].node) return {};
  if (c.gpu_type(gpu_a).vendor == c.gpu_type(gpu_b).vendor) return {};
  const double pcie_Bps = std::min(c.node_type_of_gpu(gpu_a).host_link_Bps, c.node_type_of_gpu(gpu_b).host_link_Bps);
  return {true, pcie_Bps * kHostLinkEfficiency, 2 * kHostCopySetup_s};
}

double rail_rate_Bps(const Cluster& cluster, int node) { return nic_share(cluster, node, NodeSenders{1, 1}); }

int rail_count(const NodeType& type) { return std::min(type.nics.count, std::max(1, type.gpus_per_node)); }

int rail_of_gpu(const Cluster& cluster, int gpu) {
  const GpuSlot& slot = cluster.gpus[gpu];
  const NodeType& type = cluster.node_types[cluster.nodes[slot.node].node_type];
  if (type.nics.count <= 0) return -1;
  return slot.local * rail_count(type) / std::max(1, type.gpus_per_node);
}

void node_senders_of(const Cluster& cluster, const std::vector<int>& per_gpu, std::vector<NodeSenders>& out,
                     std::vector<int>* on_rail_of_gpu) {
  out.assign(cluster.nodes.size(), NodeSenders{});
  if (on_rail_of_gpu) on_rail_of_gpu->assign(cluster.gpus.size(), 0);
  std::vector<int> on_rail;  // of the current node
  for (std::size_t n = 0; n < cluster.nodes.size(); ++n) {
    const Node& node = cluster.nodes[n];
    const NodeType& type = cluster.node_types[node.node_type];
    on_rail.assign(static_cast<std::size_t>(std::max(1, rail_count(type))), 0);
    for (int l = 0; l < type.gpus_per_node; ++l) {
      const int g = node.first_gpu + l;
      if (per_gpu[g] <= 0) continue;
      out[n].senders += per_gpu[g];
      const int rail = std::max(0, rail_of_gpu(cluster, g));
      out[n].on_busiest_rail = std::max(out[n].on_busiest_rail, on_rail[rail] += per_gpu[g]);
    }
    if (on_rail_of_gpu && out[n].senders > 0)
      for (int l = 0; l < type.gpus_per_node; ++l)
        (*on_rail_of_gpu)[node.first_gpu + l] = on_rail[std::max(0, rail_of_gpu(cluster, node.first_gpu + l))];
  }
}

PathCost path_between(const Cluster& cluster, int gpu_a, int gpu_b, int concurrent_per_node, int wan_senders) {
  return path_between(cluster, gpu_a, gpu_b, concurrent_per_node, concurrent_per_node, wan_senders);
}

PathCost path_between(const Cluster& cluster, int gpu_a, int gpu_b, int sending_a, int receiving_b, int wan_senders) {
  return path_between(cluster, gpu_a, gpu_b, NodeSenders{sending_a, 0}, NodeSenders{receiving_b, 0}, wan_senders);
}

PathCost path_between(const Cluster& cluster, int gpu_a, int gpu_b, NodeSenders sending_a, NodeSenders receiving_b,
                      int wan_senders) {
  if (gpu_a == gpu_b) return {std::numeric_limits<double>::infinity(), 0, true, false};
  const HopFigures h = hop(cluster, gpu_a, gpu_b, sending_a, receiving_b, 1, 1, wan_senders);
  return {h.bandwidth_Bps, h.latency_s, h.intra, h.staged};
}

bool ring_visits_each_node_once(const Cluster& c, const int* gpus, int count) {
  // The nodes at which runs of one node start, round the circle: each node once, or a node is
  // met again after the ring left it. Usually they increase (one member a node, in node order).
  if (count <= 1) return true;
  const GpuSlot* slots = c.gpus.data();
  int previous = slots[gpus[count - 1]].node, last_start = -1;
  bool increasing = true;
  for (int i = 0; i < count && increasing; ++i) {
    const int node = slots[gpus[i]].node;
    if (node != previous) {
      increasing = node > last_start;
      last_start = node;
    }
    previous = node;
  }
  if (increasing) return true;
  std::vector<int> starts;
  previous = slots[gpus[count - 1]].node;
  for (int i = 0; i < count; ++i) {
    const int node = slots[gpus[i]].node;
    if (node != previous) starts.push_back(node);
    previous = node;
  }
  std::sort(starts.begin(), starts.end());
  return std::adjacent_find(starts.begin(), starts.end()) == starts.end();
}

void order_ring_by_node(const Cluster& c, int* gpus, int count, int* companion) {
  if (ring_visits_each_node_once(c, gpus, count)) return;
  // Nodes in the order of their first member, each node's members in their order: a stable
  // counting sort by the node's rank, O(members) (a scan per node took a 4,096-member group's
  // ordering to 8 million steps).
  std::unordered_map<int, int> rank_of_node;  // node -> its rank among the group's nodes
  std::vector<int> rank(static_cast<std::size_t>(count)), start;
  for (int i = 0; i < count; ++i) {
    const auto [it, fresh] = rank_of_node.emplace(c.gpus[gpus[i]].node, static_cast<int>(start.size()));
    if (fresh) start.push_back(0);
    rank[i] = it->second;
    ++start[static_cast<std::size_t>(it->second)];
  }
  for (std::size_t r = 0, first = 0; r < start.size(); ++r) first += std::exchange(start[r], static_cast<int>(first));
  std::vector<std::pair<int, int>> ordered(static_cast<std::size_t>(count));  // (gpu, companion) in ring order
  for (int i = 0; i < count; ++i) ordered[static_cast<std::size_t>(start[rank[i]]++)] = {gpus[i], companion ? companion[i] : 0};
  for (int i = 0; i < count; ++i) {
    gpus[i] = ordered[i].first;
    if (companion) companion[i] = ordered[i].second;
  }
}

GroupCost group_cost(const Cluster& c, const int* gpus, int count, int concurrent_per_node,
                     const std::vector<double>* wan_senders, const std::vector<NodeSenders>* concurrent_on_node,
                     const std::vector<int>* on_rail_of_gpu) {
  // Each node's senders: its own count when given, else one figure for every node.
  const auto concurrent_of = [&](int node) {
    return concurrent_on_node ? (*concurrent_on_node)[node] : NodeSenders{concurrent_per_node, 0};
  };
  // A member's hop takes its own rail's channels where they are known (each rail its own NIC).
  const auto senders_of_gpu = [&](int gpu) {
    NodeSenders s = concurrent_of(c.gpus[gpu].node);
    if (on_rail_of_gpu && s.senders > 0) s.on_busiest_rail = std::max(1, (*on_rail_of_gpu)[gpu]);
    return s;
  };
  const auto wan_of = [&](int na, int nb) {
    const int za = c.nodes[na].zone, zb = c.nodes[nb].zone;
    return wan_senders && za != zb ? (*wan_senders)[zone_pair_index(c, za, zb)] : 0.0;
  };
  GroupCost g;
  g.size = count;
  if (count <= 0) return g;
  // Members per node (groups are small and usually node-contiguous: search from the back).
  // A per-node slot table stamped with a call counter finds a node's entry in O(1), so a DP
  // group of one GPU per node costs O(members), not O(members^2).
  /// A node's members: how many, and the lowest and highest of their indices in the node.
  struct NodeCount { int node; int count; int min_local; int max_local; };
  thread_local std::vector<NodeCount> scratch;  // reused: no allocation per call once warm
  thread_local std::vector<int> slot_of_node;   // node -> index into scratch, valid if stamped
  thread_local std::vector<unsigned> stamp_of_node;
  thread_local unsigned stamp = 0;
  const std::size_t node_count = c.nodes.size();
  if (slot_of_node.size() < node_count) {
    slot_of_node.resize(node_count, 0);
    stamp_of_node.resize(node_count, 0);
  }
  if (++stamp == 0) {  // wrapped: forget every old stamp
    std::fill(stamp_of_node.begin(), stamp_of_node.end(), 0u);
    stamp = 1;
  }
  scratch.clear();
  int runs = 0;  // of one node round the circle: one a node when the ring visits each node once
  for (int i = 0, previous = c.gpus[gpus[count - 1]].node; i < count; ++i) {
    const int node = c.gpus[gpus[i]].node;
    runs += node != previous;
    previous = node;
    const int local = c.gpus[gpus[i]].local;
    if (stamp_of_node[node] == stamp) {
      NodeCount& here = scratch[slot_of_node[node]];
      ++here.count;
      here.min_local = std::min(here.min_local, local);
      here.max_local = std::max(here.max_local, local);
    } else {
      stamp_of_node[node] = stamp;
      slot_of_node[node] = static_cast<int>(scratch.size());
      scratch.push_back({node, 1, local, local});
    }
  }
  const int distinct = static_cast<int>(scratch.size());
  if (distinct > 1 && runs != distinct) {  // price NCCL's ring (order_ring_by_node)
    std::vector<int> ring(gpus, gpus + count);
    order_ring_by_node(c, ring.data(), count);
    return group_cost(c, ring.data(), count, concurrent_per_node, wan_senders, concurrent_on_node, on_rail_of_gpu);
  }
  const NodeCount* counts = scratch.data();
  auto members_in = [&](int node) { return counts[slot_of_node[node]].count; };
  g.nodes = distinct;
  g.min_per_node = count;
  for (int j = 0; j < distinct; ++j) g.min_per_node = std::min(g.min_per_node, counts[j].count);
  g.bus_bandwidth_Bps = std::numeric_limits<double>::infinity();
  g.intra_bandwidth_Bps = std::numeric_limits<double>::infinity();
  g.inter_bandwidth_Bps = 0;
  double inter_min = std::numeric_limits<double>::infinity();
  bool shares_a_node = false;  // a node of the group also runs other groups' members at once
  double one_crossing = std::numeric_limits<double>::infinity();  // see GroupCost::node_shared
  for (int j = 0; j < distinct; ++j) {
    const NodeType& nt = c.node_types[c.nodes[counts[j].node].node_type];
    const NodeSenders concurrent = concurrent_of(counts[j].node);
    const int active = concurrent.senders > 0 ? concurrent.senders : nt.gpus_per_node;
    if (distinct > 1 && counts[j].count > 1) {  // (one member: min_per_node 1)
      // A ring that crosses node boundaries at one member (node_shared) does so on every node of
      // the group, including those it fills.
      shares_a_node = shares_a_node || counts[j].count < active;
      // One rail, or the node's share of this group when the node's groups outnumber its NICs.
      // The rail is shared by the boundary members of the node's other groups where GPUs share
      // rails: those groups (one per TP rank) end at neighbouring GPUs, which fill the rails in
      // order as nic_share assumes (sim/collective_flows.cpp crosses at that member too).
      // A group whose members on the node are whole rails (a block of consecutive GPUs that
      // starts and ends at rail boundaries, as the node's half of a TP group of a stage that
      // straddles nodes) shares no rail with another group: it crosses on a rail of its own
      // each way (the simulator routes each boundary member on its own GPU's rail). Filling the
      // rails in order put two stages' TP groups on one NIC of a DGX-1 box whose halves use
      // different NICs: 15.6 s for 9.8 s simulated (mixed-a100-v100, s66 engine survey).
      const int rails = std::max(1, rail_count(nt));
      const int per_rail = nt.gpus_per_node % rails == 0 ? nt.gpus_per_node / rails : 0;  // 0: uneven rails
      const NodeCount& m = counts[j];
      const bool own_rail = per_rail > 0 && m.max_local - m.min_local + 1 == m.count && m.min_local % per_rail == 0 &&
                            m.count % per_rail == 0;
      const int groups_here = own_rail ? 1 : (active + counts[j].count - 1) / counts[j].count;
      one_crossing = std::min({one_crossing, nic_share(c, counts[j].node, groups_here),
                               nic_share(c, counts[j].node, concurrent) * counts[j].count});
    }
    if (counts[j].count > 1 || distinct == 1) {
      g.intra_bandwidth_Bps = std::min(g.intra_bandwidth_Bps, intra_bandwidth_Bps(nt, counts[j].count));
      g.intra_latency_s = std::max(g.intra_latency_s, nt.intra.latency_s);
    }
  }
  if (count == 1) {
    g.bus_bandwidth_Bps = g.intra_bandwidth_Bps;
    return g;
  }
  struct HopKey {
    int type_a, type_b, zone_a, zone_b, members_a, members_b;
    NodeSenders concurrent_a, concurrent_b;
    bool same_node;
    bool operator==(const HopKey&) const = default;
  };
  HopKey last{};
  double crossing_latency_sum = 0, last_crossing_latency = -1;  // -1: the last hop stayed in a node
  int crossings = 0;
  // The ring's hop latencies, streamed: their sum, the fastest hop, the fastest consecutive pair
  // (GroupCost::ring_pass_latency_s).
  double hops_sum_s = 0, fastest_hop_s = std::numeric_limits<double>::infinity();
  double fastest_pair_s = std::numeric_limits<double>::infinity(), first_hop_s = 0, last_hop_s = 0;
  bool crosses_zones = false;
  const auto add_hop = [&](int i, double latency_s) {
    hops_sum_s += latency_s;
    fastest_hop_s = std::min(fastest_hop_s, latency_s);
    if (i == 0) first_hop_s = latency_s;
    else fastest_pair_s = std::min(fastest_pair_s, last_hop_s + latency_s);
    last_hop_s = latency_s;
  };
  for (int i = 0; i < count; ++i) {
    const int a = gpus[i], b = gpus[(i + 1) % count];
    const int na = c.gpus[a].node, nb = c.gpus[b].node;
    // A hop's figures depend only on the two nodes' types and zones, whether they are one node,
    // and the members in each: consecutive hops usually repeat the previous one.
    const HopKey key{c.nodes[na].node_type, c.nodes[nb].node_type, c.nodes[na].zone, c.nodes[nb].zone,
                     members_in(na), members_in(nb), senders_of_gpu(a), senders_of_gpu(b), na == nb};
    if (i > 0 && key == last) {
      add_hop(i, last_hop_s);
      if (last_crossing_latency >= 0) {
        crossing_latency_sum += last_crossing_latency;
        ++crossings;
      }
      continue;
    }
    last = key;
    last_crossing_latency = -1;
    const HopFigures h = hop(c, a, b, key.concurrent_a, key.concurrent_b, key.members_a, key.members_b, wan_of(na, nb));
    g.bus_bandwidth_Bps = std::min(g.bus_bandwidth_Bps, h.bandwidth_Bps);
    g.hop_latency_s = std::max(g.hop_latency_s, h.latency_s);
    add_hop(i, h.latency_s);
    g.host_staged = g.host_staged || h.staged;
    if (!h.intra) {
      // Per-member share (one NIC channel each), for the hierarchical algorithm's inter phase.
      const HopFigures one = hop(c, a, b, key.concurrent_a, key.concurrent_b, 1, 1, wan_of(na, nb));
      inter_min = std::min(inter_min, one.bandwidth_Bps);
      g.inter_latency_s = std::max(g.inter_latency_s, one.latency_s);
      last_crossing_latency = one.latency_s;
      crossing_latency_sum += one.latency_s;
      ++crossings;
      crosses_zones = crosses_zones || key.zone_a != key.zone_b;
    }
  }
  if (crossings > 0) g.inter_latency_mean_s = crossing_latency_sum / crossings;
  // Crossings of a WAN link: the hops a chunk passes, as a link's propagation delay is paid at
  // each crossing and the last chunk makes all of them but one hop. (Two 30 ms crossings of a
  // reduce-scatter of three counted once, 30 ms a bucket, where the simulator's flows take 50 ms:
  // engine_diff seed 1, 11.7% apart.) Crossings of one zone's fabric keep NCCL's tuning count
  // (ring_latency_s, at the crossings' mean latency), its model of its protocols' step overheads
  // there, which is also what NCCL picks its algorithm by: with the hops' count a TP-16 group over
  // two DGX nodes took the tree, which the simulator runs a third faster than the cost model
  // prices it (vTrain's l30 tp16 rows). Crossings of unequal NIC latencies in one zone took the
  // hops' count too until 2026-12-07, a jump: a ring got slower when one NIC got faster (1% on a
  // TP-16 ring over 100 GbE, the s64 monotonicity hunt).
  if (crossings > 0 && crosses_zones) {
    fastest_pair_s = std::min(fastest_pair_s, last_hop_s + first_hop_s);  // round the circle
    g.ring_pass_latency_s = hops_sum_s - fastest_hop_s;
    g.ring_allreduce_latency_s = 2 * hops_sum_s - fastest_pair_s;
  }
  if (distinct > 1) g.inter_bandwidth_Bps = inter_min;
  // Several members per node on nodes shared with concurrent groups: the ring crosses each
  // node boundary through one NIC (GroupCost::node_shared; SC'21 Table 1 tp2/tp4 rows).
  g.node_shared = distinct > 1 && g.min_per_node > 1 && shares_a_node;
  if (g.node_shared) g.bus_bandwidth_Bps = std::min(g.bus_bandwidth_Bps, one_crossing);
  if (!(g.intra_bandwidth_Bps < std::numeric_limits<double>::infinity())) g.intra_bandwidth_Bps = g.bus_bandwidth_Bps;
  return g;
}

double member_side_bandwidth_Bps(const Cluster& c, const int* gpus, int count, int i, NodeSenders own_node,
                                 bool one_crossing, const int* member_channels) {
  const int nx = c.gpus[gpus[i]].node;
  NodeTally x_node;  // the group's members on x's node (they cross together) and their channels
  for (int k = 0; k < count; ++k)
    if (c.gpus[gpus[k]].node == nx) {
      ++x_node.members;
      x_node.channels += member_channels ? std::max(1, member_channels[k]) : 1;
    }
  return member_side_bandwidth_Bps(c, gpus, count, i, own_node, one_crossing, x_node, member_channels != nullptr);
}

double member_side_bandwidth_Bps(const Cluster& c, const int* gpus, int count, int i, NodeSenders own_node,
                                 bool one_crossing, NodeTally x_node, bool by_channels) {
  const int x = gpus[i];
  const int nx = c.gpus[x].node;
  const NodeType& tx = c.node_types[c.nodes[nx].node_type];
  const int on_node = x_node.members;
  const int node_channels = x_node.channels;  // a member in several groups has a channel in each
  double bw = std::numeric_limits<double>::infinity();
  for (const int y : {gpus[(i + 1) % count], gpus[(i + count - 1) % count]}) {
    if (y == x) continue;
    const int ny = c.gpus[y].node;
    if (ny == nx) {
      bw = std::min(bw, intra_bandwidth_Bps(tx, std::max(2, on_node)));
      continue;
    }
    // Crossing at one member, the ring leaves the node through that member's NIC share alone;
    // a member in several groups at once (member_channels) owns a channel in each, and the
    // node's members of these groups together own the channels of their crossings: what the
    // member's groups may move side by side through the NICs is its node's members' channels.
    double side = node_side_Bps(c, nx, own_node,
                                by_channels ? node_channels : (one_crossing ? 1 : on_node));
    // ...but no more than those members' own rails: where each GPU has its NIC, a GPU's channels
    // share it (a node's single NIC is every GPU's rail, and this bound is then no bound).
    if (by_channels) side = std::min(side, node_side_Bps(c, nx, {1, 0}, on_node));
    const NodeType& ty = c.node_types[c.nodes[ny].node_type];
    if (tx.gpu.vendor != ty.gpu.vendor && !c.cross_vendor_rdma && tx.host_link_Bps > 0)
      side = std::min(side, tx.host_link_Bps * kHostLinkEfficiency * (one_crossing ? 1 : on_node));
    bw = std::min(bw, side);
  }
  return bw;
}

}  // namespace hetsim::models
