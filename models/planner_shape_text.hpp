// SPDX-License-Identifier: Apache-2.0
// The planner's shape notation of a block's layer split ("L10,10,10,10"), shared by the search's
// describe() and the local search's rewrite of it.
#pragma once
#include <cstddef>
#include <string>

namespace hetsim::models::planner {

/// Splits longer than this many stages write a run of three or more equal counts as "count*run":
/// a 25,000-stage pipeline of a 100,000-GPU plan printed its "L4,4,4,..." as 50 KB on one line.
constexpr std::size_t kLayerListRunsFrom = 16;

/// Appends the layer counts of `count` consecutive stages, comma-separated ("10,10,11"), or
/// past kLayerListRunsFrom stages with runs folded ("4*24999,5").
inline void append_layer_list(std::string& out, const int* layers, std::size_t count) {
  const bool fold = count > kLayerListRunsFrom;
  for (std::size_t j = 0; j < count;) {
    std::size_t run = 1;
    while (fold && j + run < count && layers[j + run] == layers[j]) ++run;
    if (j > 0) out += ',';
    out += std::to_string(layers[j]);
    if (run >= 3) {
      out += '*' + std::to_string(run);
      j += run;
      continue;
    }
    ++j;
  }
}

}  // namespace hetsim::models::planner
