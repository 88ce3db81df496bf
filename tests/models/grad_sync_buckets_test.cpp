// SPDX-License-Identifier: Apache-2.0
// A GPU's gradient buckets sent one after the other over its link, each once every member of its
// group has produced it (serial_buckets_end_s): the cost model's exposed sync for stages in
// several DP groups (models/grad_sync_cost.cpp stages_in_several_groups_exposed_s).
#include <gtest/gtest.h>

#include <vector>

#include "step_cost.hpp"

namespace hetsim::models {
namespace {

double end_s(std::vector<SyncBucket> buckets) { return serial_buckets_end_s(buckets.data(), buckets.data() + buckets.size()); }

// One group, buckets ready at (i + 1)/B of a last backward pass ending at 0: the closed form of
// overlapped_sync_exposed_s, whether the link (8 x 30 ms - 100 ms (1 - 1/8) = 152.5 ms) or the
// pass (the last bucket, 5 ms) decides.
TEST(SerialBuckets, OneGroupIsTheOverlappedClosedForm) {
  for (const double bucket_s : {0.030, 0.005}) {
    std::vector<SyncBucket> b;
    for (int i = 0; i < 8; ++i) b.push_back({-0.100 * (1 - (i + 1) / 8.0), bucket_s});
    EXPECT_NEAR(end_s(b), overlapped_sync_exposed_s(bucket_s, 0.100, 8), 1e-12);
  }
  EXPECT_NEAR(end_s({{-0.0875, 0.030}}), 0.030 - 0.0875, 1e-12);
}

// A GPU in two groups (a replica holding the whole model beside a pipeline of two stages): its
// segment-1 group's buckets are ready at -40 and -30 ms (the pipeline's stage 1 produced them
// before stage 0's last backward), its segment-0 group's at -20 and -5 ms; each holds its link
// 10 ms. By hand, in the order they become ready: -40..-30, -30..-20, -20..-10, then the last
// waits for its gradients: -5..5 ms. Listed in segment order 0, 1 (as the cost model adds them).
TEST(SerialBuckets, TwoGroupsSharingAGpuSendInTheOrderTheirBucketsAreReady) {
  EXPECT_NEAR(end_s({{-0.020, 0.010}, {-0.005, 0.010}, {-0.040, 0.010}, {-0.030, 0.010}}), 0.005, 1e-12);
  // Segment 0's buckets busier (25 ms each): the link never idles from -40 ms: -40 + 10 + 10 + 25 + 25.
  EXPECT_NEAR(end_s({{-0.020, 0.025}, {-0.005, 0.025}, {-0.040, 0.010}, {-0.030, 0.010}}), 0.030, 1e-12);
}

}  // namespace
}  // namespace hetsim::models
