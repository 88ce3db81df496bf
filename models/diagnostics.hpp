// SPDX-License-Identifier: Apache-2.0
// Compiler-style input diagnostics: `file:line:col: error: field.path: what (expected ...)`.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace hetsim::models {

/// One problem found in an input file. line and col are 1-based (0 = unknown).
struct Diagnostic {
  std::string file;
  int line = 0;
  int col = 0;
  std::string field;    ///< dotted path, e.g. `node_types.dgx.nics.bandwidth`
  std::string message;  ///< what is wrong, with what was expected in parentheses
  std::string to_string() const;  ///< `file:line:col: error: field: message`
};

/// Thrown by every loader after it has collected ALL the errors of a file.
/// main() prints what() (one diagnostic per line) and exits with code 2.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& get_diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace hetsim::models
