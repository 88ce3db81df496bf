// SPDX-License-Identifier: Apache-2.0
// Builders shared by the cost-model tests: hand-written GPU types and small clusters.
#pragma once
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "cluster.hpp"
#include "input_loader.hpp"
#include "plan.hpp"
#include "workload.hpp"

namespace hetsim::models::testing {

/// A GPU with round numbers so that expected values can be computed by hand.
inline GpuType round_gpu(const std::string& name, double peak_flops, double memory_bytes = 80e9,
                         Vendor vendor = Vendor::kNvidia) {
  GpuType g;
  g.name = name;
  g.vendor = vendor;
  g.peak_flops = {{Dtype::kFp16, peak_flops}, {Dtype::kBf16, peak_flops}, {Dtype::kFp32, peak_flops / 16}};
  g.memory_bytes = memory_bytes;
  g.memory_bandwidth_Bps = 2e12;
  g.efficiency = {0.8, 1e9, 0.8, 5e-6};
  return g;
}

inline NodeType node_type(const std::string& name, const GpuType& gpu, int gpus, double intra_Bps, double nic_Bps) {
  NodeType nt;
  nt.name = name;
  nt.gpu = gpu;
  nt.gpus_per_node = gpus;
  nt.intra = {gpu.vendor == Vendor::kAmd ? IntraFabricKind::kXgmi : IntraFabricKind::kNvswitch, intra_Bps, 2e-6};
  nt.nics.count = gpus;
  nt.nics.bandwidth_Bps = nic_Bps;
  nt.host_link_Bps = 32e9;
  nt.price_per_hour = 10;
  return nt;
}

/// One zone; groups of (node type, count) in rank order.
inline Cluster cluster_of(std::vector<NodeType> types, std::vector<NodeGroup> groups) {
  Cluster c;
  c.name = "test";
  c.node_types = std::move(types);
  Zone z;
  z.name = "z";
  z.fabric.latency_s = 5e-6;
  z.groups = std::move(groups);
  c.zones.push_back(z);
  c.finalize();
  return c;
}

/// Zones "east" and "west" of two nodes of `nt` each, joined by a 1 GB/s, 30 ms link.
inline Cluster two_zones_of(const NodeType& nt) {
  Cluster c;
  c.name = "two-zones";
  c.node_types = {nt};
  for (const char* name : {"east", "west"}) {
    Zone z;
    z.name = name;
    z.fabric.latency_s = 5e-6;
    z.groups = {{0, 2}};
    c.zones.push_back(z);
  }
  c.links.push_back({0, 1, 1e9, 30e-3, 0});
  c.finalize();
  return c;
}

inline Workload gpt_workload(int layers, int hidden, int heads, int seq, int global_batch) {
  Workload w;
  w.name = "gpt";
  w.model.layers = layers;
  w.model.hidden = hidden;
  w.model.heads = heads;
  w.model.kv_heads = heads;
  w.model.ffn_hidden = 4 * hidden;
  w.model.seq_len = seq;
  w.model.vocab = 51200;
  w.training.global_batch = global_batch;
  w.training.dtype = Dtype::kFp16;
  return w;
}

/// The bundled example inputs (clusters/NAME, workloads/NAME).
inline Cluster example_cluster(const std::string& file) {
  return load_cluster(std::string(HETSIM_SOURCE_DIR) + "/clusters/" + file, Catalog::builtin());
}
inline Workload example_workload(const std::string& file) {
  return load_workload(std::string(HETSIM_SOURCE_DIR) + "/workloads/" + file);
}

/// An example plan of plans/ with the cluster and workload its header names.
struct ExamplePlan {
  std::string file;  ///< its file name
  Cluster cluster;
  Workload workload;
  Plan plan;
};

/// Every plan of plans/ whose header names its cluster and workload, loaded with them (by file
/// name; a plan that does not load throws, as load_plan does).
inline std::vector<ExamplePlan> example_plans() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(HETSIM_SOURCE_DIR) + "/plans"))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<ExamplePlan> out;
  for (const auto& path : files) {
    const PlanHeader h = read_plan_header(path.string());  // names resolved to the bundled files
    if (h.cluster.empty() || h.workload.empty()) continue;
    ExamplePlan x{path.filename().string(), load_cluster(h.cluster, Catalog::builtin()), load_workload(h.workload), {}};
    x.plan = load_plan(path.string(), x.cluster, x.workload);
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace hetsim::models::testing
