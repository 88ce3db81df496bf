// SPDX-License-Identifier: Apache-2.0
// Clock-driven progress lines (cli/progress_ticker) and `validate`'s line (cli/validate_progress).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "progress_ticker.hpp"
#include "validate_progress.hpp"

namespace hetsim::cli {
namespace {

using namespace std::chrono_literals;

TEST(ProgressTicker, PrintsOnTheClockWhileWorkRunsAndNothingAfterItStops) {
  std::mutex m;
  std::vector<std::string> lines;
  std::atomic<int> asked{0};
  {
    const ProgressTicker ticker(
        [&](double wall_s) {
          ++asked;
          return wall_s >= 0.02 ? "line" : "";
        },
        [&](const std::string& s) {
          std::lock_guard<std::mutex> lock(m);
          lines.push_back(s);
        },
        sim::ProgressPacer(0.02, 0.02));
    // One long work item: the lines come while it runs, not only after it. (Waits for two, up
    // to a minute on a loaded machine; they take ~40 ms.)
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    std::size_t seen = 0;
    while (seen < 2 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(10ms);
      std::lock_guard<std::mutex> lock(m);
      seen = lines.size();
    }
    EXPECT_GE(seen, 2u);
  }
  const int after_stop = asked.load();
  std::this_thread::sleep_for(60ms);
  EXPECT_EQ(asked.load(), after_stop);
}

TEST(ProgressTicker, QuietRunsPrintNothing) {
  std::atomic<int> printed{0};
  {
    const ProgressTicker ticker([](double) { return std::string("line"); },
                                [&](const std::string&) { ++printed; });  // default pacing: 3 s quiet
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(printed.load(), 0);
}

std::vector<models::Suite> two_suites() {
  std::vector<models::Suite> suites(2);
  suites[0].name = "first";
  suites[1].name = "second";
  for (const char* id : {"r1", "r2", "r3"}) {
    models::SuiteRow row;
    row.id = id;
    suites[1].rows.push_back(row);
  }
  suites[0].rows = {suites[1].rows[0]};
  return suites;
}

TEST(RowProgress, NamesTheSuiteTheCountAndARowThatRunsLong) {
  const auto suites = two_suites();
  RowProgress p;
  EXPECT_EQ(p.line(suites, 1.0), "");  // nothing started
  p.start_suite(0);
  EXPECT_EQ(p.line(suites, 4.0), "hetsim validate: first: 0 of 1 rows predicted, 4.0 s wall");
  p.row_done(1);
  EXPECT_EQ(p.line(suites, 4.5), "");  // the suite is done; the next line names the next one
  p.start_suite(1);
  p.row_done(1);
  const auto now = std::chrono::steady_clock::now();
  EXPECT_EQ(p.line(suites, 9.0, now), "hetsim validate: second: 1 of 3 rows predicted, 9.0 s wall");
  // The same row 38 s later: the line says which row holds it up.
  EXPECT_EQ(p.line(suites, 47.0, now + 38s), "hetsim validate: second: 1 of 3 rows predicted, 47 s wall (row r2 for 38 s)");
}

}  // namespace
}  // namespace hetsim::cli
