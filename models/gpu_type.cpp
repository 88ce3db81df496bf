// SPDX-License-Identifier: Apache-2.0
// GpuType helpers: enum names, dtype sizes, peak lookup.
#include "gpu_type.hpp"

#include <stdexcept>

namespace hetsim::models {

const char* to_string(Vendor v) {
  switch (v) {
    case Vendor::kNvidia: return "nvidia";
    case Vendor::kAmd: return "amd";
    case Vendor::kCpu: return "cpu";
  }
  return "?";
}

const char* to_string(Dtype d) {
  switch (d) {
    case Dtype::kFp32: return "fp32";
    case Dtype::kTf32: return "tf32";
    case Dtype::kFp16: return "fp16";
    case Dtype::kBf16: return "bf16";
    case Dtype::kFp8: return "fp8";
  }
  return "?";
}

double dtype_bytes(Dtype d) {
  switch (d) {
    case Dtype::kFp8: return 1.0;
    case Dtype::kFp16:
    case Dtype::kBf16: return 2.0;
    case Dtype::kFp32:
    case Dtype::kTf32: return 4.0;
  }
  return 4.0;
}

double activation_bytes(Dtype d) { return d == Dtype::kFp32 || d == Dtype::kTf32 ? 4.0 : 2.0; }

double GpuType::gemm_efficiency_in(Dtype d) const {
  if (d == Dtype::kFp32 && efficiency.gemm_fp32_efficiency > 0) return efficiency.gemm_fp32_efficiency;
  return efficiency.gemm_efficiency;
}

double GpuType::utilisation_peak(Dtype d) const {
  const auto it = datasheet_peak_flops.find(d);
  return it != datasheet_peak_flops.end() ? it->second : peak(d);
}

double GpuType::peak(Dtype d) const {
  const auto it = peak_flops.find(d);
  if (it == peak_flops.end()) {
    throw std::out_of_range("device type '" + name + "' has no " + to_string(d) + " peak in the catalog");
  }
  return it->second;
}

}  // namespace hetsim::models
