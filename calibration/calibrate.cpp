// SPDX-License-Identifier: Apache-2.0
#include "calibrate.hpp"

#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

#include "backend.hpp"
#include "comm_cost.hpp"
#include "input_writers.hpp"
#include "units.hpp"

namespace hetsim::calibration {
namespace {

void say(const CalibrateOptions& o, const std::string& line) {
  if (o.log) o.log(line);
}

/// Runs or resumes one microbenchmark; appends it to the checkpoint when newly measured.
class SampleStore {
 public:
  explicit SampleStore(const CalibrateOptions& o) : options_(o) {
    if (o.checkpoint_path.empty()) return;
    for (const Sample& s : read_checkpoint(o.checkpoint_path, &skipped_)) done_[s.key()] = s;
    constexpr std::size_t kListed = 5;
    if (o.refit) {
      // --refit measures nothing: every damaged line is an error, said at once. A line cut short
      // by a kill is no sample and is left out, wherever it is: a resumed run appends after it,
      // so two kills leave one in the middle (s64 calibration hunt). A sample it was to hold is
      // then missing, which get() reports.
      std::string damaged;
      std::size_t count = 0;
      for (const CheckpointSkip& k : skipped_) {
        if (k.key.empty() && k.why.find("not a complete JSON object") != std::string::npos) continue;
        if (++count <= kListed)
          damaged += "\n  " + o.checkpoint_path + ":" + std::to_string(k.line) + ": " +
                     (k.key.empty() ? "" : "microbenchmark " + k.key + ": ") + k.why;
      }
      if (count > kListed) damaged += "\n  and " + std::to_string(count - kListed) + " more damaged lines";
      if (count > 0)
        throw RefitMissingSample("--refit: the checkpoint has " + std::to_string(count) + " damaged line" +
                                 (count == 1 ? "" : "s") + " (expected the lines hetsim calibrate wrote):" + damaged);
      return;
    }
    for (std::size_t i = 0; i < skipped_.size() && i < kListed; ++i)
      say(o, "note: " + o.checkpoint_path + ":" + std::to_string(skipped_[i].line) + ": skipped: " + skipped_[i].why +
                 (skipped_[i].key.empty() ? "" : "; " + skipped_[i].key + " is measured again"));
    if (skipped_.size() > kListed)
      say(o, "note: " + o.checkpoint_path + ": " + std::to_string(skipped_.size() - kListed) + " more lines skipped");
  }
  Sample get(Sample s, const std::function<void(Sample&)>& measure) {
    s.repeats = options_.timing.repeats;
    if (auto it = done_.find(s.key()); it != done_.end()) {
      ++resumed;
      return it->second;
    }
    if (options_.refit) throw RefitMissingSample(missing_message(s.key()));
    measure(s);
    s.measured_at = models::utc_now();
    if (!options_.checkpoint_path.empty()) append_checkpoint(options_.checkpoint_path, s);
    done_[s.key()] = s;
    return s;
  }
  int resumed = 0;

 private:
  /// Why --refit cannot fit: the sample is absent (another grid or --repeats; damaged lines are
  /// refused when the checkpoint is read).
  std::string missing_message(const std::string& key) const {
    return "--refit: the checkpoint " + options_.checkpoint_path + " has no microbenchmark " + key +
           " (expected a checkpoint of a calibrate run with the same grid: --quick or not, and the same --repeats)";
  }

  const CalibrateOptions& options_;
  std::map<std::string, Sample> done_;
  std::vector<CheckpointSkip> skipped_;
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

void note(CalibrationResult& out, const CalibrateOptions& o, const std::string& line) {
  out.notes.push_back(line);
  say(o, "note: " + line);
}

/// fit() of one device type or link class; a fit that fails (noisy samples: time falling as the
/// size grows) names what it fitted and where its samples are, since a rerun resumes the same
/// samples from the checkpoint and would fail the same way.
template <class Fit>
auto with_context(const std::string& what, const CalibrateOptions& o, Fit&& fit) {
  try {
    return fit();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(what + ": " + e.what() +
                             (o.checkpoint_path.empty() ? std::string()
                                                        : " (its samples are in " + o.checkpoint_path +
                                                              ": remove that file, or its '" + what +
                                                              "' lines, to measure them again)"));
  }
}

std::string shape(const Sample& s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%gx%gx%g", s.m, s.n, s.k);
  return buf;
}

/// Each memory kernel's rate and what the fit did with it: the excluded ones are named, with
/// how far the cost model (one memory efficiency) will be from them.
std::string memory_note(const std::string& type, const DeviceFits& f, double bandwidth_Bps) {
  std::string line = type + " memory efficiency " + fixed(f.memory_efficiency, "", 3) + " of " +
                     fixed(bandwidth_Bps / 1e9, " GB/s", 1) + " (fitted " +
                     fixed(f.memory.achieved_Bps / 1e9, " GB/s", 2) + ", launch " +
                     fixed(f.memory.kernel_launch_s * 1e9, " ns", 0) + ") on";
  std::string excluded;
  for (const KernelRate& k : f.kernels) {
    const std::string rate = k.op + " " + fixed(k.achieved_Bps / 1e9, " GB/s", 2);
    if (k.role == KernelRole::kFitted) {
      line += " " + rate + ";";
    } else if (k.role == KernelRole::kStreamReference) {
      excluded += " " + rate + " (" + to_string(k.role) + ": the GEMMs' memory roof, gemm_memory " +
                  fixed(f.gemm_memory_efficiency, "", 3) + ");";
    } else if (k.role == KernelRole::kOptimizer) {
      excluded += " " + rate + " (" + to_string(k.role) + ": its own figure, optimizer_memory " +
                  fixed(f.optimizer_memory_efficiency, "", 3) + ");";
    } else {
      const double ratio = f.memory.achieved_Bps / k.achieved_Bps;
      excluded += " " + rate + " (" + to_string(k.role) + ", not fitted: the profile predicts it " +
                  fixed(ratio >= 1 ? ratio : 1 / ratio, "x ", 1) + (ratio >= 1 ? "faster" : "slower") + " than it ran);";
    }
  }
  if (!excluded.empty()) line += " excluded:" + excluded;
  line.pop_back();
  if (!f.memory.fallback.empty())
    line += "; not a line fit: " + f.memory.fallback + ", so the largest sample's bytes/s is the rate and the launch 0";
  return line;
}

std::string gemm_note(const std::string& type, const GemmFit& g, double peak, double catalog_peak, double launch_s,
                      double memory_Bps) {
  const double model_s =
      gemm_model_time(g.best_sample, peak, g.gemm_efficiency, g.gemm_half_work_flop, launch_s, memory_Bps, g.gemm_k0,
                      g.gemm_full_outputs);
  std::string line = type + " GEMMs: best measured " + fixed(g.best_sample_flops / 1e9, " GFLOP/s", 1) + " (" +
                     shape(g.best_sample) + ", the profile predicts " +
                     fixed(g.best_sample.work_flop() / model_s / 1e9, " GFLOP/s", 1) + " there); fitted asymptote peak x e = " +
                     fixed(peak * g.gemm_efficiency / 1e9, " GFLOP/s", 1) + " (W, k -> infinity), e " +
                     fixed(g.gemm_efficiency, "", 3) + ", half work " + fixed(g.gemm_half_work_flop / 1e3, " kFLOP", 1) +
                     ", k0 " + fixed(g.gemm_k0, "", 0) + " (the k of half speed that fits best)" +
                     (g.gemm_full_outputs > 0 ? ", full outputs " + fixed(g.gemm_full_outputs, "", 0) +
                                                    " (smaller GEMMs leave the device part idle)"
                                              : "");
  if (peak > catalog_peak)
    line += "; above the catalog's fp32 peak " + fixed(catalog_peak / 1e9, " GFLOP/s", 1) +
            ": the profile sets peak fp32 to the asymptote";
  line += "; error on its " + std::to_string(g.samples) + " samples max " + fixed(g.max_rel_error * 100, "%", 1) +
          ", rms " + fixed(g.rms_rel_error * 100, "%", 1);
  if (g.memory_roof_overruns > 0)
    line += "; " + std::to_string(g.memory_roof_overruns) + " ran faster than the memory roof the profile gives them" +
            " (bytes / (bandwidth x gemm_memory)), up to " + fixed(g.max_memory_roof_overrun, "x", 2) +
            ": GEMM operands streamed faster than the stream reference; without that forced part, max " +
            fixed(g.max_rel_error_unforced * 100, "%", 1);
  line += " (" + std::to_string(g.memory_bound_samples) + " on the memory roof)";
  return line;
}

}  // namespace

std::vector<LinkBenchmark> link_benchmarks(const models::Cluster& cluster) {
  std::map<std::string, LinkBenchmark> by_class;
  auto add = [&](const std::string& cls, SampleKind kind, int ranks) {
    auto [it, fresh] = by_class.try_emplace(cls, LinkBenchmark{cls, kind, ranks});
    if (!fresh) it->second.ranks_per_node = std::max(it->second.ranks_per_node, ranks);
  };
  for (const models::NodeType& nt : cluster.node_types) {
    if (nt.gpus_per_node > 1) add(models::to_string(nt.intra.kind), SampleKind::kAllReduce, nt.gpus_per_node);
    if (cluster.nodes.size() > 1 && nt.nics.count > 0)
      add(models::to_string(nt.nics.kind), SampleKind::kP2p, std::max(1, nt.gpus_per_node));
  }
  std::vector<LinkBenchmark> out;
  for (const auto& [cls, b] : by_class) out.push_back(b);
  return out;
}

namespace {

/// One device type's fits from its samples (memory-bound kernels, then GEMMs under the memory
/// roof they give), and the profile entry that carries them; notes what the fits found.
std::pair<DeviceFits, models::DeviceProfile> fit_device(const std::string& type, const models::GpuType& gpu,
                                                        const std::vector<Sample>& mine, bool host_memory,
                                                        CalibrationResult& out, const CalibrateOptions& options) {
  DeviceFits f;
  const MemoryBoundFit memory_bound = with_context(type, options, [&] { return fit_memory_bound(mine, host_memory); });
  f.memory = memory_bound.memory;
  f.kernels = memory_bound.kernels;
  const double bandwidth = gpu.memory_bandwidth_Bps;
  f.memory_efficiency = std::min(1.0, f.memory.achieved_Bps / bandwidth);
  // The GEMMs' memory roof is the pure stream's rate (axpy), not the elementwise kernels' (on a
  // CPU those are compute-bound loops several times below it, and blocked GEMMs stream their
  // operands at the stream rate: a roof at the elementwise rate puts GEMMs that ran faster on
  // it). The GEMM fit honours the roof the profile will give GEMMs (gemm_time's max).
  f.gemm_memory_efficiency = f.memory_efficiency;
  for (const KernelRate& k : f.kernels)
    if (k.role == KernelRole::kStreamReference && k.achieved_Bps > f.memory.achieved_Bps)
      f.gemm_memory_efficiency = std::min(1.0, k.achieved_Bps / bandwidth);
  // The optimizer step streams four arrays with a sqrt and a division per element: on a CPU
  // neither the elementwise kernels' rate nor the pure stream's (models/gpu_type.hpp).
  for (const KernelRate& k : f.kernels)
    if (k.role == KernelRole::kOptimizer) f.optimizer_memory_efficiency = std::min(1.0, k.achieved_Bps / bandwidth);
  note(out, options, memory_note(type, f, bandwidth));
  if (f.memory.achieved_Bps > bandwidth)
    note(out, options, type + " memory-bound kernels reach " + fixed(f.memory.achieved_Bps / 1e9, " GB/s", 2) +
                           ", above the catalog's memory bandwidth (cache-resident data): memory efficiency capped at 1");
  const double memory_roof_Bps = bandwidth * f.gemm_memory_efficiency;
  const double catalog_peak = gpu.peak(models::Dtype::kFp32);
  double peak = catalog_peak;
  // A CPU rank's GEMM runs on its one core whatever its size: no grid to fill there.
  const std::vector<double> fills = host_memory ? std::vector<double>{0} : full_outputs_ladder(mine);
  const GemmFitCriterion criterion = host_memory ? GemmFitCriterion::kMinimax : GemmFitCriterion::kLeastSquares;
  f.gemm = fit_gemm_and_k0(mine, peak, f.memory.kernel_launch_s, memory_roof_Bps, kGemmK0Candidates, fills, criterion);
  if (f.gemm.unclamped_efficiency > 1.0) {
    // Faster than the datasheet peak: the catalog's clock assumption is low for this machine;
    // the fitted asymptotic rate becomes the profile's peak (efficiency 1).
    peak *= f.gemm.unclamped_efficiency;
    f.measured_peak_flops = peak;
    f.gemm = fit_gemm_and_k0(mine, peak, f.memory.kernel_launch_s, memory_roof_Bps, kGemmK0Candidates, fills, criterion);
  }
  note(out, options, gemm_note(type, f.gemm, peak, catalog_peak, f.memory.kernel_launch_s, memory_roof_Bps));
  models::DeviceProfile d;
  if (f.measured_peak_flops > 0) d.peak_flops[models::Dtype::kFp32] = f.measured_peak_flops;
  // The execution engine's GEMMs are fp32. On a GPU that is the FP32 pipe, not the tensor-core
  // rate that `gemm` describes for 16-bit training (GpuType::gemm_efficiency_in): the profile
  // sets `gemm_fp32` there. CPU devices compute only fp32, where `gemm` is that rate.
  if (host_memory) d.gemm_efficiency = f.gemm.gemm_efficiency;
  else d.gemm_fp32_efficiency = f.gemm.gemm_efficiency;
  d.gemm_half_work_flop = f.gemm.gemm_half_work_flop;
  d.gemm_k0 = f.gemm.gemm_k0;
  if (f.gemm.gemm_full_outputs > 0) d.gemm_full_outputs = f.gemm.gemm_full_outputs;
  d.memory_efficiency = f.memory_efficiency;
  d.gemm_memory_efficiency = f.gemm_memory_efficiency;  // always: a catalog's own would otherwise stay
  if (f.optimizer_memory_efficiency > 0) d.optimizer_memory_efficiency = f.optimizer_memory_efficiency;
  d.kernel_launch_s = f.memory.kernel_launch_s;
  if (host_memory) {
    // The rank's own thread calls the kernels: no separate host thread runs ahead of the
    // device, so there is no framework host time to overlap (the per-call cost is in kernel_launch).
    d.framework_op_host_s = 0.0;
    d.framework_pass_host_s = 0.0;
  }
  return {f, d};
}

}  // namespace

CalibrationResult calibrate(const models::Cluster& cluster, const CalibrateOptions& options) {
  CalibrationResult out;
  const Grid grid = make_grid(options.quick);
  SampleStore store(options);
  std::set<std::string> seen;
  bool host_memory_cluster = true;
  std::string not_host_memory;  // the first device type that keeps the links unmeasured, and why
  for (const models::NodeType& nt : cluster.node_types) {
    const std::string& type = nt.gpu.name;
    if (!seen.insert(type).second) continue;
    std::unique_ptr<exec::Backend> backend;
    if (!options.refit) {
      try {
        backend = exec::make_backend(type);
      } catch (const exec::BackendError& e) {
        say(options, "skipping device type " + type + ": " + e.what());
        if (host_memory_cluster) not_host_memory = type + " has no backend in this binary";
        host_memory_cluster = false;
        continue;
      }
    }
    // The execution engine computes in host memory on CPU device types (exec/cpu) only.
    const bool host_memory = backend ? backend->is_host_memory() : nt.gpu.vendor == models::Vendor::kCpu;
    if (host_memory_cluster && !host_memory) not_host_memory = type + " computes in device memory";
    host_memory_cluster = host_memory_cluster && host_memory;
    const Grid device_grid = make_grid(options.quick, !host_memory);
    const std::string kernels = backend ? backend->describe_kernels() : "";
    say(options, std::string(options.refit ? "fitting " : "benchmarking ") + type + " (" +
                     std::to_string(device_grid.gemm.size()) + " GEMMs, " + std::to_string(device_grid.memory.size()) +
                     " memory-bound kernels)" + (kernels.empty() ? "" : "; " + kernels));
    std::vector<Sample> mine;
    for (const std::vector<Sample>* list : {&device_grid.memory, &device_grid.gemm}) {
      for (Sample s : *list) {
        s.target = type;
        mine.push_back(store.get(s, [&](Sample& x) { run_device_sample(*backend, x, options.timing); }));
      }
    }
    const auto [f, d] = fit_device(type, nt.gpu, mine, host_memory, out, options);
    out.profile.devices[type] = d;
    out.devices[type] = f;
    out.samples.insert(out.samples.end(), mine.begin(), mine.end());
  }
  if (out.devices.empty()) throw std::runtime_error("no device type of the cluster can be benchmarked in this binary");

  // Link classes: only when ranks are threads on host memory (the in-process communicator is
  // then the transport the execution engine uses). Said when not: a cluster with one device
  // type without a backend dropped every link class without a word (s60 hunt).
  const std::vector<LinkBenchmark> link_classes = link_benchmarks(cluster);
  if (!host_memory_cluster && !link_classes.empty())
    note(out, options, "link classes not measured (their benchmarks run every rank as a thread on host memory): " +
                           not_host_memory + "; the profile has no `links`, and the cluster's link figures stay as they are");
  if (host_memory_cluster) {
    for (const LinkBenchmark& b : link_classes) {
      say(options, std::string(options.refit ? "fitting" : "benchmarking") + " link class " + b.link_class + " (" + to_string(b.kind) +
                       (b.kind == SampleKind::kP2p ? ", " + std::to_string(b.ranks_per_node) + " pairs at once" : "") + ")");
      std::vector<Sample> mine;
      for (Sample s : grid.comm) {
        if (s.kind != b.kind) continue;
        if (b.kind == SampleKind::kAllReduce && s.group > b.ranks_per_node) continue;
        if (b.kind == SampleKind::kP2p) s.group = 2 * b.ranks_per_node;  // every device of both nodes
        s.target = b.link_class;
        mine.push_back(store.get(s, [&](Sample& x) { run_comm_sample(x, options.timing); }));
      }
      const LinkFit f = with_context(b.link_class, options, [&] { return fit_link(mine, models::kCollectiveLaunch_s); });
      out.links[b.link_class] = f;
      if (b.kind == SampleKind::kP2p) out.link_senders[b.link_class] = b.ranks_per_node;
      out.profile.links[b.link_class] = {f.bandwidth_Bps, f.latency_s};
      out.samples.insert(out.samples.end(), mine.begin(), mine.end());
      if (b.kind == SampleKind::kP2p)
        note(out, options, b.link_class + ": per-device figures with " + std::to_string(b.ranks_per_node) +
                               " device(s) of each node in a send/recv ping-pong at once (docs/inputs.md's NIC definition)");
    }
  }
  out.resumed = store.resumed;
  out.profile.name = cluster.name;
  return out;
}

std::string profile_to_yaml(const models::Profile& p, const std::vector<std::string>& header) {
  std::ostringstream o;
  for (const std::string& h : header) o << models::yaml_comment_lines(h);  // a path's newline stays in the comment
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
    if (d.gemm_memory_efficiency) o << "      gemm_memory: " << fixed(*d.gemm_memory_efficiency, "", 6) << '\n';
    if (d.gemm_k0) o << "      gemm_k0: " << fixed(*d.gemm_k0, "", 1) << '\n';
    if (d.gemm_full_outputs) o << "      gemm_full_outputs: " << fixed(*d.gemm_full_outputs, "", 0) << '\n';
    if (d.flash_scale) o << "      flash: " << fixed(*d.flash_scale, "", 6) << '\n';
    if (d.gemm_half_work_flop) o << "      gemm_half_work: \"" << fixed(*d.gemm_half_work_flop, "FLOP", 0) << "\"\n";
    if (d.memory_efficiency) o << "      memory: " << fixed(*d.memory_efficiency, "", 6) << '\n';
    if (d.optimizer_memory_efficiency)
      o << "      optimizer_memory: " << fixed(*d.optimizer_memory_efficiency, "", 6) << '\n';
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
