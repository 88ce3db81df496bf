// SPDX-License-Identifier: Apache-2.0
// The order in which one pipeline stage runs its forward and backward passes: the simulator's
// stage actors replay it, and the cost model's interleaved pipeline time follows it.
#pragma once
#include <vector>

#include "plan.hpp"

namespace hetsim::models {

struct PassStep {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;  ///< virtual pipeline chunk (interleaved schedule), 0 otherwise
};

/// Passes of stage `stage` of a `stages`-stage pipeline over `micro_batches` micro-batches:
/// - gpipe: all forwards, then all backwards in reverse order (Huang et al., NeurIPS 2019);
/// - 1f1b: min(p-s-1, m) warm-up forwards, then one forward one backward, then the
///   remaining backwards (PipeDream-Flush; Narayanan et al., ICML 2021 §3; SC'21 §2.2.1);
/// - interleaved: Megatron's interleaved 1F1B over `interleave` chunks per stage
///   (Narayanan et al., SC'21 §2.2.2): forward step k runs chunk (k / p) mod v of
///   micro-batch (k / (p·v))·p + k mod p; backward chunks in reverse; warm-up
///   (p-s-1)·2 + (v-1)·p forwards (capped at m·v). Needs m a multiple of p; otherwise
///   micro-batch groups are formed of min(p, remaining) micro-batches.
/// PassOrder gives pass j in O(1); stage_passes lists them all.
class PassOrder {
 public:
  PassOrder(Schedule schedule, int stages, int stage, int micro_batches, int interleave);
  int size() const { return 2 * total_; }
  PassStep at(int j) const;
  /// Warm-up forwards before the first backward.
  int warmup() const { return warmup_; }
  /// The stage's k-th forward and k-th backward (the same on every stage of the pipeline).
  PassStep forward(int k) const;
  PassStep backward(int k) const;

 private:
  bool gpipe_;
  int p_, m_, v_, total_, warmup_;
};
std::vector<PassStep> stage_passes(Schedule schedule, int stages, int stage, int micro_batches, int interleave);

}  // namespace hetsim::models
