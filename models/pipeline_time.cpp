// SPDX-License-Identifier: Apache-2.0
// Time of one replica's pipeline: exact makespan of the 1F1B / GPipe order for unequal stages.
#include "pipeline_time.hpp"

#include <algorithm>
#include <limits>

namespace hetsim::models {
namespace {

// The closed form of interleaved pipelines (Narayanan et al. SC'21 §2.2.2): the steady state
// runs at the slowest stage, warm-up and cool-down traverse every stage once, divided by v.
double interleaved_closed_form(const StageTimes* stages, int count, int micro_batches, int interleave) {
  double sum = 0;
  for (int s = 0; s < count; ++s) sum += stages[s].total();
  const double slowest = stages[bottleneck_stage(stages, count)].total();
  return micro_batches * slowest + (sum - slowest) / interleave;
}

// The k-th pass of stage s (p stages, m micro-batches): >= 0 is the forward of micro-batch k,
// < 0 the backward of micro-batch -k-1. 1F1B (Narayanan et al. SC'21 §2.2.1, PipeDream-Flush):
// min(p-s-1, m) warm-up forwards, then one forward one backward, then the cool-down backwards.
// GPipe (Huang et al. NeurIPS'19): every forward, then the backwards in reverse order.
int pass_of(Schedule schedule, int p, int s, int m, int k) {
  if (schedule == Schedule::kGpipe) return k < m ? k : -(2 * m - k - 1) - 1;
  const int warmup = std::min(p - s - 1, m);
  if (k < warmup) return k;
  const int steady = k - warmup;  // F(warmup + i), B(i) alternate for i < m - warmup
  if (steady < 2 * (m - warmup)) return steady % 2 == 0 ? warmup + steady / 2 : -(steady / 2) - 1;
  return -(k - m) - 1;  // cool-down: the remaining backwards in order
}

}  // namespace

int bottleneck_stage(const StageTimes* stages, int count) {
  int best = 0;
  for (int s = 1; s < count; ++s)
    if (stages[s].total() > stages[best].total()) best = s;
  return best;
}

// Unequal stages: (m-1)·max + Σ (DAPPLE, Fan et al. PPoPP'21 §4.2) is only an upper bound. It
// assumes the slowest stage k waits a full round trip for every micro-batch, but in 1F1B stage k
// keeps p-k micro-batches in flight, so the faster stages hide behind it. The exact makespan is
// the longest path of the schedule's event graph: each stage runs its passes in the schedule's
// order, one at a time; F(s,j) needs F(s-1,j), B(s,j) needs B(s+1,j) (and the last stage's B
// follows its own F). Every pass starts at
//   start = max(end of the stage's previous pass, end of the pass it depends on),
// which is the same order the SimGrid stage actors replay (sim/pipeline_schedule.cpp), with the
// blocking sends inside t_f and t_b. Sweeping the stages down for forwards and up for backwards
// settles the recurrence in O(p·m) work for schedules without deadlock. With equal stages
// it reduces to (m+p-1)(t_f+t_b) (SC'21 §2.2.1).
double pipeline_time(const StageTimes* stages, int count, int micro_batches, int interleave, Schedule schedule) {
  if (count <= 0 || micro_batches <= 0) return 0;
  const int v = std::max(1, interleave);
  if (v > 1 || schedule == Schedule::kInterleaved) return interleaved_closed_form(stages, count, micro_batches, v);
  const int p = count, m = micro_batches;
  // Equal stages (every homogeneous Megatron plan): the recurrence's result in closed form,
  // without its O(p·m) sweep (the planner and the predictor benchmark evaluate many of these).
  const bool equal = std::all_of(stages, stages + p, [&](const StageTimes& s) {
    return s.forward_s == stages[0].forward_s && s.backward_s == stages[0].backward_s;
  });
  if (equal) return (m + p - 1) * stages[0].total();
  const double unset = -1;
  std::vector<double> fwd_end(static_cast<std::size_t>(p) * m, unset), bwd_end(fwd_end.size(), unset);
  std::vector<int> next(p, 0);
  std::vector<double> free_at(p, 0);
  int remaining = 2 * p * m;
  while (remaining > 0) {
    int progressed = 0;
    auto advance = [&](int s) {
      while (next[s] < 2 * m) {
        const int pass = pass_of(schedule, p, s, m, next[s]);
        const bool forward = pass >= 0;
        const int j = forward ? pass : -pass - 1;
        double ready;
        if (forward) ready = s == 0 ? 0 : fwd_end[(s - 1) * m + j];
        else ready = s == p - 1 ? fwd_end[s * m + j] : bwd_end[(s + 1) * m + j];
        if (ready < 0) return;
        const double end = std::max(ready, free_at[s]) + (forward ? stages[s].forward_s : stages[s].backward_s);
        (forward ? fwd_end : bwd_end)[s * m + j] = end;
        free_at[s] = end;
        ++next[s];
        ++progressed;
        --remaining;
      }
    };
    for (int s = 0; s < p; ++s) advance(s);
    for (int s = p - 1; s >= 0; --s) advance(s);
    if (progressed == 0) return std::numeric_limits<double>::infinity();  // unreachable: both orders are deadlock-free
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

double pipeline_time(const std::vector<StageTimes>& stages, int micro_batches, int interleave, Schedule schedule) {
  return pipeline_time(stages.data(), static_cast<int>(stages.size()), micro_batches, interleave, schedule);
}

double backward_finish_offset(const StageTimes* stages, int stage) {
  double offset = 0;
  for (int s = 0; s < stage; ++s) offset += stages[s].backward_s;
  return offset;
}

}  // namespace hetsim::models
