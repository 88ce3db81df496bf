// SPDX-License-Identifier: Apache-2.0
#include "runner/measurement_stream.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace hetsim::exec {

MeasurementStream::MeasurementStream(std::ostream& out, int ranks)
    : out_(out),
      pending_(static_cast<std::size_t>(std::max(0, ranks))),
      latest_start_s_(static_cast<std::size_t>(std::max(0, ranks)), -std::numeric_limits<double>::infinity()) {}

void MeasurementStream::add(int rank, std::vector<Measurement> records) {
  if (rank < 0 || rank >= static_cast<int>(pending_.size()))
    throw std::out_of_range("MeasurementStream: rank " + std::to_string(rank) + " of " +
                            std::to_string(pending_.size()));
  if (records.empty()) return;
  // Stable: records that start together keep the order the rank recorded them in.
  std::stable_sort(records.begin(), records.end(),
                   [](const Measurement& a, const Measurement& b) { return a.start_s < b.start_s; });
  std::lock_guard lock(mutex_);
  std::deque<Measurement>& queue = pending_[static_cast<std::size_t>(rank)];
  const bool was_empty = queue.empty();
  for (Measurement& m : records) queue.push_back(std::move(m));
  if (was_empty) fronts_.emplace(queue.front().start_s, rank);
  double& latest = latest_start_s_[static_cast<std::size_t>(rank)];
  latest = std::max(latest, queue.back().start_s);
  // A rank's next records start after its latest one: nothing any rank adds later can start
  // before the earliest of the ranks' latest starts.
  write_ready(*std::min_element(latest_start_s_.begin(), latest_start_s_.end()));
}

void MeasurementStream::close() {
  std::lock_guard lock(mutex_);
  write_ready(std::numeric_limits<double>::infinity());
  out_.flush();
}

void MeasurementStream::write_ready(double up_to_s) {
  while (!fronts_.empty() && fronts_.top().first <= up_to_s) {
    const int rank = fronts_.top().second;
    fronts_.pop();
    std::deque<Measurement>& queue = pending_[static_cast<std::size_t>(rank)];
    out_ << to_json_line(queue.front()) << '\n';
    queue.pop_front();
    if (!queue.empty()) fronts_.emplace(queue.front().start_s, rank);
  }
}

}  // namespace hetsim::exec
