// SPDX-License-Identifier: Apache-2.0
// A calibration run: the microbenchmarks of one cluster's device types and link classes
// (resumable through a JSONL checkpoint), the fits, and the Profile they give.
#pragma once
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "fit.hpp"
#include "microbench.hpp"
#include "profile.hpp"
#include "sample.hpp"

namespace hetsim::calibration {

/// calibrate() with CalibrateOptions::refit: the checkpoint lacks a microbenchmark of the grid.
struct RefitMissingSample : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct CalibrateOptions {
  bool quick = false;              ///< the small grid (tests, a first look)
  std::string checkpoint_path;     ///< JSONL of finished microbenchmarks; empty = no checkpoint
  /// Fit the checkpoint's microbenchmarks only and run none: no device is needed, so a profile
  /// measured on a GPU machine can be fitted again elsewhere (after a change of the fits). A
  /// microbenchmark the checkpoint lacks is an error.
  bool refit = false;
  TimingOptions timing;
  std::function<void(const std::string&)> log;  ///< progress lines; may be empty
};

struct DeviceFits {
  MemoryFit memory;                 ///< on the memory-bound elementwise kernels only
  std::vector<KernelRate> kernels;  ///< every memory microbenchmark kernel's own rate and role
  GemmFit gemm;
  double memory_efficiency = 0;
  double gemm_memory_efficiency = 0;  ///< the GEMMs' memory roof: the stream reference's rate, capped at 1
  double optimizer_memory_efficiency = 0;  ///< the optimizer step's rate (the adam kernel), capped at 1; 0 if not timed
  double measured_peak_flops = 0;  ///< > 0 when GEMMs outran the catalog's fp32 peak
};

struct CalibrationResult {
  models::Profile profile;
  std::vector<Sample> samples;                  ///< every microbenchmark used, in grid order
  std::map<std::string, DeviceFits> devices;    ///< by device type
  std::map<std::string, LinkFit> links;         ///< by link class
  std::map<std::string, int> link_senders;      ///< by p2p (NIC) link class: devices of a node sending at once
  std::vector<std::string> notes;               ///< what the fits found, for the log and the profile's header
  int resumed = 0;                              ///< samples taken from the checkpoint
};

/// One link class's microbenchmark: ring all-reduces inside a node (intra fabric kinds) or
/// send/recv ping-pongs between two nodes with every device of a node in a pair at once (NIC
/// kinds: docs/inputs.md defines their figure per device while all devices of its node send).
struct LinkBenchmark {
  std::string link_class;
  SampleKind kind = SampleKind::kAllReduce;
  int ranks_per_node = 1;  ///< all-reduce: largest group; p2p: concurrent senders per node
};
/// The link classes of a cluster to benchmark, by name: an intra class when some node type has
/// 2 devices or more (ranks_per_node: the most devices a node of that class has), a NIC class
/// when there are several nodes (ranks_per_node: the most devices a node with that NIC has).
std::vector<LinkBenchmark> link_benchmarks(const models::Cluster& cluster);

/// Benchmarks every device type of the cluster that this binary can instantiate
/// (exec::make_backend) and, for host-memory devices, the in-process communicator per link class
/// (all-reduce within a node's intra fabric, send/recv across NICs when there are several nodes).
/// Throws std::runtime_error when nothing of the cluster can be benchmarked.
CalibrationResult calibrate(const models::Cluster& cluster, const CalibrateOptions& options);

/// The profile as YAML (`kind: profile`, docs/inputs.md); `header` lines are written as comments.
std::string profile_to_yaml(const models::Profile& profile, const std::vector<std::string>& header);

}  // namespace hetsim::calibration
