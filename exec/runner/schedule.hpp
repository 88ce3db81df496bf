// SPDX-License-Identifier: Apache-2.0
// The order in which one pipeline stage runs its forward and backward passes in a step.
#pragma once
#include <vector>

#include "plan.hpp"

namespace hetsim::exec {

struct Action {
  enum class Kind { kForward, kBackward };
  Kind kind = Kind::kForward;
  int micro_batch = 0;
  int chunk = 0;  ///< the stage's chunk index (0 unless interleaved)
};

/// GPipe (Huang et al. NeurIPS 2019): all forwards, then all backwards.
/// 1F1B (Narayanan et al. SOSP 2019, PipeDream-Flush): pp-stage-1 warm-up forwards, then one
/// forward / one backward, then the cool-down backwards.
/// Interleaved 1F1B (Narayanan et al. SC'21, section 2.2) with `interleave` chunks per stage,
/// in the order of Megatron-LM's forward_backward_pipelining_with_interleaving.
std::vector<Action> build_schedule(models::Schedule schedule, int pp, int stage, int micro_batches,
                                   int interleave);

}  // namespace hetsim::exec
