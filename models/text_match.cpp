// SPDX-License-Identifier: Apache-2.0
// Matching names for error messages: edit distance and "did you mean" suggestions.
#include "text_match.hpp"

#include <algorithm>
#include <cctype>

namespace hetsim::models {

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

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

namespace {

/// Every character of `word` in `c`, in order ("a100-80gb" in "a100-sxm4-80gb").
bool subsequence(std::string_view word, std::string_view c) {
  size_t i = 0;
  for (size_t j = 0; j < c.size() && i < word.size(); ++j)
    if (c[j] == word[i]) ++i;
  return i == word.size();
}

/// Names users write for the values of hetsim's enumerations (PyTorch's dtype names, the
/// usual abbreviations of the fabrics) that no edit distance relates to the canonical name.
/// Each is suggested only when its canonical name is among the candidates.
struct Synonym {
  std::string_view written;
  std::string_view canonical;
};
constexpr Synonym kSynonyms[] = {
    {"bfloat16", "bf16"},     {"float16", "fp16"},        {"half", "fp16"},
    {"float32", "fp32"},      {"float", "fp32"},          {"single", "fp32"},
    {"tensorfloat32", "tf32"}, {"float8", "fp8"},          {"e4m3", "fp8"},
    {"e5m2", "fp8"},          {"ib", "infiniband"},       {"eth", "ethernet"},
    {"tcp", "ethernet"},      {"nvl", "nvlink"},          {"pci", "pcie"},
    {"pci-e", "pcie"},        {"infinity-fabric", "xgmi"}, {"infinityfabric", "xgmi"},
    {"fattree", "fat-tree"},  {"1f1b-interleaved", "interleaved"},
};

}  // namespace

std::optional<std::string> did_you_mean(std::string_view written, const std::vector<std::string>& candidates) {
  // Case does not count as an edit: "BF16" is "bf16" mistyped, not "fp16".
  const std::string word = ascii_lower(written);
  for (const auto& synonym : kSynonyms) {
    if (word != synonym.written) continue;
    for (const auto& candidate : candidates)
      if (ascii_lower(candidate) == synonym.canonical) return candidate;
  }
  std::optional<std::string> best;
  // Ranked by (unrelated, edits): a name the word abbreviates beats a closer unrelated one.
  std::pair<bool, size_t> best_rank{true, static_cast<size_t>(-1)};
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  for (const auto& candidate : candidates) {
    const std::string c = ascii_lower(candidate);
    const size_t d = edit_distance(word, c);
    // A prefix relation ("gpu" vs "gpus_per_node") or an abbreviation ("a100-80gb" for
    // "a100-sxm4-80gb") is a likely slip even when far in edits.
    const bool prefix = std::min(word.size(), c.size()) >= 3 &&
                        (c.compare(0, word.size(), word) == 0 || word.compare(0, c.size(), c) == 0);
    const bool abbreviation = word.size() >= 3 && word.size() < c.size() && subsequence(word, c);
    const bool related = prefix || abbreviation;
    if (d > limit && !related) continue;
    const std::pair<bool, size_t> rank{!related, d};
    if (rank < best_rank) {
      best_rank = rank;
      best = candidate;
    }
  }
  return best;
}

std::string join_with_and(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

std::string join_numbers(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::string unknown_name_message(const std::string& what, const std::string& name, const std::vector<std::string>& known) {
  std::string msg = what + " '" + name + "' (";
  if (const auto guess = did_you_mean(name, known)) msg += "did you mean '" + *guess + "'? ";
  return msg + "known: " + join_names(known) + ")";
}

}  // namespace hetsim::models
