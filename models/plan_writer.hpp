// SPDX-License-Identifier: Apache-2.0
// Writes a Plan as `kind: plan` YAML (docs/inputs.md) that load_plan() reads back unchanged.
#pragma once
#include <string>

#include "cluster.hpp"
#include "plan.hpp"

namespace hetsim::models {

struct PlanWriteOptions {
  std::string cluster_path;   ///< written as a `# cluster:` header line when not empty
  std::string workload_path;  ///< written as a `# workload:` header line when not empty
  std::string comment;        ///< extra header comment lines (may contain newlines)
};

/// How a plan file written to `plan_path` names `input` (a path as given, from the working
/// folder) in its header: relative to the plan's folder, where read_plan_header looks first
/// ("../clusters/c.yaml" for plans/p.yaml), or absolute when that climbs more than one folder
/// (a plan in /tmp naming the repository's cluster). Written as given, it resolved only when
/// the plan was read from the same working folder.
std::string header_path(const std::string& input, const std::string& plan_path);

/// The selector of a TP group: "zone/type[i]/gpu[a-b]" inside one node, else "gpu[0-3,8]".
std::string gpu_selector(const std::vector<int>& gpus, const Cluster& cluster);
/// "0-3,8" for {0,1,2,3,8}: runs of consecutive indices become ranges, order is kept (the index
/// part of a selector); `separator` between items (", " for prose).
std::string index_ranges(const std::vector<int>& indices, const char* separator = ",");

/// The YAML text of `plan`. Each stage's GPUs are written as a node selector
/// ("zone/type[i]/gpu[a-b]") when they lie in one node, else as global indices ("gpu[0-3,8]").
std::string plan_to_yaml(const Plan& plan, const Cluster& cluster, const PlanWriteOptions& options = {});

/// A path as a plan's header comment names it: as is, or quoted as a JSON string when it holds a
/// blank, '#', a backslash, a control character or a header key (read_plan_header reads both).
std::string plan_header_path(const std::string& path);

/// Writes plan_to_yaml() to `path` atomically (a temporary file in the same folder, then
/// rename), so a reader never sees half a plan. Throws std::runtime_error naming the path.
void write_plan_file(const std::string& path, const Plan& plan, const Cluster& cluster,
                     const PlanWriteOptions& options = {});

}  // namespace hetsim::models
