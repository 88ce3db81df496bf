// SPDX-License-Identifier: Apache-2.0
// The wall-clock limit of `simulate --time-limit` (cli/wall_clock_limit.hpp): it ends the process
// with its message and exit code when not disarmed in time, and a disarmed one ends at once.
#include "wall_clock_limit.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace hetsim::cli {
namespace {

WallClockLimit::Message echo_last() {
  return [](const std::string& last) { return "stopped; last report: [" + last + "]"; };
}

TEST(WallClockLimit, EndsTheProcessWithItsMessageAndTheLastReport) {
  EXPECT_EXIT(
      {
        WallClockLimit limit(0.05, echo_last(), 3);
        limit.progress("simulate: 5% of the analytic estimate simulated");
        std::this_thread::sleep_for(std::chrono::seconds(30));  // the limit ends the process long before
      },
      testing::ExitedWithCode(3), "simulate: 5% of the analytic estimate simulated\nstopped; last report: \\[simulate: 5% of the analytic estimate simulated\\]");
}

TEST(WallClockLimit, WithoutAReportTheMessageGetsAnEmptyOne) {
  EXPECT_EXIT(
      {
        WallClockLimit limit(0.01, echo_last(), 1);
        std::this_thread::sleep_for(std::chrono::seconds(30));
      },
      testing::ExitedWithCode(1), "stopped; last report: \\[\\]");
}

TEST(WallClockLimit, DisarmedItNeitherFiresNorKeepsTheCallerWaiting) {
  // An hour's limit: the destructor must wake the waiting thread, not wait the hour out.
  const auto start = std::chrono::steady_clock::now();
  { WallClockLimit limit(3600, echo_last(), 3); }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(1));
  // Disarmed before its limit: the process is still here after the limit has passed.
  WallClockLimit limit(0.01, echo_last(), 3);
  limit.disarm();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  SUCCEED();
}

TEST(WallClockLimit, ZeroMeansNoLimit) {
  WallClockLimit limit(0, echo_last(), 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  SUCCEED();
}

// `simulate --time-limit 1e300` hung: its deadline overflowed the clock. Such limits are none.
TEST(WallClockLimit, AHugeLimitIsNoneAndItsOwnerEndsAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  for (double huge : {WallClockLimit::kNoLimitFrom_s, 1e18, 1e300}) WallClockLimit limit(huge, echo_last(), 3);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(1));
}

}  // namespace
}  // namespace hetsim::cli
