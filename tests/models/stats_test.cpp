// SPDX-License-Identifier: Apache-2.0
// MAPE, max error and Spearman's rank correlation on hand-computed cases.
#include <gtest/gtest.h>

#include "stats.hpp"

namespace hetsim::models {
namespace {

TEST(Stats, MapeAndMaxError) {
  EXPECT_NEAR(*mape({1.1, 0.8}, {1.0, 1.0}), 0.15, 1e-12);
  EXPECT_NEAR(*max_abs_error({1.1, 0.8}, {1.0, 1.0}), 0.2, 1e-12);
  EXPECT_FALSE(mape({}, {}));
  EXPECT_NEAR(relative_error(0.9, 1.0), -0.1, 1e-12);
}

TEST(Stats, SpearmanOfMonotoneAndReversed) {
  EXPECT_NEAR(*spearman({1, 2, 3, 4}, {10, 20, 30, 400}), 1.0, 1e-12);
  EXPECT_NEAR(*spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0, 1e-12);
  // d = (0, 0, 1, -1): 1 - 6 * 2 / (4 * 15) = 0.8
  EXPECT_NEAR(*spearman({1, 2, 3, 4}, {1, 2, 4, 3}), 0.8, 1e-12);
  EXPECT_FALSE(spearman({1}, {1}));
  EXPECT_FALSE(spearman({1, 1, 1}, {1, 2, 3}));
}

TEST(Stats, TiesGetAverageRanks) {
  EXPECT_EQ(average_ranks({5, 1, 5, 3}), (std::vector<double>{3.5, 1, 3.5, 2}));
}

}  // namespace
}  // namespace hetsim::models
