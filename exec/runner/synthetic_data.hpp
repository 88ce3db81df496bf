// SPDX-License-Identifier: Apache-2.0
// A synthetic next-token task that a small transformer learns in a few dozen steps:
// each sequence is an arithmetic progression modulo the vocabulary with a per-sequence
// start and stride (stride in 1..4), so the next token follows from the previous two.
#pragma once
#include <cstdint>
#include <vector>

namespace hetsim::exec {

/// Input tokens and next-token targets of `count` consecutive sequences starting at global
/// sequence index `first` (each seq_len tokens), row-major [count * seq_len].
struct TokenBatch {
  std::vector<int> tokens;
  std::vector<int> targets;
};

TokenBatch synthetic_batch(std::uint64_t seed, int first, int count, int seq_len, int vocab);

}  // namespace hetsim::exec
