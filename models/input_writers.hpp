// SPDX-License-Identifier: Apache-2.0
// Writes a Cluster as `kind: cluster` YAML and a Workload as `kind: workload` YAML
// (docs/inputs.md) that load_cluster()/load_workload() read back to the same values.
#pragma once
#include <string>

#include "atomic_file.hpp"
#include "cluster.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// The YAML text of `cluster` (GPU types by catalog name; values with units, full precision).
/// A double-quoted YAML scalar of any text (quotes, backslashes and control characters escaped).
std::string yaml_quoted(const std::string& s);
std::string cluster_to_yaml(const Cluster& cluster, const std::string& comment = {});
/// The YAML text of `workload`.
std::string workload_to_yaml(const Workload& workload, const std::string& comment = {});

}  // namespace hetsim::models
