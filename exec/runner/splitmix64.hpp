// SPDX-License-Identifier: Apache-2.0
// SplitMix64: a 64-bit integer hash with full avalanche, for seeding parameters and synthetic
// data deterministically (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014; constants of S. Vigna's splitmix64.c).
#pragma once
#include <cstdint>

namespace hetsim::exec {

/// The SplitMix64 step: adds the golden-ratio increment, then the finaliser's two multiply-xorshifts.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace hetsim::exec
