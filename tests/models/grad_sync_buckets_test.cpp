// SPDX-License-Identifier: Apache-2.0
// A GPU's gradient buckets sent one after the other over its link, each once every member of its
// group has produced it (serial_buckets_end_s): the cost model's exposed sync for stages in
// several DP groups (models/grad_sync_cost.cpp GradSync::stages_in_several_groups_ends), a queue per
// side of the GPU its rings use (grad_sync_own_sides.hpp). And a WAN link shared by such groups,
// walked bucket by bucket with their latency steps as waits (SyncRails::share_rail_in_phases).
#include <gtest/gtest.h>

#include <limits>
#include <map>
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

// Buckets ready days into the step (after a WAN latency of 1e6 s) whose sends take less than
// the clock's resolution there (~1e-10 s at 1e6 s): the walk still ends, both groups at the
// moment their buckets arrive. It repeated the same moment for ever (s66 fuzz: `predict` hung on
// a link of latency "1e4s").
TEST(WanLinkInPhases, SendsBelowTheClocksResolutionStillEnd) {
  WanLink w;
  w.add(1, 1e6, 1e-3, 1e-11);  // a bucket with latency steps: the walk in phases
  w.add(2, 1e6, 0.0, 3e-11);
  EXPECT_NEAR(w.rails.group_reduce_end_s(w.link, 1), 1e6 + 1e-3, 1e-9);
  EXPECT_NEAR(w.rails.group_reduce_end_s(w.link, 2), 1e6, 1e-9);
}

// A GPU's rings leave and enter its node through its NIC rail (priced by SyncRails, not kept
// here) or between vendors also through its host link, stay inside through its switch port, or on
// a mesh node take the link to the next member and from the previous one (one per peer), or with
// more than two members there a part on the link to and from each of them (the hop spread):
// clusters/h100-mi300x.yaml has two HGX H100 nodes (GPUs 0-15, NVSwitch) and two MI300X
// platforms (16-31, xGMI mesh), no RDMA between vendors.
using SideMap = std::map<int, double>;  // side -> share
SideMap sides_of(const Cluster& c, const std::vector<int>& ring, int i, bool node_shared = true) {
  const grad_sync_detail::OwnSides s = grad_sync_detail::own_sides_of(c, ring.data(), static_cast<int>(ring.size()), i, node_shared);
  SideMap out;
  for (int k = 0; k < s.count; ++k) out[s.sides[k].side] += s.sides[k].share;
  return out;
}

TEST(OwnSides, ARingsSidesAtAMemberAreItsRailItsHostLinkItsSwitchPortOrItsMeshLinks) {
  using namespace grad_sync_detail;
  const Cluster c = load_cluster(std::string(HETSIM_SOURCE_DIR) + "/clusters/h100-mi300x.yaml", Catalog::builtin());
  EXPECT_EQ(sides_of(c, {11, 26}, 1), (SideMap{{kHostOut, 1.0}, {kHostIn, 1.0}}));
  EXPECT_EQ(sides_of(c, {16, 26}, 1), SideMap{}) << "the rails price it";
  EXPECT_EQ(sides_of(c, {0, 1, 2}, 1), (SideMap{{kSwitchOut, 1.0}, {kSwitchIn, 1.0}}));
  EXPECT_EQ(sides_of(c, {24, 26}, 0), (SideMap{{2 * 26, 1.0}, {2 * 26 + 1, 1.0}})) << "the link to its one peer";
  // More than two members on a mesh node: each hop spread over the links to all of them.
  EXPECT_EQ(sides_of(c, {24, 26, 25}, 0), (SideMap{{2 * 26, 0.5}, {2 * 25, 0.5}, {2 * 26 + 1, 0.5}, {2 * 25 + 1, 0.5}}));
  EXPECT_EQ(sides_of(c, {24, 26, 25}, 1), (SideMap{{2 * 24, 0.5}, {2 * 25, 0.5}, {2 * 24 + 1, 0.5}, {2 * 25 + 1, 0.5}}));
  EXPECT_EQ(sides_of(c, {24, 26, 25, 17}, 1), (SideMap{{2 * 24, 0.5}, {2 * 25, 0.5}, {2 * 24 + 1, 0.5}}))
      << "25 sends to the next node, so 26 receives only 24's spread hop";
  EXPECT_EQ(sides_of(c, {24, 26, 25, 17}, 2), (SideMap{{2 * 24 + 1, 0.5}, {2 * 26 + 1, 0.5}}));
  EXPECT_EQ(sides_of(c, {24, 26, 17}, 1), (SideMap{{2 * 24 + 1, 1.0}})) << "sends to another node, receives on its mesh";
  EXPECT_EQ(sides_of(c, {24, 26, 17}, 0), (SideMap{{2 * 26, 1.0}})) << "receives from another node";
}

// Where the ring crosses a node boundary as one NCCL channel per member of the larger side (not
// node_shared), the channels land on the node's members in turn: H100 0 -> MI300Xs 29, 28 ->
// H100 10 puts half of the crossing into each MI300X's host link and half out of each, as the
// simulator's flows (sim/collective_flows.cpp ring_steps); at one boundary member (node_shared)
// the whole crossing enters at 29 and leaves at 28. Four H100s' channels into one MI300X all land
// on it, and each H100 takes one of them.
TEST(OwnSides, ACrossingSplitIntoChannelsLandsOnTheNodesMembersInTurn) {
  using namespace grad_sync_detail;
  const Cluster c = load_cluster(std::string(HETSIM_SOURCE_DIR) + "/clusters/h100-mi300x.yaml", Catalog::builtin());
  const std::vector<int> ring = {0, 29, 28, 10};
  EXPECT_EQ(sides_of(c, ring, 1, false), (SideMap{{2 * 28, 1.0}, {kHostIn, 0.5}, {kHostOut, 0.5}}));
  EXPECT_EQ(sides_of(c, ring, 2, false), (SideMap{{2 * 29 + 1, 1.0}, {kHostIn, 0.5}, {kHostOut, 0.5}}));
  EXPECT_EQ(sides_of(c, ring, 1, true), (SideMap{{2 * 28, 1.0}, {kHostIn, 1.0}}));
  EXPECT_EQ(sides_of(c, ring, 2, true), (SideMap{{2 * 29 + 1, 1.0}, {kHostOut, 1.0}}));
  EXPECT_EQ(sides_of(c, {0, 1, 2, 3, 29}, 4, false), (SideMap{{kHostIn, 1.0}, {kHostOut, 1.0}}));
  EXPECT_EQ(sides_of(c, {0, 1, 2, 3, 29}, 0, false), (SideMap{{kSwitchOut, 1.0}, {kHostIn, 0.25}, {kHostOut, 0.25}}))
      << "one of the four channels each way lands on it";
  // A ring that wraps: 28 is last and 29 first, one node's members in a row across the end.
  EXPECT_EQ(sides_of(c, {29, 0, 28}, 0, false), (SideMap{{kHostOut, 0.5}, {2 * 28 + 1, 1.0}, {kHostIn, 0.5}}));
}

// Each side sends its buckets one after the other, the sides side by side, each bucket through a
// member's out and in side: two of 100 ms through the host link, one of 150 ms over a mesh link
// pair, all ready at 0, end at 200 ms (one queue took 350 ms); the rails' sides are not queued.
TEST(OwnSides, EachSideIsAQueueOfItsOwn) {
  using namespace grad_sync_detail;
  OwnSideQueues q(3);
  // Sides at 1 byte/s: a bucket of B bytes keeps each side busy B seconds.
  const auto two = [](int out, int in) {
    OwnSides s;
    s.add(out, 1.0, 1.0);
    s.add(in, 1.0, 1.0);
    return s;
  };
  const auto add = [](OwnSideQueues& queues, std::size_t slot, const OwnSides& s, double bytes) {
    queues.add(slot, s, 0.0, bytes, 1e9);
  };
  add(q, 1, two(kHostOut, kHostIn), 0.100);
  add(q, 1, two(2 * 26, 2 * 25 + 1), 0.150);
  add(q, 1, two(kHostOut, kHostIn), 0.100);
  EXPECT_NEAR(q.end_s(1), 0.200, 1e-12);
  // Out through the host link, in over a link; then out over the link and in through the host
  // link: its two directions carry one bucket each (100 ms), where one queue took 200 ms.
  add(q, 0, two(kHostOut, 2 * 24 + 1), 0.100);
  add(q, 0, two(2 * 24, kHostIn), 0.100);
  EXPECT_NEAR(q.end_s(0), 0.100, 1e-12);
  add(q, 2, two(kOnRails, kOnRails), 0.100);
  EXPECT_EQ(q.end_s(2), -std::numeric_limits<double>::infinity()) << "the rails price it";
  OwnSides halves;  // half of a bucket each way through the host link
  halves.add(kHostOut, 0.5, 1.0);
  halves.add(kHostIn, 0.5, 1.0);
  add(q, 2, halves, 0.100);
  add(q, 2, halves, 0.100);
  EXPECT_NEAR(q.end_s(2), 0.100, 1e-12);

  // Each side at its own rate (a 50 GB/s host link, a 25 GB/s mesh link: 1 GB takes 20 and 40
  // ms), never longer than the bucket takes at its group's bottleneck (30 ms).
  OwnSideQueues rates(2);
  OwnSides mixed;
  mixed.add(kHostIn, 1.0, 50e9);
  mixed.add(2 * 24, 1.0, 25e9);
  rates.add(0, mixed, 0.0, 1e9, 1.0);
  EXPECT_NEAR(rates.end_s(0), 0.040, 1e-12);
  rates.add(1, mixed, 0.0, 1e9, 0.030);
  EXPECT_NEAR(rates.end_s(1), 0.030, 1e-12);
  OwnSideQueues none(0);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace hetsim::models
