// SPDX-License-Identifier: Apache-2.0
// Chrome trace-event timeline of a simulation (opens in Perfetto and chrome://tracing):
// one track per simulated GPU, one per link that carried traffic.
#pragma once
#include <ostream>
#include <string>

#include "simulator.hpp"

namespace hetsim::sim {

/// The most events a trace can hold, before simulating: `gpu_spans` complete events on the GPU
/// tracks, kLinkBins + 1 counter samples per link that may carry traffic, one name per track.
double trace_event_bound(double gpu_spans, double gpu_tracks, double links);

/// Why a trace is not written: "the timeline could hold up to 12M events (1.2M GPU spans, 11M
/// link counter samples over 11K links), above the limit of 5M (kMaxTraceEvents, about 500 MB of
/// JSON; expected fewer GPUs or replicas simulated)".
std::string trace_refusal(double events, double gpu_spans, double links, double limit);

/// The trace as JSON (Trace Event Format: "X" complete events on GPU tracks, "C" counters of
/// the busy fraction per link in 1000 bins of the step, process/thread name metadata; times in
/// microseconds). Deterministic: same result, same bytes.
std::string chrome_trace_json(const SimResult& result);
/// The same, written to `out` as it is formed (no copy of the whole file in memory).
void write_chrome_trace_json(const SimResult& result, std::ostream& out);

/// Streams the trace to `path` atomically (temp file + rename). Throws std::runtime_error.
void write_chrome_trace(const SimResult& result, const std::string& path);

}  // namespace hetsim::sim
