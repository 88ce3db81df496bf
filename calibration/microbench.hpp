// SPDX-License-Identifier: Apache-2.0
// Microbenchmarks through the exec interfaces: GEMMs and memory-bound kernels on a Backend
// (exec/backend.hpp), all-reduce and point-to-point on the in-process communicator
// (exec/comm/in_process_communicator.hpp). Each result is the median of timed repeats after
// separate warm-up calls; a repeat loops the kernel long enough that neither the clock's resolution
// nor one scheduler time slice decides the result.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "sample.hpp"

namespace hetsim::calibration {

struct TimingOptions {
  int warmup = 2;    ///< calls before timing (caches, page faults, lazy allocation)
  int repeats = 7;   ///< timed repeats; the median is kept (robust to a noisy shared machine)
  /// Each repeat loops the call to last about this long: several scheduler time slices (CFS
  /// targets a few ms per runnable thread; Linux sched-design-CFS.rst), so that on a shared
  /// machine a repeat sees the share of a core that a rank of a real run gets, not a burst.
  double target_repeat_s = 20e-3;
};

/// Median seconds per call of `call` (followed by `sync` before each clock read).
double time_median(const std::function<void()>& call, const std::function<void()>& sync, const TimingOptions& t);

/// The microbenchmarks that a calibration runs (not yet measured: time_s = 0).
struct Grid {
  std::vector<Sample> gemm;      ///< shapes; target left empty (filled per device type)
  std::vector<Sample> memory;    ///< kernels and element counts (size_bytes = counted bytes)
  std::vector<Sample> comm;      ///< sizes and group sizes; target left empty
};
/// Shapes around those of the CPU workloads (tokens 32-256, hidden 64-512, ffn 4x, vocab 256-1024).
/// quick: a few points per fit (tests), otherwise a denser grid.
Grid make_grid(bool quick);

/// Fills s.time_s by running the GEMM or memory kernel of s on `backend`.
void run_device_sample(exec::Backend& backend, Sample& s, const TimingOptions& t);
/// Fills s.time_s: an all-reduce among s.group threads, or a send/recv between 2 threads
/// (one way: half a ping-pong round trip, as in the OSU latency test).
void run_comm_sample(Sample& s, const TimingOptions& t);

}  // namespace hetsim::calibration
