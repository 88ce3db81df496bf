// SPDX-License-Identifier: Apache-2.0
// Where `hetsim validate` is (which suite, how many of its rows done, since when the current row
// runs) and the progress line that says so. Written by the verb's thread, read by a
// ProgressTicker's: the position is one atomic word, so a line never pairs one suite with
// another's row count.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "validation_suite.hpp"

namespace hetsim::cli {

class RowProgress {
 public:
  /// Suite `k` of the verb's list starts (no row of it done yet).
  void start_suite(std::size_t k);
  /// `done` rows of the current suite are predicted; the next one starts now.
  void row_done(std::size_t done);

  /// "hetsim validate: amp-v100-t4: 3 of 43 rows predicted, 12 s wall", with " (row t03 for
  /// 35 s)" once the row being predicted has run for a progress period; empty before
  /// start_suite. `wall_s` is the time since the verb started, `now` the clock it is read at.
  std::string line(const std::vector<models::Suite>& suites, double wall_s,
                   std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) const;

 private:
  void set(std::size_t suite, std::size_t done);

  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  std::atomic<std::uint64_t> position_{kNone};  ///< suite index << 32 | rows done
  std::atomic<std::chrono::steady_clock::rep> row_start_{0};
};

}  // namespace hetsim::cli
