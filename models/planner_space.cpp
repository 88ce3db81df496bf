// SPDX-License-Identifier: Apache-2.0
// The planner's search space: pools, valid TP degrees, schedule memory factors, link estimates.
#include "planner_space.hpp"

#include <algorithm>
#include <limits>
#include <set>

namespace hetsim::models::planner {

std::vector<Pool> make_pools(const Cluster& cluster) {
  std::vector<Pool> pools;
  std::map<std::pair<int, int>, int> index;  // (zone, node type) -> pool
  for (int n = 0; n < static_cast<int>(cluster.nodes.size()); ++n) {
    const Node& node = cluster.nodes[n];
    const auto key = std::pair(node.zone, node.node_type);
    auto it = index.find(key);
    if (it == index.end()) {
      Pool p;
      p.zone = node.zone;
      p.node_type = node.node_type;
      p.gpus_per_node = cluster.node_types[node.node_type].gpus_per_node;
      p.label = cluster.zones[node.zone].name + "/" + cluster.node_types[node.node_type].name;
      it = index.emplace(key, static_cast<int>(pools.size())).first;
      pools.push_back(std::move(p));
    }
    pools[it->second].nodes.push_back(n);
  }
  return pools;
}

std::vector<int> valid_tp_degrees(const ModelSpec& m, int gpus_per_node, const std::vector<int>& wanted) {
  std::vector<int> out;
  for (int tp : wanted) {
    if (tp < 1 || tp > gpus_per_node || gpus_per_node % tp != 0) continue;
    if (m.heads % tp != 0 || m.ffn_hidden % tp != 0) continue;
    if (m.kv_heads % tp != 0 && tp % m.kv_heads != 0) continue;
    out.push_back(tp);
  }
  return out;
}

double inflight_factor(int s, int stages, int micro_batches, int interleave) {
  if (interleave <= 1) return std::min(stages - s, micro_batches);
  const double chunks = 2.0 * (stages - s - 1) + (interleave - 1.0) * stages + 1.0;
  return std::min(chunks, static_cast<double>(micro_batches) * interleave) / interleave;
}

double zero_sharded_fraction(int zero) {
  switch (zero) {
    case 0: return 0.0;
    case 1: return 12.0 / 16.0;
    case 2: return 14.0 / 16.0;
    default: return 1.0;
  }
}

namespace {

bool host_staged(const Cluster& c, int a, int b) {
  return !c.cross_vendor_rdma && c.gpu_type(a).vendor != c.gpu_type(b).vendor;
}

/// Share of its node's NIC bandwidth that a group of `tp` GPUs gets when every GPU of the
/// node communicates at once (NICs are shared by the node's GPUs; DESIGN.md "shared NICs").
double nic_share_Bps(const Cluster& c, int gpu, int tp) {
  const NodeType& t = c.node_type_of_gpu(gpu);
  const double share = std::min(1.0, static_cast<double>(tp) / std::max(1, t.gpus_per_node));
  const double oversub = std::max(1.0, c.zones[c.zone_of_gpu(gpu)].fabric.oversubscription);
  return t.nics.node_bandwidth_Bps() * share / oversub;
}

}  // namespace

double p2p_estimate_s(const Cluster& c, int from, int tp_from, int to, int tp_to, double bytes, int sharing) {
  if (bytes <= 0) return 0;
  const NodeType& ta = c.node_type_of_gpu(from);
  const NodeType& tb = c.node_type_of_gpu(to);
  double time_s = 0;
  if (c.node_of_gpu(from) == c.node_of_gpu(to)) {
    return ta.intra.latency_s + bytes / std::max(1.0, ta.intra.bandwidth_Bps);
  }
  double bw = std::min(nic_share_Bps(c, from, tp_from), nic_share_Bps(c, to, tp_to));
  double latency_s = ta.nics.latency_s + tb.nics.latency_s;
  const int za = c.zone_of_gpu(from), zb = c.zone_of_gpu(to);
  if (za == zb) {
    latency_s += c.zones[za].fabric.latency_s;
  } else if (const InterZoneLink* link = c.link_between(za, zb)) {
    bw = std::min(bw, link->bandwidth_Bps / std::max(1, sharing));
    latency_s += link->latency_s;
  } else {
    return std::numeric_limits<double>::infinity();  // zones without a link cannot talk
  }
  time_s = latency_s + bytes / std::max(1.0, bw);
  if (host_staged(c, from, to)) time_s += bytes / std::max(1.0, ta.host_link_Bps) + bytes / std::max(1.0, tb.host_link_Bps);
  return time_s;
}

double allreduce_estimate_s(const Cluster& c, const std::vector<int>& members, double bytes, int concurrent_rings) {
  const int n = static_cast<int>(members.size());
  if (n <= 1 || bytes <= 0) return 0;
  std::set<int> nodes, zones;
  std::set<Vendor> vendors;
  for (int g : members) {
    nodes.insert(c.node_of_gpu(g));
    zones.insert(c.zone_of_gpu(g));
    vendors.insert(c.gpu_type(g).vendor);
  }
  double bw = std::numeric_limits<double>::infinity();
  double latency_s = 0;
  for (int g : members) {
    const NodeType& t = c.node_type_of_gpu(g);
    if (nodes.size() == 1) {
      bw = std::min(bw, t.intra.bandwidth_Bps);
      latency_s = std::max(latency_s, t.intra.latency_s);
    } else {
      bw = std::min(bw, nic_share_Bps(c, g, 1));
      latency_s = std::max(latency_s, 2 * t.nics.latency_s + c.zones[c.zone_of_gpu(g)].fabric.latency_s);
    }
    if (vendors.size() > 1 && !c.cross_vendor_rdma) bw = std::min(bw, t.host_link_Bps / 2);  // down and up again
  }
  if (zones.size() > 1) {
    // A ring over z zones crosses z inter-zone links; every concurrent ring shares them.
    for (int za : zones) {
      for (int zb : zones) {
        if (za >= zb) continue;
        const InterZoneLink* link = c.link_between(za, zb);
        if (link == nullptr) return std::numeric_limits<double>::infinity();
        bw = std::min(bw, link->bandwidth_Bps / std::max(1, concurrent_rings));
        latency_s = std::max(latency_s, link->latency_s);
      }
    }
  }
  return 2.0 * (n - 1) / n * bytes / std::max(1.0, bw) + 2.0 * (n - 1) * latency_s;
}

double nodes_price_per_hour(const Cluster& c, const std::vector<int>& gpus, bool spot) {
  std::set<int> nodes;
  for (int g : gpus) nodes.insert(c.node_of_gpu(g));
  double total = 0;
  for (int n : nodes) {
    const NodeType& t = c.node_types[c.nodes[n].node_type];
    total += (spot && t.spot_price_per_hour) ? *t.spot_price_per_hour : t.price_per_hour;
  }
  return total;
}

}  // namespace hetsim::models::planner
