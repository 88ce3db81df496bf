// SPDX-License-Identifier: Apache-2.0
// Non-uniform layer partition of one pipeline and non-uniform micro-batch counts across replicas.
#pragma once
#include <string>
#include <vector>

#include "planner_space.hpp"

namespace hetsim::models::planner {

/// One stage position of a pipeline to be partitioned.
struct SlotCost {
  const UnitCost* unit = nullptr;
  double weight_scale = 1.0;  ///< share of weight bytes kept per GPU after ZeRO sharding
  double send_s = 0;          ///< p2p to the next stage per micro-batch, all chunks (0 on the last)
  double back_send_s = 0;     ///< the gradient back from the next stage (its sender's slice: the same at equal TP)
};

struct PartitionResult {
  bool ok = false;
  std::string reason;
  std::vector<int> layers;           ///< per stage
  std::vector<double> stage_s;       ///< per stage, forward + backward per micro-batch incl. p2p
  double bottleneck_s = 0;           ///< slowest stage (or link) per micro-batch, forward + backward
  double sum_s = 0;                  ///< one micro-batch through the whole pipeline, there and back
  double min_headroom_fraction = 1;  ///< min over stages of 1 - estimated memory / capacity
};

/// Splits `layers` transformer blocks over the slots so that the slowest stage is as fast as
/// possible and every stage fits in `memory_fraction` of its GPU's memory. With per-stage
/// costs increasing in the layers taken (t_s(k) = k*a_s + e_s, capped by memory), greedy
/// water-filling gives the optimal min-max split in O(L log S) instead of the O(S L^2) dynamic
/// program over (stage, layers) that PipeDream (Narayanan et al., SOSP'19, sec. 3.1) solves.
/// Stage layer counts are multiples of `interleave`. `uniform`: Megatron's split instead
/// (layers / S each, the first layers mod S stages one more), only checked for memory.
PartitionResult partition_layers(const std::vector<SlotCost>& slots, int layers, int interleave, int micro_batches,
                                 double memory_fraction, bool uniform);

/// Per-replica timing of one micro-batch for the balancing step.
struct ReplicaTiming {
  double bottleneck_s = 0;
  double sum_s = 0;
};

/// Time of a replica running m micro-batches: 1F1B takes (m - 1)*tau + sum (Narayanan et al.
/// SC'21 sec. 2.2.1, with unequal stages as in DESIGN.md); the interleaved schedule divides
/// the pipeline fill by v (sec. 2.2.2): m*tau + (sum - tau)/v.
double replica_time_s(const ReplicaTiming& r, int micro_batches, int interleave);

/// Replicas that share one timing: `copies` identical pipelines (the planner's replica kinds).
struct TimingGroup {
  ReplicaTiming timing;
  int copies = 1;
};

/// Micro-batch counts of one group: its first `first_copies` copies run `first`, the others `rest`.
struct GroupMicroBatches {
  int first = 0;
  int first_copies = 0;
  int rest = 0;
  int of_copy(int copy) const { return copy < first_copies ? first : rest; }
};

/// Micro-batch counts (>= 1 each, summing to `total`) that minimise the slowest replica's time:
/// the continuous optimum (all replicas finish together) rounded down, then the remainder
/// handed out greedily to the replica that would finish first (or, when rounding up to one
/// micro-batch overshot, taken from the slowest). Ties go to the lowest replica index, copies
/// of a group numbered consecutively in group order. Works per group, so the cost is
/// O(G log G) in the groups, not in the replicas. `uniform`: total / R each (empty when it
/// does not divide). Empty when total < R.
std::vector<GroupMicroBatches> balance_micro_batches(const std::vector<TimingGroup>& groups, int total,
                                                     int interleave, bool uniform);

/// A lower bound on the time of a step in which `copies` identical pipelines, each with a
/// slowest stage of at least `tau_lb_s` and a pipeline fill ((sum - slowest) / interleave) of
/// at least `fill_lb_s`, share `total` micro-batches with the replicas of `others` (known
/// timings), or run them alone: the continuous optimum of balance_micro_batches (all replicas
/// finish together, T = (M + sum o_r/tau_r) / sum 1/tau_r), taken where it is smallest over
/// the unknown slowest stage (it may fall as that grows when the others' fill is long).
double step_lower_bound_s(double tau_lb_s, double fill_lb_s, int copies, const std::vector<TimingGroup>& others,
                          int total, int interleave);

/// The same for single replicas (one group per replica), one count per replica.
std::vector<int> balance_micro_batches(const std::vector<ReplicaTiming>& replicas, int total, int interleave,
                                       bool uniform);

}  // namespace hetsim::models::planner
