// SPDX-License-Identifier: Apache-2.0
// Version-2 suites (../shared/validation/README.md "Format version 2"): node-group systems,
// explicit `plan:` rows, their cross-checks, and their Cluster and Plan.
#include "validation_suite_v2.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "line_rates.hpp"
#include "loader_common.hpp"

namespace hetsim::models {

namespace detail {

namespace {

constexpr int kMaxGpuIndex = (1 << 20) - 1;  // an index of a cluster of kMaxClusterGpus

void check_gpu_name(MapReader& m, const std::string& gpu, const Catalog& catalog) {
  if (catalog.by_name_or_null(gpu)) return;
  m.get_sink().error(m.value_mark_of("gpu"), m.field("gpu"), catalog.unknown_gpu_message(gpu));
}

/// 1-based line of a mark (0 for a null mark).
int line_of(const YAML::Mark& at) { return at.is_null() ? 0 : at.line + 1; }

}  // namespace

void read_system_groups(MapReader& m, SuiteSystem& s, const Catalog& catalog) {
  s.nodes.clear();
  s.groups_complete = true;
  if (auto groups = m.get_list("nodes", Need::kRequired, 1)) {
    for (std::size_t i = 0; i < groups->size(); ++i) {
      const YAML::Node& node = (*groups)[i];
      MapReader g(node, index_path(m.field("nodes"), i), m.get_sink(), node.Mark());
      const std::size_t errors_before = m.get_sink().count();
      SuiteNodeGroup group;
      group.line = line_of(node.Mark());
      if (auto gpu = g.get_string("gpu", Need::kRequired)) {
        check_gpu_name(g, *gpu, catalog);
        group.gpu = *gpu;
      }
      set_if(group.count, g.get_int("count", Need::kRequired, 1, 1 << 16));
      set_if(group.gpus_per_node, g.get_int("gpus_per_node", Need::kRequired, 1, kMaxGpusPerNode));
      set_if(group.intra_node_Bps, g.get_quantity("intra_node_bandwidth", Need::kRequired, parse_bandwidth,
                                                  "a bandwidth such as \"100GB/s\"", true));
      set_if(group.nic_Bps, g.get_quantity("nic_bandwidth", Need::kRequired, parse_bandwidth,
                                           "a bandwidth such as \"1.25GB/s\"", true));
      g.finish();
      if (m.get_sink().count() != errors_before) s.groups_complete = false;
      s.nodes.push_back(group);
    }
  }
  set_if(s.inter_node_latency_s, m.get_quantity("inter_node_latency", Need::kOptional, parse_time,
                                                "a time such as \"50us\"", false));
  m.finish();
  // Each group is in range, their total need not be: 65536 nodes of 65536 GPUs were built as a
  // cluster of 2^32 GPUs (a minute and all memory before std::bad_alloc).
  long long total = 0;
  for (const SuiteNodeGroup& g : s.nodes) total += static_cast<long long>(g.count) * g.gpus_per_node;
  if (total > kMaxClusterGpus)
    m.get_sink().error(m.value_mark_of("nodes"), m.field("nodes"),
                       "the node groups have " + std::to_string(total) + " GPUs, above the cluster bound of " +
                           std::to_string(kMaxClusterGpus) + " (expected fewer nodes or GPUs per node)");
  if (!s.nodes.empty()) {
    // The homogeneous fields describe the first group (used only for messages and defaults).
    s.gpu = s.nodes.front().gpu;
    s.gpus_per_node = s.nodes.front().gpus_per_node;
    s.intra_node_Bps = s.nodes.front().intra_node_Bps;
  }
}

void mark_field(SuiteRow& row, const std::string& field, const YAML::Mark& at) {
  if (!at.is_null()) row.field_at[field] = {at.line + 1, at.column + 1};
}

void read_row_plan(MapReader& m, RowPlanInput& in, SuiteRow& row) {
  in.path = m.get_path();
  in.at = m.get_anchor();
  in.stages_at = m.key_mark("stages");
  if (auto stages = m.get_list("stages", Need::kRequired, 1)) {
    in.stages_at = m.value_mark_of("stages");
    for (std::size_t s = 0; s < stages->size(); ++s) {
      const YAML::Node& node = (*stages)[s];
      MapReader st(node, index_path(m.field("stages"), s), m.get_sink(), node.Mark());
      RowPlanInput::RawStage raw;
      raw.at = node.Mark();
      if (auto layers = st.get_int("layers", Need::kRequired, 1, kMaxLayers)) raw.layers = *layers;
      else in.complete = false;
      raw.layers_at = st.value_mark_of("layers");
      const std::string stage_field = index_path("plan.stages", s);
      mark_field(row, stage_field + ".layers", raw.layers_at);
      raw.replicas_at = st.key_mark("replicas");
      if (auto reps = st.get_list("replicas", Need::kRequired, 1)) {
        raw.replicas_at = st.value_mark_of("replicas");
        for (std::size_t r = 0; r < reps->size(); ++r) {
          const YAML::Node& rn = (*reps)[r];
          MapReader rep(rn, index_path(st.field("replicas"), r), m.get_sink(), rn.Mark());
          mark_field(row, index_path(stage_field + ".replicas", r) + ".gpus", rep.value_mark_of("gpus"));
          std::vector<int> gpus;
          std::vector<YAML::Mark> marks;
          if (auto list = rep.get_list("gpus", Need::kRequired, 1)) {
            for (std::size_t k = 0; k < list->size(); ++k) {
              const YAML::Node& g = (*list)[k];
              const YAML::Mark at = value_mark(g, rep.value_mark_of("gpus"));
              if (auto v = read_integer(g, index_path(rep.field("gpus"), k), at, m.get_sink(), 0, kMaxGpuIndex)) {
                gpus.push_back(static_cast<int>(*v));
                marks.push_back(at);
              } else {
                in.gpus_complete = false;  // the range and reuse checks skip it
              }
            }
          } else {
            in.complete = false;
          }
          rep.finish();
          raw.replicas.push_back(std::move(gpus));
          raw.gpu_at.push_back(std::move(marks));
        }
      } else {
        in.complete = false;
      }
      st.finish();
      in.stages.push_back(std::move(raw));
    }
  } else {
    in.complete = false;
  }
  if (auto mbs = m.get_list("micro_batches", Need::kOptional, 1)) {
    in.micro_batches_at = m.value_mark_of("micro_batches");
    mark_field(row, "plan.micro_batches", in.micro_batches_at);
    for (std::size_t i = 0; i < mbs->size(); ++i) {
      const YAML::Node& v = (*mbs)[i];
      const YAML::Mark at = value_mark(v, in.micro_batches_at);
      if (auto n = read_integer(v, index_path(m.field("micro_batches"), i), at, m.get_sink(), 1, 1 << 24))
        row.micro_batches.push_back(static_cast<int>(*n));
      else in.complete = false;
    }
  }
  m.finish();
}

void check_row_plan(const RowPlanInput& in, SuiteRow& row, DiagnosticSink& sink) {
  if (!in.complete || in.stages.empty()) return;  // the reader has reported why
  const std::size_t before = sink.count();
  const std::string stages_field = in.path + ".stages";
  auto stage_field = [&](std::size_t s) { return index_path(stages_field, s); };
  // GPUs of the system (node groups); 0 = not known (homogeneous form: nodes follow the plan).
  long system_gpus = 0;
  for (const SuiteNodeGroup& g : row.system.nodes) system_gpus += static_cast<long>(g.count) * g.gpus_per_node;

  // Replica counts: the same in every stage (replica i of every stage forms pipeline i).
  const std::size_t replicas = in.stages.front().replicas.size();
  for (std::size_t s = 1; s < in.stages.size(); ++s) {
    const std::size_t n = in.stages[s].replicas.size();
    if (n != replicas)
      sink.error(in.stages[s].replicas_at, stage_field(s) + ".replicas",
                 "stage " + std::to_string(s) + " has " + std::to_string(n) + " replicas but stage 0 has " +
                     std::to_string(replicas) + " (expected the same number of replicas in every stage)");
  }
  // GPU indices: inside the system, each used at most once.
  std::map<int, std::string> used;  // GPU -> where first used
  for (std::size_t s = 0; s < in.stages.size(); ++s) {
    const auto& st = in.stages[s];
    for (std::size_t r = 0; r < st.replicas.size(); ++r) {
      const std::string rf = index_path(stage_field(s) + ".replicas", r) + ".gpus";
      for (std::size_t k = 0; k < st.replicas[r].size(); ++k) {
        const int g = st.replicas[r][k];
        const std::string f = index_path(rf, k);
        if (system_gpus > 0 && g >= system_gpus && row.system.groups_complete) {
          sink.error(st.gpu_at[r][k], f,
                     "GPU " + std::to_string(g) + " does not exist (expected an index in 0.." +
                         std::to_string(system_gpus - 1) + ": the system has " + std::to_string(system_gpus) +
                         " GPUs)");
          continue;
        }
        auto [it, fresh] = used.emplace(g, f);
        if (!fresh)
          sink.error(st.gpu_at[r][k], f,
                     "GPU " + std::to_string(g) + " is already used by " + it->second +
                         " (expected each GPU at most once)");
      }
    }
  }
  // Layers: the stages sum to the model's.
  int layers = 0;
  for (const auto& st : in.stages) layers += st.layers;
  if (row.model.layers > 0 && layers != row.model.layers)
    sink.error(in.stages_at, stages_field,
               "the stages' layers sum to " + std::to_string(layers) + " (expected model.layers = " +
                   std::to_string(row.model.layers) + ")");
  // Micro-batch counts: one per replica, summing (times micro) to the global batch; against a
  // batch.global that was itself an error (0 here), only their number (a follow-on message said
  // "expected batch.global = 0").
  const int global = row.training.global_batch;
  const std::string f = in.path + ".micro_batches";
  if (!row.micro_batches.empty() && row.micro_batches.size() != replicas)
    sink.error(in.micro_batches_at, f,
               "gives " + std::to_string(row.micro_batches.size()) + " counts for " + std::to_string(replicas) +
                   " replicas (expected one count per replica)");
  if (!row.micro_batches.empty() && global > 0) {
    const long counted = std::accumulate(row.micro_batches.begin(), row.micro_batches.end(), 0L);
    // Without batch.micro the counts fix it: global / their sum, when that divides.
    if (!row.micro && counted > 0 && global % counted == 0) row.micro = static_cast<int>(global / counted);
    if (!row.micro) {
      sink.error(in.micro_batches_at, f,
                 "micro-batch counts sum to " + std::to_string(counted) + ", which does not divide batch.global (" +
                     std::to_string(global) + ") (expected batch.micro, or counts whose sum divides the global batch)");
    } else {
      const long sum = std::accumulate(row.micro_batches.begin(), row.micro_batches.end(), 0L);
      if (sum * *row.micro != global)
        sink.error(in.micro_batches_at, f,
                   "micro-batch counts sum to " + std::to_string(sum) + ", times batch.micro " +
                       std::to_string(*row.micro) + " = " + std::to_string(sum * *row.micro) +
                       " sequences (expected batch.global = " + std::to_string(global) + ")");
    }
  }
  // A batch.micro that does not divide the replicas' batch is the row's result (invalid, at
  // batch.micro: suite_explicit_plan), as in version 1, not an error that drops the whole suite.
  if (sink.count() != before || !in.gpus_complete) return;

  Plan plan;
  plan.name = row.id;
  plan.replicas.resize(replicas);
  for (std::size_t r = 0; r < replicas; ++r)
    for (const auto& st : in.stages) plan.replicas[r].stages.push_back({st.layers, st.replicas[r]});
  row.pp = static_cast<int>(in.stages.size());
  row.dp = static_cast<int>(replicas);
  row.tp = static_cast<int>(in.stages.front().replicas.front().size());
  row.plan = std::move(plan);
}

std::variant<Plan, Infeasible> suite_explicit_plan(const SuiteRow& row, const Cluster& cluster,
                                                  const Workload& workload, int micro) {
  Plan plan = *row.plan;
  plan.micro_batch = micro;
  plan.schedule = row.interleave > 1 ? Schedule::kInterleaved : row.schedule;
  plan.interleave = row.interleave;
  plan.recompute = row.recompute;
  plan.sequence_parallel = row.sequence_parallel;
  plan.tp_comm_overlap = row.tp_comm_overlap;
  plan.overlap_grad_sync = row.overlap_grad_sync;
  plan.zero = row.zero;
  plan.sharded_collectives = row.sharded_collectives;
  const int replicas = plan.dp();
  const int global = workload.training.global_batch;
  if (!row.micro_batches.empty()) {
    for (int r = 0; r < replicas; ++r) plan.replicas[r].micro_batches = row.micro_batches[r];
  } else {
    if (global % (replicas * micro) != 0)
      return Infeasible{"batch.global (" + std::to_string(global) + ") is not divisible by replicas x micro (" +
                        std::to_string(replicas * micro) + ") (expected plan.micro_batches for an uneven split)"};
    for (Replica& r : plan.replicas) r.micro_batches = global / (replicas * micro);
  }
  const auto problems = check_plan(plan, cluster, workload);
  if (!problems.empty()) return Infeasible{problems.front()};
  return plan;
}

}  // namespace detail

int suite_row_gpus(const SuiteRow& row) {
  if (!row.plan) return row.tp * row.pp * row.dp;
  int top = -1;
  for (const Replica& r : row.plan->replicas)
    for (const Stage& s : r.stages)
      for (int g : s.gpus) top = std::max(top, g);
  return top + 1;
}

Cluster suite_cluster_from_groups(const SuiteSystem& system, const Catalog& catalog) {
  Cluster c;
  c.name = "suite";
  Zone z;
  z.name = "suite";
  z.fabric.kind = ZoneFabricKind::kFatTree;
  z.fabric.latency_s = system.inter_node_latency_s;
  std::map<std::string, int> names;
  for (std::size_t i = 0; i < system.nodes.size(); ++i) {
    const SuiteNodeGroup& g = system.nodes[i];
    NodeType nt;
    nt.name = g.gpu + "-x" + std::to_string(g.gpus_per_node);
    if (int n = names[nt.name]++; n > 0) nt.name += "-" + std::to_string(n);
    nt.gpu = catalog.by_name(g.gpu);
    nt.gpus_per_node = g.gpus_per_node;
    // The format gives a bandwidth, not a fabric. Above one PCIe 4.0 x16 link (31.5 GB/s per
    // direction, PCI-SIG) the GPUs must be joined by NVLink/NVSwitch or xGMI; below it we
    // take PCIe (Turing/consumer boxes, T4 servers), whose efficiency the topology applies.
    constexpr double kPcie4x16_Bps = 31.5e9;
    if (g.intra_node_Bps > kPcie4x16_Bps)
      nt.intra.kind = nt.gpu.vendor == Vendor::kAmd ? IntraFabricKind::kXgmi : IntraFabricKind::kNvlink;
    else
      nt.intra.kind = IntraFabricKind::kPcie;
    nt.intra.bandwidth_Bps = g.intra_node_Bps;
    // A figure that is no line rate of its link was measured: used as is (line_rates.hpp).
    nt.intra.measured = !is_line_rate(nt.intra.kind, nt.intra.bandwidth_Bps);
    // One-way small-message latency: NVLink ~2 us (NVIDIA NVSwitch technical overview 2020);
    // PCIe peer copies through the host bridge ~5 us (NCCL P2P/SHM transports, nccl-tests).
    nt.intra.latency_s = nt.intra.kind == IntraFabricKind::kPcie ? 5e-6 : 2e-6;
    // `nic_bandwidth` is the node's, one direction. The format names no NIC kind. Up to 100 Gb/s
    // a node, it is the TCP-socket Ethernet of cloud instances and campus clusters (NCCL socket
    // transport): one NIC carrying it, shared by the GPUs that send at once, no GPUDirect
    // (traffic also crosses the host link). Above that, no socket setup reaches it: an RDMA
    // fabric, built one NIC per GPU with GPUDirect as in the DGX/HGX reference designs, so the
    // node's figure is split over gpus_per_node NICs (the version-1 form of the same hardware).
    constexpr double kSocketNodeMax_Bps = 12.5e9;  // 100 Gb/s
    const bool rdma = g.nic_Bps > kSocketNodeMax_Bps;
    nt.nics.count = rdma ? std::max(1, g.gpus_per_node) : 1;
    nt.nics.bandwidth_Bps = g.nic_Bps / nt.nics.count;
    nt.nics.kind = rdma ? NicKind::kInfiniband : NicKind::kEthernet;
    nt.nics.measured = !is_nic_line_rate(nt.nics.bandwidth_Bps);
    nt.nics.gpu_direct = rdma;
    nt.nics.latency_s = 0;  // the suite's inter_node_latency is the whole node-to-node latency
    // Host link: the format gives none; the GPU type's (catalog `host_link`), else PCIe 3.0 x16
    // (15.75 GB/s per direction, PCI-SIG), the slowest generation of the catalog's GPUs. Only
    // host-staged paths and NICs without GPUDirect use it, and a socket NIC's figure (<= 12.5
    // GB/s a node) stays below it.
    nt.host_link_Bps = nt.gpu.host_link_Bps > 0 ? nt.gpu.host_link_Bps : 15.75e9;
    c.node_types.push_back(nt);
    z.groups.push_back({static_cast<int>(i), g.count});
  }
  c.zones.push_back(z);
  c.finalize();
  return c;
}

}  // namespace hetsim::models
