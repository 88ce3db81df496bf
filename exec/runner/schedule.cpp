// SPDX-License-Identifier: Apache-2.0
// GPipe, 1F1B and interleaved 1F1B action lists.
#include "runner/schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace hetsim::exec {

std::vector<Action> build_schedule(models::Schedule schedule, int pp, int stage, int m, int interleave) {
  using K = Action::Kind;
  std::vector<Action> out;
  if (schedule != models::Schedule::kInterleaved || interleave <= 1) {
    if (schedule == models::Schedule::kGpipe) {
      for (int i = 0; i < m; ++i) out.push_back({K::kForward, i, 0});
      for (int i = 0; i < m; ++i) out.push_back({K::kBackward, i, 0});
      return out;
    }
    const int warmup = std::min(pp - stage - 1, m);
    int f = 0, b = 0;
    for (; f < warmup; ++f) out.push_back({K::kForward, f, 0});
    while (f < m) {
      out.push_back({K::kForward, f++, 0});
      out.push_back({K::kBackward, b++, 0});
    }
    while (b < m) out.push_back({K::kBackward, b++, 0});
    return out;
  }
  const int v = interleave;
  const int total = m * v;
  if (m % pp != 0) throw std::invalid_argument("interleaved schedule needs micro_batches divisible by pp");
  // Virtual step k -> (micro-batch, chunk): groups of pp micro-batches go through chunk 0, then
  // chunk 1, ...; backwards visit the chunks in reverse.
  auto micro_of = [&](int k) { return (k / (pp * v)) * pp + k % pp; };
  auto chunk_of = [&](int k, bool forward) {
    const int c = (k % (pp * v)) / pp;
    return forward ? c : v - 1 - c;
  };
  const int warmup = m == pp ? total : std::min((pp - stage - 1) * 2 + (v - 1) * pp, total);
  for (int k = 0; k < warmup; ++k) out.push_back({K::kForward, micro_of(k), chunk_of(k, true)});
  for (int k = 0; k < total - warmup; ++k) {
    out.push_back({K::kForward, micro_of(warmup + k), chunk_of(warmup + k, true)});
    out.push_back({K::kBackward, micro_of(k), chunk_of(k, false)});
  }
  for (int k = std::max(0, total - warmup); k < total; ++k) {
    out.push_back({K::kBackward, micro_of(k), chunk_of(k, false)});
  }
  return out;
}

}  // namespace hetsim::exec
