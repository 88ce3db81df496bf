// SPDX-License-Identifier: Apache-2.0
// The simulator's network as plain data: every link with its figures, and the path of
// links a transfer between two GPUs takes. The SimGrid platform is built from it
// (platform_builder.cpp), and folding and link accounting read it, so they agree by
// construction. No SimGrid here.
//
//   GPU ─intra_up/down─ [node switch] ─intra_up/down─ GPU          (same node)
//   GPU ─intra_up─ pair(a→b) ─intra_down─ GPU                       (same node, mesh fabric)
//   GPU ─host_up─ NIC_up ─ uplink_up ─ [zone fabric] ─ uplink_down ─ NIC_down ─ host_down ─ GPU
//                               └─ zone gateway ─ WAN(a→b) ─ zone gateway ┘   (other zone)
//
// Every physical link is modelled as two independent one-way links (full duplex).
#pragma once
#include <string>
#include <vector>

#include "cluster.hpp"

namespace hetsim::sim {

enum class LinkKind { kIntra, kHostLink, kNic, kZoneUplink, kWan };
const char* to_string(LinkKind k);

/// One one-way link.
struct TopoLink {
  std::string name;      ///< unique, e.g. "us-east/dgx-a100[0]/nic[1]/up"
  LinkKind kind = LinkKind::kIntra;
  double bandwidth_Bps = 0;
  double latency_s = 0;
};

/// The links of a node, a zone and the WAN, indexed by Topology.
class Topology {
 public:
  /// The cluster must be finalized (nodes and gpus derived).
  explicit Topology(const models::Cluster& cluster);

  const models::Cluster& get_cluster() const { return *cluster_; }
  const std::vector<TopoLink>& get_links() const { return links_; }
  const TopoLink& get_link(int id) const { return links_[id]; }

  /// Ordered one-way links a transfer from GPU a to GPU b crosses (empty when a == b).
  /// Throws std::runtime_error when no route exists (zones without a WAN link, a node without NICs).
  std::vector<int> path(int gpu_a, int gpu_b) const;
  /// Sum of the path's latencies and the smallest bandwidth on it (the flow's rate when alone).
  double path_latency_s(int gpu_a, int gpu_b) const;
  double path_bandwidth_Bps(int gpu_a, int gpu_b) const;

  // Link ids per element (-1 when the element has no such link).
  int intra_up(int gpu) const { return gpu_links_[gpu].intra_up; }
  int intra_down(int gpu) const { return gpu_links_[gpu].intra_down; }
  int host_up(int gpu) const { return gpu_links_[gpu].host_up; }
  int host_down(int gpu) const { return gpu_links_[gpu].host_down; }
  int nic_up(int gpu) const { return gpu_links_[gpu].nic_up; }
  int nic_down(int gpu) const { return gpu_links_[gpu].nic_down; }
  int uplink_up(int node) const { return node_links_[node].uplink_up; }
  int uplink_down(int node) const { return node_links_[node].uplink_down; }
  /// The one-way WAN link from zone a to zone b, or -1.
  int wan(int zone_a, int zone_b) const;
  /// The rail (index inside its node) that GPU `gpu` uses (models::rail_of_gpu, as the cost model).
  int nic_index(int gpu) const;


 private:
  struct GpuLinks { int intra_up = -1, intra_down = -1, host_up = -1, host_down = -1, nic_up = -1, nic_down = -1; };
  struct NodeLinks {
    int uplink_up = -1, uplink_down = -1;
    std::vector<int> nic_up, nic_down;
    /// Mesh fabrics (models::IntraFabric::mesh): the direct link local GPU i -> j at [i * gpus + j],
    /// one link's share of the GPU's total; the GPU's intra_up/down keep the total. Empty otherwise.
    std::vector<int> pair;
  };
  struct WanLink { int zone_a, zone_b, link; };
  int add_link(std::string name, LinkKind kind, double bandwidth_Bps, double latency_s);

  const models::Cluster* cluster_;
  std::vector<TopoLink> links_;
  std::vector<GpuLinks> gpu_links_;
  std::vector<NodeLinks> node_links_;
  std::vector<WanLink> wan_links_;
};

}  // namespace hetsim::sim
