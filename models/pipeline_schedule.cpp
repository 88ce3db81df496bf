// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules (citations in pipeline_schedule.hpp).
#include "pipeline_schedule.hpp"

#include <algorithm>

namespace hetsim::models {
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

PassOrder::PassOrder(Schedule schedule, int stages, int stage, int micro_batches, int interleave)
    : gpipe_(schedule == Schedule::kGpipe),
      p_(stages),
      m_(micro_batches),
      v_(schedule == Schedule::kInterleaved ? std::max(interleave, 1) : 1),
      total_(micro_batches * v_) {
  if (gpipe_) warmup_ = m_;
  else if (v_ == 1) warmup_ = std::min(p_ - stage - 1, m_);
  else warmup_ = std::min((p_ - stage - 1) * 2 + (v_ - 1) * p_, total_);
}

PassStep PassOrder::forward(int k) const { return v_ == 1 ? PassStep{true, k, 0} : interleaved_step(k, true, p_, v_, m_); }

PassStep PassOrder::backward(int k) const {
  if (gpipe_) return {false, m_ - 1 - k, 0};  // in reverse order
  return v_ == 1 ? PassStep{false, k, 0} : interleaved_step(k, false, p_, v_, m_);
}

PassStep PassOrder::at(int j) const {
  // Warm-up forwards, then one forward one backward, then the backwards left.
  if (j < warmup_) return forward(j);
  const int steady_end = 2 * total_ - warmup_;
  if (j < steady_end) return (j - warmup_) % 2 == 0 ? forward(warmup_ + (j - warmup_) / 2) : backward((j - warmup_) / 2);
  return backward(j - total_);
}

std::vector<PassStep> stage_passes(Schedule schedule, int stages, int stage, int micro_batches, int interleave) {
  const PassOrder order(schedule, stages, stage, micro_batches, interleave);
  std::vector<PassStep> out;
  out.reserve(static_cast<std::size_t>(order.size()));
  for (int j = 0; j < order.size(); ++j) out.push_back(order.at(j));
  return out;
}

}  // namespace hetsim::models
