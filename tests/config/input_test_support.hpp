// SPDX-License-Identifier: Apache-2.0
// Shared by the input-file tests: list files, and load any input file the way `hetsim describe` does.
#pragma once
#include <string>
#include <vector>

namespace hetsim::test {

/// Regular files with extension `ext` directly under `dir`, sorted by name.
std::vector<std::string> list_files(const std::string& dir, const std::string& ext = ".yaml");

/// Loads `path` by its `kind:`: a plan is resolved and checked against the cluster and workload
/// named in its header comment (models::read_plan_header), or only parsed when it names none.
/// Throws models::ConfigError like the loaders.
void load_any(const std::string& path);

/// A test name made of the file's stem ("cluster-unknown-key" -> "cluster_unknown_key").
std::string test_name_of(const std::string& path);

}  // namespace hetsim::test
