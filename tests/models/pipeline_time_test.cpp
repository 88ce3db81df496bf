// SPDX-License-Identifier: Apache-2.0
// pipeline_time() against the event graph of the schedule solved by plain recursion: every pass
// ends at max(end of the stage's previous pass, end of the pass it depends on) + its time. The
// end times are the same max/+ of the same operands in any evaluation order; pipeline_time adds
// whole steady periods at once (SteadyShortcut), so the two agree to rounding (1e-12 relative)
// on random stage times, including "equal except the first and last".
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "pipeline_time.hpp"

namespace hetsim::models {
namespace {

/// Longest path of the schedule's event graph, from explicit per-stage pass lists.
double event_graph_makespan(const std::vector<StageTimes>& st, int m, Schedule schedule) {
  const int p = static_cast<int>(st.size());
  // order[s][k] = micro-batch j of pass k, forward as j, backward as -j-1.
  std::vector<std::vector<int>> order(p);
  for (int s = 0; s < p; ++s) {
    std::vector<int>& o = order[s];
    if (schedule == Schedule::kGpipe) {
      for (int j = 0; j < m; ++j) o.push_back(j);
      for (int j = m - 1; j >= 0; --j) o.push_back(-j - 1);
    } else {  // 1F1B: min(p-s-1, m) warm-up forwards, one forward one backward, cool-down backwards
      const int warmup = std::min(p - s - 1, m);
      int next_f = 0, next_b = 0;
      for (; next_f < warmup; ++next_f) o.push_back(next_f);
      while (next_f < m) {
        o.push_back(next_f++);
        o.push_back(-(next_b++) - 1);
      }
      while (next_b < m) o.push_back(-(next_b++) - 1);
    }
  }
  std::vector<std::vector<int>> pos_f(p, std::vector<int>(m)), pos_b(p, std::vector<int>(m));
  for (int s = 0; s < p; ++s)
    for (int k = 0; k < 2 * m; ++k) (order[s][k] >= 0 ? pos_f[s][order[s][k]] : pos_b[s][-order[s][k] - 1]) = k;
  std::vector<std::vector<double>> end(p, std::vector<double>(2 * m, -1));
  std::function<double(int, int)> end_of = [&](int s, int k) -> double {
    if (end[s][k] >= 0) return end[s][k];
    const int pass = order[s][k];
    const double previous = k == 0 ? 0 : end_of(s, k - 1);
    double ready = 0;
    if (pass >= 0) ready = s == 0 ? 0 : end_of(s - 1, pos_f[s - 1][pass]);
    else ready = s == p - 1 ? end_of(s, pos_f[s][-pass - 1]) : end_of(s + 1, pos_b[s + 1][-pass - 1]);
    return end[s][k] = std::max(ready, previous) + (pass >= 0 ? st[s].forward_s : st[s].backward_s);
  };
  double makespan = 0;
  for (int s = 0; s < p; ++s) makespan = std::max(makespan, end_of(s, 2 * m - 1));
  return makespan;
}

/// Equal to the last few bits: a skipped steady period adds n x c where the sweep adds c n times.
void expect_same_makespan(double got, double want, int p, int m) {
  EXPECT_NEAR(got, want, 1e-12 * want) << "p " << p << " m " << m;
}

TEST(PipelineTime, MatchesTheEventGraphOnRandomStages) {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<double> time(0.05, 3.0);
  int cases = 0;
  for (int p = 2; p <= 12; ++p)
    for (int m : {1, 2, 3, 5, 8, 11, 16, 31}) {
      for (Schedule schedule : {Schedule::k1f1b, Schedule::kGpipe}) {
        std::vector<StageTimes> st(p);
        for (StageTimes& t : st) t = {time(rng), time(rng)};
        expect_same_makespan(pipeline_time(st, m, 1, schedule), event_graph_makespan(st, m, schedule), p, m);
        // Equal stages except the first and the last (embedding and LM head): the GPT case.
        const StageTimes middle{time(rng), time(rng)};
        std::fill(st.begin(), st.end(), middle);
        st.front() = {time(rng), time(rng)};
        st.back() = {time(rng), time(rng)};
        expect_same_makespan(pipeline_time(st, m, 1, schedule), event_graph_makespan(st, m, schedule), p, m);
        // Small integer times: many ties between the two operands of max.
        for (StageTimes& t : st) t = {static_cast<double>(1 + rng() % 3), static_cast<double>(1 + rng() % 4)};
        expect_same_makespan(pipeline_time(st, m, 1, schedule), event_graph_makespan(st, m, schedule), p, m);
        cases += 3;
      }
    }
  EXPECT_EQ(cases, 11 * 8 * 2 * 3);
}

TEST(PipelineTime, DeepPipelinesMatchTheEventGraph) {
  // More stages than pipeline_time keeps inline.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> time(0.5, 1.5);
  std::vector<StageTimes> st(70);
  for (StageTimes& t : st) t = {time(rng), time(rng)};
  for (int m : {3, 69, 75})
    for (Schedule schedule : {Schedule::k1f1b, Schedule::kGpipe})
      expect_same_makespan(pipeline_time(st, m, 1, schedule), event_graph_makespan(st, m, schedule), 70, m);
}

TEST(PipelineTime, LongPipelinesSkipWholeSteadyPeriods) {
  // Many micro-batches: the steady phase is skipped period by period once it repeats, and the
  // result is still the event graph's.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> time(0.05, 3.0);
  for (int p : {2, 3, 5, 8}) {
    std::vector<StageTimes> st(p);
    for (StageTimes& t : st) t = {time(rng), time(rng)};
    for (int m : {200, 1001, 1500})
      expect_same_makespan(pipeline_time(st, m, 1, Schedule::k1f1b), event_graph_makespan(st, m, Schedule::k1f1b), p, m);
  }
  // Millions of micro-batches (a global batch of 2^24 sequences): each further micro-batch adds
  // one steady period, so the makespan grows by the same step per micro-batch.
  const std::vector<StageTimes> st{{0.2, 0.5}, {0.3, 0.6}, {0.1, 0.2}};
  const double a = pipeline_time(st, 8'000'000, 1, Schedule::k1f1b), b = pipeline_time(st, 8'000'001, 1, Schedule::k1f1b);
  const double step = pipeline_time(st, 2001, 1, Schedule::k1f1b) - pipeline_time(st, 2000, 1, Schedule::k1f1b);
  EXPECT_NEAR(b - a, step, 1e-6);
  EXPECT_NEAR(a, pipeline_time(st, 2000, 1, Schedule::k1f1b) + (8'000'000 - 2000) * step, 1e-6 * a);
}

}  // namespace
}  // namespace hetsim::models
