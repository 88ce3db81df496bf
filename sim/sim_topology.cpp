// SPDX-License-Identifier: Apache-2.0
// Links and paths of the simulated network (see sim_topology.hpp for the picture).
#include "sim_topology.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "topology.hpp"  // models: link_efficiency, the figures both engines share

namespace hetsim::sim {

const char* to_string(LinkKind k) {
  switch (k) {
    case LinkKind::kIntra: return "intra";
    case LinkKind::kHostLink: return "host";
    case LinkKind::kNic: return "nic";
    case LinkKind::kZoneUplink: return "uplink";
    case LinkKind::kWan: return "wan";
  }
  return "?";
}

int Topology::add_link(std::string name, LinkKind kind, double bandwidth_Bps, double latency_s) {
  links_.push_back(TopoLink{std::move(name), kind, bandwidth_Bps, latency_s});
  return static_cast<int>(links_.size()) - 1;
}

// Link figures are the cost model's (models/topology.hpp, "both engines start from the same
// link figures"): achieved bandwidth = models::achieved_bandwidth_Bps (nominal x link_efficiency,
// or a measured figure as is); a path
// between nodes has latency NIC(a) + fabric + NIC(b) (+ WAN), inside a node the intra latency.
// The intra and fabric figures are GPU-to-GPU, so each end carries half of them; a NIC's
// latency is its own end's. The GPU-host (PCIe) link is on the network path only without
// GPUDirect RDMA (with it the NIC reads GPU memory through the PCIe switch).
Topology::Topology(const models::Cluster& cluster) : cluster_(&cluster) {
  gpu_links_.resize(cluster.gpus.size());
  node_links_.resize(cluster.nodes.size());
  for (int n = 0; n < static_cast<int>(cluster.nodes.size()); ++n) {
    const auto& node = cluster.nodes[n];
    const auto& type = cluster.node_types[node.node_type];
    const auto& zone = cluster.zones[node.zone];
    const std::string base = cluster.node_name(n);
    auto& nl = node_links_[n];
    const double intra_bw = models::achieved_bandwidth_Bps(type.intra);
    const double host_bw = type.host_link_Bps * models::kHostLinkEfficiency;
    // One link per rail (nic_index): a NIC, or, on nodes with more NICs than GPUs, the NICs of
    // one GPU's rail together (models::nic_share gives a GPU its rail's NICs).
    const int rails = models::rail_count(type);
    for (int i = 0; i < rails; ++i) {
      double bw = models::achieved_bandwidth_Bps(type.nics);
      // A switch fabric's per-port cap limits each NIC port.
      if (zone.fabric.kind == models::ZoneFabricKind::kSwitch && zone.fabric.bandwidth_Bps > 0)
        bw = std::min(bw, zone.fabric.bandwidth_Bps);
      bw *= static_cast<double>(type.nics.count) / rails;
      const std::string nic = base + (rails < type.nics.count ? "/rail[" : "/nic[") + std::to_string(i) + "]";
      nl.nic_up.push_back(add_link(nic + "/up", LinkKind::kNic, bw, type.nics.latency_s));
      nl.nic_down.push_back(add_link(nic + "/down", LinkKind::kNic, bw, type.nics.latency_s));
    }
    if (type.nics.count > 0) {
      // Fat tree: the node's share of the bisection is its NIC bandwidth / oversubscription
      // (Leiserson 1985; Al-Fares et al., SIGCOMM'08). A switch adds no cap beyond its ports.
      double up_bw = type.nics.count * models::achieved_bandwidth_Bps(type.nics);
      if (zone.fabric.kind == models::ZoneFabricKind::kFatTree && zone.fabric.oversubscription > 0)
        up_bw /= zone.fabric.oversubscription;
      nl.uplink_up = add_link(base + "/uplink/up", LinkKind::kZoneUplink, up_bw, zone.fabric.latency_s / 2);
      nl.uplink_down = add_link(base + "/uplink/down", LinkKind::kZoneUplink, up_bw, zone.fabric.latency_s / 2);
    }
    for (int l = 0; l < type.gpus_per_node; ++l) {
      const int g = node.first_gpu + l;
      auto& gl = gpu_links_[g];
      const std::string gpu = base + "/gpu[" + std::to_string(l) + "]";
      if (type.gpus_per_node > 1) {
        gl.intra_up = add_link(gpu + "/intra/up", LinkKind::kIntra, intra_bw, type.intra.latency_s / 2);
        gl.intra_down = add_link(gpu + "/intra/down", LinkKind::kIntra, intra_bw, type.intra.latency_s / 2);
      }
      if (host_bw > 0 && !type.nics.gpu_direct) {
        gl.host_up = add_link(gpu + "/host/up", LinkKind::kHostLink, host_bw, 0);
        gl.host_down = add_link(gpu + "/host/down", LinkKind::kHostLink, host_bw, 0);
      }
      if (type.nics.count > 0) {
        gl.nic_up = nl.nic_up[nic_index(g)];
        gl.nic_down = nl.nic_down[nic_index(g)];
      }
    }
    const int gpus = type.gpus_per_node;
    if (type.intra.mesh && gpus > 2) {
      nl.pair.assign(static_cast<std::size_t>(gpus) * gpus, -1);
      const double link_bw = models::intra_bandwidth_Bps(type, 2);
      for (int i = 0; i < gpus; ++i)
        for (int j = 0; j < gpus; ++j)
          if (i != j)
            nl.pair[i * gpus + j] = add_link(base + "/gpu[" + std::to_string(i) + "]->gpu[" + std::to_string(j) + "]",
                                             LinkKind::kIntra, link_bw, 0);
    }
  }
  for (const auto& l : cluster.links) {
    const auto& za = cluster.zones[l.zone_a].name;
    const auto& zb = cluster.zones[l.zone_b].name;
    const double wan_bw = l.bandwidth_Bps * models::kWanLinkEfficiency;
    wan_links_.push_back({l.zone_a, l.zone_b, add_link("wan/" + za + "->" + zb, LinkKind::kWan, wan_bw, l.latency_s)});
    wan_links_.push_back({l.zone_b, l.zone_a, add_link("wan/" + zb + "->" + za, LinkKind::kWan, wan_bw, l.latency_s)});
  }
}

int Topology::nic_index(int gpu) const { return models::rail_of_gpu(*cluster_, gpu); }

int Topology::wan(int zone_a, int zone_b) const {
  for (const auto& w : wan_links_)
    if (w.zone_a == zone_a && w.zone_b == zone_b) return w.link;
  return -1;
}

std::vector<int> Topology::path(int a, int b) const {
  std::vector<int> out;
  if (a == b) return out;
  const int na = cluster_->gpus[a].node, nb = cluster_->gpus[b].node;
  if (na == nb) {
    const auto& pair = node_links_[na].pair;
    if (pair.empty()) {
      out = {intra_up(a), intra_down(b)};
    } else {
      const int gpus = cluster_->node_types[cluster_->nodes[na].node_type].gpus_per_node;
      out = {intra_up(a), pair[cluster_->gpus[a].local * gpus + cluster_->gpus[b].local], intra_down(b)};
    }
    return out;
  }
  const auto& ga = gpu_links_[a];
  const auto& gb = gpu_links_[b];
  if (ga.nic_up < 0 || gb.nic_down < 0)
    throw std::runtime_error("no route between GPU " + std::to_string(a) + " and GPU " + std::to_string(b) +
                             ": a node without NICs");
  if (ga.host_up >= 0) out.push_back(ga.host_up);
  out.push_back(ga.nic_up);
  out.push_back(node_links_[na].uplink_up);
  const int za = cluster_->nodes[na].zone, zb = cluster_->nodes[nb].zone;
  if (za != zb) {
    const int w = wan(za, zb);
    if (w < 0)
      throw std::runtime_error("no route between zones '" + cluster_->zones[za].name + "' and '" +
                               cluster_->zones[zb].name + "' (the cluster declares no link between them)");
    out.push_back(w);
  }
  out.push_back(node_links_[nb].uplink_down);
  out.push_back(gb.nic_down);
  if (gb.host_down >= 0) out.push_back(gb.host_down);
  return out;
}

double Topology::path_latency_s(int a, int b) const {
  double sum = 0;
  for (int l : path(a, b)) sum += links_[l].latency_s;
  return sum + models::host_staging(*cluster_, a, b).extra_latency_s;
}

double Topology::path_bandwidth_Bps(int a, int b) const {
  double bw = std::numeric_limits<double>::infinity();
  for (int l : path(a, b)) bw = std::min(bw, links_[l].bandwidth_Bps);
  const double staged_Bps = models::host_staging(*cluster_, a, b).rate_Bps;
  return staged_Bps > 0 ? std::min(bw, staged_Bps) : bw;
}

}  // namespace hetsim::sim
