// SPDX-License-Identifier: Apache-2.0
#include "pipeline_schedule.hpp"

#include <gtest/gtest.h>

#include <set>

namespace hetsim::models {
namespace {

int count_forward(const std::vector<PassStep>& v) {
  int n = 0;
  for (const auto& p : v) n += p.forward;
  return n;
}

TEST(PipelineSchedule, OneFOneBWarmsUpPMinusSMinusOne) {
  const auto v = stage_passes(Schedule::k1f1b, 4, 1, 8, 1);
  ASSERT_EQ(v.size(), 16u);
  EXPECT_TRUE(v[0].forward && v[1].forward && v[2].forward);
  EXPECT_FALSE(v[3].forward);
  EXPECT_EQ(v[3].micro_batch, 0);
  EXPECT_EQ(count_forward(v), 8);
}

TEST(PipelineSchedule, LastStageAlternates) {
  const auto v = stage_passes(Schedule::k1f1b, 4, 3, 3, 1);
  ASSERT_EQ(v.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v[i].forward, i % 2 == 0);
}

TEST(PipelineSchedule, GpipeRunsAllForwardsFirst) {
  const auto v = stage_passes(Schedule::kGpipe, 4, 0, 5, 1);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(v[i].forward);
  EXPECT_EQ(v[5].micro_batch, 4);
}

TEST(PipelineSchedule, InterleavedVisitsEveryChunkOfEveryMicroBatchOnce) {
  const int p = 4, m = 8, vv = 2;
  for (int s = 0; s < p; ++s) {
    const auto v = stage_passes(Schedule::kInterleaved, p, s, m, vv);
    ASSERT_EQ(v.size(), static_cast<std::size_t>(2 * m * vv));
    std::set<std::tuple<bool, int, int>> seen;
    for (const auto& x : v) seen.insert({x.forward, x.micro_batch, x.chunk});
    EXPECT_EQ(seen.size(), v.size());
    EXPECT_EQ(v[0].chunk, 0);
    // Megatron's first backward is of the last chunk.
    for (const auto& x : v)
      if (!x.forward) {
        EXPECT_EQ(x.chunk, vv - 1);
        break;
      }
  }
}

}  // namespace
}  // namespace hetsim::models
