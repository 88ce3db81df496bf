// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules (citations in pipeline_schedule.hpp).
#include "pipeline_schedule.hpp"

#include <algorithm>

namespace hetsim::sim {
namespace {

// The k-th forward (or backward) pass of the interleaved order: micro-batches go through
// chunk 0 in groups of p, then the same group through chunk 1, and so on.
PassStep interleaved_step(int k, bool forward, int p, int v, int m) {
  const int group_size = p * v;
  const int group = k / group_size;
  const int first_mb = group * p;
  const int mbs_in_group = std::min(p, m - first_mb);
  const int in_group = k - group * group_size;
  const int chunk_pos = in_group / mbs_in_group;
  const int mb = first_mb + in_group % mbs_in_group;
  const int chunk = forward ? chunk_pos : v - 1 - chunk_pos;
  return {forward, mb, chunk};
}

}  // namespace

std::vector<PassStep> stage_passes(models::Schedule schedule, int stages, int stage, int micro_batches, int interleave) {
  const int p = stages, s = stage, m = micro_batches;
  std::vector<PassStep> out;
  if (schedule == models::Schedule::kGpipe) {
    for (int i = 0; i < m; ++i) out.push_back({true, i, 0});
    for (int i = m - 1; i >= 0; --i) out.push_back({false, i, 0});
    return out;
  }
  const int v = schedule == models::Schedule::kInterleaved ? std::max(interleave, 1) : 1;
  const int total = m * v;
  int warmup;
  if (v == 1) warmup = std::min(p - s - 1, m);
  else warmup = std::min((p - s - 1) * 2 + (v - 1) * p, total);
  int f = 0, b = 0;
  auto fwd = [&](int k) { return v == 1 ? PassStep{true, k, 0} : interleaved_step(k, true, p, v, m); };
  auto bwd = [&](int k) { return v == 1 ? PassStep{false, k, 0} : interleaved_step(k, false, p, v, m); };
  for (; f < warmup; ++f) out.push_back(fwd(f));
  while (f < total) {
    out.push_back(fwd(f++));
    out.push_back(bwd(b++));
  }
  while (b < total) out.push_back(bwd(b++));
  return out;
}

}  // namespace hetsim::sim
