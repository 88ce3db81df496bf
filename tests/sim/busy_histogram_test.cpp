// SPDX-License-Identifier: Apache-2.0
// The trace's link counters in bounded memory (sim/busy_histogram.hpp).
#include <gtest/gtest.h>

#include <limits>
#include <numeric>

#include "busy_histogram.hpp"

namespace hetsim::sim {
namespace {

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(BusyHistogram, OverlappingIntervalsCountTheirUnionOnce) {
  BusyHistogram h(0.01);
  h.add(1.0, 2.0);
  h.add(1.5, 2.5);  // overlaps the one before: merged, 1.5 s busy in all
  h.add(3.0, 3.5);
  const std::vector<double> bins = h.busy_per_bin(4.0, 4);
  EXPECT_NEAR(bins[0], 0.0, 1e-12);
  EXPECT_NEAR(bins[1], 1.0, 1e-12);
  EXPECT_NEAR(bins[2], 0.5, 1e-12);
  EXPECT_NEAR(bins[3], 0.5, 1e-12);
}

TEST(BusyHistogram, WidensItsBinsForALongerStepAndKeepsTheBusyTime) {
  // First bins of 1 ms: 4096 of them cover 4 s; a step of 1000 s makes them double 8 times.
  BusyHistogram h(1e-3);
  double busy = 0;
  for (int i = 0; i < 100000; ++i) {  // 100,000 flows of 4 ms every 10 ms: memory stays 4096 bins
    h.add(i * 0.01, i * 0.01 + 0.004);
    busy += 0.004;
  }
  const std::vector<double> bins = h.busy_per_bin(1000.0, 1000);
  EXPECT_NEAR(sum(bins), busy, 1e-6 * busy);
  for (double b : bins) EXPECT_NEAR(b / 1.0, 0.4, 0.01);  // every 1 s bin is 40% busy
}

TEST(BusyHistogram, ABinIsNeverBusierThanItsWidth) {
  // A long flow beside short ones already counted: the shared part is not counted twice.
  BusyHistogram h(0.5);
  h.add(0.0, 1.0);
  h.add(2.0, 3.0);
  h.add(0.5, 3.5);  // overlaps the second (merged) and the first (flushed)
  const std::vector<double> bins = h.busy_per_bin(4.0, 4);
  for (double b : bins) EXPECT_LE(b, 1.0 + 1e-12);
  EXPECT_NEAR(sum(bins), 3.5, 1e-12);  // the union [0, 3.5)
}

TEST(BusyHistogram, IgnoresEmptyReversedAndNonFiniteIntervals) {
  BusyHistogram h;
  h.add(1.0, 1.0);
  h.add(2.0, 1.0);
  h.add(0.0, std::numeric_limits<double>::infinity());
  h.add(std::numeric_limits<double>::quiet_NaN(), 1.0);
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.busy_per_bin(1.0, 10), std::vector<double>(10, 0.0));
  EXPECT_TRUE(h.busy_per_bin(0.0, 0).empty());
}

}  // namespace
}  // namespace hetsim::sim
