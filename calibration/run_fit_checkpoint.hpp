// SPDX-License-Identifier: Apache-2.0
// The checkpoint of `hetsim fit` (run_fit.hpp): one JSON line per figure search, so a killed fit
// resumes after the last search it finished. Records carry the fit's identity (its suites'
// content, figures, passes, catalog and cost-model build); a rerun of another fit into the same
// file starts afresh and appends its own records.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "run_fit.hpp"

namespace hetsim::calibration {

/// The identity of a fit: the content of its suite files in order, the figures asked for, the
/// number of passes, the GPU catalog's content and this build's cost model.
std::string run_fit_key(const std::vector<std::string>& suite_paths, const RunFitOptions& options);

/// Appends `step` under `key` (models::append_json_line; throws std::runtime_error with the reason).
void append_run_fit_step(const std::string& path, const std::string& key, const RunFitProgress& step);

/// The last step recorded under `key` in `path` (none when the file is missing or holds only
/// other fits' steps). Throws std::invalid_argument when the file holds JSON lines and none is
/// a fit step (another verb's checkpoint named by mistake: appending to it would be wrong).
std::optional<RunFitProgress> last_run_fit_step(const std::string& path, const std::string& key);

}  // namespace hetsim::calibration
