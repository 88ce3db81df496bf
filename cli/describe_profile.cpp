// SPDX-License-Identifier: Apache-2.0
#include "describe_profile.hpp"

#include <optional>

#include <cstdio>

#include "cli_common.hpp"
#include "units.hpp"

namespace hetsim::cli {
namespace {

/// "gemm 0.94, half-work 0 FLOP, ..." for the fields the profile sets.
std::string device_figures(const models::DeviceProfile& d) {
  std::string s;
  const auto add = [&s](const std::string& item) { s += (s.empty() ? "" : ", ") + item; };
  for (const auto& [dtype, flops] : d.peak_flops) add(std::string("peak ") + models::to_string(dtype) + " " + models::format_flops(flops));
  // A figure printed with a printf format ("gemm %.3f"), when the profile sets it.
  const auto add_figure = [&add](const char* format, const std::optional<double>& v) {
    if (!v) return;
    char buf[64];
    std::snprintf(buf, sizeof buf, format, *v);
    add(buf);
  };
  add_figure("gemm %.3f", d.gemm_efficiency);
  add_figure("gemm fp32 %.3f", d.gemm_fp32_efficiency);
  add_figure("flash scale %.3f", d.flash_scale);
  if (d.gemm_half_work_flop) add("half-work " + format_work(*d.gemm_half_work_flop));
  add_figure("memory %.3f", d.memory_efficiency);
  add_figure("gemm memory %.3f", d.gemm_memory_efficiency);
  add_figure("optimizer memory %.3f", d.optimizer_memory_efficiency);
  add_figure("gemm k0 %g", d.gemm_k0);
  add_figure("gemm full outputs %.3g", d.gemm_full_outputs);
  if (d.kernel_launch_s) add("kernel launch " + models::format_time(*d.kernel_launch_s));
  if (d.framework_op_host_s) add("host per op " + models::format_time(*d.framework_op_host_s));
  if (d.framework_pass_host_s) add("host per pass " + models::format_time(*d.framework_pass_host_s));
  return s.empty() ? "nothing (catalog figures)" : s;
}

}  // namespace

void print_profile(const models::Profile& p, const std::string& file, std::ostream& out) {
  out << "profile " << p.name << " (" << file << ")\n";
  if (!p.source.empty()) out << "  source: " << p.source << "\n";
  out << "  devices (" << p.devices.size() << "; unset figures stay the catalog's):\n";
  for (const auto& [name, d] : p.devices) out << "    " << name << ": " << device_figures(d) << "\n";
  out << "  links (" << p.links.size() << ", achieved per device; NICs: while every device of its node sends):\n";
  for (const auto& [kind, l] : p.links)
    out << "    " << kind << ": " << models::format_bandwidth(l.bandwidth_Bps) << ", " << models::format_time(l.latency_s) << "\n";
}

void json_profile(models::JsonOut& j, const models::Profile& p) {
  j.key("name").value(p.name).key("source").value(p.source);
  j.key("devices").begin_object();
  for (const auto& [name, d] : p.devices) {
    j.key(name).begin_object();
    if (!d.peak_flops.empty()) {
      j.key("peak_flops").begin_object();
      for (const auto& [dtype, flops] : d.peak_flops) j.key(models::to_string(dtype)).value(flops);
      j.end_object();
    }
    if (d.gemm_efficiency) j.key("gemm_efficiency").value(*d.gemm_efficiency);
    if (d.gemm_fp32_efficiency) j.key("gemm_fp32_efficiency").value(*d.gemm_fp32_efficiency);
    if (d.flash_scale) j.key("flash_scale").value(*d.flash_scale);
    if (d.gemm_half_work_flop) j.key("gemm_half_work_flop").value(*d.gemm_half_work_flop);
    if (d.memory_efficiency) j.key("memory_efficiency").value(*d.memory_efficiency);
    if (d.gemm_memory_efficiency) j.key("gemm_memory_efficiency").value(*d.gemm_memory_efficiency);
    if (d.optimizer_memory_efficiency) j.key("optimizer_memory_efficiency").value(*d.optimizer_memory_efficiency);
    if (d.gemm_k0) j.key("gemm_k0").value(*d.gemm_k0);
    if (d.gemm_full_outputs) j.key("gemm_full_outputs").value(*d.gemm_full_outputs);
    if (d.kernel_launch_s) j.key("kernel_launch_s").value(*d.kernel_launch_s);
    if (d.framework_op_host_s) j.key("framework_op_host_s").value(*d.framework_op_host_s);
    if (d.framework_pass_host_s) j.key("framework_pass_host_s").value(*d.framework_pass_host_s);
    j.end_object();
  }
  j.end_object();
  j.key("links").begin_object();
  for (const auto& [kind, l] : p.links)
    j.key(kind).begin_object().key("bandwidth_Bps").value(l.bandwidth_Bps).key("latency_s").value(l.latency_s).end_object();
  j.end_object();
}

}  // namespace hetsim::cli
