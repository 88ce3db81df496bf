// SPDX-License-Identifier: Apache-2.0
// Progress lines on a clock rather than between work items: `validate` reported between rows
// only, so one row the simulator took 38 s over left the terminal silent that long (s65 notes).
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "sim_progress.hpp"

namespace hetsim::cli {

class ProgressTicker {
 public:
  /// What to print at `wall_s` seconds since the ticker started (empty: nothing this time). It is
  /// called on the ticker's thread: it may read only what is safe to read concurrently (atomics).
  using Line = std::function<std::string(double wall_s)>;
  /// Where a line goes (stderr by default, one line a call).
  using Sink = std::function<void(const std::string&)>;

  /// Starts a thread that asks `line` for a line when `pacer` says one is due (by default nothing
  /// in the first seconds, then one every few: sim::ProgressPacer) and hands it to `sink`.
  explicit ProgressTicker(Line line, Sink sink = {}, sim::ProgressPacer pacer = {});
  /// Stops and joins the thread; no line is printed after it returns.
  ~ProgressTicker();
  ProgressTicker(const ProgressTicker&) = delete;
  ProgressTicker& operator=(const ProgressTicker&) = delete;

 private:
  void tick_until_stopped();

  Line line_;
  Sink sink_;
  sim::ProgressPacer pacer_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace hetsim::cli
