// SPDX-License-Identifier: Apache-2.0
// GpuError: what HETSIM_GPU_CHECK throws (header-only, so host code and both GPU object
// libraries share it without a link cycle).
#pragma once
#include <string>

#include "backend.hpp"

namespace hetsim::exec {

/// A failed CUDA/HIP runtime call: what() = "<call> failed: <error name>: <error text> (file:line)".
class GpuError : public BackendError {
 public:
  GpuError(const std::string& call, const std::string& error_name, const std::string& error_text,
           const std::string& file, int line)
      : BackendError(call + " failed: " + error_name + ": " + error_text + " (" + file + ":" + std::to_string(line) +
                     ")"),
        call_(call), error_name_(error_name) {}
  const std::string& get_call() const { return call_; }
  const std::string& get_error_name() const { return error_name_; }

 private:
  std::string call_;
  std::string error_name_;
};

}  // namespace hetsim::exec
