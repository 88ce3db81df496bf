// SPDX-License-Identifier: Apache-2.0
// Compiler-style input diagnostics: `file:line:col: error: field.path: what (expected ...)`.
#pragma once
#include <stdexcept>
#include <set>
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
  ConfigError(std::vector<Diagnostic> ordered, int);  ///< `ordered`: sorted by in_file_order
  std::vector<Diagnostic> diagnostics_;
};

/// Gathers the ConfigErrors of several loads (several files, or a file and its cross-checks)
/// so that all of them are reported together, as one ConfigError.
class DiagnosticCollector {
 public:
  /// Runs `load`; a ConfigError it throws is kept. Returns whether it succeeded.
  template <class F>
  bool collect(F&& load) {
    try {
      load();
      return true;
    } catch (const ConfigError& e) {
      for (const Diagnostic& d : e.get_diagnostics()) add(d);
      return false;
    }
  }
  /// Keeps `d` unless the same diagnostic was kept already: a file read twice (a catalog file
  /// named on the command line, and read again as the catalog a cluster needs) says each once.
  void add(Diagnostic d) {
    if (seen_.insert(d.to_string()).second) errors_.push_back(std::move(d));
  }
  bool empty() const { return errors_.empty(); }
  /// Throws one ConfigError with everything collected, if anything was.
  void throw_if_any() {
    if (!errors_.empty()) throw ConfigError(std::move(errors_));
  }

 private:
  std::vector<Diagnostic> errors_;
  std::set<std::string> seen_;  ///< to_string() of each kept
};

}  // namespace hetsim::models
