// SPDX-License-Identifier: Apache-2.0
// CLI11's command-line parse errors reworded in the verbs' own form, "what is wrong (what was
// expected)": CLI11 says "--zero: Value 4 not in range 0 to 3" or "At Most 1 required but
// received 2", which name neither the value nor what to give instead in the words of the rest.
#pragma once
#include <string>
#include <vector>

namespace hetsim::cli {

/// The message for CLI11's `what` (CLI::ParseError::what()); `options` are the verb's long
/// options ("--cluster"), to suggest one for a misspelt option. Messages it does not know are
/// returned as they are.
std::string parse_error_text(const std::string& what, const std::vector<std::string>& options);

}  // namespace hetsim::cli
