// SPDX-License-Identifier: Apache-2.0
// Compiler-style input diagnostics and the ConfigError that carries them.
#include "diagnostics.hpp"

namespace hetsim::models {
namespace {

std::string join(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out.empty() ? std::string("invalid input") : out;
}

}  // namespace

std::string Diagnostic::to_string() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += ':' + std::to_string(line);
    if (col > 0) out += ':' + std::to_string(col);
  }
  out += ": error: ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

}  // namespace hetsim::models
