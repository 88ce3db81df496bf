// SPDX-License-Identifier: Apache-2.0
// Entry point to the GPU backends (CUDA, HIP) from host-only code.
#pragma once
#include <memory>
#include <string>

#include "backend.hpp"

namespace hetsim::exec {

/// Number of GPUs the CUDA / HIP runtime of this build sees (0 when the backend is not built
/// or no device/driver is present). `why` receives the runtime's explanation when 0.
int cuda_device_count(std::string* why = nullptr);
int hip_device_count(std::string* why = nullptr);

/// A GPU backend for a catalog GPU type on local device `local_device`, or nullptr when this
/// build has no GPU backend able to run it. Throws BackendError when one is built but has no device.
std::unique_ptr<Backend> make_gpu_backend(const std::string& device_type, int local_device);

}  // namespace hetsim::exec
