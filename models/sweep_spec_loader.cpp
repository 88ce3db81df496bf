// SPDX-License-Identifier: Apache-2.0
// Loader of `kind: sweep` files (docs/sweep.md) and their check against the base cluster.
#include <algorithm>
#include <climits>
#include <filesystem>
#include <map>

#include "diagnostics.hpp"
#include "loader_common.hpp"
#include "sweep_spec.hpp"

namespace hetsim::models {
namespace {

using detail::set_if;

// Nodes of one group at a point: bounds the integers a file can ask for; the GPUs of a whole
// point are checked against kMaxClusterGpus (cluster.hpp) once the cluster is known.
constexpr int kMaxNodesPerGroup = 100000;

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
                                             {"price", SweepAxisKind::kPrice},
                                             {"preemption_rate", SweepAxisKind::kPreemptionRate}};
  return t;
}

SourcePosition position(const YAML::Mark& m) { return {one_based(m.line), one_based(m.column)}; }
YAML::Mark mark_of(const SourcePosition& p) {
  YAML::Mark m;
  m.line = p.line - 1;
  m.column = p.column - 1;
  return m;
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
    case SweepAxisKind::kLinkBandwidth: {
      // Ports are sold in bits per second, GPU links quoted in bytes: the example of each.
      const char* expected = axis.kind == SweepAxisKind::kIntraBandwidth ? "a bandwidth such as \"300GB/s\""
                                                                    : "a bandwidth such as \"200Gbps\"";
      v = read_quantity(n, field, at, sink, parse_bandwidth, expected);
      if (v && *v <= 0) {
        sink.error(at, field, "\"" + n.Scalar() + "\" must be > 0 (expected " + expected + ")");
        return false;
      }
      break;
    }
    case SweepAxisKind::kPrice:
      v = read_quantity(n, field, at, sink, parse_price_per_hour, "a price such as \"$32.77/h\"");
      break;
    case SweepAxisKind::kPreemptionRate:
      v = read_quantity(n, field, at, sink, parse_rate_per_hour, "a rate such as \"0.05/h\"");
      break;
  }
  if (!v) return false;
  axis.labels.push_back(n.Scalar());
  axis.values.push_back(*v);
  return true;
}

/// One entry of `axes`: `{node_type: T, [zone: Z,] <one value key>: [...]}` or
/// `{link: [A, B], bandwidth: [...]}`. Appends it to `axes` when it is valid.
void read_axis(const YAML::Node& node, size_t axes_read, const std::string& path, DiagnosticSink& sink,
               std::vector<SweepAxis>& axes) {
  MapReader r(node, path, sink, node.Mark());
  if (!r.ok()) return;
  SweepAxis axis;
  axis.index = static_cast<int>(axes_read);
  axis.at = position(node.Mark());
  bool ok = true;         // what the axis varies reads
  bool values_ok = true;  // and every value
  std::string value_key;
  if (r.has("link")) {
    axis.kind = SweepAxisKind::kLinkBandwidth;
    value_key = "bandwidth";
    axis.target_at = position(r.value_mark_of("link"));
    if (auto zones = r.get_list("link", Need::kRequired, 0)) {  // the size check below says what a link axis needs
      if (zones->size() != 2) {
        sink.error(r.value_mark_of("link"), r.field("link"),
                   "lists " + std::to_string(zones->size()) + (zones->size() == 1 ? " zone" : " zones") +
                       " (expected the two zones the link joins)");
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
    std::vector<std::string> keys;
    for (const auto& [key, kind] : node_axis_keys()) {
      keys.push_back(key);
      if (!r.has(key)) continue;
      if (value_key.empty()) {
        axis.kind = kind;
        value_key = key;
      } else {
        sink.error(r.key_mark(key), r.field(key),
                   "an axis varies one thing; `" + value_key + "` is already given (expected one axis per entry)");
        ok = false;
      }
    }
    if (value_key.empty()) {
      sink.error(value_mark(node, node.Mark()), path, "says what to vary nowhere (expected one of: " + join_names(keys) + ")");
      ok = false;
    }
    if (r.has("zone")) {
      axis.zone_at = position(r.value_mark_of("zone"));
      const auto zone = r.get_string("zone", Need::kOptional);
      ok = ok && zone.has_value();
      set_if(axis.zone, zone);
      if (zone && axis.kind != SweepAxisKind::kNodes && !value_key.empty()) {
        sink.error(r.key_mark("zone"), r.field("zone"),
                   "applies to a `nodes` axis only (expected the other axes to name the node type alone)");
        ok = false;
      }
    }
  }
  if (!value_key.empty()) {
    if (auto list = r.get_list(value_key, Need::kRequired, 1)) {
      std::vector<size_t> entry_of;  // the list index of each value read (invalid entries are skipped)
      for (size_t i = 0; i < list->size(); ++i) {
        const std::string field = index_path(r.field(value_key), i);
        if (!read_axis_value((*list)[i], field, sink, axis)) {
          values_ok = false;
          continue;
        }
        entry_of.push_back(i);
        axis.value_at.push_back(position((*list)[i].Mark()));
        // The same value written twice ("2" and "02", "25GB/s" and "200Gbps") is the same point.
        const size_t last = axis.labels.size() - 1;
        for (size_t j = 0; j < last; ++j) {
          const bool same = axis.values.empty() ? axis.labels[j] == axis.labels[last] : axis.values[j] == axis.values[last];
          if (!same) continue;
          sink.error((*list)[i].Mark(), field,
                     "\"" + axis.labels[last] + "\" is the value of " + index_path(r.field(value_key), entry_of[j]) +
                         " again (expected distinct values)");
          values_ok = false;
          axis.labels.pop_back();  // the axis keeps its distinct values for check_spec
          if (!axis.values.empty()) axis.values.pop_back();
          axis.value_at.pop_back();
          entry_of.pop_back();
          break;
        }
      }
    } else {
      ok = false;
    }
  }
  r.finish();
  // An axis whose values are only partly valid is kept with the valid ones, for the checks across
  // axes (check_spec): an axis with one bad value was left out of them, and "axes[1] varies what
  // axes[0] varies" came up only once the value was fixed (s52 bad-input hunt). The file has an
  // error already, so no sweep runs on it.
  if (ok && (values_ok || !axis.labels.empty())) axes.push_back(std::move(axis));
}

/// `search:` (optional): `{tp_degrees: [...], micro_batches: [...], interleave: [...],
/// recompute: [...], zero: [...], sequence_parallel: bool}`, each list non-empty, each value once
/// and searchable (search_value_problem).
void read_search(MapReader& root, SweepSearch& search, DiagnosticSink& sink) {
  auto m = root.get_map("search", Need::kOptional);
  if (!m || !m->ok()) return;
  auto read_ints = [&](const char* key, SearchKnob knob, std::vector<int>& out) {
    const auto list = m->get_list(key, Need::kOptional, 1);
    if (!list) return;
    std::vector<int> values;
    for (size_t i = 0; i < list->size(); ++i) {
      const YAML::Node& n = (*list)[i];
      const std::string field = index_path(m->field(key), i);
      const YAML::Mark at = value_mark(n, m->get_anchor());
      const auto v = read_integer(n, field, at, sink, INT_MIN, INT_MAX);
      if (!v) continue;
      const int value = static_cast<int>(*v);
      if (const std::string problem = search_value_problem(knob, value); !problem.empty()) {
        sink.error(at, field, problem);
      } else if (std::find(values.begin(), values.end(), value) != values.end()) {
        sink.error(at, field, std::to_string(value) + " is listed twice (expected each value once)");
      } else {
        values.push_back(value);
      }
    }
    // The valid values even when others were not (the file is refused for those): the checks
    // that read the list ("`search.zero` has no 3") must not report what the list does hold.
    if (!values.empty()) out = std::move(values);
  };
  read_ints("tp_degrees", SearchKnob::kTpDegrees, search.tp_degrees);
  read_ints("micro_batches", SearchKnob::kMicroBatches, search.micro_batches);
  read_ints("interleave", SearchKnob::kInterleave, search.interleaves);
  read_ints("zero", SearchKnob::kZero, search.zero_stages);
  if (const auto list = m->get_list("recompute", Need::kOptional, 1)) {
    std::vector<Recompute> values;
    bool ok = true;
    for (size_t i = 0; i < list->size(); ++i) {
      const YAML::Node& n = (*list)[i];
      const std::string field = index_path(m->field("recompute"), i);
      const YAML::Mark at = value_mark(n, m->get_anchor());
      const auto text = read_string(n, field, at, sink);
      if (!text) {
        ok = false;
        continue;
      }
      const std::optional<Recompute> value = recompute_named(*text);
      if (!value) {
        sink.error(at, field, "unknown recompute '" + *text + "' (expected one of: none, selective, full)");
        ok = false;
      } else if (std::find(values.begin(), values.end(), *value) != values.end()) {
        sink.error(at, field, "'" + *text + "' is listed twice (expected each value once)");
        ok = false;
      } else {
        values.push_back(*value);
      }
    }
    if (ok) search.recomputes = std::move(values);
  }
  set_if(search.sequence_parallel, m->get_bool("sequence_parallel", Need::kOptional));
  m->finish();
}

}  // namespace

void SweepSearch::apply_to(PlannerOptions& options) const {
  if (!tp_degrees.empty()) options.tp_degrees = tp_degrees;
  if (!micro_batches.empty()) options.micro_batches = micro_batches;
  if (!interleaves.empty()) options.interleaves = interleaves;
  if (!zero_stages.empty()) options.zero_stages = zero_stages;
  options.rank_faster_zero0_baselines = zero_stages.empty();  // the default search, as `plan` without --zero
  if (!recomputes.empty()) options.recomputes = recomputes;
  options.sequence_parallel = options.sequence_parallel && sequence_parallel;
}

namespace {

/// The file's own content (no cluster needed); records every problem in `sink`.
SweepSpec read_spec(std::string_view text, const std::string& name, const std::string& base_dir, DiagnosticSink& sink) {
  SweepSpec spec;
  spec.file = name;
  auto root = detail::open_document(text, sink, InputKind::kSweep);
  if (!root) return spec;
  set_if(spec.name, root->get_string("name", Need::kRequired));
  if (auto cluster = root->get_string("cluster", Need::kRequired)) {
    spec.cluster_path = resolve(base_dir, *cluster);
    spec.cluster_at = position(root->value_mark_of("cluster"));
  }
  if (auto list = root->get_list("workloads", Need::kRequired, 1)) {
    for (size_t i = 0; i < list->size(); ++i) {
      const YAML::Node& n = (*list)[i];
      const auto w = read_string(n, index_path("workloads", i), n.Mark(), sink);
      if (!w) continue;
      const std::string path = resolve(base_dir, *w);
      const auto j = std::find(spec.workload_paths.begin(), spec.workload_paths.end(), path);
      if (j != spec.workload_paths.end()) {
        sink.error(n.Mark(), index_path("workloads", i),
                   "'" + *w + "' is " + index_path("workloads", spec.workload_index[j - spec.workload_paths.begin()]) +
                       " again (expected each workload once)");
        continue;
      }
      spec.workload_paths.push_back(path);
      spec.workload_at.push_back(position(n.Mark()));
      spec.workload_index.push_back(static_cast<int>(i));
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
  set_if(spec.tp_comm_overlap, root->get_bool("tp_comm_overlap", Need::kOptional));
  set_if(spec.overlap_p2p_comm, root->get_bool("overlap_p2p_comm", Need::kOptional));
  set_if(spec.one_vendor, root->get_bool("one_vendor", Need::kOptional));
  const auto sharded = root->get_enum("sharded_collectives", Need::kOptional, detail::sharded_collectives_table());
  set_if(spec.sharded_collectives, sharded);
  read_search(*root, spec.search, sink);
  if (sharded && std::find(spec.search.zero_stages.begin(), spec.search.zero_stages.end(), 3) == spec.search.zero_stages.end())
    sink.error(root->key_mark("sharded_collectives"), "sharded_collectives",
               "prices the ZeRO-3 plans of the search, and `search.zero` has no 3 (expected zero: [1, 3] or "
               "another list with 3 under search, or no sharded_collectives)");
  // A setting no searched plan can use is a mistake, as sharded_collectives without ZeRO-3 is.
  const auto none_above_one = [](const std::vector<int>& v) {
    return !v.empty() && std::none_of(v.begin(), v.end(), [](int x) { return x > 1; });
  };
  if (spec.overlap_p2p_comm && none_above_one(spec.search.interleaves))
    sink.error(root->key_mark("overlap_p2p_comm"), "overlap_p2p_comm",
               "overlaps the sends of the interleaved schedule, and `search.interleave` has no factor above 1 "
               "(expected interleave: [1, 2] or another list with a factor >= 2 under search, or no overlap_p2p_comm)");
  if (spec.tp_comm_overlap && none_above_one(spec.search.tp_degrees))
    sink.error(root->key_mark("tp_comm_overlap"), "tp_comm_overlap",
               "overlaps the tensor-parallel collectives, and `search.tp_degrees` has no degree above 1 "
               "(expected tp_degrees with a degree >= 2 under search, or no tp_comm_overlap)");
  if (spec.tp_comm_overlap && !spec.search.sequence_parallel)
    sink.error(root->key_mark("tp_comm_overlap"), "tp_comm_overlap",
               "overlaps the sequence-parallel collectives, which `search.sequence_parallel: false` leaves out "
               "(expected one of the two)");
  if (auto axes = root->get_list("axes", Need::kOptional)) {
    for (size_t i = 0; i < axes->size(); ++i) read_axis((*axes)[i], i, index_path("axes", i), sink, spec.axes);
    if (spec.point_count() > kMaxSweepPoints)
      sink.error(root->value_mark_of("axes"), "axes",
                 "the grid has more than " + std::to_string(kMaxSweepPoints) +
                     " points (expected fewer values per axis, or several sweeps)");
  }
  root->finish();
  return spec;
}

/// The axes against the base cluster and the catalog; records every problem in `sink`.
void check_spec(const SweepSpec& spec, const Cluster& base, const Catalog& catalog, DiagnosticSink& sink) {
  std::vector<std::string> zone_names, type_names;
  for (const Zone& z : base.zones) zone_names.push_back(z.name);
  for (const NodeType& t : base.node_types) type_names.push_back(t.name);
  const std::string has_no = "cluster '" + base.name + "' has no ";
  // What each axis varies, as the cluster resolves it: two axes must not vary the same thing.
  std::map<std::string, size_t> varied;
  const auto vary = [&](const std::string& thing, size_t i) {
    const auto [it, fresh] = varied.emplace(thing, i);
    if (!fresh)
      sink.error(mark_of(spec.axes[i].at), index_path("axes", spec.axes[i].index),
                 "varies what " + index_path("axes", spec.axes[it->second].index) +
                     " varies (expected each thing varied by one axis)");
  };
  // The most nodes each group can have at any point (its own count where no axis resizes it).
  std::vector<std::vector<long long>> most_nodes(base.zones.size());
  for (size_t z = 0; z < base.zones.size(); ++z)
    for (const NodeGroup& g : base.zones[z].groups) most_nodes[z].push_back(g.count);
  int first_nodes_axis = -1;
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    const SweepAxis& a = spec.axes[i];
    const std::string field = index_path("axes", a.index);  // as written: earlier invalid entries are not in spec.axes
    if (a.kind == SweepAxisKind::kLinkBandwidth) {
      bool zones_ok = true;
      for (const std::string& z : {a.link_a, a.link_b})
        if (base.zone_index(z) < 0) {
          sink.error(mark_of(a.target_at), field + ".link", has_no + unknown_name_message("zone", z, zone_names));
          zones_ok = false;
        }
      if (!zones_ok) continue;
      if (base.link_between(base.zone_index(a.link_a), base.zone_index(a.link_b)) == nullptr) {
        sink.error(mark_of(a.target_at), field + ".link",
                   has_no + "link between " + a.link_a + " and " + a.link_b + " (expected two zones its `links` join)");
        continue;
      }
      vary("link " + std::min(a.link_a, a.link_b) + " " + std::max(a.link_a, a.link_b), i);
      continue;
    }
    const int type = base.node_type_index(a.node_type);
    if (type < 0) {
      sink.error(mark_of(a.target_at), field + ".node_type", has_no + unknown_name_message("node type", a.node_type, type_names));
      continue;
    }
    const NodeType& nt = base.node_types[type];
    switch (a.kind) {
      case SweepAxisKind::kNodes: {
        std::vector<std::pair<int, int>> groups;  // (zone, group) of the type, in the zone if named
        std::vector<std::string> zones_of_type;
        for (size_t z = 0; z < base.zones.size(); ++z)
          for (size_t g = 0; g < base.zones[z].groups.size(); ++g) {
            if (base.zones[z].groups[g].node_type != type) continue;
            if (std::find(zones_of_type.begin(), zones_of_type.end(), base.zones[z].name) == zones_of_type.end())
              zones_of_type.push_back(base.zones[z].name);
            if (a.zone.empty() || base.zones[z].name == a.zone) groups.emplace_back(static_cast<int>(z), static_cast<int>(g));
          }
        if (!a.zone.empty() && base.zone_index(a.zone) < 0) {
          sink.error(mark_of(a.zone_at), field + ".zone", has_no + unknown_name_message("zone", a.zone, zone_names));
        } else if (groups.empty()) {
          sink.error(mark_of(a.zone.empty() ? a.target_at : a.zone_at), field + (a.zone.empty() ? ".node_type" : ".zone"),
                     (a.zone.empty() ? "cluster '" + base.name + "'" : "zone '" + a.zone + "'") + " has no nodes of type '" +
                         a.node_type + "' (expected a zone where the cluster places them: " + join_names(zones_of_type) + ")");
        } else if (groups.size() > 1) {
          const bool one_zone = zones_of_type.size() == 1 || !a.zone.empty();
          sink.error(mark_of(a.zone.empty() ? a.target_at : a.zone_at), field + (a.zone.empty() ? ".node_type" : ".zone"),
                     one_zone ? "zone '" + (a.zone.empty() ? zones_of_type[0] : a.zone) + "' has " + std::to_string(groups.size()) +
                                    " groups of type '" + a.node_type + "' (expected one group to resize: merge them in the cluster)"
                              : "node type '" + a.node_type + "' is placed in " + std::to_string(zones_of_type.size()) +
                                    " zones (expected `zone:` to say which group to resize: " + join_names(zones_of_type) + ")");
        } else {
          const auto [z, g] = groups.front();
          vary("nodes " + std::to_string(z) + " " + std::to_string(g), i);
          most_nodes[z][g] = static_cast<long long>(*std::max_element(a.values.begin(), a.values.end()));
          if (first_nodes_axis < 0) first_nodes_axis = static_cast<int>(i);
        }
        break;
      }
      case SweepAxisKind::kGpu: {
        vary("gpu " + a.node_type, i);
        std::map<std::string, size_t> value_of_type;  // two spellings of one type are one point
        for (size_t v = 0; v < a.labels.size(); ++v) {
          const GpuType* g = catalog.by_name_or_null(a.labels[v]);
          if (g == nullptr) {
            sink.error(mark_of(a.value_at[v]), index_path(field + ".gpu", v),
                       catalog.unknown_gpu_message(a.labels[v]));
          } else if (const auto [first, fresh] = value_of_type.emplace(g->name, v); !fresh) {
            sink.error(mark_of(a.value_at[v]), index_path(field + ".gpu", v),
                       "'" + a.labels[v] + "' names '" + g->name + "', as " + index_path(field + ".gpu", first->second) +
                           " does (expected distinct values)");
          } else if ((g->vendor == Vendor::kCpu) != (nt.gpu.vendor == Vendor::kCpu)) {
            sink.error(mark_of(a.value_at[v]), index_path(field + ".gpu", v),
                       "'" + a.labels[v] + "' is a " + (g->vendor == Vendor::kCpu ? "CPU" : "GPU") + " device type and '" +
                           a.node_type + "' holds " + (nt.gpu.vendor == Vendor::kCpu ? "CPU" : "GPU") +
                           " devices (expected a device of the same kind: the node's fabric, NICs and price stay)");
          }
        }
        break;
      }
      case SweepAxisKind::kIntraBandwidth:
        vary("intra " + a.node_type, i);
        if (nt.intra.kind == IntraFabricKind::kNone)
          sink.error(mark_of(a.target_at), field + ".node_type",
                     "node type '" + a.node_type + "' has no intra-node fabric (intra: none) (expected a node type whose GPUs share one)");
        break;
      case SweepAxisKind::kNicBandwidth: vary("nic " + a.node_type, i); break;
      case SweepAxisKind::kPrice: vary("price " + a.node_type, i); break;
      case SweepAxisKind::kPreemptionRate:
        // Only nodes priced at spot are reclaimed (models/preemption.hpp): elsewhere it changes nothing.
        vary("preemption_rate " + a.node_type, i);
        if (!spec.spot)
          sink.error(mark_of(a.at), field, "a preemption_rate axis needs `spot: true` (nodes on demand are not reclaimed)");
        else if (!nt.spot_price_per_hour)
          sink.error(mark_of(a.target_at), field + ".node_type",
                     "node type '" + a.node_type + "' has no spot_price (expected a node type the cluster prices at spot)");
        break;
      case SweepAxisKind::kLinkBandwidth: break;
    }
  }
  // The largest point: every group at its most nodes, every GPU-swap axis irrelevant (the GPU count per node stays).
  long long most_gpus = 0;
  for (size_t z = 0; z < base.zones.size(); ++z)
    for (size_t g = 0; g < base.zones[z].groups.size(); ++g)
      most_gpus += most_nodes[z][g] * base.node_types[base.zones[z].groups[g].node_type].gpus_per_node;
  if (most_gpus > kMaxClusterGpus && first_nodes_axis >= 0)
    sink.error(mark_of(spec.axes[first_nodes_axis].at), index_path("axes", spec.axes[first_nodes_axis].index),
               "the largest point has " + std::to_string(most_gpus) + " GPUs (expected at most " +
                   std::to_string(kMaxClusterGpus) + " in a cluster)");
}

}  // namespace

const char* to_string(SweepAxisKind k) {
  switch (k) {
    case SweepAxisKind::kNodes: return "nodes";
    case SweepAxisKind::kGpu: return "gpu";
    case SweepAxisKind::kNicBandwidth: return "nic_bandwidth";
    case SweepAxisKind::kIntraBandwidth: return "intra_bandwidth";
    case SweepAxisKind::kPrice: return "price";
    case SweepAxisKind::kPreemptionRate: return "preemption_rate";
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

std::string SweepAxis::identity() const {
  if (kind == SweepAxisKind::kLinkBandwidth) return std::to_string(link_a.size()) + ":" + column();
  return column();
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
  SweepSpec spec = read_spec(text, name, base_dir, sink);
  sink.throw_if_any();
  return spec;
}

SweepSpec load_sweep_spec(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_sweep_spec(detail::read_file_or_throw(path), path, dir.empty() ? "." : dir);
}

void check_sweep_spec(const SweepSpec& spec, const Cluster& base, const Catalog& catalog) {
  DiagnosticSink sink(spec.file);
  check_spec(spec, base, catalog, sink);
  sink.throw_if_any();
}

SweepInputs load_sweep_inputs(const std::string& spec_path, const Catalog& catalog) {
  SweepInputs in;
  DiagnosticCollector errors;
  std::string text;
  if (!errors.collect([&] { text = detail::read_file_or_throw(spec_path); })) errors.throw_if_any();
  const std::string dir = std::filesystem::path(spec_path).parent_path().string();
  // The spec's own errors and those its valid axes have against the cluster, together.
  DiagnosticSink sink(spec_path);
  in.spec = read_spec(text, spec_path, dir.empty() ? "." : dir, sink);
  errors.collect([&] { sink.throw_if_any(); });
  // A path that names no file is the spec's error: point at the line that wrote it.
  const auto exists = [&](const std::string& path, const SourcePosition& at, const std::string& field) {
    if (path.empty()) return false;  // missing key: already reported
    std::error_code ec;  // a symlink loop is an error of this input, not an exception
    const auto status = std::filesystem::status(path, ec);
    // Not only regular files: a pipe is read as the verbs read one (read_input_text).
    if (!ec && std::filesystem::exists(status) && !std::filesystem::is_directory(status)) return true;
    const std::string what = std::filesystem::is_directory(status) ? "'" + path + "' is a folder"
                             : ec && ec != std::errc::no_such_file_or_directory
                                 ? "cannot open '" + path + "': " + ec.message()
                                 : "no file '" + path + "'";
    errors.add({spec_path, at.line, at.column, field, what + " (expected a path relative to the sweep file's folder)"});
    return false;
  };
  const bool cluster_ok = exists(in.spec.cluster_path, in.spec.cluster_at, "cluster") &&
                          errors.collect([&] { in.cluster = load_cluster(in.spec.cluster_path, catalog); });
  // The same file by another path (absolute, through a symlink) is the same workload, and two
  // workloads of one name make rows nobody can tell apart (the rows name the workload).
  std::vector<std::filesystem::path> files;
  std::vector<size_t> loaded_from;  // index into workload_paths of each loaded workload
  for (size_t w = 0; w < in.spec.workload_paths.size(); ++w) {
    const std::string& path = in.spec.workload_paths[w];
    const std::string field = index_path("workloads", in.spec.workload_index[w]);
    const SourcePosition& at = in.spec.workload_at[w];
    if (!exists(path, at, field)) continue;
    std::error_code ec;
    const std::filesystem::path file = std::filesystem::weakly_canonical(path, ec);
    if (const auto same = std::find(files.begin(), files.end(), file); !ec && same != files.end()) {
      errors.add({spec_path, at.line, at.column, field,
                  "'" + path + "' is the file of " +
                      index_path("workloads", in.spec.workload_index[loaded_from[same - files.begin()]]) +
                      " again (expected each workload once)"});
      continue;
    }
    if (!errors.collect([&] { in.workloads.push_back(load_workload(path)); })) continue;
    for (size_t k = 0; k + 1 < in.workloads.size(); ++k)
      if (in.workloads[k].name == in.workloads.back().name) {
        errors.add({spec_path, at.line, at.column, field,
                    "names its workload '" + in.workloads.back().name + "', as " +
                        index_path("workloads", in.spec.workload_index[loaded_from[k]]) +
                        " does (expected distinct workload names: the rows name the workload)"});
        break;
      }
    files.push_back(file);
    loaded_from.push_back(w);
  }
  if (cluster_ok) errors.collect([&] { check_sweep_spec(in.spec, in.cluster, catalog); });
  errors.throw_if_any();
  // Outputs name a type as the catalog does (docs/inputs.md), whatever spelling the axis used.
  for (SweepAxis& a : in.spec.axes)
    if (a.kind == SweepAxisKind::kGpu)
      for (std::string& label : a.labels) label = catalog.by_name(label).name;
  return in;
}

}  // namespace hetsim::models
