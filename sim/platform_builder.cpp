// SPDX-License-Identifier: Apache-2.0
// SimGrid 3.32 platform from the Topology (one of the few files that call SimGrid).
#include "platform_builder.hpp"

#include <memory>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace sg4 = simgrid::s4u;

namespace hetsim::sim {
namespace {

/// The latency every route carries in SimGrid (see route_latency_tokens): small enough to stay
/// below any delay that matters, large enough that token x factor keeps the real latency exact.
constexpr double kRouteLatencyToken_s = 1e-9;

sg4::Link* make_link(sg4::NetZone* zone, const TopoLink& l, double latency_s) {
  // SHARED: max-min fair sharing among the flows crossing it (one direction; see sim_topology.hpp).
  return zone->create_link(l.name, l.bandwidth_Bps)
      ->set_latency(latency_s)
      ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
      ->seal();
}

/// Which links carry SimGrid's latency token: the first link of every route, and only those.
///
/// Why: SimGrid's CM02 weights each flow's share of a link by its route's latency (TCP's RTT
/// unfairness, Casanova & Marchal, INRIA RR-4596, 2002: a flow's penalty is its route latency), so
/// a 30 ms WAN flow sharing a GPU's NIC with flows inside its zone got a few thousandths of it
/// until they were done (a ZeRO-1 all-gather of 0.77 GB across two zones took 0.25 s instead of
/// 0.15 s). The cost model shares a link equally among its flows (max-min fairness, Bertsekas &
/// Gallager, "Data Networks" §6.5.2), as RDMA NICs arbitrate their queue pairs. So every route
/// carries the same token latency, on its source GPU's own egress link (intra/up inside a node;
/// host/up, or without it the rail's nic/up, out of it: links no route meets after its first),
/// and the latency-factor callback turns the token into the route's real latency.
std::vector<bool> route_latency_tokens(const Topology& topology, const std::vector<bool>& node_used) {
  const auto& cluster = topology.get_cluster();
  std::vector<bool> token(topology.get_links().size(), false);
  for (int n = 0; n < static_cast<int>(cluster.nodes.size()); ++n) {
    if (!node_used[n]) continue;
    const auto& node = cluster.nodes[n];
    const auto& type = cluster.node_types[node.node_type];
    for (int i = 0; i < type.gpus_per_node; ++i) {
      const int g = node.first_gpu + i;
      if (topology.intra_up(g) >= 0) token[topology.intra_up(g)] = true;
      const int out = topology.host_up(g) >= 0 ? topology.host_up(g) : topology.nic_up(g);
      if (out >= 0) token[out] = true;
    }
  }
  return token;
}

}  // namespace

std::vector<int> links_in_route_order(const Topology& topology, const std::vector<bool>& node_used) {
  const auto& cluster = topology.get_cluster();
  std::vector<int> order;
  std::vector<bool> seen(topology.get_links().size(), false);
  const auto use = [&](int id) {
    if (id >= 0 && !seen[id]) {
      seen[id] = true;
      order.push_back(id);
    }
  };
  for (int n = 0; n < static_cast<int>(cluster.nodes.size()); ++n) {
    if (!node_used[n]) continue;
    const auto& node = cluster.nodes[n];
    const auto& type = cluster.node_types[node.node_type];
    for (int i = 0; i < type.gpus_per_node; ++i) {
      const int gi = node.first_gpu + i;
      for (int j = 0; j < type.gpus_per_node; ++j)
        if (i != j)
          for (int l : topology.path(gi, node.first_gpu + j)) use(l);
      if (type.nics.count > 0) {
        use(topology.host_up(gi));
        use(topology.nic_up(gi));
        use(topology.nic_down(gi));
        use(topology.host_down(gi));
      }
    }
    if (type.nics.count > 0) {
      use(topology.uplink_up(n));
      use(topology.uplink_down(n));
    }
  }
  for (std::size_t a = 0; a < cluster.zones.size(); ++a)
    for (std::size_t b = 0; b < cluster.zones.size(); ++b)
      if (a != b) use(topology.wan(static_cast<int>(a), static_cast<int>(b)));
  return order;
}

Platform::Platform(const Topology& topology, const std::vector<bool>& node_used) {
  const auto& cluster = topology.get_cluster();
  hosts_.assign(cluster.gpus.size(), nullptr);
  links_.assign(topology.get_links().size(), nullptr);
  const std::vector<bool> token = route_latency_tokens(topology, node_used);
  auto latency_of = std::make_shared<std::unordered_map<const sg4::Link*, double>>();
  auto link = [&](sg4::NetZone* zone, int id) {
    if (links_[id] == nullptr) {
      links_[id] = make_link(zone, topology.get_link(id), token[id] ? kRouteLatencyToken_s : 0.0);
      (*latency_of)[links_[id]] = topology.get_link(id).latency_s;
    }
    return links_[id];
  };

  auto* root = sg4::create_full_zone("cluster");
  // Every link is created in the root zone before any other zone exists. SimGrid 3.32 checks a
  // new link's name against every zone of the platform (NetZoneImpl::get_link_by_name_or_null
  // walks the zone tree), so links created inside the node zones cost O(zones) each and the
  // platform O(nodes^2): 17 s of a 39 s run on 1536 nodes (192 unfolded replicas, TP8 PP8).
  // Routes refer to links by pointer, whichever zone holds them; the creation order is the one
  // the zones below use them in, as before.
  for (int id : links_in_route_order(topology, node_used)) link(root, id);
  std::vector<sg4::NetZone*> zone_nz(cluster.zones.size(), nullptr);
  std::vector<simgrid::kernel::routing::NetPoint*> zone_gw(cluster.zones.size(), nullptr);
  for (std::size_t z = 0; z < cluster.zones.size(); ++z) {
    auto* zone = sg4::create_star_zone(cluster.zones[z].name);
    zone->set_parent(root);
    zone_nz[z] = zone;
    // The zone's WAN gateway lives in a tiny child zone of its own: SimGrid 3.32 cannot route
    // from a host inside a node zone to a router that sits directly in the star (it looks the
    // host up in the star's routes; TOOLCHAIN.md §4 "zone->router gotcha").
    auto* gw_zone = sg4::create_full_zone(cluster.zones[z].name + "/gateway-zone");
    gw_zone->set_parent(zone);
    zone_gw[z] = gw_zone->create_router(cluster.zones[z].name + "/gateway");
    gw_zone->seal();
    zone->add_route(gw_zone->get_netpoint(), nullptr, zone_gw[z], nullptr, {}, false);
    zone->add_route(nullptr, gw_zone->get_netpoint(), nullptr, zone_gw[z], {}, false);
  }

  for (int n = 0; n < static_cast<int>(cluster.nodes.size()); ++n) {
    if (!node_used[n]) continue;
    const auto& node = cluster.nodes[n];
    const auto& type = cluster.node_types[node.node_type];
    auto* zone = zone_nz[node.zone];
    const std::string name = cluster.node_name(n);
    auto* nz = sg4::create_full_zone(name);
    nz->set_parent(zone);
    auto* gw = nz->create_router(name + "/gateway");
    std::vector<sg4::Host*> local;
    for (int l = 0; l < type.gpus_per_node; ++l) {
      auto* h = nz->create_host(name + "/gpu[" + std::to_string(l) + "]", kHostSpeedFlops)->seal();
      hosts_[node.first_gpu + l] = h;
      local.push_back(h);
    }
    for (int i = 0; i < type.gpus_per_node; ++i) {
      const int gi = node.first_gpu + i;
      for (int j = 0; j < type.gpus_per_node; ++j) {
        if (i == j) continue;
        const int gj = node.first_gpu + j;
        std::vector<sg4::LinkInRoute> route;
        for (int l : topology.path(gi, gj)) route.emplace_back(link(nz, l));
        nz->add_route(local[i]->get_netpoint(), local[j]->get_netpoint(), nullptr, nullptr, route, false);
      }
      if (type.nics.count > 0) {
        std::vector<sg4::LinkInRoute> out, in;
        if (topology.host_up(gi) >= 0) out.emplace_back(link(nz, topology.host_up(gi)));
        out.emplace_back(link(nz, topology.nic_up(gi)));
        in.emplace_back(link(nz, topology.nic_down(gi)));
        if (topology.host_down(gi) >= 0) in.emplace_back(link(nz, topology.host_down(gi)));
        nz->add_route(local[i]->get_netpoint(), gw, nullptr, nullptr, out, false);
        nz->add_route(gw, local[i]->get_netpoint(), nullptr, nullptr, in, false);
      }
    }
    nz->seal();
    if (type.nics.count > 0) {
      zone->add_route(nz->get_netpoint(), nullptr, gw, nullptr, {sg4::LinkInRoute(link(zone, topology.uplink_up(n)))}, false);
      zone->add_route(nullptr, nz->get_netpoint(), nullptr, gw, {sg4::LinkInRoute(link(zone, topology.uplink_down(n)))}, false);
    }
  }
  for (std::size_t a = 0; a < cluster.zones.size(); ++a) {
    zone_nz[a]->seal();
  }
  for (std::size_t a = 0; a < cluster.zones.size(); ++a)
    for (std::size_t b = 0; b < cluster.zones.size(); ++b) {
      if (a == b) continue;
      const int w = topology.wan(static_cast<int>(a), static_cast<int>(b));
      if (w < 0) continue;
      root->add_route(zone_nz[a]->get_netpoint(), zone_nz[b]->get_netpoint(), zone_gw[a], zone_gw[b],
                      {sg4::LinkInRoute(link(root, w))}, false);
    }
  root->seal();
  // The token of every route becomes its links' real latency (route_latency_tokens); a route of
  // no latency keeps the token, so that SimGrid gives it the same penalty as the others.
  root->get_network_model()->set_lat_factor_cb(
      [latency_of](double, const sg4::Host*, const sg4::Host*, const std::vector<sg4::Link*>& route,
                   const std::unordered_set<sg4::NetZone*>&) {
        double latency_s = 0;
        for (const sg4::Link* l : route)  // SimGrid's own loopback (a host to itself) is not ours
          if (const auto it = latency_of->find(l); it != latency_of->end()) latency_s += it->second;
        return latency_s > kRouteLatencyToken_s ? latency_s / kRouteLatencyToken_s : 1.0;
      });
}

}  // namespace hetsim::sim
