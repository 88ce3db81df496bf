// SPDX-License-Identifier: Apache-2.0
// Large simulations: progress lines (when and what), the trace's size bound and refusal, the
// streamed trace, and the structures that keep a run's cost linear in its flows (helper actors
// for wide phases, links created before the zones). No wall-clock assertions.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "collective_flows.hpp"
#include "platform_builder.hpp"
#include "sim_progress.hpp"
#include "sim_topology.hpp"
#include "simulator.hpp"
#include "test_clusters.hpp"
#include "topology.hpp"
#include "trace_writer.hpp"

namespace hetsim::sim {
namespace {

using testing::NodeSpec;

TEST(Progress, QuietForShortRunsThenAtMostOneLinePerPeriod) {
  ProgressPacer pacer;
  EXPECT_FALSE(pacer.due(0.0));
  EXPECT_FALSE(pacer.due(kProgressQuiet_s - 0.01));  // a short run prints nothing
  EXPECT_TRUE(pacer.due(kProgressQuiet_s));
  EXPECT_FALSE(pacer.due(kProgressQuiet_s + 0.5));
  EXPECT_FALSE(pacer.due(kProgressQuiet_s + kProgressEvery_s - 0.01));
  EXPECT_TRUE(pacer.due(kProgressQuiet_s + kProgressEvery_s));
  // A late check (a long solver step) does not make lines pile up: the next is a period later.
  EXPECT_TRUE(pacer.due(100.0));
  EXPECT_FALSE(pacer.due(100.0 + kProgressEvery_s / 2));
  EXPECT_TRUE(pacer.due(100.0 + kProgressEvery_s));
}

TEST(Progress, LineGivesTheShareOfTheAnalyticEstimate) {
  EXPECT_EQ(progress_line(2.1, 5.1, 12.0), "simulate: 41% of the analytic estimate simulated (2.1 of ~5.1 s), 12 s wall");
  EXPECT_EQ(progress_line(5.1, 5.1, 3.04), "simulate: 100% of the analytic estimate simulated (5.1 of ~5.1 s), 3.0 s wall");
  EXPECT_EQ(progress_line(5.3, 5.1, 130), "simulate: 5.3 s simulated, past the analytic estimate of ~5.1 s, 2.2 min wall");
  EXPECT_EQ(progress_line(0.5, 0, 4), "simulate: 0.5 s simulated, 4.0 s wall");
}

TEST(Progress, SizeLineOnlyForLargeRuns) {
  EXPECT_EQ(size_line(0), "");
  EXPECT_EQ(size_line(kAnnouncedFlows - 1), "");
  EXPECT_EQ(size_line(1.23e6), "simulate: about 1.23M flows to simulate; at 30K-600K flows/s that is 2.0 s to 41 s of wall time");
  EXPECT_EQ(short_count(12), "12");
  EXPECT_EQ(short_count(950e3), "950K");
  EXPECT_EQ(short_duration(7200), "2.0 h");
}

TEST(TraceBound, CountsSpansCountersAndTrackNames) {
  // 10 spans on 2 GPU tracks, 3 links of kLinkBins + 1 samples, 5 track names, 2 process names.
  EXPECT_EQ(trace_event_bound(10, 2, 3), 10 + 3 * (kLinkBins + 1) + 5 + 2);
  const std::string why = trace_refusal(1.2e7, 1.2e6, 1.08e4, kMaxTraceEvents);
  EXPECT_EQ(why,
            "the timeline could hold up to 12M events (1.2M GPU spans, 10.8M link counter samples over 10.8K links), "
            "above the limit of 5M (about 100 bytes each in the JSON; expected fewer GPUs or replicas simulated)");
}

SimResult traced_run(double max_events) {
  testing::UniformWork u;
  u.tp = 2;
  u.pp = 2;
  u.dp = 2;
  u.micro_batches = 3;
  u.act_bytes = 1e6;
  u.tp_ar_bytes = 1e6;
  u.grad_bytes = 1e7;
  models::Plan plan;
  models::PlanWork work;
  testing::make_uniform(u, plan, work);
  SimOptions opt;
  opt.record_trace = true;
  opt.max_trace_events = max_events;
  return simulate_work(testing::one_zone(1, NodeSpec{}), plan, work, opt);
}

std::size_t events_in(const std::string& json) {
  std::size_t n = 0;
  for (std::size_t at = json.find("{\"ph\""); at != std::string::npos; at = json.find("{\"ph\"", at + 1)) ++n;
  return n;
}

TEST(TraceBound, EstimateBoundsTheEventsWrittenAndTheFileIsStreamed) {
  const SimResult r = traced_run(kMaxTraceEvents);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.trace_refused.empty());
  const std::string json = chrome_trace_json(r);
  EXPECT_GT(events_in(json), 0u);
  EXPECT_GE(r.trace_events_estimate, static_cast<double>(events_in(json)));
  // The streamed file holds exactly the bytes of the in-memory form.
  const std::string path = ::testing::TempDir() + "/hetsim_streamed_trace.json";
  write_chrome_trace(r, path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(file.str(), json);
  std::remove(path.c_str());
}

TEST(TraceBound, TraceAboveTheLimitIsNotRecordedButTheStepIsSimulated) {
  const SimResult r = traced_run(100);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GT(r.iteration_time_s, 0);
  EXPECT_GT(r.trace_events_estimate, 100);
  EXPECT_NE(r.trace_refused.find("above the limit of 100"), std::string::npos) << r.trace_refused;
  EXPECT_TRUE(r.spans.empty());  // nothing was held in memory for it
}

TEST(TraceBound, FlowEstimateMatchesTheFlowsMoved) {
  const SimResult r = traced_run(kMaxTraceEvents);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GT(r.flows, 0);
  // Every pass's ops and sends, each micro-batch: only the first and last stages' missing
  // sends make the estimate larger than the count.
  EXPECT_GE(r.flows_estimate, static_cast<double>(r.flows));
  EXPECT_LE(r.flows_estimate, 1.5 * static_cast<double>(r.flows));
}

// A ring across 100 nodes starts 100 flows per step: more than one actor keeps in flight
// (kMaxFlowsPerActor; SimGrid 3.32 removes a finished activity from its actor's list by a linear
// search), so helper actors start them, at the same simulated time: the closed form holds.
TEST(WidePhases, HelperActorsKeepEachActorsFlowsBoundedAndTheTimeExact) {
  NodeSpec spec;
  spec.gpus = 1;
  spec.nics = 1;
  const auto cluster = testing::one_zone(100, spec);
  std::vector<int> ring;
  for (int g = 0; g < 100; ++g) ring.push_back(g);
  const int p = 100;
  const double n = 1e9, alpha = 2e-6 + 5e-6 + 2e-6, bw = 25e9 * models::link_efficiency(models::NicKind::kInfiniband);
  long long widest = 0;
  const double t = simulate_phases(cluster, ring_all_reduce(ring, n), &widest);
  EXPECT_GT(widest, 0);
  EXPECT_LE(widest, static_cast<long long>(kMaxFlowsPerActor));
  const double expected = 2 * (p - 1) * alpha + 2.0 * (p - 1) / p * n / bw;
  EXPECT_NEAR(t, expected, 0.01 * expected);
}

// The platform's links are all known before any zone is built (Platform creates them in the
// root zone first): each once, those of used nodes only, every intra-node path covered.
TEST(WidePhases, PlatformLinksAreListedOnceForUsedNodesOnly) {
  const auto cluster = testing::one_zone(3, NodeSpec{});
  const Topology topo(cluster);
  const std::vector<bool> used{true, false, true};
  const std::vector<int> order = links_in_route_order(topo, used);
  const std::set<int> links(order.begin(), order.end());
  EXPECT_EQ(links.size(), order.size());
  for (int node : {0, 2}) {
    const int first = cluster.nodes[node].first_gpu;
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 8; ++j)
        for (int l : topo.path(first + i, first + j)) EXPECT_TRUE(links.count(l)) << l;
      EXPECT_TRUE(links.count(topo.nic_up(first + i)));
      EXPECT_TRUE(links.count(topo.nic_down(first + i)));
    }
    EXPECT_TRUE(links.count(topo.uplink_up(node)));
  }
  const int unused = cluster.nodes[1].first_gpu;
  EXPECT_FALSE(links.count(topo.nic_up(unused)));
  EXPECT_FALSE(links.count(topo.uplink_down(1)));
}

// A DP sync of a folded run keeps the flows of its simulated replicas only; the ZeRO rings are
// built for those alone (collective_flows' `sources`): the same flows, in the same p - 1 steps,
// as the whole ring's with the others dropped.
TEST(CollectiveFlowsScale, AllGatherKeptToItsSourcesIsTheWholeRingsFlowsFromThem) {
  const auto cluster = testing::one_zone(4, NodeSpec{});
  const Topology topo(cluster);
  const std::vector<int> ring{0, 8, 9, 16, 24, 25, 3};
  std::vector<bool> sources(cluster.gpus.size(), false);
  sources[8] = sources[24] = sources[3] = true;
  for (const auto kind : {models::CollectiveKind::kAllGather, models::CollectiveKind::kReduceScatter}) {
    const CollectiveFlows whole = collective_flows(topo, kind, models::GradSyncAlgorithm::kAuto, ring, 7e8);
    const CollectiveFlows kept =
        collective_flows(topo, kind, models::GradSyncAlgorithm::kAuto, ring, 7e8, nullptr, nullptr, &sources);
    ASSERT_EQ(kept.phases.size(), whole.phases.size());
    ASSERT_EQ(kept.phases.size(), ring.size() - 1);
    for (std::size_t i = 0; i < whole.phases.size(); ++i) {
      std::vector<std::tuple<int, int, double, int, int>> expected, got;
      for (const Flow& f : whole.phases[i])
        if (sources[static_cast<std::size_t>(f.src)]) expected.emplace_back(f.src, f.dst, f.bytes, f.hop_src, f.hop_dst);
      for (const Flow& f : kept.phases[i]) got.emplace_back(f.src, f.dst, f.bytes, f.hop_src, f.hop_dst);
      EXPECT_EQ(got, expected) << "step " << i;
      EXPECT_FALSE(got.empty());
    }
  }
}

}  // namespace
}  // namespace hetsim::sim
