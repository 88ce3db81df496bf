// SPDX-License-Identifier: Apache-2.0
// Time of one replica's pipeline (1F1B, GPipe, interleaved 1F1B): closed forms and exact makespans.
#pragma once
#include <vector>

#include "plan.hpp"

namespace hetsim::models {

/// Per micro-batch time of one stage (all its chunks): forward and backward, each already
/// including the stage's TP collectives, host overhead and p2p sends.
struct StageTimes {
  double forward_s = 0;
  double backward_s = 0;
  double total() const { return forward_s + backward_s; }
  bool operator==(const StageTimes&) const = default;
};

/// A stage's time per micro-batch in one direction from its passes' time (compute, TP, host) and
/// its pipeline sends. Megatron-LM's p2p calls wait for their transfers (batch_isend_irecv, then
/// a device synchronize): the sends add to the stage's time. With `overlapped`
/// (Plan::overlap_p2p_comm) they run on their own stream beside the next chunk's compute and the
/// stage takes max(compute, sends): in the steady state a stage's link and its GPU work at once.
inline double with_sends(double passes_s, double sends_s, bool overlapped) {
  return overlapped ? (passes_s > sends_s ? passes_s : sends_s) : passes_s + sends_s;
}

/// The closed form of a pipeline whose stages sum to `sum_s` per micro-batch with the slowest at
/// `slowest_s`: the steady state runs m micro-batches at the slowest stage (or at `pace_s` when
/// that is slower), warm-up and cool-down traverse the other stages once, divided by the v chunks
/// of an interleaved schedule (Narayanan et al. SC'21 §2.2.2; v = 1 is DAPPLE's bound for 1F1B,
/// Fan et al. PPoPP'21 §4.2). The interleaved pipeline_time (equal stages, or paced by send
/// latency) and the planner's shape search use it.
inline double pipeline_closed_form_s(double sum_s, double slowest_s, int micro_batches, int interleave,
                                     double pace_s = 0) {
  const double steady_s = slowest_s > pace_s ? slowest_s : pace_s;
  return micro_batches * steady_s + (sum_s - slowest_s) / (interleave > 1 ? interleave : 1);
}

/// One replica's pipeline with m micro-batches over stages of possibly unequal times.
/// 1F1B (Narayanan et al. SC'21 §2.2.1) and GPipe (Huang et al. NeurIPS'19): the exact makespan
/// of the schedule's event order, computed by a recurrence over (stage, micro-batch) passes
/// (derivation in pipeline_time.cpp); equal stages give (m + p - 1)(t_f + t_b). It is at most
/// (m - 1) max_s(t_f + t_b) + sum_s(t_f + t_b) (DAPPLE, Fan et al. PPoPP'21 §4.2).
/// Interleaved (v chunks per GPU): m * max + (sum - max) / v for equal stages (SC'21 §2.2.2,
/// bubble (p-1)/(v m)); unequal ones the makespan of the schedule's own pass order (PassOrder).
/// `min_pace_s` (interleaved only): a floor on the steady state's time per micro-batch that the
/// stages' own times do not show (interleaved_latency_pace). `chunk_ends` (interleaved only,
/// [stage]): its first and last chunk's times, the chunks between taking the rest evenly; without
/// them every chunk takes 1/v of the stage. `send_delay` (interleaved only, [stage]): sends beside
/// the compute (overlap_p2p_comm), each arriving this long after the pass that produced it
/// (forward_s: one activation of the stage to the next, the last stage's to stage 0; backward_s:
/// one gradient to the previous, stage 0's to the last): the event graph then waits for them.
struct ChunkEnds {
  StageTimes first, last;
  bool operator==(const ChunkEnds&) const = default;
};
double pipeline_time(const std::vector<StageTimes>& stages, int micro_batches, int interleave,
                     Schedule schedule = Schedule::k1f1b, double min_pace_s = 0);
double pipeline_time(const StageTimes* stages, int count, int micro_batches, int interleave,
                     Schedule schedule = Schedule::k1f1b, double min_pace_s = 0, const ChunkEnds* chunk_ends = nullptr,
                     const StageTimes* send_delay = nullptr);

/// Megatron's interleaved 1F1B with its sends beside the compute (overlap_p2p_comm): a floor on
/// the time per micro-batch from the latency of each stage boundary. Stage s warms up two
/// forward chunks more than stage s+1 ((p-s-1)·2 + (v-1)·p; Narayanan et al. SC'21 §2.2.2 and
/// Megatron-LM's forward_backward_pipelining_with_interleaving), and in the steady state each
/// runs a forward then a backward chunk per slot of period T. Stage s+1's forward of slot i
/// needs stage s's forward of slot i-2 plus the link's latency L_f; stage s's backward of slot
/// i needs stage s+1's backward of slot i plus L_b; each stage's backward starts after its
/// forward and ends before its next forward. Chaining the four around the boundary:
///   3T >= (f_s + b_s) + (f_{s+1} + b_{s+1}) + L_f + L_b   (per chunk),
/// i.e. per micro-batch (v slots) (total_s + total_{s+1} + v (L_f + L_b)) / 3. With a 30 ms
/// boundary it binds long before the stages' own times do (Llama-2 7B, TP 8, 8 stages of 4
/// layers, v 2 over two zones: 56 ms a micro-batch against the simulator's 58, where counting
/// the latency as the sender's time said 86). `send_latency[s]`: the latency of stage s's sends
/// per micro-batch (its v or v-1 crossings), forward_s to the next stage (the last stage's wrap
/// to stage 0), backward_s to the previous one: boundary s -> s+1 has L_f = send_latency[s]
/// .forward_s and L_b = send_latency[s+1].backward_s.
double interleaved_latency_pace(const StageTimes* stages, const StageTimes* send_latency, int count);

/// Index of the bottleneck stage (largest t_f + t_b).
int bottleneck_stage(const StageTimes* stages, int count);

/// Time after the last micro-batch's backward leaves the stage until it reaches stage 0: stage s
/// finishes its backward sum_{s' < s} t_b(s') before stage 0 does (1F1B cool-down order), so its
/// gradient sync starts that much earlier. Interleaved, the last backward is one of v chunks
/// (chunk 0's), and so is each earlier stage's after it: sum_{s' < s} t_b(s') / v.
/// GPipe (`schedule`, with the replica's `count` stages and `micro_batches` m): every backward
/// runs in the drain, and a stage slower than those after it queues them: the drain is a flow
/// shop whose stage s ends its last backward sum_{s'>=s} t_b + (m-1) max_{s'>=s} t_b after the
/// last stage starts (Johnson 1954; the recurrence B[s][i] = max(B[s+1][i], B[s][i-1]) + t_b(s)),
/// so the offset grows by (m-1)(max_{s'>=0} t_b - max_{s'>=s} t_b). An A100 pipeline of 14 | 10
/// layers beside an H100 one across a WAN link: 6.0% above the simulator with the 1F1B offset.
double backward_finish_offset(const StageTimes* stages, int stage, int interleave = 1,
                              Schedule schedule = Schedule::k1f1b, int count = 0, int micro_batches = 1);

}  // namespace hetsim::models
