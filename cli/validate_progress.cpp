// SPDX-License-Identifier: Apache-2.0
// `hetsim validate`'s progress line (see validate_progress.hpp).
#include "validate_progress.hpp"

#include "sim_progress.hpp"

namespace hetsim::cli {

void RowProgress::set(std::size_t suite, std::size_t done) {
  // The start first: a line that reads the new position reads a start no older than the row's.
  row_start_.store(std::chrono::steady_clock::now().time_since_epoch().count());
  position_.store((static_cast<std::uint64_t>(suite) << 32) | static_cast<std::uint32_t>(done));
}

void RowProgress::start_suite(std::size_t k) { set(k, 0); }

void RowProgress::row_done(std::size_t done) { set(position_.load() >> 32, done); }

std::string RowProgress::line(const std::vector<models::Suite>& suites, double wall_s,
                              std::chrono::steady_clock::time_point now) const {
  const std::uint64_t position = position_.load();
  if (position == kNone) return "";
  const std::size_t k = position >> 32;
  const std::size_t done = position & 0xffffffffu;
  if (k >= suites.size()) return "";
  const models::Suite& s = suites[k];
  if (done >= s.rows.size()) return "";  // between suites: the next line names the next one
  std::string text = "hetsim validate: " + s.name + ": " + std::to_string(done) + " of " +
                     std::to_string(s.rows.size()) + " rows predicted, " + sim::short_duration(wall_s) + " wall";
  const std::chrono::steady_clock::duration started{row_start_.load()};
  const double row_s = std::chrono::duration<double>(now.time_since_epoch() - started).count();
  if (row_s >= sim::kProgressEvery_s)
    text += " (row " + s.rows[done].id + " for " + sim::short_duration(row_s) + ")";
  return text;
}

}  // namespace hetsim::cli
