// SPDX-License-Identifier: Apache-2.0
// The CPU device types: the same kernel sources built for two SIMD widths (exec/CMakeLists.txt),
// i.e. the same fp32 arithmetic at really different speeds, so heterogeneous plans run here.
//   cpu-avx2   -mavx -mfma, Eigen vectorised: 8-wide fp32 FMA. (Named for the 256-bit class of
//              x86 servers; fp32 GEMM needs only AVX+FMA, which also runs where a hypervisor
//              hides AVX2. "cpu-avx" is accepted as an alias.)
//   cpu-scalar EIGEN_DONT_VECTORIZE, no auto-vectorisation, SSE2 scalar code only.
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include "gpu/gpu_backend.hpp"

namespace hetsim::exec {
namespace simd256 {
std::unique_ptr<Backend> make_cpu_backend(const std::string& device_type);
}
namespace scalar {
std::unique_ptr<Backend> make_cpu_backend(const std::string& device_type);
}

std::vector<std::string> cpu_device_types() { return {"cpu-avx2", "cpu-scalar"}; }

std::unique_ptr<Backend> make_backend(const std::string& device_type, int local_device) {
  if (device_type == "cpu-avx2" || device_type == "cpu-avx") {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx") || !__builtin_cpu_supports("fma")) {
      throw BackendError("device type '" + device_type + "' needs a CPU with AVX and FMA (this one has not)");
    }
    return simd256::make_cpu_backend(device_type);
  }
  if (device_type == "cpu-scalar") return scalar::make_cpu_backend(device_type);
  if (auto gpu = make_gpu_backend(device_type, local_device)) return gpu;
  std::string known;
  for (const auto& name : cpu_device_types()) known += (known.empty() ? "" : ", ") + name;
  throw BackendError("no backend for device type '" + device_type + "' in this build (CPU types: " + known +
                     "; GPU types need a CUDA/HIP build and a device)");
}

}  // namespace hetsim::exec
