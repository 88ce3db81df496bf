// SPDX-License-Identifier: Apache-2.0
// simulate_report_in_child under a wall-clock bound (plan/sweep --refine with --time-limit):
// SimGrid cannot stop its engine from outside, so the parent kills the child process when the
// bound runs out and reports a simulation that could not finish.
#include <gtest/gtest.h>

#include <string>

#include "engine_inputs.hpp"
#include "sim_report.hpp"

namespace hetsim::sim {
namespace {

TEST(SimChildTimeLimit, AChildStillRunningAtTheBoundIsStoppedAndSaysSo) {
  const testing::Inputs in = testing::load("dgx-a100.yaml", "llama2-7b.yaml", "dgx-a100-tp4-pp2-dp4.yaml");
  // 0.1 ms: a fork and SimGrid's start alone take longer.
  const models::Report stopped = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{}, 1e-4);
  EXPECT_FALSE(stopped.feasible);
  EXPECT_EQ(stopped.engine, "sim");
  EXPECT_EQ(stopped.infeasible_reason.rfind(std::string(kSimulationFailed) + "stopped at the time limit, after ", 0), 0u)
      << stopped.infeasible_reason;
  EXPECT_NE(stopped.infeasible_reason.find(" s of wall time"), std::string::npos) << stopped.infeasible_reason;
}

TEST(SimChildTimeLimit, ARunWithinTheBoundIsTheUnboundedRun) {
  const testing::Inputs in = testing::load("dgx-a100.yaml", "llama2-7b.yaml", "dgx-a100-tp4-pp2-dp4.yaml");
  const models::Report unbounded = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{});
  const models::Report bounded = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{}, 600);
  ASSERT_TRUE(unbounded.feasible) << unbounded.infeasible_reason;
  ASSERT_TRUE(bounded.feasible) << bounded.infeasible_reason;
  EXPECT_EQ(bounded.iteration_time_s, unbounded.iteration_time_s);  // the simulator is deterministic
  // A bound past the clock's range (1e300 s) is none, not an overflowed deadline in the past.
  const models::Report huge = simulate_report_in_child(in.cluster, in.workload, in.plan, SimOptions{}, 1e300);
  ASSERT_TRUE(huge.feasible) << huge.infeasible_reason;
  EXPECT_EQ(huge.iteration_time_s, unbounded.iteration_time_s);
}

}  // namespace
}  // namespace hetsim::sim
