// SPDX-License-Identifier: Apache-2.0
// A GPU's gradient buckets sent one after the other over its link, each once every member of its
// group has produced it (serial_buckets_end_s): the cost model's exposed sync for stages in
// several DP groups (models/grad_sync_cost.cpp stages_in_several_groups_exposed_s), a queue per
// side of the GPU its rings use (grad_sync_own_sides.hpp). And a WAN link shared by such groups,
// walked bucket by bucket with their latency steps as waits (SyncRails::share_rail_in_phases).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "catalog.hpp"
#include "grad_sync_own_sides.hpp"
#include "grad_sync_rails.hpp"
#include "input_loader.hpp"
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

/// The WAN link from us-east to us-west of clusters/geo-two-zones.yaml (100 Gb/s, 30 ms) as a
/// resource of `rails`; `seconds` of its time in bytes.
struct WanLink {
  Cluster cluster = load_cluster(std::string(HETSIM_SOURCE_DIR) + "/clusters/geo-two-zones.yaml", Catalog::builtin());
  SyncRails rails{cluster};
  int link = rails.wan_of(0, 1);
  double bytes(double seconds) const { return seconds * rails.rate_Bps(link); }
  void add(int group, double ready_s, double latency_s, double busy_s) {
    rails.add_reduce(link, ready_s, bytes(busy_s), group, latency_s);
  }
};

// Two groups whose buckets are ready together (the TP ranks' groups of one segment) wait their
// 60 ms of latency steps together, then share the link: 60 + 2 x 100 ms each, as the simulator's
// flows (the link carries their latency once between them).
TEST(WanLinkInPhases, GroupsInStepPayTheirLatencyOnce) {
  WanLink w;
  ASSERT_GE(w.link, 0);
  w.add(1, 0.0, 0.060, 0.100);
  w.add(2, 0.0, 0.060, 0.100);
  EXPECT_NEAR(w.rails.group_reduce_end_s(w.link, 1), 0.260, 1e-9);
  EXPECT_NEAR(w.rails.group_reduce_end_s(w.link, 2), 0.260, 1e-9);
}

// Two segments' groups out of step: while the later one waits its latency steps the earlier one
// sends alone. A: latency 0-60 ms, sends 60-120 ms; B (ready at 60 ms): latency 60-120 ms, sends
// 120-180 ms. With the latency counted as the link's busy time, as before, B ended at 240 ms.
TEST(WanLinkInPhases, GroupsOutOfStepFillEachOthersWaits) {
  WanLink w;
  w.add(1, 0.0, 0.060, 0.060);
  w.add(2, 0.060, 0.060, 0.060);
  EXPECT_NEAR(w.rails.group_reduce_end_s(w.link, 1), 0.120, 1e-9);
  EXPECT_NEAR(w.rails.group_reduce_end_s(w.link, 2), 0.180, 1e-9);
  EXPECT_NEAR(w.rails.group_reduce_end_s(w.link, -1), 0.180, 1e-9) << "no group: the link's last";
}

// A group sends its buckets one after the other (one NCCL communicator), each with its latency
// steps. By hand, A's two buckets (10 ms of latency, 20 ms of bytes each, ready at 0) beside B's
// one (no latency, 20 ms, ready at 0): B sends alone 0-10 ms, then both at half rate, B done at
// 30 ms; A alone 30-40 ms; A's second bucket waits 40-50 ms and sends 50-70 ms.
TEST(WanLinkInPhases, AGroupSendsItsBucketsInTurn) {
  WanLink w;
  w.add(1, 0.0, 0.010, 0.020);
  w.add(1, 0.0, 0.010, 0.020);
  w.add(2, 0.0, 0.0, 0.020);
  EXPECT_NEAR(w.rails.group_reduce_end_s(w.link, 2), 0.030, 1e-9);
  EXPECT_NEAR(w.rails.group_reduce_end_s(w.link, 1), 0.070, 1e-9);
}

// A GPU's rings leave and enter its node through its NIC rail (priced by SyncRails, not queued
// here) or between vendors also through its host link, stay inside through its switch port, or on
// a mesh node take the link to the next member and from the previous one (one per peer):
// clusters/h100-mi300x.yaml has two HGX H100 nodes (GPUs 0-15, NVSwitch) and two MI300X
// platforms (16-31, xGMI mesh), no RDMA between vendors.
TEST(OwnSides, ARingsSidesAtAMemberAreItsRailItsHostLinkItsSwitchPortOrItsMeshLinks) {
  using namespace grad_sync_detail;
  const Cluster c = load_cluster(std::string(HETSIM_SOURCE_DIR) + "/clusters/h100-mi300x.yaml", Catalog::builtin());
  const int vendors[] = {11, 26}, mi300x[] = {16, 26}, switch_node[] = {0, 1, 2}, mesh[] = {24, 26, 25},
            half[] = {24, 26, 17};
  const auto sides = [&](const int* ring, int count, int i) {
    const OwnSides s = own_sides_of(c, ring, count, i);
    return std::pair{s.out, s.in};
  };
  EXPECT_EQ(sides(vendors, 2, 1), std::pair(kHostOut, kHostIn));
  EXPECT_EQ(sides(mi300x, 2, 1), std::pair(kOnRails, kOnRails));
  EXPECT_EQ(sides(switch_node, 3, 1), std::pair(kSwitchOut, kSwitchIn));
  EXPECT_EQ(sides(mesh, 3, 0), std::pair(2 * 26, 2 * 25 + 1));
  EXPECT_EQ(sides(mesh, 3, 1), std::pair(2 * 25, 2 * 24 + 1));
  EXPECT_EQ(sides(half, 3, 1), std::pair(kOnRails, 2 * 24 + 1)) << "sends to another node, receives on its mesh";
  EXPECT_EQ(sides(half, 3, 0), std::pair(2 * 26, kOnRails)) << "receives from another node";
}

// Each side sends its buckets one after the other, the sides side by side, each bucket through a
// member's out and in side: two of 100 ms through the host link, one of 150 ms over a mesh link
// pair, all ready at 0, end at 200 ms (one queue took 350 ms); the rails' sides are not queued.
TEST(OwnSides, EachSideIsAQueueOfItsOwn) {
  using namespace grad_sync_detail;
  OwnSideQueues q(3);
  q.add(1, {kHostOut, kHostIn}, {0.0, 0.100});
  q.add(1, {2 * 26, 2 * 25 + 1}, {0.0, 0.150});
  q.add(1, {kHostOut, kHostIn}, {0.0, 0.100});
  EXPECT_NEAR(q.end_s(1), 0.200, 1e-12);
  // Out through the host link, in over a link; then out over the link and in through the host
  // link: its two directions carry one bucket each (100 ms), where one queue took 200 ms.
  q.add(0, {kHostOut, 2 * 24 + 1}, {0.0, 0.100});
  q.add(0, {2 * 24, kHostIn}, {0.0, 0.100});
  EXPECT_NEAR(q.end_s(0), 0.100, 1e-12);
  q.add(2, {kOnRails, kOnRails}, {0.0, 0.100});
  EXPECT_EQ(q.end_s(2), -std::numeric_limits<double>::infinity()) << "the rails price it";
  OwnSideQueues none(0);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace hetsim::models
