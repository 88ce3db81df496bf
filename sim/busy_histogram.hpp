// SPDX-License-Identifier: Apache-2.0
// When a link carried traffic, in bounded memory: the trace's link counters. A link of a large
// step carries millions of flows; keeping each busy interval until the step ends held 14.6M
// intervals (1.8 GB with their trace spans) for GPT-3 175B on 512 GPUs (s65 trace hunt).
#pragma once
#include <utility>
#include <vector>

namespace hetsim::sim {

/// Busy time of one link over the step, in kFineBins bins whose width doubles whenever an
/// interval ends past the last bin (pairs of bins merge), so memory stays kFineBins doubles
/// whatever the number of flows and the step's length. Intervals that overlap the one before
/// merge first (a link's flows mostly follow or overlap each other, and their union is what
/// "busy" means); a bin never holds more than its width.
class BusyHistogram {
 public:
  static constexpr int kFineBins = 4096;

  /// `first_width_s`: the fine bins' width to start with (a guess: the analytic step time /
  /// kFineBins); any positive value works, the width doubles as needed.
  explicit BusyHistogram(double first_width_s = 1e-3);

  /// The link carried traffic over [start_s, end_s); ignored when end_s <= start_s.
  void add(double start_s, double end_s);

  /// Busy seconds in each of `bins` equal bins of [0, t_end_s) (at most t_end_s / bins each).
  /// A fine bin that straddles output bins is shared in proportion to its overlap with each.
  std::vector<double> busy_per_bin(double t_end_s, int bins) const;

  bool empty() const { return !open_ && total_s_ == 0; }

 private:
  void flush(double start_s, double end_s);
  void coarsen_until(double end_s);

  double width_s_;
  std::vector<double> busy_s_;  ///< empty until the first flush
  double total_s_ = 0;
  double last_end_s_ = 0;  ///< the latest end added: the last fine bin's busy time lies before it
  bool open_ = false;
  std::pair<double, double> open_interval_{0, 0};
};

}  // namespace hetsim::sim
