// SPDX-License-Identifier: Apache-2.0
// A wall-clock limit for work that cannot be stopped from outside: a SimGrid run has no
// cancellation (its engine runs until every actor ends), so `simulate --time-limit` ends the
// process instead, with a message, when the run is still going at the limit.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace hetsim::cli {

class WallClockLimit {
 public:
  /// What the process prints on stderr at the limit, from the last progress line (empty: none
  /// yet). It runs under the lock, just before the exit: it may write more itself (a Report on
  /// stdout), flushed, since std::_Exit flushes nothing.
  using Message = std::function<std::string(const std::string& last_progress)>;

  /// Limits from this many seconds on (11.6 days) are none: a deadline of 1e300 s overflowed the
  /// clock and hung the verb (the planner's --time-limit treats huge values the same way).
  static constexpr double kNoLimitFrom_s = 1e6;

  /// Starts a thread that waits `limit_s` seconds (0 or below, or kNoLimitFrom_s and above: never
  /// fires) and then, unless
  /// disarm() came first, prints message(last progress line) and a newline on stderr and ends
  /// the process with `exit_code` at once (std::_Exit: no unwinding through the simulator's
  /// running actors). Callers arm it around work that writes no file, so none is left half written.
  WallClockLimit(double limit_s, Message message, int exit_code);
  /// Disarms and joins the thread.
  ~WallClockLimit();
  WallClockLimit(const WallClockLimit&) = delete;
  WallClockLimit& operator=(const WallClockLimit&) = delete;

  /// Prints a progress line on stderr and remembers it for the message. The limit's message and
  /// these lines take one lock, so they never interleave.
  void progress(const std::string& line);
  /// From now on the limit never fires (idempotent).
  void disarm();

 private:
  void wait_and_fire(double limit_s);

  Message message_;
  int exit_code_;
  std::mutex mutex_;
  std::condition_variable disarmed_cv_;
  bool disarmed_ = false;
  std::string last_progress_;
  std::thread thread_;
};

}  // namespace hetsim::cli
