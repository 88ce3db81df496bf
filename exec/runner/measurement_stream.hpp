// SPDX-License-Identifier: Apache-2.0
// The per-op records of a run written while it runs (`hetsim run --out`), in order of start time
// over all ranks, as run_in_process orders the records it keeps to the end: memory holds
// only the records some rank may still precede, not every step's (10,000 steps of a 2-layer
// model were 1 GB in memory).
#pragma once
#include <deque>
#include <mutex>
#include <ostream>
#include <queue>
#include <utility>
#include <vector>

#include "runner/measurement.hpp"

namespace hetsim::exec {

class MeasurementStream {
 public:
  /// Writes JSON lines (to_json_line) to `out` for ranks 0..ranks-1.
  MeasurementStream(std::ostream& out, int ranks);

  /// One step's records of `rank` (any order within the step; a rank's steps in the order it
  /// ran them). Writes every record that no rank can still precede: those starting no later
  /// than the latest start each rank has handed over. Safe to call from the ranks' threads.
  void add(int rank, std::vector<Measurement> records);

  /// Writes what is left (after the run, when no rank adds more).
  void close();

 private:
  void write_ready(double up_to_s);  // with mutex_ held

  std::mutex mutex_;
  std::ostream& out_;
  std::vector<std::deque<Measurement>> pending_;  ///< per rank, in start order
  std::vector<double> latest_start_s_;            ///< per rank; -inf until it adds a record
  /// (start of a rank's first pending record, rank), earliest on top.
  std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>> fronts_;
};

}  // namespace hetsim::exec
