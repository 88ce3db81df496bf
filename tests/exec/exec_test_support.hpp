// SPDX-License-Identifier: Apache-2.0
// Small clusters, workloads and plans built in code for the exec tests.
#pragma once
#include <string>
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "workload.hpp"

namespace hetsim::exec::testing {

/// One zone: `fast` single-device cpu-avx2 nodes, then `slow` single-device cpu-scalar nodes
/// (GPU index = rank order). Peaks are nominal: the tests check correctness, not speed.
inline models::Cluster cpu_cluster(int fast, int slow) {
  models::Cluster c;
  c.name = "test-cpu";
  for (const auto& [device, peak] : {std::pair<std::string, double>{"cpu-avx2", 50e9}, {"cpu-scalar", 5e9}}) {
    models::NodeType t;
    t.name = device + "-node";
    t.gpu.name = device;
    t.gpu.vendor = models::Vendor::kCpu;
    t.gpu.peak_flops[models::Dtype::kFp32] = peak;
    t.gpu.memory_bytes = 8e9;
    t.gpus_per_node = 1;
    t.price_per_hour = 0.1;
    c.node_types.push_back(t);
  }
  models::Zone z;
  z.name = "local";
  if (fast > 0) z.groups.push_back({0, fast});
  if (slow > 0) z.groups.push_back({1, slow});
  c.zones.push_back(z);
  c.finalize();
  return c;
}

inline models::Workload tiny_workload(models::Activation act = models::Activation::kGelu, int kv_heads = 4,
                                      bool tied = true) {
  models::Workload w;
  w.name = "tiny";
  w.model.layers = 4;
  w.model.hidden = 32;
  w.model.heads = 4;
  w.model.kv_heads = kv_heads;
  w.model.ffn_hidden = act == models::Activation::kGelu ? 64 : 48;
  w.model.vocab = 61;
  w.model.seq_len = 12;
  w.model.activation = act;
  w.model.tied_embeddings = tied;
  w.training.global_batch = 4;
  w.training.dtype = models::Dtype::kFp32;
  return w;
}

/// A stage: `layers` blocks on GPUs [first, first + tp).
inline models::Stage stage(int layers, int first, int tp = 1) {
  models::Stage s;
  s.layers = layers;
  for (int i = 0; i < tp; ++i) s.gpus.push_back(first + i);
  return s;
}

inline models::Replica replica(int micro_batches, std::vector<models::Stage> stages) {
  models::Replica r;
  r.micro_batches = micro_batches;
  r.stages = std::move(stages);
  return r;
}

inline models::Plan plan(std::string name, std::vector<models::Replica> replicas,
                         models::Schedule schedule = models::Schedule::k1f1b) {
  models::Plan p;
  p.name = std::move(name);
  p.micro_batch = 1;
  p.schedule = schedule;
  p.replicas = std::move(replicas);
  return p;
}

}  // namespace hetsim::exec::testing
