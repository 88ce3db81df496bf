// SPDX-License-Identifier: Apache-2.0
// Loader of `kind: cluster` files (docs/inputs.md): node types, zones, inter-zone links.
#include <algorithm>
#include <cctype>
#include <map>

#include "loader_common.hpp"

namespace hetsim::models {
namespace {

/// Why `name` cannot name a zone or node type in a GPU selector ("zone/type[i]/gpu[a-b]"), or
/// "" when it can: the selector splits at '/' and '[', and reads "gpu[...]" as global indices.
std::string selector_name_problem(const std::string& name) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  if (!plain)
    return "name '" + name + "' cannot be written in a GPU selector (expected letters, digits, '_', '-' or '.')";
  if (name == "gpu") return "name 'gpu' is the GPU part of a selector (expected another name)";
  return {};
}

using detail::set_if;


const EnumTable<IntraFabricKind>& intra_table() {
  static const EnumTable<IntraFabricKind> t = {{"nvswitch", IntraFabricKind::kNvswitch},
                                               {"nvlink", IntraFabricKind::kNvlink},
                                               {"xgmi", IntraFabricKind::kXgmi},
                                               {"pcie", IntraFabricKind::kPcie}};
  return t;
}

const EnumTable<NicKind>& nic_table() {
  static const EnumTable<NicKind> t = {
      {"infiniband", NicKind::kInfiniband}, {"roce", NicKind::kRoce}, {"ethernet", NicKind::kEthernet}};
  return t;
}

const EnumTable<ZoneFabricKind>& zone_fabric_table() {
  static const EnumTable<ZoneFabricKind> t = {{"fat-tree", ZoneFabricKind::kFatTree},
                                              {"switch", ZoneFabricKind::kSwitch}};
  return t;
}

constexpr const char* kBandwidth = "a bandwidth such as \"300GB/s\"";
constexpr const char* kTime = "a time such as \"2us\"";
constexpr const char* kPrice = "a price such as \"$32.77/h\"";
constexpr size_t kListedPerZone = 3;  ///< missing inter-zone links named one per error, per zone

class ClusterReader {
 public:
  ClusterReader(DiagnosticSink& sink, const Catalog& catalog) : sink_(sink), catalog_(catalog) {}

  Cluster read(MapReader& root) {
    set_if(cluster_.name, root.get_string("name", Need::kRequired));
    set_if(cluster_.cross_vendor_rdma, root.get_bool("cross_vendor_rdma", Need::kOptional));
    if (auto entries = root.get_entries("node_types", Need::kRequired, 1)) {
      for (const auto& e : *entries) read_node_type(e);
    }
    if (auto zones = root.get_list("zones", Need::kRequired, 1)) {
      for (size_t i = 0; i < zones->size(); ++i) read_zone((*zones)[i], index_path("zones", i), root);
    }
    if (auto links = root.get_list("links", Need::kOptional)) {
      for (size_t i = 0; i < links->size(); ++i) read_link((*links)[i], i, root);
    } else if (root.has("links")) {
      pairs_all_known_ = false;
    }
    root.finish();
    // With every zone and every link's pair read, a missing link is the file's error, not an
    // echo of another one: reported with the file's other errors.
    if (pairs_all_known_) check_zones_linked();
    if (total_gpus_ > kMaxClusterGpus) {
      sink_.error(root.value_mark_of("zones"), "zones",
                  "cluster has " + std::to_string(total_gpus_) + " GPUs (expected at most " +
                      std::to_string(kMaxClusterGpus) + ")");
    }
    return std::move(cluster_);
  }

 private:
  void read_node_type(const MapReader::Entry& entry) {
    const std::string path = field_path("node_types", entry.name);
    MapReader r(entry.value, path, sink_, entry.key_mark);
    NodeType t;
    t.name = entry.name;
    if (const std::string problem = selector_name_problem(t.name); !problem.empty())
      sink_.error(entry.key_mark, path, problem);
    if (auto gpu = r.get_string("gpu", Need::kRequired)) {
      if (const GpuType* g = catalog_.by_name_or_null(*gpu)) {
        t.gpu = *g;
      } else {
        sink_.error(r.value_mark_of("gpu"), r.field("gpu"), catalog_.unknown_gpu_message(*gpu));
      }
    }
    const auto gpus = r.get_int("gpus", Need::kRequired, 1, kMaxGpusPerNode);
    set_if(t.gpus_per_node, gpus);
    if (r.has("intra")) {
      auto intra = r.get_map("intra", Need::kRequired);
      set_if(t.intra.kind, intra->get_enum("kind", Need::kOptional, intra_table()));
      set_if(t.intra.bandwidth_Bps, intra->get_quantity("bandwidth", Need::kRequired, parse_bandwidth, kBandwidth, true));
      t.intra.latency_s = 2e-6;  // default "2us": NVLink/NVSwitch hop latency order (NCCL tuning tables)
      set_if(t.intra.latency_s, intra->get_quantity("latency", Need::kOptional, parse_time, kTime, false));
      set_if(t.intra.measured, intra->get_bool("measured", Need::kOptional));
      if (auto p2p = intra->get_bool("peer_to_peer", Need::kOptional)) {
        if (*p2p && t.intra.kind != IntraFabricKind::kPcie)
          sink_.error(intra->value_mark_of("peer_to_peer"), intra->field("peer_to_peer"),
                      std::string("peer_to_peer applies to kind pcie (expected it absent: ") +
                          to_string(t.intra.kind) + " GPUs always copy directly)");
        t.intra.peer_to_peer = *p2p;
      }
      if (auto mesh = intra->get_bool("mesh", Need::kOptional)) {
        if (*mesh && t.intra.kind != IntraFabricKind::kNvlink && t.intra.kind != IntraFabricKind::kXgmi)
          sink_.error(intra->value_mark_of("mesh"), intra->field("mesh"),
                      std::string("mesh applies to direct GPU links (expected kind nvlink or xgmi, got ") +
                          to_string(t.intra.kind) + ")");
        t.intra.mesh = *mesh;
      }
      intra->finish();
    } else if (gpus && *gpus > 1) {
      sink_.error(r.get_anchor(), path,
                  "missing key 'intra' (expected a map with the intra-node bandwidth, required when gpus > 1)");
    } else {
      t.intra.kind = IntraFabricKind::kNone;
    }
    if (auto nics = r.get_map("nics", Need::kRequired)) {
      set_if(t.nics.count, nics->get_int("count", Need::kRequired, 1, 1024));
      set_if(t.nics.bandwidth_Bps, nics->get_quantity("bandwidth", Need::kRequired, parse_bandwidth,
                                                      "a bandwidth such as \"200Gbps\"", true));
      set_if(t.nics.kind, nics->get_enum("kind", Need::kOptional, nic_table()));
      t.nics.latency_s = 2e-6;  // default "2us"
      set_if(t.nics.latency_s, nics->get_quantity("latency", Need::kOptional, parse_time, kTime, false));
      set_if(t.nics.gpu_direct, nics->get_bool("gpu_direct", Need::kOptional));
      set_if(t.nics.measured, nics->get_bool("measured", Need::kOptional));
      nics->finish();
    }
    t.host_link_Bps = default_host_link_Bps(t.gpu);
    t.host_link_given = r.has("host_link");
    set_if(t.host_link_Bps, r.get_quantity("host_link", Need::kOptional, parse_bandwidth, kBandwidth, true));
    set_if(t.price_per_hour, r.get_quantity("price", Need::kOptional, parse_price_per_hour, kPrice, false));
    if (auto v = r.get_quantity("spot_price", Need::kOptional, parse_price_per_hour, kPrice, false)) {
      t.spot_price_per_hour = *v;
      // Spot capacity is the discounted one (AWS caps a spot price at the on-demand price): a
      // higher figure is a slip (the two swapped) that would make --spot plans dearer.
      if (r.has("price") && *v > t.price_per_hour)
        sink_.error(r.value_mark_of("spot_price"), r.field("spot_price"),
                    "spot price " + r.get_node("spot_price", Need::kOptional)->Scalar() + " is above the node's price " +
                        r.get_node("price", Need::kOptional)->Scalar() + " (expected at most the on-demand price)");
    }
    set_if(t.preemption_rate_per_hour, r.get_quantity("preemption_rate", Need::kOptional, parse_rate_per_hour,
                                                      "a rate such as \"0.05/h\"", false));
    if (auto v = r.get_quantity("checkpoint_bandwidth", Need::kOptional, parse_bandwidth, kBandwidth, true))
      t.checkpoint_bandwidth_Bps = *v;
    set_if(t.restart_time_s, r.get_quantity("restart_time", Need::kOptional, parse_time, kTime, false));
    // Only a node priced at its spot price is reclaimed (preemption.cpp): on one without, these
    // keys would be read by nothing (a sweep's preemption_rate axis says the same).
    if (!t.spot_price_per_hour)
      for (const char* key : {"preemption_rate", "restart_time"})
        if (r.has(key))
          sink_.error(r.value_mark_of(key), r.field(key),
                      "only a node priced at its spot price is reclaimed, and node type '" + t.name +
                          "' has none (expected a spot_price, or no " + key + ")");
    r.finish();
    type_index_[t.name] = static_cast<int>(cluster_.node_types.size());
    cluster_.node_types.push_back(std::move(t));
  }

  void read_zone(const YAML::Node& node, const std::string& path, MapReader& root) {
    MapReader z(node, path, sink_, value_mark(node, root.value_mark_of("zones")));
    zone_marks_.push_back(value_mark(node, root.value_mark_of("zones")));
    Zone zone;
    bool named = false;  // once and for all: a zone without its own name can be in no link
    if (auto name = z.get_string("name", Need::kRequired)) {
      const auto [it, fresh] = zone_index_.emplace(*name, static_cast<int>(cluster_.zones.size()));
      named = fresh;
      if (!fresh) {
        sink_.error(z.value_mark_of("name"), z.field("name"),
                    "duplicate zone name '" + *name + "' (also zones[" + std::to_string(it->second) + "]; expected unique names)");
      }
      if (const std::string problem = selector_name_problem(*name); !problem.empty())
        sink_.error(z.value_mark_of("name"), z.field("name"), problem);
      zone.name = *name;
    }
    if (!named) pairs_all_known_ = false;
    if (auto f = z.get_map("fabric", Need::kRequired)) {
      set_if(zone.fabric.kind, f->get_enum("kind", Need::kOptional, zone_fabric_table()));
      set_if(zone.fabric.oversubscription, f->get_number("oversubscription", Need::kOptional, 1, 1e6));
      zone.fabric.latency_s = 5e-6;  // default "5us": a few switch hops of a datacenter fabric
      set_if(zone.fabric.latency_s, f->get_quantity("latency", Need::kOptional, parse_time, kTime, false));
      set_if(zone.fabric.bandwidth_Bps, f->get_quantity("bandwidth", Need::kOptional, parse_bandwidth, kBandwidth, true));
      f->finish();
      // Each kind has its own cap (topology.cpp): a fat-tree's core is oversubscribed, a switch
      // caps its ports. The other's key would be read by no engine.
      const bool fat_tree = zone.fabric.kind == ZoneFabricKind::kFatTree;
      if (!fat_tree && zone.fabric.oversubscription > 1)
        sink_.error(f->value_mark_of("oversubscription"), f->field("oversubscription"),
                    "a switch fabric is not oversubscribed: its port bandwidth is its only cap (expected kind: "
                    "fat-tree, or oversubscription: 1)");
      if (fat_tree && zone.fabric.bandwidth_Bps > 0)
        sink_.error(f->value_mark_of("bandwidth"), f->field("bandwidth"),
                    "a fat-tree has no port cap: its NICs and its oversubscription set what a node moves (expected "
                    "kind: switch, or no bandwidth)");
    }
    if (auto groups = z.get_list("nodes", Need::kRequired, 1)) {
      for (size_t i = 0; i < groups->size(); ++i) {
        const YAML::Node& g = (*groups)[i];
        MapReader gr(g, index_path(z.field("nodes"), i), sink_, value_mark(g, z.value_mark_of("nodes")));
        NodeGroup group;
        bool valid = true;
        if (auto type = gr.get_string("type", Need::kRequired)) {
          const auto it = type_index_.find(*type);
          if (it == type_index_.end() && type_index_.empty()) {
            valid = false;  // node_types is missing or has no valid entry, an error of its own: not one per group
          } else if (it == type_index_.end()) {
            valid = false;
            std::vector<std::string> names;
            for (const auto& [n, idx] : type_index_) names.push_back(n);
            std::string msg = "unknown node type '" + *type + "' (";
            if (const auto guess = did_you_mean(*type, names)) msg += "did you mean '" + *guess + "'? ";
            sink_.error(gr.value_mark_of("type"), gr.field("type"), msg + "expected a key of node_types: " + join_names(names) + ")");
          } else {
            group.node_type = it->second;
          }
        } else {
          valid = false;
        }
        if (auto count = gr.get_int("count", Need::kRequired, 1)) {
          group.count = *count;
        } else {
          valid = false;
        }
        gr.finish();
        if (valid) {
          total_gpus_ += static_cast<long long>(group.count) * cluster_.node_types[group.node_type].gpus_per_node;
          zone.groups.push_back(group);
        }
      }
    }
    z.finish();
    cluster_.zones.push_back(std::move(zone));
  }

  /// Traffic between zones runs over the link declared between them, and only over it (the
  /// simulator routes no further): every pair of zones needs one, or plans that span them would
  /// be priced over a connection the cluster does not have.
  void check_zones_linked() {
    const int zones = static_cast<int>(cluster_.zones.size());
    for (int b = 1; b < zones; ++b) {
      std::vector<int> unlinked;
      for (int a = 0; a < b; ++a)
        if (link_of_pair_.find({a, b}) == link_of_pair_.end()) unlinked.push_back(a);
      report_unlinked(b, unlinked);
    }
  }

  /// One error per missing link, up to kListedPerZone a zone; two or more beyond those go into
  /// one more error that names them (a file of hundreds of zones without links would otherwise
  /// print a line per pair).
  void report_unlinked(int b, const std::vector<int>& unlinked) {
    const size_t listed = unlinked.size() <= kListedPerZone + 1 ? unlinked.size() : kListedPerZone;
    const std::string& zb = cluster_.zones[b].name;
    const std::string field = "zones[" + std::to_string(b) + "]";
    for (size_t k = 0; k < listed; ++k) {
      const std::string& za = cluster_.zones[unlinked[k]].name;
      sink_.error(zone_marks_[b], field,
                  "zone '" + zb + "' has no link to zone '" + za + "' (expected a links: entry with between: [" +
                      za + ", " + zb + "]; traffic between zones runs over their own link only)");
    }
    if (listed == unlinked.size()) return;
    std::vector<std::string> rest;
    for (size_t k = listed; k < unlinked.size(); ++k) rest.push_back(cluster_.zones[unlinked[k]].name);
    sink_.error(zone_marks_[b], field,
                "zone '" + zb + "' has no link to " + std::to_string(rest.size()) + " more zones: " +
                    join_names(rest) + " (expected a links: entry between it and each)");
  }

  void read_link(const YAML::Node& node, size_t link_entry, MapReader& root) {
    const std::string path = index_path("links", link_entry);
    MapReader l(node, path, sink_, value_mark(node, root.value_mark_of("links")));
    InterZoneLink link;
    bool valid = true;
    bool pair_read = false;  // two distinct known zones, a repeated pair included
    if (auto between = l.get_list("between", Need::kRequired)) {
      const YAML::Mark at = l.value_mark_of("between");
      if (between->size() != 2) {
        valid = false;
        sink_.error(at, l.field("between"),
                    "list has " + std::to_string(between->size()) + " entries (expected two zone names)");
      } else {
        int idx[2] = {-1, -1};
        for (int k = 0; k < 2; ++k) {
          const auto name = read_string((*between)[k], index_path(l.field("between"), k), value_mark((*between)[k], at), sink_);
          if (!name) {
            valid = false;
            continue;
          }
          const auto it = zone_index_.find(*name);
          if (it == zone_index_.end()) {
            valid = false;
            std::vector<std::string> names;
            for (const auto& z : cluster_.zones) names.push_back(z.name);
            std::string msg = "unknown zone '" + *name + "' (";
            if (const auto guess = did_you_mean(*name, names)) msg += "did you mean '" + *guess + "'? ";
            sink_.error(value_mark((*between)[k], at), index_path(l.field("between"), k),
                        msg + "expected one of the zones: " + join_names(names) + ")");
          } else {
            idx[k] = it->second;
          }
        }
        if (valid && idx[0] == idx[1]) {
          valid = false;
          sink_.error(at, l.field("between"), "a link joins zone '" + cluster_.zones[idx[0]].name +
                                                  "' to itself (expected two distinct zones)");
        }
        if (valid) {
          pair_read = true;
          link.zone_a = std::min(idx[0], idx[1]);
          link.zone_b = std::max(idx[0], idx[1]);
          const auto [known, added] = link_of_pair_.try_emplace({link.zone_a, link.zone_b}, link_entry);
          if (!added) {
            valid = false;
            sink_.error(at, l.field("between"),
                        "zones '" + cluster_.zones[link.zone_a].name + "' and '" + cluster_.zones[link.zone_b].name +
                            "' are already linked by links[" + std::to_string(known->second) +
                            "] (expected one link per pair)");
          }
        }
      }
    } else {
      valid = false;
    }
    if (!pair_read) pairs_all_known_ = false;
    set_if(link.bandwidth_Bps, l.get_quantity("bandwidth", Need::kRequired, parse_bandwidth,
                                              "a bandwidth such as \"100Gbps\"", true));
    set_if(link.latency_s, l.get_quantity("latency", Need::kRequired, parse_time, "a time such as \"30ms\"", false));
    set_if(link.egress_price_per_byte, l.get_quantity("egress", Need::kOptional, parse_price_per_byte,
                                                      "a price such as \"$0.02/GB\"", false));
    l.finish();
    if (valid) cluster_.links.push_back(link);
  }

  DiagnosticSink& sink_;
  const Catalog& catalog_;
  Cluster cluster_;
  std::map<std::string, int> type_index_;
  std::map<std::string, int> zone_index_;
  std::vector<YAML::Mark> zone_marks_;  ///< [zone]: where its entry starts
  /// (lower zone, higher zone) -> index of the links: entry that joins them (first one wins).
  std::map<std::pair<int, int>, size_t> link_of_pair_;
  /// Every zone has its own name and every link names two of them: only then is a pair without
  /// a link known to be missing (and not an echo of an error in a zone or link entry).
  bool pairs_all_known_ = true;
  long long total_gpus_ = 0;
};

}  // namespace

Cluster parse_cluster(std::string_view text, const Catalog& catalog, const std::string& name) {
  DiagnosticSink sink(name);
  Cluster cluster;
  if (auto root = detail::open_document(text, sink, InputKind::kCluster)) {
    cluster = ClusterReader(sink, catalog).read(*root);
  }
  sink.throw_if_any();
  cluster.finalize();
  return cluster;
}

Cluster load_cluster(const std::string& path, const Catalog& catalog) {
  return parse_cluster(detail::read_file_or_throw(path), catalog, path);
}

}  // namespace hetsim::models
