// SPDX-License-Identifier: Apache-2.0
// `hetsim describe FILE...`: loads GPU catalogs, clusters, workloads, plans and profiles (any mix) and
// prints what was understood, in SI-derived units, so a user can check an input before using it.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "catalog.hpp"
#include "cli_common.hpp"
#include "describe_profile.hpp"
#include "describe_sweep.hpp"
#include "json_writer.hpp"
#include "preemption.hpp"
#include "diagnostics.hpp"
#include "input_loader.hpp"
#include "plan_writer.hpp"
#include "predictor.hpp"
#include "units.hpp"
#include "verbs.hpp"

namespace hetsim::cli {
namespace {

/// The shallowest and deepest pipeline of a plan's replicas (Plan::pp() is replica 0's: a plan of
/// 3-, 1- and 4-stage replicas read "pp 3"; s68 consistency hunt).
std::pair<int, int> pipeline_depths(const models::Plan& p) {
  int least = p.pp(), most = p.pp();
  for (const models::Replica& r : p.replicas) {
    least = std::min(least, static_cast<int>(r.stages.size()));
    most = std::max(most, static_cast<int>(r.stages.size()));
  }
  return {least, most};
}


using models::InputKind;

struct DescribeOptions {
  std::vector<std::string> files;
  std::string cluster;
  std::string workload;
  OutputFormat format = OutputFormat::kTable;
};

/// One input file as loaded.
struct Described {
  std::string file;
  InputKind kind = InputKind::kCluster;
  std::vector<models::GpuType> gpus;        // gpu-catalog
  std::optional<models::Cluster> cluster;   // cluster
  std::optional<models::Workload> workload; // workload
  std::optional<models::PlanSpec> spec;     // plan, as written
  std::optional<models::Plan> plan;         // plan, resolved and checked (when a cluster and workload are known)
  std::string plan_cluster, plan_workload;  // files the plan was checked against
  std::optional<models::Cluster> context;   // the cluster the plan was resolved on
  std::string infeasible_reason;            // the cost model's, when the checked plan does not fit or run
  std::optional<models::Profile> profile;   // profile
  std::optional<models::SweepSpec> sweep;   // sweep
};

/// The 16-bit peak used for headline figures: bf16, else fp16 (V100, T4...), else fp32 (CPUs).
std::pair<double, models::Dtype> headline_peak(const models::GpuType& g) {
  for (models::Dtype d : {models::Dtype::kBf16, models::Dtype::kFp16, models::Dtype::kFp32}) {
    if (g.supports(d)) return {g.peak(d), d};
  }
  return {0.0, models::Dtype::kBf16};
}

std::string peak_text(const models::GpuType& g) {
  const auto [peak, dtype] = headline_peak(g);
  std::string s = models::format_flops(peak);
  if (dtype != models::Dtype::kBf16) s += std::string(" (") + models::to_string(dtype) + ")";
  return s;
}

/// Totals over a set of nodes: GPUs by type, peak, memory, price.
struct Totals {
  std::map<std::string, int> gpus_by_type;
  int gpus = 0;
  int nodes = 0;
  double peak_flops = 0;
  double memory_bytes = 0;
  double price_per_hour = 0;
  double spot_price_per_hour = 0;  ///< at spot prices where a type has one (summed as price_per_hour, so equal without)
  void add(const models::NodeType& t, int count) {
    nodes += count;
    gpus += count * t.gpus_per_node;
    gpus_by_type[t.gpu.name] += count * t.gpus_per_node;
    peak_flops += count * t.gpus_per_node * headline_peak(t.gpu).first;
    memory_bytes += count * t.gpus_per_node * t.gpu.memory_bytes;
    price_per_hour += count * t.price_per_hour;
    spot_price_per_hour += count * t.price_per_hour_at(true);
  }
  std::string by_type_text() const {
    std::string s;
    for (const auto& [name, n] : gpus_by_type) s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    return s;
  }
};

Totals zone_totals(const models::Cluster& c, const models::Zone& z) {
  Totals t;
  for (const auto& g : z.groups) t.add(c.node_types[g.node_type], g.count);
  return t;
}

// ---- loading ----------------------------------------------------------------------------

class Loader {
 public:
  explicit Loader(const DescribeOptions& o) : opt_(o) {}

  std::vector<Described> run() {
    std::vector<Described> out;
    for (const auto& f : opt_.files) {
      Described d;
      d.file = f;
      if (!errors_.collect([&] { d.kind = models::peek_kind(f); })) continue;
      switch (d.kind) {
        case InputKind::kGpuCatalog: errors_.collect([&] { d.gpus = models::load_catalog_file(f); }); break;
        case InputKind::kCluster: errors_.collect([&] { d.cluster = load_cluster_file(f); }); break;
        case InputKind::kWorkload: errors_.collect([&] { d.workload = load_workload_file(f); }); break;
        case InputKind::kPlan: break;  // below, once clusters and workloads are known
        case InputKind::kProfile: errors_.collect([&] { d.profile = models::load_profile(f); }); break;
        case InputKind::kSweep: errors_.collect([&] { d.sweep = load_checked_sweep(f); }); break;
      }
      out.push_back(std::move(d));
    }
    // Inputs for each plan, in this order: --cluster/--workload; the plan's header comment
    // (# cluster: NAME, # workload: NAME); the only cluster/workload among the files.
    std::optional<models::Cluster> opt_cluster;
    std::optional<models::Workload> opt_workload;
    if (!opt_.cluster.empty()) errors_.collect([&] { opt_cluster = load_cluster_file(opt_.cluster); });
    if (!opt_.workload.empty()) errors_.collect([&] { opt_workload = load_workload_file(opt_.workload); });
    const Described* only_cluster = only_of(out, InputKind::kCluster);
    const Described* only_workload = only_of(out, InputKind::kWorkload);
    for (auto& d : out) {
      if (d.kind != InputKind::kPlan) continue;
      // A plan with errors of its own is still checked against its cluster and workload where
      // they load: a misspelt `schedule` hid a GPU index out of range (s52 bad-input hunt). The
      // collector keeps once each error both loads report.
      errors_.collect([&] { d.spec = models::load_plan_spec(d.file); });
      const models::PlanHeader header = models::read_plan_header(d.file);
      for (models::Diagnostic& c : plan_header_conflicts(d.file, header)) errors_.add(std::move(c));
      std::optional<models::Cluster> cluster;
      std::optional<models::Workload> workload;
      if (!opt_.cluster.empty()) {
        cluster = opt_cluster;
        d.plan_cluster = opt_.cluster;
      } else if (!header.cluster.empty()) {
        d.plan_cluster = header.cluster;
        // A cluster that does not load leaves the plan unchecked, not its workload unread (s60
        // hunt: a broken header cluster hid the header workload's errors, which predict shows).
        if (header_file_exists(d.file, header.cluster, header.cluster_line, "cluster"))
          errors_.collect([&] { cluster = load_cluster_file(header.cluster); });
      } else if (only_cluster != nullptr) {
        cluster = only_cluster->cluster;
        d.plan_cluster = only_cluster->file;
      }
      if (!opt_.workload.empty()) {
        workload = opt_workload;
        d.plan_workload = opt_.workload;
      } else if (!header.workload.empty()) {
        d.plan_workload = header.workload;
        if (header_file_exists(d.file, header.workload, header.workload_line, "workload"))
          errors_.collect([&] { workload = load_workload_file(header.workload); });
      } else if (only_workload != nullptr) {
        workload = only_workload->workload;
        d.plan_workload = only_workload->file;
      }
      if (cluster && workload) {
        if (errors_.collect([&] { d.plan = models::load_plan(d.file, *cluster, *workload, &d.infeasible_reason); })) {
          // A well-formed plan can still be one that predict, simulate and run refuse (a TP degree
          // that does not divide the model, over memory, ZeRO-3 with unequal micro-batch counts):
          // say so here too.
          if (d.infeasible_reason.empty())
            if (const models::Report r = models::predict(*cluster, *workload, *d.plan); !r.feasible)
              d.infeasible_reason = r.infeasible_reason;
          d.context = std::move(cluster);
        }
      }
    }
    errors_.throw_if_any();
    if (first_of(out, InputKind::kPlan) == nullptr) note_unused_option_files();
    return out;
  }

 private:
  bool header_file_exists(const std::string& plan, const std::string& named, int line, const char* what) {
    std::optional<models::Diagnostic> problem = plan_header_file_problem(plan, named, line, what);
    if (problem) errors_.add(*std::move(problem));
    return !problem;
  }

  /// --cluster and --workload only serve to check plans: say so when none was given, rather than
  /// load the files and drop them without a word.
  void note_unused_option_files() const {
    for (const auto& [flag, file] : {std::pair{"--cluster", &opt_.cluster}, std::pair{"--workload", &opt_.workload}}) {
      if (file->empty()) continue;
      std::cerr << "hetsim describe: note: " << flag << " '" << *file
                << "' was loaded but not used: it checks plans, and no plan is among the files\n";
    }
  }

  static const Described* first_of(const std::vector<Described>& v, InputKind k) {
    for (const auto& d : v)
      if (d.kind == k) return &d;
    return nullptr;
  }

  static const Described* only_of(const std::vector<Described>& v, InputKind k) {
    const Described* found = nullptr;
    for (const auto& d : v) {
      if (d.kind != k) continue;
      if (found) return nullptr;
      found = &d;
    }
    return found;
  }

  const DescribeOptions& opt_;
  models::DiagnosticCollector errors_;
};

// ---- table output -----------------------------------------------------------------------

/// Whether a catalog file lies in the folder hetsim reads GPU types from: a file checked with
/// `describe` elsewhere reads fine while clusters naming its types fail (s67 walkthrough).
bool in_active_catalog(const std::string& file) {
  std::error_code ec;
  const auto folder = std::filesystem::weakly_canonical(models::Catalog::builtin_dir(), ec);
  const auto parent = std::filesystem::weakly_canonical(std::filesystem::path(file), ec).parent_path();
  return !ec && parent == folder;
}

std::string catalog_elsewhere_note() {
  return "this file is not in the folder GPU types are read from (" + models::Catalog::builtin_dir() +
         "): clusters naming its types will not find them unless $HETSIM_CATALOG_DIR names a copy of that folder "
         "with this file added (docs/adding-inputs.md)";
}

void print_catalog(const Described& d, std::ostream& out) {
  out << "gpu-catalog (" << d.file << "): " << d.gpus.size() << " device types\n";
  // "sustained": the headline peak times the GEMM efficiency the cost model uses for it.
  TextTable t({"name", "vendor", "peak bf16", "sustained", "peak fp32", "memory", "memory bw", "host link"});
  for (const auto& g : d.gpus) {
    const auto [peak, dtype] = headline_peak(g);
    t.add_row({g.name, models::to_string(g.vendor), peak_text(g), models::format_flops(peak * g.gemm_efficiency_in(dtype)),
               g.supports(models::Dtype::kFp32) ? models::format_flops(g.peak(models::Dtype::kFp32)) : "-",
               models::format_size(g.memory_bytes), models::format_bandwidth(g.memory_bandwidth_Bps),
               g.host_link_Bps > 0 ? models::format_bandwidth(g.host_link_Bps) : "-"});
  }
  t.print(out, "  ");
  if (!in_active_catalog(d.file)) out << "note: " << catalog_elsewhere_note() << "\n";
}

void print_cluster(const Described& d, std::ostream& out) {
  const models::Cluster& c = *d.cluster;
  out << "cluster " << c.name << " (" << d.file << ")\n";
  TextTable types({"node type", "gpu", "gpus", "peak bf16/GPU", "memory/GPU", "intra", "inter (NICs)", "host link",
                   "price/node"});
  for (const auto& t : c.node_types) {
    const std::string intra = t.intra.kind == models::IntraFabricKind::kNone
                                  ? "-"
                                  : std::string(models::to_string(t.intra.kind)) + " " + models::format_bandwidth(t.intra.bandwidth_Bps) +
                                        (t.intra.peer_to_peer ? " p2p" : "") + (t.intra.mesh ? " mesh" : "");
    const std::string inter = std::to_string(t.nics.count) + " x " + models::format_bandwidth(t.nics.bandwidth_Bps) + " " +
                              models::to_string(t.nics.kind);
    std::string price = format_price_per_hour(t.price_per_hour);
    if (t.spot_price_per_hour) {
      price += " (spot " + format_price_per_hour(*t.spot_price_per_hour);
      if (t.preemption_rate_per_hour > 0) {
        std::ostringstream rate;
        rate << t.preemption_rate_per_hour;
        price += ", reclaimed " + rate.str() + "/h";
      }
      price += ")";
    }
    types.add_row({t.name, t.gpu.name, std::to_string(t.gpus_per_node), peak_text(t.gpu),
                   models::format_size(t.gpu.memory_bytes), intra, inter, models::format_bandwidth(t.host_link_Bps), price});
  }
  types.print(out, "  ");
  out << '\n';
  TextTable zones({"zone", "fabric", "nodes", "GPUs", "GPUs by type", "peak bf16", "memory", "price"});
  Totals all;
  for (const auto& z : c.zones) {
    std::string nodes;
    for (const auto& g : z.groups) {
      nodes += (nodes.empty() ? "" : ", ") + std::to_string(g.count) + " x " + c.node_types[g.node_type].name;
      all.add(c.node_types[g.node_type], g.count);
    }
    char fabric[64];
    std::snprintf(fabric, sizeof fabric, "%s %g:1", models::to_string(z.fabric.kind), z.fabric.oversubscription);
    const Totals t = zone_totals(c, z);
    zones.add_row({z.name, fabric, nodes, std::to_string(t.gpus), t.by_type_text(), models::format_flops(t.peak_flops),
                   models::format_size(t.memory_bytes), format_price_per_hour(t.price_per_hour)});
  }
  zones.print(out, "  ");
  if (!c.links.empty()) {
    out << '\n';
    TextTable links({"link", "bandwidth", "latency", "egress"});
    for (const auto& l : c.links) {
      char egress[64];
      std::snprintf(egress, sizeof egress, "$%.4g/GB", l.egress_price_per_byte * 1e9);
      links.add_row({c.zones[l.zone_a].name + " <-> " + c.zones[l.zone_b].name, models::format_bandwidth(l.bandwidth_Bps),
                     models::format_time(l.latency_s), egress});
    }
    links.print(out, "  ");
  }
  out << "  total: " << all.nodes << " nodes, " << all.gpus << " GPUs (" << all.by_type_text() << "), peak bf16 "
      << models::format_flops(all.peak_flops) << ", memory " << models::format_size(all.memory_bytes) << ", "
      << format_price_per_hour(c.price_per_hour(false)) << " on demand";
  if (c.price_per_hour(true) != c.price_per_hour(false)) out << ", " << format_price_per_hour(c.price_per_hour(true)) << " spot";
  out << '\n';
  const bool all_bf16 = std::all_of(c.node_types.begin(), c.node_types.end(),
                                    [](const models::NodeType& t) { return t.gpu.supports(models::Dtype::kBf16); });
  if (!all_bf16) out << "  (peak bf16: fp16 or fp32 for devices without bf16, as marked)\n";
}

void print_workload(const Described& d, std::ostream& out) {
  const models::Workload& w = *d.workload;
  const models::ModelSpec& m = w.model;
  out << "workload " << w.name << " (" << d.file << ")\n";
  out << "  model: " << m.layers << " layers, hidden " << m.hidden << ", " << m.heads << " heads (" << m.kv_heads
      << " kv), ffn " << m.ffn_hidden << ", vocab " << m.vocab << ", seq_len " << m.seq_len << ", "
      << models::to_string(m.activation) << ", " << (m.tied_embeddings ? "tied" : "untied") << " embeddings, dropout " << m.dropout << "\n";
  out << "  parameters: " << format_count(m.params_total()) << " (" << format_count(m.params_per_layer())
      << " per layer, " << format_count(m.params_embedding()) << " embedding and head)\n";
  out << "  FLOPs per token: " << format_work(m.flops_per_token()) << " (forward + backward, no recompute)\n";
  const double tokens = static_cast<double>(w.training.global_batch) * m.seq_len;
  out << "  training: global batch " << w.training.global_batch << " sequences (" << format_count(tokens)
      << " tokens), " << models::to_string(w.training.dtype)
      << (w.training.dtype != models::Dtype::kFp32 ? ""
          : w.training.allow_tf32              ? " (matmuls in TF32 where the GPU has it)"
                                               : " (matmuls on the FP32 cores)")
      << ", " << models::to_string(w.training.optimizer)
      // Off by default (Megatron-LM's own softmax): said either way, as at long sequences it
      // changes the step several times over.
      << (w.training.flash_attention ? ", flash attention"
                                     : ", no flash attention (training.flash_attention: true for stacks that use it)")
      << "\n";
  out << "  FLOPs per step: " << format_work(m.flops_per_token() * tokens) << "\n";
}

void print_plan(const Described& d, std::ostream& out) {
  const models::Plan& p = d.plan ? *d.plan : d.spec->plan;
  out << "plan " << (p.name.empty() ? "(unnamed)" : p.name) << " (" << d.file << ")\n";
  if (d.plan) {
    out << "  checked against " << d.plan_cluster << " and " << d.plan_workload << "\n";
    if (!d.infeasible_reason.empty())
      out << "  infeasible: " << d.infeasible_reason << " (predict, simulate and run refuse it)\n";
  } else {
    out << "  not cross-checked (give --cluster and --workload, or a '# cluster: ... workload: ...' header)\n";
  }
  out << "  micro_batch " << p.micro_batch << ", schedule " << models::to_string(p.schedule);
  if (p.schedule == models::Schedule::kInterleaved) out << " x" << p.interleave;
  if (p.overlap_p2p_comm) out << " (pipeline sends overlapped)";
  out << ", recompute " << models::to_string(p.recompute) << ", sequence_parallel "
      << (p.sequence_parallel ? "yes" : "no") << (p.tp_comm_overlap ? " (TP communication overlapped)" : "")
      << ", zero " << p.zero;
  if (p.zero == 3 && !p.zero3_prefetch) out << " (no prefetch)";
  if (p.zero >= 2 && p.sharded_collectives == models::ShardedCollectives::kNodeNics) out << " (gathers over node NICs)";
  out << ", grad_sync " << models::to_string(p.grad_sync) << (p.overlap_grad_sync ? " (overlapped)" : "") << "\n";
  const auto [pp_least, pp_most] = pipeline_depths(p);
  out << "  dp " << p.dp() << ", pp " << pp_least;
  if (pp_most != pp_least) out << "-" << pp_most << " (the replicas' pipelines differ in depth)";
  if (d.plan) out << ", " << p.gpu_count() << " GPUs";
  out << ", global batch " << p.global_batch() << " sequences per step\n";
  TextTable t({"replica", "micro-batches", "stage", "layers", "tp", "gpus", "gpu type"});
  for (size_t r = 0; r < p.replicas.size(); ++r) {
    const auto& rep = p.replicas[r];
    for (size_t s = 0; s < rep.stages.size(); ++s) {
      const auto& st = rep.stages[s];
      std::string type = "?", tp = "?", gpus = d.spec->gpus_text[r][s];
      if (d.plan) {
        tp = std::to_string(st.tp());
        gpus = models::index_ranges(st.gpus);
        type = d.context->gpu_types_label(st.gpus);
      }
      t.add_row({s == 0 ? std::to_string(r) : "", s == 0 ? std::to_string(rep.micro_batches) : "", std::to_string(s),
                 std::to_string(st.layers), tp, gpus, type});
    }
  }
  t.print(out, "  ");
}

// ---- JSON output ------------------------------------------------------------------------

void json_gpu(models::JsonOut& j, const models::GpuType& g) {
  j.begin_object().key("name").value(g.name).key("vendor").value(models::to_string(g.vendor));
  j.key("peak_flops").begin_object();
  for (const auto& [dtype, peak] : g.peak_flops) j.key(models::to_string(dtype)).value(peak);
  j.end_object();
  j.key("memory_bytes").value(g.memory_bytes).key("memory_bandwidth_Bps").value(g.memory_bandwidth_Bps);
  j.key("efficiency").begin_object()
      .key("gemm").value(g.efficiency.gemm_efficiency)
      .key("gemm_fp32").value(g.gemm_efficiency_in(models::Dtype::kFp32))
      .key("gemm_half_work_flop").value(g.efficiency.gemm_half_work_flop)
      .key("memory").value(g.efficiency.memory_efficiency)
      .key("gemm_memory").value(g.efficiency.gemm_memory())
      .key("optimizer_memory").value(g.efficiency.optimizer_memory())
      .key("gemm_k0").value(g.efficiency.gemm_k0)
      .key("gemm_full_outputs").value(g.efficiency.gemm_full_outputs)
      .key("kernel_launch_s").value(g.efficiency.kernel_launch_s)
      .key("framework_op_host_s").value(g.efficiency.framework_op_host_s)
      .key("framework_pass_host_s").value(g.efficiency.framework_pass_host_s)
      .key("flash").value(g.efficiency.flash_scale)
      .end_object();
  j.key("source").value(g.source).end_object();
}

void json_totals(models::JsonOut& j, const Totals& t) {
  j.key("nodes").value(t.nodes).key("gpus").value(t.gpus);
  j.key("gpus_by_type").begin_object();
  for (const auto& [name, n] : t.gpus_by_type) j.key(name).value(n);
  j.end_object();
  // Each GPU's headline peak (bf16, else fp16, else fp32: headline_peak), summed.
  j.key("peak_headline_flops").value(t.peak_flops).key("memory_bytes").value(t.memory_bytes);
  j.key("price_per_hour").value(t.price_per_hour);
}

void json_cluster(models::JsonOut& j, const models::Cluster& c) {
  j.key("name").value(c.name).key("cross_vendor_rdma").value(c.cross_vendor_rdma);
  j.key("node_types").begin_array();
  for (const auto& t : c.node_types) {
    j.begin_object().key("name").value(t.name).key("gpu").value(t.gpu.name).key("gpus_per_node").value(t.gpus_per_node);
    j.key("peak_headline_flops").value(headline_peak(t.gpu).first).key("peak_dtype").value(models::to_string(headline_peak(t.gpu).second));
    j.key("memory_bytes").value(t.gpu.memory_bytes);
    j.key("intra").begin_object().key("kind").value(models::to_string(t.intra.kind))
        .key("bandwidth_Bps").value(t.intra.bandwidth_Bps).key("latency_s").value(t.intra.latency_s)
        .key("peer_to_peer").value(t.intra.peer_to_peer).key("mesh").value(t.intra.mesh).end_object();
    j.key("nics").begin_object().key("count").value(t.nics.count).key("bandwidth_Bps").value(t.nics.bandwidth_Bps)
        .key("kind").value(models::to_string(t.nics.kind)).key("latency_s").value(t.nics.latency_s)
        .key("gpu_direct").value(t.nics.gpu_direct).end_object();
    j.key("host_link_Bps").value(t.host_link_Bps).key("price_per_hour").value(t.price_per_hour);
    j.key("spot_price_per_hour");
    if (t.spot_price_per_hour) j.value(*t.spot_price_per_hour); else j.null();
    j.key("preemption_rate_per_hour").value(t.preemption_rate_per_hour);
    j.key("checkpoint_bandwidth_Bps").value(models::checkpoint_bandwidth_Bps(t));
    j.key("restart_time_s").value(t.restart_time_s);
    j.end_object();
  }
  j.end_array();
  Totals all;
  j.key("zones").begin_array();
  for (const auto& z : c.zones) {
    j.begin_object().key("name").value(z.name);
    j.key("fabric").begin_object().key("kind").value(models::to_string(z.fabric.kind))
        .key("oversubscription").value(z.fabric.oversubscription).key("latency_s").value(z.fabric.latency_s)
        .key("bandwidth_Bps");
    if (z.fabric.bandwidth_Bps > 0) j.value(z.fabric.bandwidth_Bps);
    else j.null();  // no port cap (0 inside), not a 0 B/s fabric
    j.end_object();
    j.key("node_groups").begin_array();  // "nodes" is the zone's node count (json_totals)
    for (const auto& g : z.groups) {
      j.begin_object().key("type").value(c.node_types[g.node_type].name).key("count").value(g.count).end_object();
      all.add(c.node_types[g.node_type], g.count);
    }
    j.end_array();
    json_totals(j, zone_totals(c, z));
    j.end_object();
  }
  j.end_array();
  j.key("links").begin_array();
  for (const auto& l : c.links) {
    j.begin_object().key("between").begin_array().value(c.zones[l.zone_a].name).value(c.zones[l.zone_b].name).end_array();
    j.key("bandwidth_Bps").value(l.bandwidth_Bps).key("latency_s").value(l.latency_s)
        .key("egress_price_per_byte").value(l.egress_price_per_byte).end_object();
  }
  j.end_array();
  j.key("total").begin_object();
  json_totals(j, all);
  // Summed as price_per_hour (json_totals) is: per node it drifted from it (2257.2799999999984
  // against 2257.28 for a cluster without spot prices; s65 JSON hunt).
  j.key("spot_price_per_hour").value(all.spot_price_per_hour);
  j.end_object();
}

void json_workload(models::JsonOut& j, const models::Workload& w) {
  const models::ModelSpec& m = w.model;
  j.key("name").value(w.name);
  j.key("model").begin_object().key("layers").value(m.layers).key("hidden").value(m.hidden).key("heads").value(m.heads)
      .key("kv_heads").value(m.kv_heads).key("ffn_hidden").value(m.ffn_hidden).key("vocab").value(m.vocab)
      .key("seq_len").value(m.seq_len).key("activation").value(models::to_string(m.activation))
      .key("tied_embeddings").value(m.tied_embeddings).key("dropout").value(m.dropout).end_object();
  j.key("training").begin_object().key("global_batch").value(w.training.global_batch)
      .key("dtype").value(models::to_string(w.training.dtype)).key("optimizer").value(models::to_string(w.training.optimizer))
      .key("flash_attention").value(w.training.flash_attention).key("allow_tf32").value(w.training.allow_tf32)
      .end_object();
  j.key("params").value(m.params_total()).key("params_per_layer").value(m.params_per_layer())
      .key("params_embedding").value(m.params_embedding()).key("flops_per_token").value(m.flops_per_token());
}

void json_plan(models::JsonOut& j, const Described& d) {
  const models::Plan& p = d.plan ? *d.plan : d.spec->plan;
  j.key("name").value(p.name).key("checked").value(d.plan.has_value());
  j.key("feasible");
  if (d.plan) j.value(d.infeasible_reason.empty()); else j.null();
  j.key("infeasible_reason").value(d.infeasible_reason);
  j.key("cluster").value(d.plan ? d.plan_cluster : "").key("workload").value(d.plan ? d.plan_workload : "");
  j.key("micro_batch").value(p.micro_batch).key("schedule").value(models::to_string(p.schedule))
      .key("interleave").value(p.interleave).key("recompute").value(models::to_string(p.recompute))
      .key("sequence_parallel").value(p.sequence_parallel).key("zero").value(p.zero)
      .key("grad_sync").value(models::to_string(p.grad_sync)).key("overlap_grad_sync").value(p.overlap_grad_sync)
      .key("tp_comm_overlap").value(p.tp_comm_overlap).key("overlap_p2p_comm").value(p.overlap_p2p_comm)
      .key("zero3_prefetch").value(p.zero3_prefetch)
      .key("sharded_collectives").value(models::to_string(p.sharded_collectives));
  // `pp` stays replica 0's depth for the scripts that read it; the range covers every replica.
  const auto [pp_least, pp_most] = pipeline_depths(p);
  j.key("dp").value(p.dp()).key("pp").value(p.pp()).key("pp_min").value(pp_least).key("pp_max").value(pp_most);
  j.key("global_batch").value(p.global_batch());
  j.key("gpus");
  if (d.plan) j.value(p.gpu_count()); else j.null();
  j.key("replicas").begin_array();
  for (size_t r = 0; r < p.replicas.size(); ++r) {
    const auto& rep = p.replicas[r];
    j.begin_object().key("micro_batches").value(rep.micro_batches).key("stages").begin_array();
    for (size_t s = 0; s < rep.stages.size(); ++s) {
      const auto& st = rep.stages[s];
      j.begin_object().key("layers").value(st.layers).key("gpus_text").value(d.spec->gpus_text[r][s]);
      if (d.plan) {
        j.key("tp").value(st.tp()).key("gpus").begin_array();
        for (int g : st.gpus) j.value(g);
        j.end_array().key("gpu_type").value(d.context->gpu_types_label(st.gpus));
      }
      j.end_object();
    }
    j.end_array().end_object();
  }
  j.end_array();
}

void describe_output(const std::vector<Described>& all, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::kJson) {
    models::JsonOut j;
    j.begin_object().key("files").begin_array();
    for (const auto& d : all) {
      j.begin_object().key("file").value(d.file).key("kind").value(models::to_string(d.kind));
      switch (d.kind) {
        case InputKind::kGpuCatalog:
          j.key("gpus").begin_array();
          for (const auto& g : d.gpus) json_gpu(j, g);
          j.end_array();
          j.key("in_active_catalog").value(in_active_catalog(d.file));
          break;
        case InputKind::kCluster: json_cluster(j, *d.cluster); break;
        case InputKind::kWorkload: json_workload(j, *d.workload); break;
        case InputKind::kPlan: json_plan(j, d); break;
        case InputKind::kProfile: json_profile(j, *d.profile); break;
        case InputKind::kSweep: json_sweep(j, *d.sweep); break;
      }
      j.end_object();
    }
    j.end_array().end_object();
    out << j.str();
    return;
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0) out << '\n';
    const Described& d = all[i];
    switch (d.kind) {
      case InputKind::kGpuCatalog: print_catalog(d, out); break;
      case InputKind::kCluster: print_cluster(d, out); break;
      case InputKind::kWorkload: print_workload(d, out); break;
      case InputKind::kPlan: print_plan(d, out); break;
      case InputKind::kProfile: print_profile(*d.profile, d.file, out); break;
      case InputKind::kSweep: print_sweep(*d.sweep, out); break;
    }
  }
}

}  // namespace

void add_describe_verb(CLI::App& app) {
  auto opt = std::make_shared<DescribeOptions>();
  CLI::App* cmd = app.add_subcommand("describe", "Load input files (any kind) and print what was understood");
  cmd->add_option("files", opt->files, "Input YAML files: gpu-catalog, cluster, workload, plan, profile or sweep")->required();
  cmd->add_option("--cluster", opt->cluster, "Cluster to check plans against (default: the plan's header comment)");
  cmd->add_option("--workload", opt->workload, "Workload to check plans against (default: the plan's header comment)");
  add_format_option(cmd, &opt->format);
  cmd->callback([opt] {
    const std::vector<Described> all = Loader(*opt).run();
    describe_output(all, opt->format, std::cout);
  });
}

}  // namespace hetsim::cli
