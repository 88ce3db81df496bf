// SPDX-License-Identifier: Apache-2.0
// Matching names for error messages: edit distance and "did you mean" suggestions.
#include "text_match.hpp"

#include <algorithm>

namespace hetsim::models {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = static_cast<size_t>(-1);
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    // A prefix relation ("gpu" vs "gpus_per_node") is a likely typo even when far in edits.
    const bool prefix = std::min(word.size(), c.size()) >= 3 &&
                        (c.compare(0, word.size(), word) == 0 || word.compare(0, c.size(), c) == 0);
    if (d > limit && !prefix) continue;
    if (prefix) d = std::min(d, limit);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace hetsim::models
