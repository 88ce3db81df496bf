// SPDX-License-Identifier: Apache-2.0
// The identity of this build's cost model and simulator: the SHA-256 of their sources, made at
// build time (cmake/ModelFingerprint.cmake). A sweep's checkpoint records carry it in their key
// (sweep_run.hpp sweep_row_key), so a sweep resumed by another build plans its rows again
// instead of mixing two models' figures in one table.
#pragma once

namespace hetsim::models {

/// 64 hex digits; changes with any edit of models/ or sim/ sources.
const char* cost_model_fingerprint();

}  // namespace hetsim::models
