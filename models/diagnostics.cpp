// SPDX-License-Identifier: Apache-2.0
// Compiler-style input diagnostics and the ConfigError that carries them.
#include "diagnostics.hpp"

#include <algorithm>
#include <tuple>

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

/// Each file's diagnostics in the order of their lines, the files in the order they were first
/// reported: a file's own checks and those against its cluster (a plan's selectors, its layer
/// sums) are found in turn, and were printed in that order, a line 6 after a line 31.
std::vector<Diagnostic> in_file_order(std::vector<Diagnostic> diagnostics) {
  std::vector<std::string> files;
  for (const Diagnostic& d : diagnostics)
    if (std::find(files.begin(), files.end(), d.file) == files.end()) files.push_back(d.file);
  const auto file_index = [&](const Diagnostic& d) { return std::find(files.begin(), files.end(), d.file) - files.begin(); };
  std::stable_sort(diagnostics.begin(), diagnostics.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    return std::tuple(file_index(a), a.line, a.col) < std::tuple(file_index(b), b.line, b.col);
  });
  return diagnostics;
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
    : ConfigError(in_file_order(std::move(diagnostics)), 0) {}

ConfigError::ConfigError(std::vector<Diagnostic> ordered, int)
    : std::runtime_error(join(ordered)), diagnostics_(std::move(ordered)) {}

}  // namespace hetsim::models
