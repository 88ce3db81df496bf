// SPDX-License-Identifier: Apache-2.0
// Factory of one CPU variant (compiled once per variant, like the kernels).
#include <memory>

#include "cpu/cpu_backend.hpp"

namespace hetsim::exec::HETSIM_CPU_VARIANT {

std::unique_ptr<Backend> make_cpu_backend(const std::string& device_type) {
  return std::make_unique<CpuBackend>(device_type);
}

}  // namespace hetsim::exec::HETSIM_CPU_VARIANT
