// SPDX-License-Identifier: Apache-2.0
// Deterministic synthetic sequences (the same sequence index always gives the same tokens,
// whichever replica or micro-batch reads it).
#include "runner/synthetic_data.hpp"

namespace hetsim::exec {
namespace {
std::uint64_t mix(std::uint64_t x) {  // SplitMix64 finaliser (Steele et al. OOPSLA 2014)
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

TokenBatch synthetic_batch(std::uint64_t seed, int first, int count, int seq_len, int vocab) {
  TokenBatch b;
  b.tokens.resize(static_cast<std::size_t>(count) * seq_len);
  b.targets.resize(b.tokens.size());
  for (int i = 0; i < count; ++i) {
    const std::uint64_t h = mix(seed * 0x100000001B3ull + static_cast<std::uint64_t>(first + i));
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
