// SPDX-License-Identifier: Apache-2.0
// The Report of a simulation from the cost model's: figures that follow the simulated time.
#include <gtest/gtest.h>

#include "sim_report.hpp"

namespace hetsim::sim {
namespace {

// The egress a plan's traffic between zones pays is a price per step: per hour it follows the
// simulated step time (it kept the cost model's, and the price per token scaled it again).
TEST(SimReport, EgressPerHourFollowsTheSimulatedStepTime) {
  models::Report analytic;
  analytic.iteration_time_s = 2.0;
  analytic.tokens_per_s = 1000.0;
  const double nodes_per_hour = 100.0, egress_per_step = 0.05;
  analytic.cost_per_hour = nodes_per_hour + egress_per_step / 2.0 * 3600.0;  // $190/h
  analytic.cost_per_million_tokens = models::cost_per_million_tokens(analytic.cost_per_hour, analytic.tokens_per_s);
  analytic.extra["egress_dollars_per_step"] = egress_per_step;
  SimResult sim;
  sim.iteration_time_s = 4.0;  // the simulator finds the step twice as long
  const models::Report r = make_sim_report(analytic, sim);
  EXPECT_DOUBLE_EQ(r.tokens_per_s, 500.0);
  EXPECT_NEAR(r.cost_per_hour, nodes_per_hour + egress_per_step / 4.0 * 3600.0, 1e-9);  // $145/h
  // Per million tokens: the nodes' hours per token double, the egress per token stays.
  const double expected = (nodes_per_hour / 3600.0 * 4.0 + egress_per_step) / (500.0 * 4.0) * 1e6;
  EXPECT_NEAR(r.cost_per_million_tokens, expected, 1e-9 * expected);
  EXPECT_EQ(r.extra.at("egress_dollars_per_step"), egress_per_step);
}

TEST(SimReport, WithoutEgressThePricePerHourStands) {
  models::Report analytic;
  analytic.iteration_time_s = 2.0;
  analytic.tokens_per_s = 1000.0;
  analytic.cost_per_hour = 100.0;
  SimResult sim;
  sim.iteration_time_s = 2.5;
  const models::Report r = make_sim_report(analytic, sim);
  EXPECT_DOUBLE_EQ(r.cost_per_hour, 100.0);
  EXPECT_NEAR(r.cost_per_million_tokens, models::cost_per_million_tokens(100.0, 800.0), 1e-12);
}

}  // namespace
}  // namespace hetsim::sim
