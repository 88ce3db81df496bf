// SPDX-License-Identifier: Apache-2.0
// `hetsim describe` of a sweep (kind: sweep): its inputs, axes and grid size.
#pragma once
#include <ostream>
#include <string>

#include "json_writer.hpp"
#include "sweep_spec.hpp"

namespace hetsim::cli {

/// Loads a sweep file and checks it against its cluster (throws ConfigError like any loader).
models::SweepSpec load_checked_sweep(const std::string& path);
/// Table text: cluster, workloads, objective, then one line per axis with its values.
void print_sweep(const models::SweepSpec& s, std::ostream& out);
/// The same as JSON members of the file's object.
void json_sweep(models::JsonOut& j, const models::SweepSpec& s);

}  // namespace hetsim::cli
