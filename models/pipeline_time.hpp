// SPDX-License-Identifier: Apache-2.0
// Closed-form time of one replica's pipeline and of the data-parallel step.
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
};

/// One replica's pipeline with m micro-batches over stages of possibly unequal times:
///   T = m * max_s(t_f + t_b) + (sum_s(t_f + t_b) - max_s(t_f + t_b)) / v
/// For v = 1 this is (m - 1) max + sum: the 1F1B / GPipe time with unequal stages (the
/// steady state runs at the slowest stage, warm-up and cool-down traverse every stage once;
/// Narayanan et al. SC'21 §2.2 bubble (p-1)/m for equal stages; Fan et al., "DAPPLE",
/// PPoPP'21 §4.2 for unequal ones). Interleaving with v chunks per GPU shrinks the warm-up and
/// cool-down by v (Narayanan et al. SC'21 §2.2.2, bubble (p-1)/(v m)).
double pipeline_time(const std::vector<StageTimes>& stages, int micro_batches, int interleave);
double pipeline_time(const StageTimes* stages, int count, int micro_batches, int interleave);

/// Index of the bottleneck stage (largest t_f + t_b).
int bottleneck_stage(const StageTimes* stages, int count);

/// Time after the last micro-batch's backward leaves the stage until it reaches stage 0: stage s
/// finishes its backward sum_{s' < s} t_b(s') before stage 0 does (1F1B cool-down order), so its
/// gradient sync starts that much earlier.
double backward_finish_offset(const StageTimes* stages, int stage);

}  // namespace hetsim::models
