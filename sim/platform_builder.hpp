// SPDX-License-Identifier: Apache-2.0
// Builds the SimGrid platform of a Topology: zones -> nodes -> GPU hosts.
#pragma once
#include <vector>

#include "sim_topology.hpp"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace hetsim::sim {

/// The SimGrid objects of the simulated part of the cluster. An Engine must exist.
///
///   cluster (Full zone; routes zone<->zone over the WAN links, through zone gateways)
///     └ zone (Star zone: node gateway -> center over the node's uplink; a zone gateway router)
///         └ node (Full zone: GPU hosts; GPU<->GPU over the intra links, GPU<->gateway over host link + NIC)
///
/// Hosts run at 1 FLOP/s, so an execution of `t` FLOP takes t seconds: compute ops are
/// executed as their modelled durations.
class Platform {
 public:
  /// Builds only the nodes with node_used[n] (the rest of the cluster carries no simulated traffic).
  Platform(const Topology& topology, const std::vector<bool>& node_used);

  simgrid::s4u::Host* host(int gpu) const { return hosts_[gpu]; }
  simgrid::s4u::Link* link(int id) const { return links_[id]; }

 private:
  std::vector<simgrid::s4u::Host*> hosts_;  ///< by global GPU index; nullptr outside used nodes
  std::vector<simgrid::s4u::Link*> links_;  ///< by topology link id; nullptr when not built
};

/// The links the platform's routes use (intra-node paths, host links and NICs, uplinks of the
/// used nodes, WAN links), each once, in the order Platform meets them. Platform creates them all
/// in its root zone before any other zone: SimGrid 3.32 checks a new link's name against every
/// zone, so creating them inside the node zones cost O(nodes^2).
std::vector<int> links_in_route_order(const Topology& topology, const std::vector<bool>& node_used);

/// Host speed: 1 FLOP/s makes an execution's FLOP count equal its duration in seconds.
inline constexpr double kHostSpeedFlops = 1.0;

}  // namespace hetsim::sim
