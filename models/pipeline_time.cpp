// SPDX-License-Identifier: Apache-2.0
// Closed-form time of one replica's pipeline.
#include "pipeline_time.hpp"

#include <algorithm>

namespace hetsim::models {

int bottleneck_stage(const StageTimes* stages, int count) {
  int best = 0;
  for (int s = 1; s < count; ++s)
    if (stages[s].total() > stages[best].total()) best = s;
  return best;
}

double pipeline_time(const StageTimes* stages, int count, int micro_batches, int interleave) {
  if (count <= 0 || micro_batches <= 0) return 0;
  double sum = 0;
  for (int s = 0; s < count; ++s) sum += stages[s].total();
  const double slowest = stages[bottleneck_stage(stages, count)].total();
  const double v = std::max(1, interleave);
  return micro_batches * slowest + (sum - slowest) / v;
}

double pipeline_time(const std::vector<StageTimes>& stages, int micro_batches, int interleave) {
  return pipeline_time(stages.data(), static_cast<int>(stages.size()), micro_batches, interleave);
}

double backward_finish_offset(const StageTimes* stages, int stage) {
  double offset = 0;
  for (int s = 0; s < stage; ++s) offset += stages[s].backward_s;
  return offset;
}

}  // namespace hetsim::models
