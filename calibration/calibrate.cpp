// SPDX-License-Identifier: Apache-2.0
#include "calibrate.hpp"

#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

#include "backend.hpp"
#include "comm_cost.hpp"
#include "input_writers.hpp"

namespace hetsim::calibration {
namespace {

void say(const CalibrateOptions& o, const std::string& line) {
  if (o.log) o.log(line);
}

/// Runs or resumes one microbenchmark; appends it to the checkpoint when newly measured.
class SampleStore {
 public:
  explicit SampleStore(const CalibrateOptions& o) : options_(o) {
    if (!o.checkpoint_path.empty())
      for (const Sample& s : read_checkpoint(o.checkpoint_path)) done_[s.key()] = s;
  }
  Sample get(Sample s, const std::function<void(Sample&)>& measure) {
    if (auto it = done_.find(s.key()); it != done_.end()) {
      ++resumed;
      return it->second;
    }
    measure(s);
    if (!options_.checkpoint_path.empty()) append_checkpoint(options_.checkpoint_path, s);
    done_[s.key()] = s;
    return s;
  }
  int resumed = 0;

 private:
  const CalibrateOptions& options_;
  std::map<std::string, Sample> done_;
};

std::string fixed(double v, const char* unit, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s", digits, v, unit);
  return buf;
}

/// Nine significant digits: a figure written and read back is the figure (a fixed number of
/// decimals would write a 1 B/s link as "0.0MB/s").
std::string significant(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g%s", v, unit);
  return buf;
}

}  // namespace

CalibrationResult calibrate(const models::Cluster& cluster, const CalibrateOptions& options) {
  CalibrationResult out;
  const Grid grid = make_grid(options.quick);
  SampleStore store(options);
  std::set<std::string> seen;
  int max_per_node = 1;
  bool host_memory_cluster = true;
  for (const models::NodeType& nt : cluster.node_types) {
    max_per_node = std::max(max_per_node, nt.gpus_per_node);
    const std::string& type = nt.gpu.name;
    if (!seen.insert(type).second) continue;
    std::unique_ptr<exec::Backend> backend;
    try {
      backend = exec::make_backend(type);
    } catch (const exec::BackendError& e) {
      say(options, "skipping device type " + type + ": " + e.what());
      host_memory_cluster = false;
      continue;
    }
    host_memory_cluster = host_memory_cluster && backend->is_host_memory();
    say(options, "benchmarking " + type + " (" + std::to_string(grid.gemm.size()) + " GEMMs, " +
                     std::to_string(grid.memory.size()) + " memory-bound kernels)");
    std::vector<Sample> mine;
    for (const std::vector<Sample>* list : {&grid.memory, &grid.gemm}) {
      for (Sample s : *list) {
        s.target = type;
        mine.push_back(store.get(s, [&](Sample& x) { run_device_sample(*backend, x, options.timing); }));
      }
    }
    DeviceFits f;
    // The cost model's memory-bound ops of a transformer are elementwise kernels (LayerNorm,
    // GeLU, softmax, ...): fit on those; axpy (a pure stream) is recorded for reference only.
    std::vector<Sample> elementwise;
    for (const Sample& s : mine)
      if (s.kind != SampleKind::kMemory || s.op != "axpy") elementwise.push_back(s);
    f.memory = fit_memory(elementwise);
    double peak = nt.gpu.peak(models::Dtype::kFp32);
    f.gemm = fit_gemm(mine, peak, f.memory.kernel_launch_s);
    if (f.gemm.unclamped_efficiency > 1.0) {
      // Faster than the datasheet peak: the catalog's clock assumption is low for this machine;
      // the measured asymptotic rate becomes the profile's peak (efficiency 1).
      peak *= f.gemm.unclamped_efficiency;
      say(options, "note: " + type + " GEMMs reach " + fixed(peak / 1e9, " GFLOP/s", 1) +
                       ", above the catalog's fp32 peak: the profile sets peak fp32 to it");
      f.measured_peak_flops = peak;
      f.gemm = fit_gemm(mine, peak, f.memory.kernel_launch_s);
    }
    f.memory_efficiency = std::min(1.0, f.memory.achieved_Bps / nt.gpu.memory_bandwidth_Bps);
    if (f.memory.achieved_Bps > nt.gpu.memory_bandwidth_Bps)
      say(options, "note: " + type + " kernels reach " + fixed(f.memory.achieved_Bps / 1e9, " GB/s", 1) +
                       ", above the catalog's memory bandwidth (cache-resident data): memory efficiency capped at 1");
    models::DeviceProfile d;
    if (f.measured_peak_flops > 0) d.peak_flops[models::Dtype::kFp32] = f.measured_peak_flops;
    // The execution engine's GEMMs are fp32. On a GPU that is the FP32 pipe, not the tensor-core
    // rate that `gemm` describes for 16-bit training (GpuType::gemm_efficiency_in): the profile
    // sets `gemm_fp32` there. CPU devices compute only fp32, where `gemm` is that rate.
    if (backend->is_host_memory()) d.gemm_efficiency = f.gemm.gemm_efficiency;
    else d.gemm_fp32_efficiency = f.gemm.gemm_efficiency;
    d.gemm_half_work_flop = f.gemm.gemm_half_work_flop;
    d.memory_efficiency = f.memory_efficiency;
    d.kernel_launch_s = f.memory.kernel_launch_s;
    if (backend->is_host_memory()) {
      // The rank's own thread calls the kernels: no separate host thread runs ahead of the
      // device, so there is no framework host time to overlap (the per-call cost is in kernel_launch).
      d.framework_op_host_s = 0.0;
      d.framework_pass_host_s = 0.0;
    }
    out.profile.devices[type] = d;
    out.devices[type] = f;
    out.samples.insert(out.samples.end(), mine.begin(), mine.end());
  }
  if (out.devices.empty()) throw std::runtime_error("no device type of the cluster can be benchmarked in this binary");

  // Link classes: only when ranks are threads on host memory (the in-process communicator is
  // then the transport the execution engine uses).
  if (host_memory_cluster) {
    std::set<std::string> intra, nic;
    for (const models::NodeType& nt : cluster.node_types) {
      if (nt.gpus_per_node > 1) intra.insert(models::to_string(nt.intra.kind));
      if (cluster.nodes.size() > 1 && nt.nics.count > 0) nic.insert(models::to_string(nt.nics.kind));
    }
    auto bench_class = [&](const std::string& cls, SampleKind kind) {
      say(options, "benchmarking link class " + cls + " (" + to_string(kind) + ")");
      std::vector<Sample> mine;
      for (Sample s : grid.comm) {
        if (s.kind != kind || s.group > max_per_node) continue;
        s.target = cls;
        mine.push_back(store.get(s, [&](Sample& x) { run_comm_sample(x, options.timing); }));
      }
      const LinkFit f = fit_link(mine, models::kCollectiveLaunch_s);
      out.links[cls] = f;
      out.profile.links[cls] = {f.bandwidth_Bps, f.latency_s};
      out.samples.insert(out.samples.end(), mine.begin(), mine.end());
    };
    for (const std::string& c : intra) bench_class(c, SampleKind::kAllReduce);
    for (const std::string& c : nic)
      if (!intra.count(c)) bench_class(c, SampleKind::kP2p);
  }
  out.resumed = store.resumed;
  out.profile.name = cluster.name;
  return out;
}

std::string profile_to_yaml(const models::Profile& p, const std::vector<std::string>& header) {
  std::ostringstream o;
  for (const std::string& h : header) o << "# " << h << '\n';
  o << "kind: profile\n";
  o << "name: " << models::yaml_quoted(p.name) << '\n';
  o << "source: " << models::yaml_quoted(p.source) << '\n';
  if (!p.devices.empty()) o << "devices:\n";
  for (const auto& [name, d] : p.devices) {
    o << "  " << models::yaml_quoted(name) << ":\n";
    for (const auto& [dtype, flops] : d.peak_flops)
      o << "    peak: {" << models::to_string(dtype) << ": \"" << fixed(flops / 1e6, "MFLOP/s", 0) << "\"}\n";
    o << "    efficiency:\n";
    if (d.gemm_efficiency) o << "      gemm: " << fixed(*d.gemm_efficiency, "", 6) << '\n';
    if (d.gemm_fp32_efficiency) o << "      gemm_fp32: " << fixed(*d.gemm_fp32_efficiency, "", 6) << '\n';
    if (d.flash_scale) o << "      flash: " << fixed(*d.flash_scale, "", 6) << '\n';
    if (d.gemm_half_work_flop) o << "      gemm_half_work: \"" << fixed(*d.gemm_half_work_flop, "FLOP", 0) << "\"\n";
    if (d.memory_efficiency) o << "      memory: " << fixed(*d.memory_efficiency, "", 6) << '\n';
    if (d.kernel_launch_s) o << "      kernel_launch: \"" << fixed(*d.kernel_launch_s * 1e9, "ns", 1) << "\"\n";
    if (d.framework_op_host_s) o << "      framework_op_host: \"" << fixed(*d.framework_op_host_s * 1e9, "ns", 1) << "\"\n";
    if (d.framework_pass_host_s)
      o << "      framework_pass_host: \"" << fixed(*d.framework_pass_host_s * 1e9, "ns", 1) << "\"\n";
  }
  if (!p.links.empty()) o << "links:\n";
  for (const auto& [name, l] : p.links) {
    o << "  " << name << ": {bandwidth: \"" << significant(l.bandwidth_Bps / 1e6, "MB/s") << "\", latency: \""
      << significant(l.latency_s * 1e9, "ns") << "\"}\n";
  }
  return o.str();
}

}  // namespace hetsim::calibration
