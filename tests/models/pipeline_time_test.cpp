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

#include "pipeline_schedule.hpp"
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


/// The interleaved schedule's event graph by plain recursion over the pass lists (stage_passes):
/// a chunk's forward follows the previous stage's (stage 0's the last stage's previous chunk), a
/// backward the next stage's (the last stage's stage 0's next chunk, or its own forward).
double interleaved_event_graph(const std::vector<StageTimes>& st, int m, int v) {
  const int p = static_cast<int>(st.size());
  std::vector<std::vector<PassStep>> order(p);
  for (int s = 0; s < p; ++s) order[s] = stage_passes(Schedule::kInterleaved, p, s, m, v);
  const auto find = [&](int s, bool forward, int chunk, int mb) {
    for (int k = 0; k < static_cast<int>(order[s].size()); ++k) {
      const PassStep& x = order[s][k];
      if (x.forward == forward && x.chunk == chunk && x.micro_batch == mb) return k;
    }
    return -1;
  };
  std::vector<std::vector<double>> end(p, std::vector<double>(2 * m * v, -1));
  std::function<double(int, int)> end_of = [&](int s, int k) -> double {
    if (end[s][k] >= 0) return end[s][k];
    const PassStep& x = order[s][k];
    double ready = 0;
    if (x.forward && s > 0) ready = end_of(s - 1, find(s - 1, true, x.chunk, x.micro_batch));
    else if (x.forward && x.chunk > 0) ready = end_of(p - 1, find(p - 1, true, x.chunk - 1, x.micro_batch));
    else if (!x.forward && s < p - 1) ready = end_of(s + 1, find(s + 1, false, x.chunk, x.micro_batch));
    else if (!x.forward && x.chunk < v - 1) ready = end_of(0, find(0, false, x.chunk + 1, x.micro_batch));
    else if (!x.forward) ready = end_of(s, find(s, true, x.chunk, x.micro_batch));
    const double previous = k == 0 ? 0 : end_of(s, k - 1);
    return end[s][k] = std::max(ready, previous) + (x.forward ? st[s].forward_s : st[s].backward_s) / v;
  };
  double makespan = 0;
  for (int s = 0; s < p; ++s) makespan = std::max(makespan, end_of(s, 2 * m * v - 1));
  return makespan;
}

TEST(PipelineTime, InterleavedUnequalStagesFollowTheirSchedule) {
  // Two stages, two chunks, two micro-batches, the first stage twice the second (4 + 8 against
  // 2 + 4 a micro-batch). By hand: stage 0 runs its four forwards by 8; stage 1's chunk-1 passes
  // end at 12; stage 0's chunk-1 backwards at 17; stage 1's chunk-0 backwards at 19; stage 0's at
  // 25. The closed form m x slowest + (sum - slowest) / v says 27, which the reverse order (the
  // slow stage last) takes.
  EXPECT_DOUBLE_EQ(pipeline_time({{4, 8}, {2, 4}}, 2, 2), 25.0);
  EXPECT_DOUBLE_EQ(pipeline_time({{2, 4}, {4, 8}}, 2, 2), 27.0);
  EXPECT_DOUBLE_EQ(pipeline_closed_form_s(18, 12, 2, 2), 27.0);
  // Equal stages: the closed form, (m + (p - 1) / v) x (t_f + t_b) (SC'21 §2.2.2).
  EXPECT_DOUBLE_EQ(pipeline_time({{1, 2}, {1, 2}, {1, 2}, {1, 2}}, 8, 2), (8 + 3 / 2.0) * 3);
  // Random unequal stages against the plain recursion.
  std::mt19937 rng(2027);
  std::uniform_real_distribution<double> time(0.05, 3.0);
  for (int p : {2, 3, 4, 6})
    for (int v : {2, 3})
      for (int groups : {1, 2, 5}) {
        std::vector<StageTimes> st(p);
        for (StageTimes& t : st) t = {time(rng), time(rng)};
        const int m = groups * p;
        expect_same_makespan(pipeline_time(st, m, v, Schedule::kInterleaved), interleaved_event_graph(st, m, v), p, m);
      }
}

}  // namespace
}  // namespace hetsim::models
