// SPDX-License-Identifier: Apache-2.0
// The wall-clock limit of `simulate --time-limit` (see wall_clock_limit.hpp).
#include "wall_clock_limit.hpp"

#include <chrono>
#include <cstdlib>
#include <iostream>

namespace hetsim::cli {

WallClockLimit::WallClockLimit(double limit_s, Message message, int exit_code)
    : message_(std::move(message)), exit_code_(exit_code) {
  if (limit_s > 0 && limit_s < kNoLimitFrom_s) thread_ = std::thread([this, limit_s] { wait_and_fire(limit_s); });
}

WallClockLimit::~WallClockLimit() {
  disarm();
  if (thread_.joinable()) thread_.join();
}

void WallClockLimit::disarm() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    disarmed_ = true;
  }
  disarmed_cv_.notify_all();
}

void WallClockLimit::progress(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  last_progress_ = line;
  std::cerr << line << std::endl;
}

void WallClockLimit::wait_and_fire(double limit_s) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  if (disarmed_cv_.wait_until(lock, deadline, [this] { return disarmed_; })) return;
  // Still holding the lock: no progress line can follow the message.
  std::cerr << message_(last_progress_) << std::endl;
  std::_Exit(exit_code_);
}

}  // namespace hetsim::cli
