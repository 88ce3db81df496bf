// SPDX-License-Identifier: Apache-2.0
// Chrome trace-event timeline of a simulation (opens in Perfetto and chrome://tracing):
// one track per simulated GPU, one per link that carried traffic.
#pragma once
#include <string>

#include "simulator.hpp"

namespace hetsim::sim {

/// The trace as JSON (Trace Event Format: "X" complete events on GPU tracks, "C" counters of
/// the busy fraction per link in 1000 bins of the step, process/thread name metadata; times in
/// microseconds). Deterministic: same result, same bytes.
std::string chrome_trace_json(const SimResult& result);

/// Writes chrome_trace_json() to `path` atomically (temp file + rename). Throws std::runtime_error.
void write_chrome_trace(const SimResult& result, const std::string& path);

}  // namespace hetsim::sim
