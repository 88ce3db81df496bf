// SPDX-License-Identifier: Apache-2.0
// `hetsim validate --emit-dir DIR`: each row of a suite as the three inputs the other verbs
// read, DIR/<suite>/<row>/{cluster,workload,plan}.yaml.
#pragma once
#include <string>
#include <vector>

#include "diagnostics.hpp"

#include "validation_suite.hpp"

namespace hetsim::models {

/// Writes the cluster, workload and plan of every row of `suite` under dir/<suite>/<row>/,
/// using the micro-batch each row was predicted with in `result` (the row's own when it gives
/// one). Rows whose plan cannot be built (no micro-batch fits) get no plan.yaml. Files are
/// written atomically. Returns the number of row folders written; throws std::runtime_error
/// when a folder or file cannot be written. `profile_path`, when the rows were predicted with a
/// profile, is named in each plan's header: the files alone predict with the catalog's figures.
int emit_suite_inputs(const Suite& suite, const SuiteResult& result, const Catalog& catalog, const std::string& dir,
                      const std::string& profile_path = "");

/// Before any row is predicted: what would stop emit_suite_inputs() or make it write one row over
/// another. Into `errors`: suites or rows of one suite whose folder names are the same once '/'
/// and control characters are replaced ("x/y" and "x_y"), and names too long for a folder (at the
/// row's line). Returned: problems of DIR itself (a file where a row's folder or a folder where
/// one of its files goes, a file it would write that is one of the suites' files or of
/// `other_inputs`), as messages about --emit-dir.
std::vector<std::string> check_emit_targets(const std::vector<Suite>& suites, const std::string& dir,
                                            DiagnosticCollector& errors, const std::vector<std::string>& other_inputs = {});

}  // namespace hetsim::models
