// SPDX-License-Identifier: Apache-2.0
// Clock-driven progress lines (see progress_ticker.hpp).
#include "progress_ticker.hpp"

#include <algorithm>
#include <iostream>

namespace hetsim::cli {

ProgressTicker::ProgressTicker(Line line, Sink sink, sim::ProgressPacer pacer)
    : line_(std::move(line)),
      sink_(sink ? std::move(sink) : Sink([](const std::string& s) { std::cerr << s << std::endl; })),
      pacer_(pacer) {
  thread_ = std::thread([this] { tick_until_stopped(); });
}

ProgressTicker::~ProgressTicker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProgressTicker::tick_until_stopped() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    // Wake when the next line is due (at most a second away, so the pacer's figures need not be
    // known here), or at once when stopped.
    const double sleep_s = std::clamp(pacer_.next_due_s() - wall_s, 0.01, 1.0);
    if (stop_cv_.wait_for(lock, std::chrono::duration<double>(sleep_s), [this] { return stopped_; })) return;
    const double now_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!pacer_.due(now_s)) continue;
    const std::string text = line_(now_s);
    if (!text.empty()) sink_(text);
  }
}

}  // namespace hetsim::cli
