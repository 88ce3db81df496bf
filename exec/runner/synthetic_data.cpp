// SPDX-License-Identifier: Apache-2.0
// Deterministic synthetic sequences (the same sequence index always gives the same tokens,
// whichever replica or micro-batch reads it).
#include "runner/synthetic_data.hpp"

#include "runner/splitmix64.hpp"

namespace hetsim::exec {

TokenBatch synthetic_batch(std::uint64_t seed, int first, int count, int seq_len, int vocab) {
  TokenBatch b;
  b.tokens.resize(static_cast<std::size_t>(count) * seq_len);
  b.targets.resize(b.tokens.size());
  for (int i = 0; i < count; ++i) {
    // 0x100000001B3: the 64-bit FNV prime (Fowler-Noll-Vo; IETF draft-eastlake-fnv), spreading seeds apart.
    const std::uint64_t h = splitmix64(seed * 0x100000001B3ull + static_cast<std::uint64_t>(first + i));
    const int start = static_cast<int>(h % static_cast<std::uint64_t>(vocab));
    const int stride = 1 + static_cast<int>((h >> 32) % 4);
    for (int t = 0; t < seq_len; ++t) {
      const std::size_t at = static_cast<std::size_t>(i) * seq_len + t;
      b.tokens[at] = static_cast<int>((start + static_cast<long long>(stride) * t) % vocab);
      b.targets[at] = static_cast<int>((start + static_cast<long long>(stride) * (t + 1)) % vocab);
    }
  }
  return b;
}

}  // namespace hetsim::exec
