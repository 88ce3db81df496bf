// SPDX-License-Identifier: Apache-2.0
// The points of a sweep's grid and the cluster of each point (models/sweep_spec.hpp).
#include <algorithm>

#include "sweep_spec.hpp"

namespace hetsim::models {

std::vector<int> sweep_point(const SweepSpec& spec, long index) {
  std::vector<int> choice(spec.axes.size(), 0);
  for (size_t a = spec.axes.size(); a-- > 0;) {
    const long n = static_cast<long>(spec.axes[a].labels.size());
    choice[a] = static_cast<int>(index % n);
    index /= n;
  }
  return choice;
}

namespace {

bool is_link_axis(SweepAxisKind k) {
  return k == SweepAxisKind::kNicBandwidth || k == SweepAxisKind::kIntraBandwidth || k == SweepAxisKind::kLinkBandwidth;
}

/// Sets one axis's value on a cluster (before finalize()). A link value is the same kind of
/// figure as the base cluster file's: a line rate (the cost model applies its link efficiency)
/// unless that file marks it measured; a profile's achieved figure, applied before, is replaced
/// by the swept line rate. (Clearing the flag made the cluster's own measured value, swept, 7% slower.)
void apply_axis(Cluster& c, const Cluster& base, const SweepSpec& spec, const SweepAxis& a, int v,
                const Catalog& catalog) {
  if (a.kind == SweepAxisKind::kLinkBandwidth) {
    for (InterZoneLink& l : c.links) {
      const std::string& za = c.zones[l.zone_a].name;
      const std::string& zb = c.zones[l.zone_b].name;
      if ((za == a.link_a && zb == a.link_b) || (za == a.link_b && zb == a.link_a)) l.bandwidth_Bps = a.values[v];
    }
    return;
  }
  const int t = c.node_type_index(a.node_type);
  if (t < 0) return;  // check_sweep_spec reports it
  NodeType& nt = c.node_types[t];
  switch (a.kind) {
    case SweepAxisKind::kNodes:
      for (Zone& z : c.zones)
        if (a.zone.empty() || z.name == a.zone)
          for (NodeGroup& g : z.groups)
            if (g.node_type == t) g.count = static_cast<int>(a.values[v]);
      break;
    case SweepAxisKind::kGpu:
      nt.gpu = catalog.by_name(a.labels[v]);
      // A host link the file left to the GPU type is the new GPU's, as a cluster file naming
      // that GPU would have it (it kept the old one's: s68 consistency hunt).
      if (!nt.host_link_given) nt.host_link_Bps = default_host_link_Bps(nt.gpu);
      break;
    case SweepAxisKind::kNicBandwidth:
      nt.nics.bandwidth_Bps = a.values[v];
      nt.nics.measured = base.node_types[t].nics.measured;
      break;
    case SweepAxisKind::kIntraBandwidth:
      nt.intra.bandwidth_Bps = a.values[v];
      nt.intra.measured = base.node_types[t].intra.measured;
      break;
    case SweepAxisKind::kPrice:
      if (spec.spot && nt.spot_price_per_hour) nt.spot_price_per_hour = a.values[v];
      else nt.price_per_hour = a.values[v];
      break;
    case SweepAxisKind::kPreemptionRate: nt.preemption_rate_per_hour = a.values[v]; break;
    case SweepAxisKind::kLinkBandwidth: break;
  }
}

}  // namespace

Cluster sweep_cluster(const SweepSpec& spec, const Cluster& base, const std::vector<int>& point,
                      const Catalog& catalog, const Profile* profile) {
  Cluster c = base;
  for (size_t i = 0; i < spec.axes.size(); ++i) apply_axis(c, base, spec, spec.axes[i], point[i], catalog);
  if (profile != nullptr) {
    apply_profile(c, *profile);
    for (size_t i = 0; i < spec.axes.size(); ++i)
      if (is_link_axis(spec.axes[i].kind)) apply_axis(c, base, spec, spec.axes[i], point[i], catalog);
  }
  for (Zone& z : c.zones)
    std::erase_if(z.groups, [](const NodeGroup& g) { return g.count <= 0; });
  c.finalize();
  return c;
}

}  // namespace hetsim::models
