// SPDX-License-Identifier: Apache-2.0
// Loader of `kind: sweep` files (docs/sweep.md) and their check against the base cluster.
#include <filesystem>
#include <set>

#include "diagnostics.hpp"

#include "loader_common.hpp"
#include "sweep_spec.hpp"

namespace hetsim::models {
namespace {

using detail::set_if;

constexpr int kMaxNodesPerGroup = 100000;  // the cluster loader's bound on a group's count

const EnumTable<PlanObjective>& objective_table() {
  static const EnumTable<PlanObjective> t = {{"throughput", PlanObjective::kThroughput},
                                             {"cost", PlanObjective::kCost},
                                             {"budget", PlanObjective::kBudget}};
  return t;
}

/// The value keys of a node-type axis, in the order error messages list them.
const EnumTable<SweepAxisKind>& node_axis_keys() {
  static const EnumTable<SweepAxisKind> t = {{"nodes", SweepAxisKind::kNodes},
                                             {"gpu", SweepAxisKind::kGpu},
                                             {"nic_bandwidth", SweepAxisKind::kNicBandwidth},
                                             {"intra_bandwidth", SweepAxisKind::kIntraBandwidth},
                                             {"price", SweepAxisKind::kPrice}};
  return t;
}

SourcePosition position(const YAML::Mark& m) { return {one_based(m.line), one_based(m.column)}; }
YAML::Mark mark_of(const SourcePosition& p) {
  YAML::Mark m;
  m.line = p.line - 1;
  m.column = p.column - 1;
  return m;
}

/// "has no zone 'eu' (did you mean 'eu-west'? known: us-east, eu-west)", the cluster loader's wording.
std::string unknown(const std::string& what, const std::string& name, const std::vector<std::string>& known) {
  std::string msg = what + " '" + name + "' (";
  if (const auto guess = did_you_mean(name, known)) msg += "did you mean '" + *guess + "'? ";
  return msg + "known: " + join_names(known) + ")";
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  return p.is_absolute() ? path : (fs::path(base_dir) / p).lexically_normal().string();
}

/// Reads one value of an axis list into `axis` (label + SI value); false when it is invalid.
bool read_axis_value(const YAML::Node& n, const std::string& field, DiagnosticSink& sink, SweepAxis& axis) {
  const YAML::Mark at = value_mark(n, n.Mark());
  std::optional<double> v;
  switch (axis.kind) {
    case SweepAxisKind::kNodes:
      if (auto count = read_integer(n, field, at, sink, 0, kMaxNodesPerGroup)) v = static_cast<double>(*count);
      break;
    case SweepAxisKind::kGpu:
      if (auto name = read_string(n, field, at, sink)) {
        axis.labels.push_back(*name);
        return true;
      }
      return false;
    case SweepAxisKind::kNicBandwidth:
    case SweepAxisKind::kIntraBandwidth:
    case SweepAxisKind::kLinkBandwidth:
      v = read_quantity(n, field, at, sink, parse_bandwidth, "a bandwidth such as \"25GB/s\"");
      if (v && *v <= 0) {
        sink.error(at, field, "\"" + n.Scalar() + "\" must be > 0 (expected a bandwidth such as \"25GB/s\")");
        return false;
      }
      break;
    case SweepAxisKind::kPrice:
      v = read_quantity(n, field, at, sink, parse_price_per_hour, "a price such as \"$32.77/h\"");
      break;
  }
  if (!v) return false;
  axis.labels.push_back(n.Scalar());
  axis.values.push_back(*v);
  return true;
}

/// One entry of `axes`: `{node_type: T, [zone: Z,] <one value key>: [...]}` or
/// `{link: [A, B], bandwidth: [...]}`. Appends it to `axes` when it is valid.
void read_axis(const YAML::Node& node, const std::string& path, DiagnosticSink& sink, std::vector<SweepAxis>& axes) {
  MapReader r(node, path, sink, node.Mark());
  if (!r.ok()) return;
  SweepAxis axis;
  axis.at = position(node.Mark());
  bool ok = true;
  std::string value_key;
  if (r.has("link")) {
    axis.kind = SweepAxisKind::kLinkBandwidth;
    value_key = "bandwidth";
    axis.target_at = position(r.value_mark_of("link"));
    if (auto zones = r.get_list("link", Need::kRequired, 2)) {
      if (zones->size() != 2) {
        sink.error(r.value_mark_of("link"), r.field("link"),
                   "lists " + std::to_string(zones->size()) + " zones (expected the two zones the link joins)");
        ok = false;
      } else {
        const auto a = read_string((*zones)[0], index_path(r.field("link"), 0), (*zones)[0].Mark(), sink);
        const auto b = read_string((*zones)[1], index_path(r.field("link"), 1), (*zones)[1].Mark(), sink);
        ok = a && b;
        set_if(axis.link_a, a);
        set_if(axis.link_b, b);
      }
    } else {
      ok = false;
    }
    for (const auto& [key, kind] : node_axis_keys())
      if (r.has(key))
        sink.error(r.key_mark(key), r.field(key), "a link axis takes `bandwidth` only (expected {link: [A, B], bandwidth: [...]})");
  } else {
    const auto type = r.get_string("node_type", Need::kRequired);
    axis.target_at = position(r.value_mark_of("node_type"));
    set_if(axis.node_type, type);
    ok = type.has_value();
    int keys = 0;
    for (const auto& [key, kind] : node_axis_keys()) {
      if (!r.has(key)) continue;
      if (++keys == 1) {
        axis.kind = kind;
        value_key = key;
      } else {
        sink.error(r.key_mark(key), r.field(key),
                   "an axis varies one thing; `" + value_key + "` is already given (expected one axis per entry)");
        ok = false;
      }
    }
    if (keys == 0) {
      sink.error(value_mark(node, node.Mark()), path,
                 "says what to vary nowhere (expected one of: nodes, gpu, nic_bandwidth, intra_bandwidth, price)");
      ok = false;
    }
    if (axis.kind == SweepAxisKind::kNodes) set_if(axis.zone, r.get_string("zone", Need::kOptional));
  }
  if (!value_key.empty()) {
    if (auto list = r.get_list(value_key, Need::kRequired, 1)) {
      std::set<std::string> seen;
      for (size_t i = 0; i < list->size(); ++i) {
        const std::string field = index_path(r.field(value_key), i);
        if (!read_axis_value((*list)[i], field, sink, axis)) {
          ok = false;
          continue;
        }
        axis.value_at.push_back(position((*list)[i].Mark()));
        if (!seen.insert(axis.labels.back()).second) {
          sink.error((*list)[i].Mark(), field, "\"" + axis.labels.back() + "\" is listed twice (expected distinct values)");
          ok = false;
        }
      }
    } else {
      ok = false;
    }
  }
  r.finish();
  if (ok) axes.push_back(std::move(axis));
}

}  // namespace

const char* to_string(SweepAxisKind k) {
  switch (k) {
    case SweepAxisKind::kNodes: return "nodes";
    case SweepAxisKind::kGpu: return "gpu";
    case SweepAxisKind::kNicBandwidth: return "nic_bandwidth";
    case SweepAxisKind::kIntraBandwidth: return "intra_bandwidth";
    case SweepAxisKind::kPrice: return "price";
    case SweepAxisKind::kLinkBandwidth: return "link_bandwidth";
  }
  return "?";
}

std::string SweepAxis::column() const {
  if (kind == SweepAxisKind::kLinkBandwidth) return link_a + "-" + link_b + ".link_bandwidth";
  std::string c = node_type;
  if (!zone.empty()) c = zone + "/" + c;
  return c + "." + to_string(kind);
}

long SweepSpec::point_count() const {
  long n = 1;
  for (const SweepAxis& a : axes) {
    n *= static_cast<long>(a.labels.size());
    if (n > kMaxSweepPoints) return n;  // no overflow: each factor is bounded by the file size
  }
  return n;
}

SweepSpec parse_sweep_spec(std::string_view text, const std::string& name, const std::string& base_dir) {
  DiagnosticSink sink(name);
  SweepSpec spec;
  spec.file = name;
  if (auto root = detail::open_document(text, sink, InputKind::kSweep)) {
    set_if(spec.name, root->get_string("name", Need::kRequired));
    if (auto cluster = root->get_string("cluster", Need::kRequired)) {
      spec.cluster_path = resolve(base_dir, *cluster);
      spec.cluster_at = position(root->value_mark_of("cluster"));
    }
    if (auto list = root->get_list("workloads", Need::kRequired, 1)) {
      for (size_t i = 0; i < list->size(); ++i) {
        const YAML::Node& n = (*list)[i];
        if (auto w = read_string(n, index_path("workloads", i), n.Mark(), sink)) {
          spec.workload_paths.push_back(resolve(base_dir, *w));
          spec.workload_at.push_back(position(n.Mark()));
        }
      }
    }
    set_if(spec.objective, root->get_enum("objective", Need::kOptional, objective_table()));
    const auto budget = root->get_quantity("budget_per_hour", Need::kOptional, parse_price_per_hour,
                                           "a price such as \"$60/h\"", true);
    set_if(spec.budget_per_hour, budget);
    if (spec.objective == PlanObjective::kBudget && !budget && !root->has("budget_per_hour"))
      sink.error(root->value_mark_of("objective"), "objective",
                 "budget needs `budget_per_hour` (expected a price such as \"$60/h\")");
    if (budget && spec.objective != PlanObjective::kBudget)
      sink.error(root->key_mark("budget_per_hour"), "budget_per_hour",
                 "is used by `objective: budget` only (expected objective: budget, or no budget_per_hour)");
    set_if(spec.spot, root->get_bool("spot", Need::kOptional));
    if (auto axes = root->get_list("axes", Need::kOptional)) {
      for (size_t i = 0; i < axes->size(); ++i) read_axis((*axes)[i], index_path("axes", i), sink, spec.axes);
      std::set<std::string> columns;
      for (const SweepAxis& a : spec.axes)
        if (!columns.insert(a.column()).second)
          sink.error(mark_of(a.at), "axes", "two axes vary " + a.column() + " (expected each thing varied once)");
      if (spec.point_count() > kMaxSweepPoints)
        sink.error(root->value_mark_of("axes"), "axes",
                   "the grid has more than " + std::to_string(kMaxSweepPoints) +
                       " points (expected fewer values per axis, or several sweeps)");
    }
    root->finish();
  }
  sink.throw_if_any();
  return spec;
}

SweepSpec load_sweep_spec(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_sweep_spec(detail::read_file_or_throw(path), path, dir.empty() ? "." : dir);
}

void check_sweep_spec(const SweepSpec& spec, const Cluster& base, const Catalog& catalog) {
  DiagnosticSink sink(spec.file);
  const auto zone_index = [&](const std::string& name) {
    for (size_t z = 0; z < base.zones.size(); ++z)
      if (base.zones[z].name == name) return static_cast<int>(z);
    return -1;
  };
  std::vector<std::string> zone_names, type_names;
  for (const Zone& z : base.zones) zone_names.push_back(z.name);
  for (const NodeType& t : base.node_types) type_names.push_back(t.name);
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    const SweepAxis& a = spec.axes[i];
    const std::string field = index_path("axes", i);
    if (a.kind == SweepAxisKind::kLinkBandwidth) {
      for (const std::string& z : {a.link_a, a.link_b})
        if (zone_index(z) < 0)
          sink.error(mark_of(a.target_at), field + ".link",
                     "cluster '" + base.name + "' has no " + unknown("zone", z, zone_names));
      const int za = zone_index(a.link_a), zb = zone_index(a.link_b);
      if (za >= 0 && zb >= 0 && base.link_between(za, zb) == nullptr)
        sink.error(mark_of(a.target_at), field + ".link",
                   "cluster '" + base.name + "' has no link between " + a.link_a + " and " + a.link_b +
                       " (expected two zones its `links` join)");
      continue;
    }
    int type = -1;
    for (size_t t = 0; t < base.node_types.size(); ++t)
      if (base.node_types[t].name == a.node_type) type = static_cast<int>(t);
    if (type < 0) {
      sink.error(mark_of(a.target_at), field + ".node_type",
                 "cluster '" + base.name + "' has no " + unknown("node type", a.node_type, type_names));
      continue;
    }
    if (a.kind == SweepAxisKind::kNodes) {
      int groups = 0;
      bool in_zone = false;
      for (const Zone& z : base.zones)
        for (const NodeGroup& g : z.groups)
          if (g.node_type == type) {
            ++groups;
            in_zone = in_zone || z.name == a.zone;
          }
      if (!a.zone.empty() && zone_index(a.zone) < 0)
        sink.error(mark_of(a.target_at), field + ".zone",
                   "cluster '" + base.name + "' has no " + unknown("zone", a.zone, zone_names));
      else if (!a.zone.empty() && !in_zone)
        sink.error(mark_of(a.target_at), field + ".zone",
                   "zone '" + a.zone + "' has no nodes of type '" + a.node_type +
                       "' (expected a zone where the cluster places them)");
      else if (a.zone.empty() && groups != 1)
        sink.error(mark_of(a.target_at), field + ".node_type",
                   "node type '" + a.node_type + "' is placed in " + std::to_string(groups) +
                       " zones (expected `zone:` to say which group to resize)");
    }
    if (a.kind == SweepAxisKind::kGpu) {
      for (size_t v = 0; v < a.labels.size(); ++v)
        if (catalog.by_name_or_null(a.labels[v]) == nullptr)
          sink.error(mark_of(a.value_at[v]), index_path(field + ".gpu", v),
                     unknown("unknown GPU", a.labels[v], catalog.get_names()));
    }
  }
  sink.throw_if_any();
}

SweepInputs load_sweep_inputs(const std::string& spec_path, const Catalog& catalog) {
  SweepInputs in;
  in.spec = load_sweep_spec(spec_path);  // its own errors first: the paths below come from it
  std::vector<Diagnostic> errors;
  const auto collect = [&](auto&& load) {
    try {
      load();
      return true;
    } catch (const ConfigError& e) {
      errors.insert(errors.end(), e.get_diagnostics().begin(), e.get_diagnostics().end());
      return false;
    }
  };
  // A path that names no file is the spec's error: point at the line that wrote it.
  const auto exists = [&](const std::string& path, const SourcePosition& at, const std::string& field) {
    if (std::filesystem::is_regular_file(path)) return true;
    errors.push_back({spec_path, at.line, at.column, field,
                      "no file '" + path + "' (expected a path relative to the sweep file's folder)"});
    return false;
  };
  const bool cluster_ok = exists(in.spec.cluster_path, in.spec.cluster_at, "cluster") &&
                    collect([&] { in.cluster = load_cluster(in.spec.cluster_path, catalog); });
  for (size_t w = 0; w < in.spec.workload_paths.size(); ++w) {
    const std::string& path = in.spec.workload_paths[w];
    if (exists(path, in.spec.workload_at[w], "workloads[" + std::to_string(w) + "]"))
      collect([&] { in.workloads.push_back(load_workload(path)); });
  }
  if (cluster_ok) collect([&] { check_sweep_spec(in.spec, in.cluster, catalog); });
  if (!errors.empty()) throw ConfigError(std::move(errors));
  return in;
}

std::vector<int> sweep_point(const SweepSpec& spec, long index) {
  std::vector<int> choice(spec.axes.size(), 0);
  for (size_t a = spec.axes.size(); a-- > 0;) {
    const long n = static_cast<long>(spec.axes[a].labels.size());
    choice[a] = static_cast<int>(index % n);
    index /= n;
  }
  return choice;
}

Cluster sweep_cluster(const SweepSpec& spec, const Cluster& base, const std::vector<int>& point,
                      const Catalog& catalog) {
  Cluster c = base;
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    const SweepAxis& a = spec.axes[i];
    const int v = point[i];
    if (a.kind == SweepAxisKind::kLinkBandwidth) {
      for (InterZoneLink& l : c.links) {
        const std::string& za = c.zones[l.zone_a].name;
        const std::string& zb = c.zones[l.zone_b].name;
        if ((za == a.link_a && zb == a.link_b) || (za == a.link_b && zb == a.link_a)) l.bandwidth_Bps = a.values[v];
      }
      continue;
    }
    for (size_t t = 0; t < c.node_types.size(); ++t) {
      NodeType& nt = c.node_types[t];
      if (nt.name != a.node_type) continue;
      switch (a.kind) {
        case SweepAxisKind::kNodes:
          for (Zone& z : c.zones)
            if (a.zone.empty() || z.name == a.zone)
              for (NodeGroup& g : z.groups)
                if (g.node_type == static_cast<int>(t)) g.count = static_cast<int>(a.values[v]);
          break;
        case SweepAxisKind::kGpu: nt.gpu = catalog.by_name(a.labels[v]); break;
        case SweepAxisKind::kNicBandwidth: nt.nics.bandwidth_Bps = a.values[v]; break;
        case SweepAxisKind::kIntraBandwidth: nt.intra.bandwidth_Bps = a.values[v]; break;
        case SweepAxisKind::kPrice: nt.price_per_hour = a.values[v]; break;
        case SweepAxisKind::kLinkBandwidth: break;
      }
    }
  }
  for (Zone& z : c.zones)
    std::erase_if(z.groups, [](const NodeGroup& g) { return g.count <= 0; });
  c.finalize();
  return c;
}

}  // namespace hetsim::models
