// SPDX-License-Identifier: Apache-2.0
// Time of one replica's pipeline: exact makespan of the 1F1B / GPipe order for unequal stages.
#include "pipeline_time.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "pipeline_schedule.hpp"

namespace hetsim::models {
namespace {

// The closed form of interleaved pipelines (Narayanan et al. SC'21 §2.2.2): the steady state
// runs at the slowest stage, warm-up and cool-down traverse every stage once, divided by v.
double interleaved_closed_form(const StageTimes* stages, int count, int micro_batches, int interleave,
                               double min_pace_s) {
  double sum = 0;
  for (int s = 0; s < count; ++s) sum += stages[s].total();
  const double slowest = stages[bottleneck_stage(stages, count)].total();
  return pipeline_closed_form_s(sum, slowest, micro_batches, interleave, min_pace_s);
}

/// In the steady phase of 1F1B every stage alternates forward and backward, so each pair of
/// steps applies the same max-plus map to the end times (forward_end, backward_end, free_at).
/// Once a pair shifts every end time by the same amount c, each further pair does too (the map
/// commutes with adding a constant: max(a + c, b + c) = max(a, b) + c; Baccelli et al.,
/// "Synchronization and Linearity", 1992, ch. 3: a max-plus system reaches a periodic regime),
/// so whole pairs can be skipped by adding c per pair. Where the regime has a longer period
/// (or is not reached) no pair matches and every step runs as before: the result is the same.
/// It makes a pipeline of m micro-batches O(p^2) instead of O(p m) once m >> p.
class SteadyShortcut {
 public:
  /// `snapshot` has room for 3 x stages values (the caller's buffer: no allocation per call).
  SteadyShortcut(int stages, double* forward_end, double* backward_end, double* free_at, double* snapshot)
      : p_(stages), forward_end_(forward_end), backward_end_(backward_end), free_at_(free_at), snapshot_(snapshot) {}

  /// Called after each steady step; `steps_left` more steady steps follow this one. Returns
  /// the number of steps skipped (even: whole pairs), with the end times moved past them.
  int after_steady_step(int steps_left) {
    if (done_) return 0;
    if (++steps_ % 2 != 0) return 0;
    const int n = 3 * p_;
    const double c = steps_ > 2 ? free_at_[0] - snapshot_[2 * p_] : 0;  // the first snapshot is unset
    bool periodic = c > 0;
    for (int i = 0; i < n; ++i) {
      const double x = value(i);
      periodic = periodic && std::abs(x - snapshot_[i] - c) <= 1e-12 * std::max(1.0, std::abs(x));
      snapshot_[i] = x;
    }
    if (!periodic) return 0;
    done_ = true;
    const int pairs = steps_left / 2;
    for (int i = 0; i < n; ++i) value(i) += pairs * c;
    return 2 * pairs;
  }

 private:
  double& value(int i) {
    if (i < p_) return forward_end_[i + 1];
    if (i < 2 * p_) return backward_end_[i - p_];
    return free_at_[i - 2 * p_];
  }

  int p_;
  double *forward_end_, *backward_end_, *free_at_, *snapshot_;
  int steps_ = 0;
  bool done_ = false;
};

/// Chunk `ps.chunk`'s pass of a stage of v chunks: its first or last chunk's time when given, the
/// chunks between the rest evenly; else 1/v of the stage's.
double chunk_pass_s(const StageTimes& stage, const ChunkEnds* ends, const PassStep& ps, int v) {
  const double total = ps.forward ? stage.forward_s : stage.backward_s;
  if (!ends) return total / v;
  const double first = ps.forward ? ends->first.forward_s : ends->first.backward_s;
  const double last = ps.forward ? ends->last.forward_s : ends->last.backward_s;
  if (ps.chunk == 0) return first;
  if (ps.chunk == v - 1) return last;
  return (total - first - last) / (v - 2);
}

/// The interleaved schedule's exact makespan for unequal stages: the longest path of its event
/// graph, as for 1F1B below. Stage s runs its passes in PassOrder (each chunk's pass its own time,
/// chunk_pass_s, its sends included); a forward of chunk c needs the previous stage's forward of
/// (c, mb), stage 0's the last stage's of (c-1, mb); a backward of chunk c needs the next stage's
/// backward of (c, mb), the last stage's stage 0's of (c+1, mb) (Megatron-LM schedules.py,
/// forward_backward_pipelining_with_interleaving; the simulator's stage actors run the same).
///
/// Evaluation order, as for 1F1B: by pass index k, the forwards of index k from stage 0 up, then
/// the backwards of index k from the last stage down. Every stage runs the same sequence of
/// forwards and of backwards, stage s with two warm-up forwards fewer than stage s-1, so a pass's
/// input is a pass of a lower index, or of the same index on the stage swept before it (the
/// wrap-around inputs, stage p-1 to 0 and back, come p passes earlier in the sequence). An input
/// not yet timed would break that; it is checked, and the makespan is then -1 (the caller takes
/// the closed form). O(p m v) time; the end times are kept by (stage, chunk, micro-batch).
/// `send_delay` (may be null): each input arrives that long after its pass ends (pipeline_time).
double interleaved_makespan(const StageTimes* stages, int p, int m, int v, const ChunkEnds* chunk_ends,
                            const StageTimes* send_delay) {
  const int total = m * v;
  thread_local std::vector<double> forward_end, backward_end;  // [(s * v + c) * m + mb], -1: not yet
  thread_local std::vector<PassStep> forwards, backwards;      // the k-th forward / backward
  thread_local std::vector<double> free_at, pass_s;            // [s]; [(s * v + c) * 2 + backward]
  thread_local std::vector<int> warmup;
  const std::size_t cells = static_cast<std::size_t>(p) * v * m;
  forward_end.assign(cells, -1.0);
  backward_end.assign(cells, -1.0);
  const PassOrder order(Schedule::kInterleaved, p, 0, m, v);
  forwards.resize(static_cast<std::size_t>(total));
  backwards.resize(static_cast<std::size_t>(total));
  for (int k = 0; k < total; ++k) forwards[k] = order.forward(k), backwards[k] = order.backward(k);
  free_at.assign(static_cast<std::size_t>(p), 0.0);
  warmup.resize(static_cast<std::size_t>(p));
  pass_s.resize(static_cast<std::size_t>(p) * v * 2);
  for (int s = 0; s < p; ++s) {
    warmup[s] = PassOrder(Schedule::kInterleaved, p, s, m, v).warmup();
    for (int c = 0; c < v; ++c)
      for (int b = 0; b < 2; ++b)
        pass_s[(static_cast<std::size_t>(s) * v + c) * 2 + b] =
            chunk_pass_s(stages[s], chunk_ends ? &chunk_ends[s] : nullptr, PassStep{b == 0, 0, c}, v);
  }
  const auto cell = [&](int s, int c, int mb) { return (static_cast<std::size_t>(s) * v + c) * m + mb; };
  // Stage s's pass at index k: a forward's or a backward's sequence number, or -1.
  const auto forward_at = [&](int s, int k) {
    const int w = warmup[s];
    if (k < w) return k;
    return k < 2 * total - w && (k - w) % 2 == 0 ? w + (k - w) / 2 : -1;
  };
  const auto backward_at = [&](int s, int k) {
    const int w = warmup[s];
    if (k < w) return -1;
    if (k < 2 * total - w) return (k - w) % 2 == 1 ? (k - w) / 2 : -1;
    return k - total;
  };
  for (int k = 0; k < 2 * total; ++k) {
    for (int s = 0; s < p; ++s) {
      const int j = forward_at(s, k);
      if (j < 0) continue;
      const PassStep& ps = forwards[j];
      double ready = 0;
      const int from = s > 0 ? s - 1 : p - 1;  // stage 0's input of chunk c > 0: the last stage's chunk c - 1
      if (s > 0 || ps.chunk > 0) {
        ready = forward_end[cell(from, s > 0 ? ps.chunk : ps.chunk - 1, ps.micro_batch)];
        if (ready < 0) return -1;
        if (send_delay) ready += send_delay[from].forward_s;
      }
      free_at[s] = std::max(ready, free_at[s]) + pass_s[(static_cast<std::size_t>(s) * v + ps.chunk) * 2];
      forward_end[cell(s, ps.chunk, ps.micro_batch)] = free_at[s];
    }
    for (int s = p - 1; s >= 0; --s) {
      const int j = backward_at(s, k);
      if (j < 0) continue;
      const PassStep& ps = backwards[j];
      double ready;
      const int from = s < p - 1 ? s + 1 : 0;  // the last stage's input of chunk c < v - 1: stage 0's chunk c + 1
      if (s < p - 1 || ps.chunk < v - 1) {
        ready = backward_end[cell(from, s < p - 1 ? ps.chunk : ps.chunk + 1, ps.micro_batch)];
        if (ready < 0) return -1;
        if (send_delay) ready += send_delay[from].backward_s;
      } else {
        ready = forward_end[cell(s, ps.chunk, ps.micro_batch)];
        if (ready < 0) return -1;
      }
      free_at[s] = std::max(ready, free_at[s]) + pass_s[(static_cast<std::size_t>(s) * v + ps.chunk) * 2 + 1];
      backward_end[cell(s, ps.chunk, ps.micro_batch)] = free_at[s];
    }
  }
  return *std::max_element(free_at.begin(), free_at.end());
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
// which is the same order the SimGrid stage actors replay (pipeline_schedule.hpp), with the
// blocking sends inside t_f and t_b. With equal stages it reduces to (m+p-1)(t_f+t_b) (SC'21 §2.2.1).
//
// Evaluation order. Stage s runs its k-th pass (k = 0 .. 2m-1) in this order:
//   1F1B (Narayanan et al. SC'21 §2.2.1, PipeDream-Flush): w_s = min(p-s-1, m) warm-up forwards
//        (k < w_s), then forward and backward alternating (forward when k - w_s is even, while
//        k < 2m - w_s), then the cool-down backwards;
//   GPipe (Huang et al. NeurIPS'19): every forward (k < m), then the backwards in reverse order.
// A pass never depends on a pass of a higher index k on another stage: F(s-1,j) runs at an index
// <= that of F(s,j) (w_{s-1} >= w_s), B(s+1,j) at an index <= that of B(s,j). Within one k,
// forwards depend only on the stage above (sweep s upwards) and backwards only on the stage
// below (sweep s downwards). And the pass a stage depends on is always the neighbour's latest
// pass of that direction at that point of the sweep (the neighbour's next forward/backward has a
// higher index), so three numbers per stage replace the p·m tables: O(p·m) time, O(p) memory,
// and every end time is the same max/+ of the same operands as in any other valid order.
double pipeline_time(const StageTimes* stages, int count, int micro_batches, int interleave, Schedule schedule,
                     double min_pace_s, const ChunkEnds* chunk_ends, const StageTimes* send_delay) {
  if (count <= 0 || micro_batches <= 0) return 0;
  const int v = std::max(1, interleave);
  if (v > 1 && send_delay) {
    // Sends beside the compute: the event graph with each input's arrival (a 30 ms WAN boundary
    // of a two-stage pipeline left the steady state 26% slower than its stages, where the
    // latency pace below said it did not bind: s57 engine hunt, 19.8 s against 24.8 s simulated).
    const double exact_s = interleaved_makespan(stages, count, micro_batches, v, chunk_ends, send_delay);
    if (exact_s >= 0) return exact_s;
  }
  if (v > 1 || schedule == Schedule::kInterleaved) {
    // Equal stages: the closed form is exact (SC'21 §2.2.2). A pace set by send latencies (a WAN
    // boundary, interleaved_latency_pace) above the slowest stage: the closed form's, which
    // charges it per micro-batch; the event graph has no latency of its own.
    const bool equal = std::all_of(stages, stages + count, [&](const StageTimes& s) {
      return s.forward_s == stages[0].forward_s && s.backward_s == stages[0].backward_s;
    });
    if (v > 1 && !equal && min_pace_s <= stages[bottleneck_stage(stages, count)].total()) {
      const double exact_s = interleaved_makespan(stages, count, micro_batches, v, chunk_ends, nullptr);
      if (exact_s >= 0) return exact_s;
    }
    return interleaved_closed_form(stages, count, micro_batches, v, min_pace_s);
  }
  const int p = count, m = micro_batches;
  // Equal stages (every homogeneous Megatron plan): the recurrence's result in closed form,
  // without its O(p·m) sweep (the planner and the predictor benchmark evaluate many of these).
  const bool equal = std::all_of(stages, stages + p, [&](const StageTimes& s) {
    return s.forward_s == stages[0].forward_s && s.backward_s == stages[0].backward_s;
  });
  if (equal) return (m + p - 1) * stages[0].total();
  // Per stage s, in arrays shifted by one so that the neighbours of the end stages need no
  // test: forward_end[s + 1] and backward_end[s] end its latest forward and backward, free_at[s]
  // its latest pass. forward_end[0] = 0 is stage 0's input, ready at once; backward_end[p] is
  // set to the last stage's latest forward before each backward sweep, which its backward follows
  // (1F1B: of the same micro-batch. GPipe runs the backwards in reverse order there, so its
  // latest forward is a later one than the backward's own; both ended before the stage is free
  // again, so max(ready, free_at) takes free_at either way and the end time is the same).
  constexpr int kInlineStages = 64;  // deeper pipelines take the heap
  double inline_buffer[8 * (kInlineStages + 1)];
  std::vector<double> heap_buffer;
  double* buffer = inline_buffer;
  if (p > kInlineStages) {
    heap_buffer.resize(8 * (static_cast<std::size_t>(p) + 1));
    buffer = heap_buffer.data();
  }
  double* forward_end = buffer;                 // [p + 1]
  double* backward_end = forward_end + p + 1;   // [p + 1]
  double* free_at = backward_end + p + 1;       // [p]
  double* t_f = free_at + p;                    // [p]
  double* t_b = t_f + p;                        // [p]
  double* snapshot = t_b + p;                   // [3p] SteadyShortcut's
  for (int s = 0; s <= p; ++s) forward_end[s] = backward_end[s] = 0;
  for (int s = 0; s < p; ++s) {
    free_at[s] = 0;
    t_f[s] = stages[s].forward_s;
    t_b[s] = stages[s].backward_s;
  }
  // The pass of stage s at index k ends at max(ready, free_at) + its time.
  auto forward = [&](int s) { forward_end[s + 1] = free_at[s] = std::max(forward_end[s], free_at[s]) + t_f[s]; };
  auto backward = [&](int s) { backward_end[s] = free_at[s] = std::max(backward_end[s + 1], free_at[s]) + t_b[s]; };
  if (schedule == Schedule::k1f1b && m >= p - 1) {
    // Every stage warms up fully (w_s = p-s-1), so the kind of each pass is known by ranges: at
    // index k stages s < p-1-k warm up (forward), stages s <= k-2m+p-1 cool down (backward), and
    // the stages between alternate, forward where k+s+p+1 is even. No per-pass test.
    SteadyShortcut shortcut(p, forward_end, backward_end, free_at, snapshot);
    for (int k = 0; k < 2 * m; ++k) {
      const int warm_end = std::max(0, p - 1 - k);
      const int cool_end = std::clamp(k - 2 * m + p, 0, p);
      const int steady = std::max(warm_end, cool_end);
      const int odd = (k + steady + p + 1) & 1;  // 0: stage `steady` runs a forward
      for (int s = 0; s < warm_end; ++s) forward(s);
      for (int s = steady + odd; s < p; s += 2) forward(s);
      backward_end[p] = forward_end[p];
      const int first_backward = steady + 1 - odd;
      for (int s = p - 1 - ((p - 1 - first_backward) & 1); s >= first_backward; s -= 2) backward(s);
      for (int s = cool_end - 1; s >= 0; --s) backward(s);
      // Steady steps (every stage alternating) run the same two-step map; skip whole periods.
      if (k >= p - 1 && k <= 2 * m - p) k += shortcut.after_steady_step(2 * m - p - k);
    }
  } else {
    // Stage s: passes k < warmup are forwards, then forward and backward alternate until
    // steady_end, then the backwards (GPipe: every forward is warm-up, no steady phase).
    auto forward_at = [&](int s, int k) {
      const int warmup = schedule == Schedule::kGpipe ? m : std::min(p - s - 1, m);
      return k < warmup || (k < 2 * m - warmup && ((k - warmup) & 1) == 0);
    };
    for (int k = 0; k < 2 * m; ++k) {
      for (int s = 0; s < p; ++s)
        if (forward_at(s, k)) forward(s);
      backward_end[p] = forward_end[p];
      for (int s = p - 1; s >= 0; --s)
        if (!forward_at(s, k)) backward(s);
    }
  }
  double makespan = 0;
  for (int s = 0; s < p; ++s) makespan = std::max(makespan, free_at[s]);
  return makespan;
}

double pipeline_time(const std::vector<StageTimes>& stages, int micro_batches, int interleave, Schedule schedule,
                     double min_pace_s) {
  return pipeline_time(stages.data(), static_cast<int>(stages.size()), micro_batches, interleave, schedule, min_pace_s);
}

double interleaved_latency_pace(const StageTimes* stages, const StageTimes* send_latency, int count) {
  double pace = 0;
  for (int s = 0; s < count && count > 1; ++s) {
    const int next = (s + 1) % count;
    const double latency = send_latency[s].forward_s + send_latency[next].backward_s;
    if (latency > 0) pace = std::max(pace, (stages[s].total() + stages[next].total() + latency) / 3);
  }
  return pace;
}

double backward_finish_offset(const StageTimes* stages, int stage, int interleave, Schedule schedule, int count,
                              int micro_batches) {
  double offset = 0;
  for (int s = 0; s < stage; ++s) offset += stages[s].backward_s;
  if (interleave > 1) return offset / interleave;
  if (schedule == Schedule::kGpipe && micro_batches > 1 && stage < count) {
    double from_stage = 0, from_first = 0;  // max t_b over stages >= stage, and over all
    for (int s = 0; s < count; ++s) {
      from_first = std::max(from_first, stages[s].backward_s);
      if (s >= stage) from_stage = std::max(from_stage, stages[s].backward_s);
    }
    offset += (micro_batches - 1) * (from_first - from_stage);
  }
  return offset;
}

}  // namespace hetsim::models
