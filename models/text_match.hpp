// SPDX-License-Identifier: Apache-2.0
// Matching names for error messages: edit distance and "did you mean" suggestions.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetsim::models {

/// `s` with ASCII letters in lower case (names and units compare so where case is no edit).
std::string ascii_lower(std::string_view s);
/// Levenshtein distance (insertions, deletions, substitutions each cost 1).
size_t edit_distance(std::string_view a, std::string_view b);
/// Closest candidate when it is close enough to be a likely typo (or a prefix of the word,
/// or the word of it), else nullopt.
std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates);
/// "a, b, c".
std::string join_names(const std::vector<std::string>& names);
/// "1, 2, 4".
std::string join_numbers(const std::vector<int>& values);
/// "a, b and c" (prose lists of notes and hints).
std::string join_with_and(const std::vector<std::string>& items);
/// "<what> 'name' (did you mean 'x'? known: a, b, c)": the loaders' wording for a name that is
/// not among `known` (e.g. what = "unknown GPU").
std::string unknown_name_message(const std::string& what, const std::string& name, const std::vector<std::string>& known);

}  // namespace hetsim::models
