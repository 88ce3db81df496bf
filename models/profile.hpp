// SPDX-License-Identifier: Apache-2.0
// A calibrated Profile (`kind: profile`, docs/inputs.md): measured efficiency figures per device
// type and achieved link figures per link class that override the catalog's defaults.
// Written by `hetsim calibrate` (calibration/), read by predict/plan/simulate/check --profile.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "cluster.hpp"

namespace hetsim::models {

/// Overrides of one device type's EfficiencyModel; absent fields keep the catalog's value.
struct DeviceProfile {
  /// Measured peak per dtype, given when kernels outrun the catalog's datasheet peak (e.g. a CPU
  /// whose boost clock the catalog does not assume); replaces the catalog's entry for that dtype.
  std::map<Dtype, double> peak_flops;
  std::optional<double> gemm_efficiency, gemm_half_work_flop, memory_efficiency, kernel_launch_s,
      framework_op_host_s, framework_pass_host_s;
  std::optional<double> gemm_fp32_efficiency;  ///< EfficiencyModel::gemm_fp32_efficiency (key gemm_fp32)
  std::optional<double> gemm_memory_efficiency;  ///< EfficiencyModel::gemm_memory_efficiency (key gemm_memory)
  std::optional<double> gemm_k0;                 ///< EfficiencyModel::gemm_k0 (key gemm_k0)
  std::optional<double> gemm_full_outputs;       ///< EfficiencyModel::gemm_full_outputs (key gemm_full_outputs)
  /// EfficiencyModel::optimizer_memory_efficiency (key optimizer_memory)
  std::optional<double> optimizer_memory_efficiency;
  /// EfficiencyModel::flash_scale (key flash), up to 2: a fused attention as fast as the GEMMs
  /// (models/compute_cost.hpp: FlashAttention runs at 0.51 / 0.43 of the GEMM efficiency at scale 1).
  std::optional<double> flash_scale;
};

/// Achieved figures of one link class (what a microbenchmark measures, efficiencies included):
/// the bandwidth one device pair reaches (per device, also when every device of a node uses its
/// NICs at once) and the fixed cost of one transfer over one hop.
struct LinkProfile {
  double bandwidth_Bps = 0;
  double latency_s = 0;
};

struct Profile {
  std::string name;
  std::string source;                               ///< how and when it was measured
  std::map<std::string, DeviceProfile> devices;     ///< by catalog device type name
  /// By link class: an intra-node fabric kind (nvswitch, nvlink, xgmi, pcie, none) or a NIC kind
  /// (infiniband, roce, ethernet), spelled as in cluster files.
  std::map<std::string, LinkProfile> links;
};

/// Throws ConfigError with every error of the file (file:line:col: error: field: what).
Profile load_profile(const std::string& path);
Profile parse_profile(std::string_view text, const std::string& name = "<string>");

/// Applies a profile to a loaded cluster: EfficiencyModel per device type; link classes set the
/// intra-node fabric (bandwidth, latency; marked measured, so no link_efficiency applies) or the
/// NICs of node types of that kind so that the cost model's achieved figures equal the profile's. Entries for device
/// types or link classes the cluster does not use are ignored. Returns how many node types changed.
int apply_profile(Cluster& cluster, const Profile& profile);

/// The profile's NIC latencies that apply_profile cannot honour on `cluster` (before it is
/// applied): a measured hop latency under the zone fabric's, which every hop between nodes pays
/// on top of its two NICs'. apply_profile gives those NICs no latency; each string says so
/// ("links.ethernet: latency 0 s is under ... ").
std::vector<std::string> nic_latencies_under_fabric(const Cluster& cluster, const Profile& profile);

}  // namespace hetsim::models
