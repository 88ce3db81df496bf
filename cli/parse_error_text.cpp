// SPDX-License-Identifier: Apache-2.0
// CLI11's parse errors in the verbs' form (parse_error_text.hpp).
#include "parse_error_text.hpp"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "text_match.hpp"

namespace hetsim::cli {

namespace {

/// CLI11 prints range bounds of a floating option with %f ("0.000000 to 90.000000").
std::string tidy_number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return text;
  std::ostringstream o;
  o << v;
  return o.str();
}

/// "unexpected argument(s)": each word that looks like an option gets a suggestion.
std::string unexpected_arguments(const std::string& words, const std::vector<std::string>& options) {
  std::istringstream in(words);
  std::string word, listed, hint;
  int count = 0;
  while (in >> word) {
    listed += (listed.empty() ? "'" : ", '") + word + "'";
    ++count;
    // The verb's own option, unknown only because a lone '--' before it ended the options
    // ("did you mean '--tp'?" for --tp read as nonsense).
    if (hint.empty() && word.rfind("--", 0) == 0 && std::find(options.begin(), options.end(), word) != options.end())
      hint = "'" + word + "' is one of them, but a '--' before it ends the options; ";
    if (hint.empty() && word.rfind("--", 0) == 0)
      if (const auto guess = models::did_you_mean(word, options)) hint = "did you mean '" + *guess + "'? ";
  }
  return std::string(count == 1 ? "unknown argument " : "unknown arguments ") + listed + " (" + hint +
         "expected one of the verb's options)";
}

}  // namespace

std::string parse_error_text(const std::string& what, const std::vector<std::string>& options) {
  std::smatch m;
  static const std::regex range(R"(^(\S+): Value (\S+) not in range (\S+) to (\S+)$)");
  if (std::regex_match(what, m, range))
    return m[1].str() + ": " + m[2].str() + " is out of range (expected " + tidy_number(m[3].str()) + " to " +
           tidy_number(m[4].str()) + ")";
  static const std::regex at_most(R"(^(\S+): At Most 1 required but received (\d+)$)");
  if (std::regex_match(what, m, at_most)) return m[1].str() + ": given " + m[2].str() + " times (expected once)";
  static const std::regex choice(R"(^(\S+): (.*) not in \{(.*)\}$)");
  if (std::regex_match(what, m, choice))
    return m[1].str() + ": unknown value '" + m[2].str() + "' (expected one of: " +
           std::regex_replace(m[3].str(), std::regex(","), ", ") + ")";
  static const std::regex missing_value(R"(^(\S+): 1 required (\S+) missing$)");
  if (std::regex_match(what, m, missing_value))
    return m[1].str() + ": no value given (expected a " + m[2].str() + " after it)";
  static const std::regex required(R"(^(\S+) is required$)");
  if (std::regex_match(what, m, required)) return m[1].str() + ": missing (it is required)";
  static const std::regex unexpected(R"(^The following arguments? (?:was|were) not expected: (.*)$)");
  if (std::regex_match(what, m, unexpected)) return unexpected_arguments(m[1].str(), options);
  return what;
}

}  // namespace hetsim::cli
