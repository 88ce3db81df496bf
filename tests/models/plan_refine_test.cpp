// SPDX-License-Identifier: Apache-2.0
// refine_top_plans: the planner's best plans re-ranked by a second engine (plan/sweep --refine).
// The engines here are stand-ins that give each plan a chosen figure, so the re-ranking rules
// are tested without the simulator.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <thread>

#include "plan_refine.hpp"

namespace hetsim::models {
namespace {

PlannerResult result_with(const std::vector<std::string>& names, PlanObjective objective = PlanObjective::kThroughput) {
  PlannerResult r;
  r.objective = objective;
  for (const std::string& n : names) {
    RankedPlan p;
    p.plan.name = n;
    p.shape = n;
    p.report.cost_per_hour = 10;  // the planner's price of the plan (spot prices with --spot)
    r.top.push_back(p);
  }
  return r;
}

/// An engine giving each named plan a tokens/s (and $/h); absent names are infeasible,
/// a negative figure throws.
TimedPredictFn engine_of(std::map<std::string, double> tokens_per_s, double price_per_hour = 10) {
  return [=](const Cluster&, const Workload&, const Plan& p, double) {
    Report r;
    r.engine = "stand-in";
    const auto it = tokens_per_s.find(p.name);
    if (it == tokens_per_s.end()) {
      r.feasible = false;
      r.infeasible_reason = "does not fit";
      return r;
    }
    if (it->second < 0) throw std::runtime_error("engine crashed");
    r.tokens_per_s = it->second;
    r.cost_per_hour = price_per_hour;
    r.cost_per_million_tokens = price_per_hour / (it->second * 3600) * 1e6;
    return r;
  };
}

std::vector<std::string> order(const PlannerResult& r) {
  std::vector<std::string> out;
  for (const RankedPlan& p : r.top) out.push_back(p.plan.name);
  return out;
}

TEST(PlanRefine, ReordersTheFirstKByTheEnginesFigure) {
  PlannerResult r = result_with({"a", "b", "c", "d"});
  const RefineResult rr = refine_top_plans(r, Cluster{}, Workload{}, engine_of({{"a", 100}, {"b", 300}, {"c", 200}, {"d", 900}}), 3);
  // d is beyond k: it keeps its place (and has no refined figure) although the engine would rate it best.
  EXPECT_EQ(order(r), (std::vector<std::string>{"b", "c", "a", "d"}));
  ASSERT_EQ(rr.refined.size(), 4u);
  EXPECT_DOUBLE_EQ(rr.refined[0]->tokens_per_s, 300);
  EXPECT_DOUBLE_EQ(rr.refined[2]->tokens_per_s, 100);
  EXPECT_FALSE(rr.refined[3].has_value());
  EXPECT_TRUE(rr.note.empty());
}

TEST(PlanRefine, PlansWithoutAFigureGoLastInTheirAnalyticOrder) {
  PlannerResult r = result_with({"a", "b", "c", "d"});
  // b infeasible for the engine, c throws: both after a and d, b before c as the planner had them.
  const RefineResult rr = refine_top_plans(r, Cluster{}, Workload{}, engine_of({{"a", 100}, {"c", -1}, {"d", 200}}), 4);
  EXPECT_EQ(order(r), (std::vector<std::string>{"d", "a", "b", "c"}));
  EXPECT_FALSE(rr.refined[2].has_value());
  EXPECT_FALSE(rr.refined[3].has_value());
  EXPECT_NE(rr.note.find("engine crashed"), std::string::npos) << rr.note;
}

TEST(PlanRefine, CostObjectiveRanksByDollarsPerMillionTokens) {
  PlannerResult r = result_with({"a", "b"}, PlanObjective::kCost);
  // Engines price per plan here through the figure: the faster plan is the cheaper per token at one price.
  refine_top_plans(r, Cluster{}, Workload{}, engine_of({{"a", 100}, {"b", 150}}), 2);
  EXPECT_EQ(order(r), (std::vector<std::string>{"b", "a"}));
}

TEST(PlanRefine, ThePlannersPricesAndPreemptionsStand) {
  // The engine re-times the plans; their price (spot with --spot) and what preemptions leave of
  // their time are the planner's: b is faster but loses half its time to preemptions.
  PlannerResult r = result_with({"a", "b"});
  r.top[1].spot.goodput_fraction = 0.5;
  refine_top_plans(r, Cluster{}, Workload{}, engine_of({{"a", 100}, {"b", 150}}, 1000), 2);
  EXPECT_EQ(order(r), (std::vector<std::string>{"a", "b"}));
  // By cost, the same: $10/h for 100 tokens/s beats $10/h for 75.
  PlannerResult c = result_with({"a", "b"}, PlanObjective::kCost);
  c.top[1].spot.goodput_fraction = 0.5;
  refine_top_plans(c, Cluster{}, Workload{}, engine_of({{"a", 100}, {"b", 150}}, 1000), 2);
  EXPECT_EQ(order(c), (std::vector<std::string>{"a", "b"}));
  // Equally fast for the engine, which prices both alike: the planner's $10/h beats its $20/h.
  PlannerResult d = result_with({"a", "b"}, PlanObjective::kCost);
  d.top[0].report.cost_per_hour = 20;
  refine_top_plans(d, Cluster{}, Workload{}, engine_of({{"a", 100}, {"b", 100}}, 1000), 2);
  EXPECT_EQ(order(d), (std::vector<std::string>{"b", "a"}));
}

TEST(PlanRefine, KBeyondTheListAndKZero) {
  PlannerResult r = result_with({"a", "b"});
  RefineResult rr = refine_top_plans(r, Cluster{}, Workload{}, engine_of({{"a", 1}, {"b", 2}}), 10);
  EXPECT_EQ(order(r), (std::vector<std::string>{"b", "a"}));
  rr = refine_top_plans(r, Cluster{}, Workload{}, engine_of({{"a", 5}, {"b", 2}}), 0);
  EXPECT_EQ(order(r), (std::vector<std::string>{"b", "a"}));
  EXPECT_FALSE(rr.refined[0].has_value());
}

// `plan --refine 1000000000` simulated plan after plan for hours: no plan is started once the
// time limit has passed; those refined by then are re-ordered, the rest keep their places, and
// the note says so.
TEST(PlanRefine, StopsStartingPlansOnceTheTimeLimitHasPassed) {
  PlannerResult r = result_with({"a", "b", "c"});
  const TimedPredictFn engine = engine_of({{"a", 100}, {"b", 300}, {"c", 200}});
  int calls = 0;
  const TimedPredictFn slow = [&](const Cluster& c, const Workload& w, const Plan& p, double limit_s) {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(60));  // longer than the 50 ms limit below
    return engine(c, w, p, limit_s);
  };
  RefineResult rr = refine_top_plans(r, Cluster{}, Workload{}, slow, 3, 0.05);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(order(r), (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_TRUE(rr.refined[0].has_value());
  EXPECT_FALSE(rr.refined[1].has_value());
  EXPECT_NE(rr.note.find("after 1 of the 3 plans asked for"), std::string::npos) << rr.note;
  EXPECT_TRUE(rr.stopped_at_time_limit);
  // 0 is no limit, as the planner's --time-limit 0.
  rr = refine_top_plans(r, Cluster{}, Workload{}, engine, 3, 0);
  EXPECT_EQ(order(r), (std::vector<std::string>{"b", "c", "a"}));
  EXPECT_TRUE(rr.note.empty()) << rr.note;
  EXPECT_FALSE(rr.stopped_at_time_limit);
}

// A 1024-GPU simulation can take half an hour: the limit bounds the engine's own run, not only
// the start of the next one. Each engine is told what is left of the limit (none: infinity),
// and one that stops at it gives no figure, with its reason in the note.
TEST(PlanRefine, EachEngineIsGivenWhatIsLeftOfTheTimeLimit) {
  std::vector<double> given_s;
  const TimedPredictFn recorded = [&](const Cluster& c, const Workload& w, const Plan& p, double limit_s) {
    given_s.push_back(limit_s);
    return engine_of({{"a", 100}, {"b", 300}})(c, w, p, limit_s);
  };
  PlannerResult r = result_with({"a", "b"});
  refine_top_plans(r, Cluster{}, Workload{}, recorded, 2, 600);
  ASSERT_EQ(given_s.size(), 2u);
  EXPECT_GT(given_s[0], 0);
  EXPECT_LE(given_s[0], 600);
  EXPECT_LE(given_s[1], given_s[0]);
  given_s.clear();
  refine_top_plans(r, Cluster{}, Workload{}, recorded, 2, 0);
  ASSERT_EQ(given_s.size(), 2u);
  EXPECT_TRUE(std::isinf(given_s[0]) && std::isinf(given_s[1]));

  // An engine that runs out of its time (as the simulator's killed child reports).
  const TimedPredictFn stopped = [](const Cluster&, const Workload&, const Plan&, double limit_s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(limit_s));
    Report out;
    out.feasible = false;
    out.infeasible_reason = "simulation failed: stopped at the time limit";
    return out;
  };
  PlannerResult s = result_with({"a", "b"});
  const RefineResult rr = refine_top_plans(s, Cluster{}, Workload{}, stopped, 2, 0.02);
  EXPECT_EQ(order(s), (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(rr.refined[0].has_value());
  EXPECT_NE(rr.note.find("plan 1: the engine gave no figure: simulation failed: stopped at the time limit"),
            std::string::npos) << rr.note;
  EXPECT_NE(rr.note.find("after 1 of the 2 plans asked for"), std::string::npos) << rr.note;
  EXPECT_TRUE(rr.stopped_at_time_limit);
}

TEST(PlanRefine, EqualFiguresKeepTheAnalyticOrder) {
  PlannerResult r = result_with({"a", "b", "c"});
  refine_top_plans(r, Cluster{}, Workload{}, engine_of({{"a", 100}, {"b", 100}, {"c", 100}}), 3);
  EXPECT_EQ(order(r), (std::vector<std::string>{"a", "b", "c"}));
}

}  // namespace
}  // namespace hetsim::models
