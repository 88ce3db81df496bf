// SPDX-License-Identifier: Apache-2.0
// Loader of `kind: profile` files and apply_profile() (models/profile.hpp, docs/inputs.md).
#include "profile.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "catalog.hpp"
#include "loader_common.hpp"
#include "text_match.hpp"
#include "topology.hpp"
#include "units.hpp"

namespace hetsim::models {
namespace {

constexpr std::array<std::pair<const char*, IntraFabricKind>, 5> kIntraClasses = {{
    {"nvswitch", IntraFabricKind::kNvswitch}, {"nvlink", IntraFabricKind::kNvlink},
    {"xgmi", IntraFabricKind::kXgmi}, {"pcie", IntraFabricKind::kPcie}, {"none", IntraFabricKind::kNone}}};
constexpr std::array<std::pair<const char*, NicKind>, 3> kNicClasses = {{
    {"infiniband", NicKind::kInfiniband}, {"roce", NicKind::kRoce}, {"ethernet", NicKind::kEthernet}}};
constexpr const char* kTime = "a time such as \"2us\"";

bool known_link_class(const std::string& name) {
  for (const auto& [n, k] : kIntraClasses)
    if (name == n) return true;
  for (const auto& [n, k] : kNicClasses)
    if (name == n) return true;
  return false;
}

/// The figures of `entry`, the catalog's `type` (nullptr: a name the catalog lacks, read for its
/// figures' own errors), into out.devices under the type's catalog name.
void read_device(const MapReader::Entry& entry, const GpuType* type, const std::string& path, DiagnosticSink& sink,
                 Profile& out) {
  MapReader r(entry.value, path, sink, entry.key_mark);
  DeviceProfile d;
  if (auto peak = r.get_map("peak", Need::kOptional)) {
    // A measured peak replaces the catalog's for a dtype the GPU computes in; it cannot give it
    // one it lacks (a V100 has no bf16: with a "peak" for it the planner trained bf16 on V100s).
    for (const auto& [name, dtype] : detail::dtype_table()) {
      auto f = peak->get_quantity(name, Need::kOptional, parse_flops, "a FLOP rate such as \"100GFLOP/s\"", true);
      if (!f) continue;
      if (type != nullptr && !type->supports(dtype)) {
        std::string has;
        for (const auto& [d, flops] : type->peak_flops) has += std::string(has.empty() ? "" : ", ") + to_string(d);
        sink.error(peak->key_mark(name), field_path(field_path(path, "peak"), name),
                   type->name + " has no " + name + " in the GPU catalog (expected a peak of a dtype it computes in: " +
                       has + ")");
        continue;
      }
      d.peak_flops[dtype] = *f;
    }
    peak->finish();
  }
  if (auto eff = r.get_map("efficiency", Need::kRequired)) {
    d.gemm_efficiency = eff->get_number("gemm", Need::kOptional, kMinEfficiency, 1);
    d.gemm_fp32_efficiency = eff->get_number("gemm_fp32", Need::kOptional, kMinEfficiency, 1);
    d.gemm_memory_efficiency = eff->get_number("gemm_memory", Need::kOptional, kMinEfficiency, 1);
    d.gemm_k0 = eff->get_number("gemm_k0", Need::kOptional, 0, 65536);
    d.gemm_full_outputs = eff->get_number("gemm_full_outputs", Need::kOptional, 0, 1e12);
    d.flash_scale = eff->get_number("flash", Need::kOptional, kMinEfficiency, 2);
    d.gemm_half_work_flop = eff->get_quantity("gemm_half_work", Need::kOptional, parse_flop,
                                              "an amount of work such as \"1GFLOP\"", false);
    d.memory_efficiency = eff->get_number("memory", Need::kOptional, kMinEfficiency, 1);
    d.optimizer_memory_efficiency = eff->get_number("optimizer_memory", Need::kOptional, kMinEfficiency, 1);
    d.kernel_launch_s = eff->get_quantity("kernel_launch", Need::kOptional, parse_time, kTime, false, kMaxKernelLaunch_s, "1ms");
    d.framework_op_host_s =
        eff->get_quantity("framework_op_host", Need::kOptional, parse_time, kTime, false, kMaxFrameworkOpHost_s, "10ms");
    d.framework_pass_host_s =
        eff->get_quantity("framework_pass_host", Need::kOptional, parse_time, kTime, false, kMaxFrameworkPassHost_s, "1s");
    eff->finish();
  }
  r.finish();
  // Under the catalog's name, whatever spelling the entry used ("NVIDIA A100-SXM4-80GB"): every
  // output names the type so, apply_profile finds it by name, and the checks of which types a
  // profile covers compare names.
  out.devices[type != nullptr ? type->name : entry.name] = d;
}

void read_link(const MapReader::Entry& entry, const std::string& path, DiagnosticSink& sink, Profile& out) {
  if (!known_link_class(entry.name)) {
    sink.error(entry.key_mark, path,
               "unknown link class '" + entry.name +
                   "' (expected one of: nvswitch, nvlink, xgmi, pcie, none, infiniband, roce, ethernet)");
    return;
  }
  MapReader r(entry.value, path, sink, entry.key_mark);
  LinkProfile l;
  detail::set_if(l.bandwidth_Bps, r.get_quantity("bandwidth", Need::kRequired, parse_bandwidth,
                                                 "a bandwidth such as \"10GB/s\"", true));
  detail::set_if(l.latency_s, r.get_quantity("latency", Need::kRequired, parse_time, kTime, false));
  r.finish();
  out.links[entry.name] = l;
}

}  // namespace

Profile parse_profile(std::string_view text, const std::string& name) {
  DiagnosticSink sink(name);
  Profile p;
  if (auto root = detail::open_document(text, sink, InputKind::kProfile)) {
    detail::set_if(p.name, root->get_string("name", Need::kRequired));
    detail::set_if(p.source, root->get_string("source", Need::kRequired));
    if (auto devices = root->get_entries("devices", Need::kOptional)) {
      // Each entry must name a catalog type (by the catalog's spelling rules, aliases too), and
      // no type twice: with two spellings of one type, which figures apply would be a guess.
      const Catalog& catalog = Catalog::builtin();
      std::map<std::string, std::string> entry_of_type;  // catalog name -> the entry naming it
      for (const auto& e : *devices) {
        const std::string field = field_path("devices", e.name);
        const GpuType* type = catalog.by_name_or_null(e.name);
        if (type == nullptr) {
          sink.error(e.key_mark, field, catalog.unknown_gpu_message(e.name));
          Profile unused;  // its figures' own errors too, all at once (they waited for the name's fix)
          read_device(e, nullptr, field, sink, unused);
          continue;
        }
        const auto [other, fresh] = entry_of_type.emplace(type->name, e.name);
        if (!fresh) {
          sink.error(e.key_mark, field,
                     "'" + e.name + "' names device type '" + type->name + "', as device '" + other->second +
                         "' does (expected one entry per device type)");
          continue;
        }
        read_device(e, type, field, sink, p);
      }
    }
    if (auto links = root->get_entries("links", Need::kOptional))
      for (const auto& e : *links) read_link(e, field_path("links", e.name), sink, p);
    root->finish();
  }
  sink.throw_if_any();
  return p;
}

namespace {

/// The fabric latency a hop from a node of type `nt` pays: its zones' largest.
double fabric_latency_of(const Cluster& cluster, const NodeType& nt) {
  double fabric_s = 0;
  for (const Node& n : cluster.nodes)
    if (&cluster.node_types[n.node_type] == &nt) fabric_s = std::max(fabric_s, cluster.zones[n.zone].fabric.latency_s);
  return fabric_s;
}

}  // namespace

std::vector<std::string> nic_latencies_under_fabric(const Cluster& cluster, const Profile& profile) {
  // One note per link class and fabric latency, naming the node types it leaves without latency.
  std::map<std::pair<std::string, double>, std::vector<std::string>> types_of;
  for (const NodeType& nt : cluster.node_types) {
    const auto it = profile.links.find(to_string(nt.nics.kind));
    if (it == profile.links.end() || nt.nics.count == 0) continue;
    const double fabric_s = fabric_latency_of(cluster, nt);
    if (it->second.latency_s < fabric_s) types_of[{it->first, fabric_s}].push_back(nt.name);
  }
  std::vector<std::string> out;
  for (const auto& [key, types] : types_of) {
    const auto& [link, fabric_s] = key;
    out.push_back("links." + link + ": latency " + format_time(profile.links.at(link).latency_s) + " is under the " +
                  format_time(fabric_s) + " that the zone fabric adds to every hop between nodes: the NICs of " +
                  join_with_and(types) + " get no latency, and such a hop takes " + format_time(fabric_s) +
                  " (expected a hop latency at or above the fabric's; is the cluster file's fabric latency too high?)");
  }
  return out;
}

Profile load_profile(const std::string& path) { return parse_profile(detail::read_file_or_throw(path), path); }

int apply_profile(Cluster& cluster, const Profile& profile) {
  int changed = 0;
  for (NodeType& nt : cluster.node_types) {
    bool touched = false;
    // By catalog name: parse_profile keys an entry written as nvidia-smi prints it ("NVIDIA
    // A100-SXM4-80GB", or an alias: "NVIDIA H100 80GB HBM3") under its catalog type's name.
    const auto it = profile.devices.find(nt.gpu.name);
    if (it != profile.devices.end()) {
      const DeviceProfile& d = it->second;
      for (const auto& [dtype, flops] : d.peak_flops)
        if (nt.gpu.supports(dtype)) {  // never a dtype the GPU lacks
          nt.gpu.datasheet_peak_flops.emplace(dtype, nt.gpu.peak_flops[dtype]);  // the first: the catalog's
          nt.gpu.peak_flops[dtype] = flops;
        }
      EfficiencyModel& e = nt.gpu.efficiency;
      detail::set_if(e.gemm_efficiency, d.gemm_efficiency);
      e.gemm_given = e.gemm_given || d.gemm_efficiency.has_value();
      detail::set_if(e.gemm_fp32_efficiency, d.gemm_fp32_efficiency);
      detail::set_if(e.gemm_memory_efficiency, d.gemm_memory_efficiency);
      detail::set_if(e.gemm_k0, d.gemm_k0);
      detail::set_if(e.gemm_full_outputs, d.gemm_full_outputs);
      detail::set_if(e.flash_scale, d.flash_scale);
      e.flash_given = e.flash_given || d.flash_scale.has_value();
      detail::set_if(e.gemm_half_work_flop, d.gemm_half_work_flop);
      detail::set_if(e.memory_efficiency, d.memory_efficiency);
      detail::set_if(e.optimizer_memory_efficiency, d.optimizer_memory_efficiency);
      detail::set_if(e.kernel_launch_s, d.kernel_launch_s);
      detail::set_if(e.framework_op_host_s, d.framework_op_host_s);
      detail::set_if(e.framework_pass_host_s, d.framework_pass_host_s);
      touched = true;
    }
    // Profile figures are achieved bandwidths: marked measured, the model uses them as they are
    // (no link_efficiency, topology.cpp achieved_bandwidth_Bps).
    if (auto it = profile.links.find(to_string(nt.intra.kind)); it != profile.links.end()) {
      nt.intra.bandwidth_Bps = it->second.bandwidth_Bps;
      nt.intra.measured = true;
      nt.intra.latency_s = it->second.latency_s;
      touched = true;
    }
    if (auto it = profile.links.find(to_string(nt.nics.kind)); it != profile.links.end() && nt.nics.count > 0) {
      // The profile's figure is per device; the cost model shares a node's NICs among its
      // devices (topology.cpp nic_share), so the node's NICs carry it for every device at once.
      nt.nics.bandwidth_Bps = it->second.bandwidth_Bps * std::max(1, nt.gpus_per_node) / nt.nics.count;
      nt.nics.measured = true;
      // Without GPUDirect the NIC path is capped by the host link (topology.cpp nic_share):
      // the measured figure already includes that path, so the cap must not undercut it.
      if (!nt.nics.gpu_direct && nt.host_link_Bps > 0)
        nt.host_link_Bps = std::max(nt.host_link_Bps, it->second.bandwidth_Bps / kHostLinkEfficiency);
      // One hop between nodes adds both NICs' latency and the zone fabric's (topology.cpp hop()):
      // the measured hop latency is split evenly between the two NICs, less the fabric's.
      const double fabric_s = fabric_latency_of(cluster, nt);
      nt.nics.latency_s = std::max(0.0, (it->second.latency_s - fabric_s) / 2.0);
      touched = true;
    }
    if (touched) ++changed;
  }
  return changed;
}

}  // namespace hetsim::models
