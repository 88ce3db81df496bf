// SPDX-License-Identifier: Apache-2.0
// Reading ground-truth suites (format version 1) strictly, and turning rows into inputs.
#include "validation_suite.hpp"

#include <cstdlib>
#include <set>

#include "line_rates.hpp"
#include "loader_common.hpp"
#include "validation_suite_v2.hpp"
#include "yaml_reader.hpp"

namespace hetsim::models {

namespace {

using detail::set_if;

const EnumTable<Schedule>& schedule_table() {
  static const EnumTable<Schedule> t = {{"1f1b", Schedule::k1f1b}, {"gpipe", Schedule::kGpipe}};
  return t;
}
/// A reader over a row's own map (`model:` or `training:`) with the suite's defaults under it
/// (own keys win). An absent own map reads the defaults alone. Built without inserting YAML
/// nodes: yaml-cpp merges node memory on insertion, which made loading quadratic in the file
/// size. The defaults' own shape (a map, no repeated key) is checked once (checked_defaults),
/// so a mistake there is reported once, not once per row.
MapReader overlaid_reader(const std::optional<YAML::Node>& defaults, const char* defaults_path,
                          const std::optional<YAML::Node>& own, std::string path, DiagnosticSink& sink,
                          const YAML::Mark& anchor) {
  MapReader reader(own ? *own : YAML::Node(YAML::NodeType::Map), std::move(path), sink, anchor);
  if (defaults) reader.add_defaults(*defaults, defaults_path);
  return reader;
}

/// `defaults.model` or `defaults.training`: reported here when it is no map or repeats a key
/// (its keys themselves are checked in each row, merged under the row's own).
std::optional<YAML::Node> checked_defaults(MapReader& defaults, const char* key, DiagnosticSink& sink) {
  std::optional<YAML::Node> node = defaults.get_node(key, Need::kOptional);
  if (node && !MapReader(*node, defaults.field(key), sink, defaults.key_mark(key)).ok()) return std::nullopt;
  return node;
}

void read_system(MapReader& m, SuiteSystem& s, const Catalog& catalog) {
  if (auto gpu = m.get_string("gpu", Need::kRequired)) {
    if (!catalog.by_name_or_null(*gpu)) m.get_sink().error(m.value_mark_of("gpu"), m.field("gpu"), catalog.unknown_gpu_message(*gpu));
    s.gpu = *gpu;
  }
  set_if(s.gpus_per_node, m.get_int("gpus_per_node", Need::kRequired, 1, kMaxGpusPerNode));
  set_if(s.intra_node_Bps, m.get_quantity("intra_node_bandwidth", Need::kRequired, parse_bandwidth,
                                          "a bandwidth such as \"300GB/s\"", true));
  set_if(s.inter_node_Bps, m.get_quantity("inter_node_bandwidth", Need::kRequired, parse_bandwidth,
                                          "a bandwidth such as \"25GB/s\"", true));
  set_if(s.inter_node_latency_s, m.get_quantity("inter_node_latency", Need::kOptional, parse_time,
                                                "a time such as \"5us\"", false));
  m.finish();
}

/// Version 2 accepts the node-group form of `system:` next to the homogeneous one.
void read_any_system(MapReader& m, SuiteSystem& s, const Catalog& catalog, int format) {
  if (format >= 2 && m.ok() && m.has("nodes")) detail::read_system_groups(m, s, catalog);
  else {
    s.nodes.clear();
    read_system(m, s, catalog);
  }
}

/// The row's `model:` (docs: no `dropout` in the suite format). A key of `defaults` checked
/// against a row's own value is reported at the defaults, once per row: name the row, or two
/// errors at one place read "heads (24)" and "heads (32)" unexplained.
void read_model(MapReader& m, ModelSpec& spec) {
  detail::read_model_spec(m, spec, false, [&m](const char* key) {
    return m.field(key) == field_path(m.get_path(), key) ? std::string() : "in " + m.get_path() + ", ";
  });
}

void read_training(MapReader& m, SuiteRow& row) {
  set_if(row.training.dtype, m.get_enum("dtype", Need::kRequired, detail::dtype_table()));
  set_if(row.recompute, m.get_enum("recompute", Need::kRequired, detail::recompute_table()));
  set_if(row.schedule, m.get_enum("schedule", Need::kRequired, schedule_table()));
  set_if(row.training.flash_attention, m.get_bool("flash_attention", Need::kOptional));
  set_if(row.training.fp32_grad_allreduce, m.get_bool("fp32_grad_allreduce", Need::kOptional));
  set_if(row.training.allow_tf32, m.get_bool("allow_tf32", Need::kOptional));
  m.finish();
}

/// The extension `sharded_collectives` (Plan::sharded_collectives), after `zero` was read.
void read_sharded_collectives(MapReader& m, SuiteRow& row) {
  const auto how = m.get_enum("sharded_collectives", Need::kOptional, detail::sharded_collectives_table());
  set_if(row.sharded_collectives, how);
  if (how && row.zero < 2)
    m.get_sink().error(m.value_mark_of("sharded_collectives"), m.field("sharded_collectives"),
                       "only ZeRO-2 and ZeRO-3 run per-pass sharded collectives (expected zero: 2 or 3 beside it)");
}

/// Beside a version-2 `plan`, `parallel` may still give what a plan's stages cannot say:
/// interleave (each stage's layers in that many chunks: "everything of version 1 holds"),
/// sequence_parallel, zero, and the extensions tp_comm_overlap, overlap_grad_sync,
/// overlap_p2p_comm and sharded_collectives. tp, pp and dp are the plan's own (its replicas' GPU
/// counts, its stages and its replicas): given beside it they are reported as unknown keys, with
/// these as expected. Version 1's `parallel` reads these too, after its degrees.
void read_parallel_beside_plan(MapReader& m, SuiteRow& row) {
  set_if(row.interleave, m.get_int("interleave", Need::kOptional, 1, 1 << 10));
  set_if(row.sequence_parallel, m.get_bool("sequence_parallel", Need::kOptional));
  set_if(row.tp_comm_overlap, m.get_bool("tp_comm_overlap", Need::kOptional));
  set_if(row.overlap_grad_sync, m.get_bool("overlap_grad_sync", Need::kOptional));
  set_if(row.overlap_p2p_comm, m.get_bool("overlap_p2p_comm", Need::kOptional));
  set_if(row.zero, m.get_int("zero", Need::kOptional, 0, 3));
  read_sharded_collectives(m, row);
  for (const char* key : kSuiteParallelKeys)
    detail::mark_field(row, std::string("parallel.") + key, m.value_mark_of(key));
  m.finish();
}

void read_parallel(MapReader& m, SuiteRow& row) {
  set_if(row.tp, m.get_int("tp", Need::kRequired, 1, 1 << 20));
  set_if(row.pp, m.get_int("pp", Need::kRequired, 1, 1 << 20));
  set_if(row.dp, m.get_int("dp", Need::kRequired, 1, 1 << 20));
  read_parallel_beside_plan(m, row);
  // Each degree is in range, their product need not be: tp 8, pp 24, dp 2^20 built a cluster of
  // 2e8 GPUs (minutes and gigabytes before any error), and the product of three can overflow.
  const long long gpus = static_cast<long long>(row.tp) * row.pp * row.dp;
  if (gpus > kMaxClusterGpus)
    m.get_sink().error(m.get_anchor(), m.get_path(),
                       "tp*pp*dp (" + std::to_string(gpus) + ") exceeds the cluster bound of " +
                           std::to_string(kMaxClusterGpus) + " GPUs (expected fewer GPUs)");
}

/// `measured` is the metric's value in seconds; a time written with its unit ("3.5s", "350ms"),
/// as every other figure of the project's inputs is, is read as that time.
void read_measured(MapReader& r, SuiteRow& row) {
  const YAML::Node value = r.get_node("measured", Need::kOptional).value_or(YAML::Node());
  double number = 0;
  if (value.IsScalar() && !YAML::convert<double>::decode(value, number)) {
    const std::string& text = value.Scalar();
    char* end = nullptr;
    std::strtod(text.c_str(), &end);
    // strtod reads hexadecimal too ("0x10"), which YAML does not make a float: say that, not "out
    // of range".
    const bool hex = text.find_first_of("xX") != std::string::npos;
    const bool a_number = !text.empty() && end == text.c_str() + text.size() && !hex;  // but not a double: 1e400
    const ParsedQuantity as_time = parse_time(text);
    if (as_time.ok()) {
      set_if(row.measured, r.get_quantity("measured", Need::kRequired, parse_time, "a time such as \"3.5s\"", true));
    } else if (a_number) {
      r.get_sink().error(r.value_mark_of("measured"), r.field("measured"),
                         "value " + text + " out of range (expected a number > 0 and <= 1e+12)");
    } else if (as_time.error.rfind("value out of range", 0) == 0 || as_time.error.rfind("negative value", 0) == 0) {
      r.get_sink().error(r.value_mark_of("measured"), r.field("measured"), as_time.error);  // a time, beyond the bounds
    } else if (end == text.c_str() + text.size() && hex) {
      r.get_sink().error(r.value_mark_of("measured"), r.field("measured"),
                         "'" + text + "' is a hexadecimal number (expected decimal seconds, such as 3.528)");
    } else {
      r.get_sink().error(r.value_mark_of("measured"), r.field("measured"),
                         "'" + value.Scalar() + "' is not a time (expected seconds, 3.528, or a time such as \"3.5s\")");
    }
  } else {
    set_if(row.measured, r.get_number("measured", Need::kRequired, 0, 1e12, true));
  }
  // A step shorter than a microsecond is no training step (a subnormal 1e-320 passed "> 0"
  // and made the suite's MAPE inf%).
  constexpr double kMinMeasured_s = 1e-6;
  if (row.measured > 0 && row.measured < kMinMeasured_s)
    r.get_sink().error(r.value_mark_of("measured"), r.field("measured"),
                       "a step of less than a microsecond (expected seconds per step, such as 3.528)");
}

void read_batch(MapReader& m, SuiteRow& row) {
  set_if(row.training.global_batch, m.get_int("global", Need::kRequired, 1, kMaxGlobalBatch));
  if (auto micro = m.get_int("micro", Need::kOptional, 1, 1 << 24)) row.micro = *micro;
  detail::mark_field(row, "batch.global", m.value_mark_of("global"));
  detail::mark_field(row, "batch.micro", m.value_mark_of("micro"));
  m.finish();
}

/// Copies the diagnostics of a row's private sink into the file's sink, once each (errors in
/// `defaults` would otherwise repeat on every row).
void merge_unique(const DiagnosticSink& from, DiagnosticSink& into, std::set<std::string>& seen) {
  for (const Diagnostic& d : from.get_diagnostics()) {
    // A key of `defaults` is read in every row: the same message at the same place is one
    // mistake, reported once (under the first row's path).
    const std::string key = d.line > 0 ? std::to_string(d.line) + ":" + std::to_string(d.col) + ":" + d.message : d.to_string();
    if (!seen.insert(key).second) continue;
    YAML::Mark mark = YAML::Mark::null_mark();
    if (d.line > 0) {
      mark = YAML::Mark();
      mark.line = d.line - 1;
      mark.column = d.col - 1;
    }
    into.error(mark, d.field, d.message);
  }
}

/// Where a file uses a version-2 key (`system.nodes`, a row's `plan` or its `system.nodes`), or a
/// null mark when it
/// uses none: the version the file's shape implies when its `format` is missing or malformed.
YAML::Mark first_format2_key(const YAML::Node& root) {
  auto key_mark = [](const YAML::Node& map, const char* key) {
    if (map.IsMap())
      for (const auto& item : map)
        if (item.first.IsScalar() && item.first.Scalar() == key) return item.first.Mark();
    return YAML::Mark::null_mark();
  };
  // Looked up by iterating: operator[] of a const node returns an invalid node for a missing
  // key, which throws on first use (a suite without `system` or `rows` is reported, not fatal).
  auto child = [](const YAML::Node& map, const char* key) {
    if (map.IsMap())
      for (const auto& item : map)
        if (item.first.IsScalar() && item.first.Scalar() == key) return item.second;
    return YAML::Node();
  };
  if (const YAML::Mark at = key_mark(child(root, "system"), "nodes"); !at.is_null()) return at;
  const YAML::Node rows = child(root, "rows");
  if (rows.IsSequence())
    for (const YAML::Node& row : rows) {
      if (const YAML::Mark at = key_mark(row, "plan"); !at.is_null()) return at;
      if (const YAML::Mark at = key_mark(child(row, "system"), "nodes"); !at.is_null()) return at;
    }
  return YAML::Mark::null_mark();
}

}  // namespace

Suite parse_suite(std::string_view text, const Catalog& catalog, const std::string& name) {
  DiagnosticSink sink(name);
  Suite suite;
  suite.file = name;
  const auto doc = parse_yaml_document(text, sink, "'suite:'");
  // Another input (`kind: cluster`, a plan...) given as a suite: one error that says so, not
  // one per suite key it lacks.
  if (doc && doc->IsMap() && (*doc)["kind"] && !(*doc)["suite"]) {
    const YAML::Node kind = (*doc)["kind"];
    sink.error(kind.Mark(), "kind",
               "a '" + (kind.IsScalar() ? kind.Scalar() : std::string("?")) +
                   "' file, not a validation suite (expected `suite:`, `source:`, `metric:`, `system:` and `rows:`, "
                   "docs/validation.md)");
    sink.throw_if_any();
  }
  if (doc) {
    MapReader root(*doc, "", sink, YAML::Mark());
    set_if(suite.name, root.get_string("suite", Need::kRequired));
    if (const YAML::Mark at = root.value_mark_of("suite"); !at.is_null()) suite.name_at = {at.line + 1, at.column + 1};
    set_if(suite.source, root.get_string("source", Need::kRequired));
    // A malformed or missing `format` is reported once; the rest of the file is then read in
    // the version its keys imply, so that one mistake does not come back as an error on
    // every row ("unknown key 'plan'") while the file's other errors are still all reported.
    const YAML::Mark format2_at = doc->IsMap() ? first_format2_key(*doc) : YAML::Mark::null_mark();
    const bool format2_shape = !format2_at.is_null();
    if (auto format = root.get_int("format", Need::kOptional, 1, 2)) {
      suite.format = *format;
      if (*format == 1 && format2_shape) {
        // One error, at the format, not one per version-2 key read as version 1 ("unknown key
        // 'nodes'", "missing key 'parallel'" on every row); the rest is read as version 2.
        sink.error(root.value_mark_of("format"), "format",
                   "1, but the file uses version-2 keys (system.nodes, or a row's plan or system.nodes; the first at "
                   "line " + std::to_string(format2_at.line + 1) + ") (expected `format: 2`)");
        suite.format = 2;
      }
    } else if (root.has("format")) {
      suite.format = format2_shape ? 2 : 1;  // its value was reported as malformed
    } else if (format2_shape) {
      sink.error(format2_at, "format",
                 "a version-2 key (system.nodes, or a row's plan or system.nodes) in a file without a format "
                 "(expected `format: 2` at the top of the file)");
      suite.format = 2;
    }
    if (auto metric = root.get_string("metric", Need::kRequired)) {
      if (*metric != "iteration_time_s")
        sink.error(root.value_mark_of("metric"), "metric", "unknown metric '" + *metric + "' (expected iteration_time_s)");
      suite.metric = *metric;
    }
    SuiteSystem system;
    if (auto s = root.get_map("system", Need::kRequired)) read_any_system(*s, system, catalog, suite.format);
    std::optional<YAML::Node> default_model, default_training;
    if (auto d = root.get_map("defaults", Need::kOptional)) {
      default_model = checked_defaults(*d, "model", sink);
      default_training = checked_defaults(*d, "training", sink);
      d->finish();
    }
    std::set<std::string> seen, ids;
    if (auto rows = root.get_list("rows", Need::kRequired, 1)) {
      for (std::size_t i = 0; i < rows->size(); ++i) {
        const YAML::Node& node = (*rows)[i];
        DiagnosticSink row_sink(name);
        SuiteRow row;
        row.system = system;
        row.line = node.Mark().line + 1;
        MapReader r(node, index_path("rows", i), row_sink, node.Mark());
        if (!r.ok()) {  // not a map: said so, and nothing of it is "missing" (the defaults were)
          merge_unique(row_sink, sink, seen);
          continue;
        }
        set_if(row.id, r.get_string("id", Need::kRequired));
        if (const YAML::Mark at = r.value_mark_of("id"); !at.is_null()) row.field_at["id"] = {at.line + 1, at.column + 1};
        if (!row.id.empty() && !ids.insert(row.id).second)
          row_sink.error(r.value_mark_of("id"), r.field("id"), "duplicate id '" + row.id + "' (expected unique ids)");
        if (auto s = r.get_map("system", Need::kOptional)) {
          row.system = SuiteSystem{};  // "it replaces the suite's system whole": no key carries over
          read_any_system(*s, row.system, catalog, suite.format);
        }
        {
          MapReader m = overlaid_reader(default_model, "defaults.model", r.get_node("model", Need::kOptional), r.field("model"),
                                        row_sink, r.key_mark("model").is_null() ? node.Mark() : r.key_mark("model"));
          read_model(m, row.model);
        }
        {
          MapReader t = overlaid_reader(default_training, "defaults.training", r.get_node("training", Need::kOptional),
                                        r.field("training"), row_sink,
                                        r.key_mark("training").is_null() ? node.Mark() : r.key_mark("training"));
          read_training(t, row);
        }
        // Version 2: an explicit `plan:` instead of `parallel:`'s degrees.
        std::optional<detail::RowPlanInput> plan_input;
        if (suite.format >= 2 && r.has("plan")) {
          if (auto p = r.get_map("parallel", Need::kOptional)) read_parallel_beside_plan(*p, row);
          if (auto p = r.get_map("plan", Need::kRequired)) detail::read_row_plan(*p, plan_input.emplace(), row);
        } else if (suite.format >= 2 && !r.has("parallel")) {
          r.get_map("plan", Need::kRequired);  // neither: a version-2 row misses its plan, not `parallel`
        } else if (auto p = r.get_map("parallel", Need::kRequired)) {
          read_parallel(*p, row);
        }
        if (auto b = r.get_map("batch", Need::kRequired)) read_batch(*b, row);
        if (plan_input) detail::check_row_plan(*plan_input, row, row_sink);
        read_measured(r, row);
        set_if(row.note, r.get_string("note", Need::kOptional));
        r.finish();
        merge_unique(row_sink, sink, seen);
        suite.rows.push_back(std::move(row));
      }
    }
    root.finish();
  }
  sink.throw_if_any();
  return suite;
}

Suite load_suite(const std::string& path, const Catalog& catalog) {
  DiagnosticSink sink(path);
  const auto text = read_input_text(path, sink);
  sink.throw_if_any();
  return parse_suite(*text, catalog, path);
}

Cluster suite_cluster(const SuiteSystem& system, int gpus, const Catalog& catalog) {
  if (!system.nodes.empty()) return suite_cluster_from_groups(system, catalog);
  Cluster c;
  c.name = "suite";
  NodeType nt;
  nt.name = "node";
  nt.gpu = catalog.by_name(system.gpu);
  nt.gpus_per_node = system.gpus_per_node;
  nt.intra.kind = nt.gpu.vendor == Vendor::kAmd ? IntraFabricKind::kXgmi : IntraFabricKind::kNvswitch;
  nt.intra.bandwidth_Bps = system.intra_node_Bps;
  // A figure that is no line rate of its link was measured: used as is (line_rates.hpp).
  nt.intra.measured = !is_line_rate(nt.intra.kind, nt.intra.bandwidth_Bps);
  // NVLink/NVSwitch one-way small-message latency ~2 us (NVIDIA NVSwitch technical overview 2020).
  nt.intra.latency_s = 2e-6;
  nt.nics.count = system.gpus_per_node;  // the suite gives the per-GPU share of the node's NICs
  nt.nics.bandwidth_Bps = system.inter_node_Bps;
  nt.nics.kind = NicKind::kInfiniband;
  nt.nics.measured = !is_nic_share_line_rate(system.inter_node_Bps, system.gpus_per_node);
  nt.host_link_Bps = default_host_link_Bps(nt.gpu);  // only used by host-staged paths
  c.node_types.push_back(nt);
  Zone z;
  z.name = "suite";
  z.fabric.kind = ZoneFabricKind::kFatTree;
  z.fabric.latency_s = system.inter_node_latency_s;
  z.groups.push_back({0, (gpus + system.gpus_per_node - 1) / system.gpus_per_node});
  c.zones.push_back(z);
  c.finalize();
  return c;
}

Workload suite_workload(const Suite& suite, const SuiteRow& row) {
  Workload w;
  w.name = suite.name + "/" + row.id;
  w.model = row.model;
  w.training = row.training;
  return w;
}

std::variant<Plan, Infeasible> suite_plan(const SuiteRow& row, const Cluster& cluster, const Workload& workload,
                                          int micro) {
  if (row.plan) return detail::suite_explicit_plan(row, cluster, workload, micro);
  UniformPlanOptions o;
  o.micro_batch = micro;
  o.schedule = row.interleave > 1 ? Schedule::kInterleaved : row.schedule;
  o.interleave = row.interleave;
  o.recompute = row.recompute;
  o.sequence_parallel = row.sequence_parallel;
  o.tp_comm_overlap = row.tp_comm_overlap;
  o.overlap_p2p_comm = row.overlap_p2p_comm;
  o.overlap_grad_sync = row.overlap_grad_sync;
  o.zero = row.zero;
  o.sharded_collectives = row.sharded_collectives;
  return make_uniform_plan(cluster, workload, row.tp, row.pp, row.dp, o);
}

}  // namespace hetsim::models
