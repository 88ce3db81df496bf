// SPDX-License-Identifier: Apache-2.0
// Metamorphic properties of the analytic engine over the bundled example plans (plans/*.yaml):
// relations between two predictions that hold whatever the figures' absolute accuracy. A
// faster link or GPU, or more memory, never makes a plan slower or infeasible, and the step of a
// plan does not depend on the order its cluster lists node types. These hold where the gradient
// sync follows the backward passes; with `overlap_grad_sync` and replicas of different speeds a
// faster part can lengthen the step a little (list-schedule anomalies, docs/report.md), so the
// plans are checked with the sync after the backward.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "cost_test_util.hpp"
#include "predictor.hpp"

namespace hetsim::models {
namespace {

/// Every example plan of plans/, its sync after the backward.
std::vector<testing::ExamplePlan> example_plans() {
  std::vector<testing::ExamplePlan> plans = testing::example_plans();
  for (testing::ExamplePlan& x : plans) x.plan.overlap_grad_sync = false;
  return plans;
}

/// One change of the hardware that can only make things faster (or roomier), by name.
struct Speedup {
  std::string what;
  std::function<void(Cluster&)> apply;
};

/// For each node type: its GPUs' peaks, memory bandwidth and memory, its intra-node fabric, its
/// NICs and host link; for each zone its fabric's latency; for each WAN link its bandwidth and
/// latency.
std::vector<Speedup> speedups_of(const Cluster& c) {
  std::vector<Speedup> out;
  for (std::size_t t = 0; t < c.node_types.size(); ++t) {
    const std::string n = c.node_types[t].name;
    out.push_back({n + " peaks x1.3", [t](Cluster& x) {
                     for (auto& [dtype, flops] : x.node_types[t].gpu.peak_flops) flops *= 1.3;
                   }});
    out.push_back({n + " memory bandwidth x2", [t](Cluster& x) { x.node_types[t].gpu.memory_bandwidth_Bps *= 2; }});
    out.push_back({n + " intra bandwidth x2", [t](Cluster& x) { x.node_types[t].intra.bandwidth_Bps *= 2; }});
    out.push_back({n + " intra latency /2", [t](Cluster& x) { x.node_types[t].intra.latency_s /= 2; }});
    out.push_back({n + " NIC bandwidth x2", [t](Cluster& x) { x.node_types[t].nics.bandwidth_Bps *= 2; }});
    out.push_back({n + " NIC latency /2", [t](Cluster& x) { x.node_types[t].nics.latency_s /= 2; }});
    out.push_back({n + " host link x2", [t](Cluster& x) { x.node_types[t].host_link_Bps *= 2; }});
  }
  for (std::size_t z = 0; z < c.zones.size(); ++z)
    out.push_back({c.zones[z].name + " fabric latency /2", [z](Cluster& x) { x.zones[z].fabric.latency_s /= 2; }});
  for (std::size_t l = 0; l < c.links.size(); ++l) {
    out.push_back({"WAN link " + std::to_string(l) + " bandwidth x2", [l](Cluster& x) { x.links[l].bandwidth_Bps *= 2; }});
    out.push_back({"WAN link " + std::to_string(l) + " latency /2", [l](Cluster& x) { x.links[l].latency_s /= 2; }});
  }
  return out;
}

TEST(Metamorphic, FasterHardwareNeverSlowsAnExamplePlan) {
  const std::vector<testing::ExamplePlan> plans = example_plans();
  ASSERT_GE(plans.size(), 20u) << "plans/ holds the example plans";
  int checks = 0;
  for (const testing::ExamplePlan& x : plans) {
    const Report base = predict(x.cluster, x.workload, x.plan);
    if (!base.feasible) continue;
    for (const Speedup& s : speedups_of(x.cluster)) {
      Cluster faster = x.cluster;
      s.apply(faster);
      const Report r = predict(faster, x.workload, x.plan);
      ASSERT_TRUE(r.feasible) << x.file << ", " << s.what << ": " << r.infeasible_reason;
      EXPECT_LE(r.iteration_time_s, base.iteration_time_s * (1 + 1e-9))
          << x.file << ", " << s.what << ": " << base.iteration_time_s << " s -> " << r.iteration_time_s << " s";
      ++checks;
    }
  }
  EXPECT_GE(checks, 300);
}

TEST(Metamorphic, MoreMemoryNeverMakesAnExamplePlanInfeasibleOrSlower) {
  int checks = 0;
  for (const testing::ExamplePlan& x : example_plans()) {
    const Report base = predict(x.cluster, x.workload, x.plan);
    for (std::size_t t = 0; t < x.cluster.node_types.size(); ++t) {
      Cluster roomier = x.cluster;
      roomier.node_types[t].gpu.memory_bytes *= 2;
      const Report r = predict(roomier, x.workload, x.plan);
      if (base.feasible) {
        EXPECT_TRUE(r.feasible) << x.file << ": " << r.infeasible_reason;
        EXPECT_DOUBLE_EQ(r.iteration_time_s, base.iteration_time_s) << x.file;  // memory is room, not speed
      }
      ++checks;
    }
  }
  EXPECT_GE(checks, 20);
}

TEST(Metamorphic, TheOrderOfNodeTypesDoesNotChangeAPrediction) {
  int checks = 0;
  for (const testing::ExamplePlan& x : example_plans()) {
    const std::size_t types = x.cluster.node_types.size();
    if (types < 2) continue;
    // The same machines with the node-type list reversed: every group, node and GPU keeps its
    // place (groups name their type by index), so the plan's GPU indices still mean the same GPUs.
    Cluster reversed = x.cluster;
    std::reverse(reversed.node_types.begin(), reversed.node_types.end());
    const auto flip = [types](int t) { return static_cast<int>(types) - 1 - t; };
    for (Zone& z : reversed.zones)
      for (NodeGroup& g : z.groups) g.node_type = flip(g.node_type);
    for (Node& n : reversed.nodes) n.node_type = flip(n.node_type);
    const Report a = predict(x.cluster, x.workload, x.plan);
    const Report b = predict(reversed, x.workload, x.plan);
    ASSERT_EQ(a.feasible, b.feasible) << x.file;
    EXPECT_NEAR(b.iteration_time_s, a.iteration_time_s, 1e-9 * a.iteration_time_s) << x.file;
    EXPECT_NEAR(b.cost_per_hour, a.cost_per_hour, 1e-9 * a.cost_per_hour) << x.file;
    ++checks;
  }
  EXPECT_GE(checks, 5);
}

}  // namespace
}  // namespace hetsim::models
