// SPDX-License-Identifier: Apache-2.0
// Writes a Cluster as `kind: cluster` YAML and a Workload as `kind: workload` YAML
// (docs/inputs.md) that load_cluster()/load_workload() read back to the same values.
#pragma once
#include <string>

#include "atomic_file.hpp"
#include "cluster.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// A double-quoted YAML scalar of any text (quotes, backslashes and control characters escaped).
std::string yaml_quoted(const std::string& s);
/// `text` as YAML comment lines ("# ...\n" for each of its lines): a control character or a
/// byte that is not UTF-8 (a path's, in "Produced by ...") is written as \xNN, since either
/// would make the file hetsim just wrote fail to load (a comment ends at a line break, and the
/// reader takes UTF-8 only).
std::string yaml_comment_lines(const std::string& text);
/// The YAML text of `cluster` (GPU types by catalog name; values with units, full precision).
std::string cluster_to_yaml(const Cluster& cluster, const std::string& comment = {});
/// The YAML text of `workload`.
std::string workload_to_yaml(const Workload& workload, const std::string& comment = {});

}  // namespace hetsim::models
