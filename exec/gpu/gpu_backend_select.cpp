// SPDX-License-Identifier: Apache-2.0
// Chooses the CUDA or HIP backend for a GPU device type, depending on what this build has.
#include <string>

#include "gpu/gpu_backend.hpp"

namespace hetsim::exec {
#if HETSIM_HAVE_CUDA
namespace cuda_backend {
int device_count(std::string* why);
std::unique_ptr<Backend> make_backend(const std::string& device_type, int local_device);
}  // namespace cuda_backend
#endif
#if HETSIM_HAVE_HIP
namespace hip_backend {
int device_count(std::string* why);
std::unique_ptr<Backend> make_backend(const std::string& device_type, int local_device);
}  // namespace hip_backend
#endif

int cuda_device_count(std::string* why) {
#if HETSIM_HAVE_CUDA
  return cuda_backend::device_count(why);
#else
  if (why) *why = "this build has no CUDA backend";
  return 0;
#endif
}

int hip_device_count(std::string* why) {
#if HETSIM_HAVE_HIP
  return hip_backend::device_count(why);
#else
  if (why) *why = "this build has no HIP backend";
  return 0;
#endif
}

std::unique_ptr<Backend> make_gpu_backend(const std::string& device_type, int local_device) {
  if (device_type.rfind("cpu-", 0) == 0) return nullptr;
  std::string why_cuda, why_hip;
  if (cuda_device_count(&why_cuda) > 0) {
#if HETSIM_HAVE_CUDA
    return cuda_backend::make_backend(device_type, local_device);
#endif
  }
  if (hip_device_count(&why_hip) > 0) {
#if HETSIM_HAVE_HIP
    return hip_backend::make_backend(device_type, local_device);
#endif
  }
#if HETSIM_HAVE_CUDA || HETSIM_HAVE_HIP
  // Each `why` names its runtime ("CUDA: no device (...)").
  throw BackendError("no GPU device for '" + device_type + "' (" + why_cuda + "; " + why_hip + ")");
#else
  (void)local_device;
  return nullptr;
#endif
}

}  // namespace hetsim::exec
