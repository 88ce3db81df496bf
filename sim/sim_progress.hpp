// SPDX-License-Identifier: Apache-2.0
// Progress of a long simulation and the sizes announced before one: when a line is due and what it
// says. Pure functions (no SimGrid, no clock): actors.cpp feeds them the simulated and wall times.
#pragma once
#include <string>

namespace hetsim::sim {

/// A run that ends within this much wall time prints no progress (the tests' and most users'
/// runs), so short outputs stay as they were.
inline constexpr double kProgressQuiet_s = 3.0;
/// After that, at most one progress line per this much wall time.
inline constexpr double kProgressEvery_s = 5.0;

/// Decides when a progress line is due: first at kProgressQuiet_s of wall time, then every
/// kProgressEvery_s after the last line (a stalled check does not make lines pile up).
class ProgressPacer {
 public:
  ProgressPacer() = default;
  /// Other figures than the defaults (tests, which cannot wait seconds).
  ProgressPacer(double quiet_s, double every_s) : every_s_(every_s), next_s_(quiet_s) {}

  /// True when a line is due at `wall_s` (seconds since the simulation started); it then counts
  /// as printed.
  bool due(double wall_s) {
    if (wall_s < next_s_) return false;
    next_s_ = wall_s + every_s_;
    return true;
  }
  /// The wall time from which due() says yes.
  double next_due_s() const { return next_s_; }

 private:
  double every_s_ = kProgressEvery_s;
  double next_s_ = kProgressQuiet_s;
};

/// "simulate: 41% of the analytic estimate simulated (2.1 of ~5.1 s), 12 s wall": how far the
/// simulated clock is against the cost model's step time (models::predict). A simulation that
/// runs past the estimate says so instead of giving a share above 100%.
std::string progress_line(double simulated_s, double estimate_s, double wall_s);

/// Flows above which the simulator announces a run's size before it starts (size_line).
inline constexpr double kAnnouncedFlows = 1e6;
/// Flows per second of wall time one run moved on the 2-core development machine: about 30K/s
/// with many replicas whose rings contend (64 unfolded replicas of GPT-3 175B, TP8 PP8), about
/// 600K/s for TP rings inside nodes (--no-fold). Only for size_line's rough range.
inline constexpr double kSlowFlowsPerSecond = 3e4;
inline constexpr double kFastFlowsPerSecond = 6e5;

/// "simulate: about 1.2M flows to simulate; at 30K-600K flows/s that is 2 s to 41 s of wall time"
/// for a run of `flows` (estimated before it starts); empty below kAnnouncedFlows.
std::string size_line(double flows);

/// "1.2M", "950K", "12": a count in three significant figures at most.
std::string short_count(double n);
/// "41 s", "2.1 s", "3.4 min", "2.0 h": a wall time for people.
std::string short_duration(double seconds);

}  // namespace hetsim::sim
