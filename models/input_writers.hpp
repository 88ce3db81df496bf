// SPDX-License-Identifier: Apache-2.0
// Writes a Cluster as `kind: cluster` YAML and a Workload as `kind: workload` YAML
// (docs/inputs.md) that load_cluster()/load_workload() read back to the same values.
#pragma once
#include <string>

#include "cluster.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// The YAML text of `cluster` (GPU types by catalog name; values with units, full precision).
std::string cluster_to_yaml(const Cluster& cluster, const std::string& comment = {});
/// The YAML text of `workload`.
std::string workload_to_yaml(const Workload& workload, const std::string& comment = {});

/// Writes `text` to `path` atomically (temporary file in the same folder, then rename).
/// Throws std::runtime_error naming the path.
void write_text_file_atomic(const std::string& path, const std::string& text);

}  // namespace hetsim::models
