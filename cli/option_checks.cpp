// SPDX-License-Identifier: Apache-2.0
// The checks of the verbs' option values (option_checks.hpp).
#include "option_checks.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>

#include "units.hpp"

namespace hetsim::cli {

namespace {
/// CLI11 converts integers with base detection, so "010" became 8 (`--dp 010` ran dp 8, exit 0)
/// and "08" failed with a bare "Could not convert". The checks below pass on the text with its
/// leading zeros dropped: decimal, as every number in hetsim's inputs.
void drop_leading_zeros(std::string& text) {
  const size_t digits_from = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  size_t first = digits_from;
  while (first + 1 < text.size() && text[first] == '0' && std::isdigit(static_cast<unsigned char>(text[first + 1])))
    ++first;
  text.erase(digits_from, first - digits_from);
}
}  // namespace

void reject_empty_values(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& text) -> std::string {
        return text.empty() ? std::string(kEmptyValueText) : std::string();
      },
      "");
  for (CLI::App* verb : app.get_subcommands([](const CLI::App*) { return true; }))
    for (CLI::Option* option : verb->get_options([](const CLI::Option* o) { return o->get_expected_min() > 0; }))
      option->check(non_empty);
}

CLI::Validator number_check(bool positive, bool integer, double max) {
  char max_text[32];
  std::snprintf(max_text, sizeof max_text, "%.0f", max);
  const std::string expected = std::string(positive ? "a positive " : "a non-negative ") + (integer ? "integer" : "number");
  const std::string at_most = std::string(" up to ") + max_text;
  return CLI::Validator(
      [expected, at_most, positive, integer, max](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(begin, &end);
        // Decimal only: strtod also reads hexadecimal ("0x10" = 16), which no other number of
        // hetsim's inputs accepts.
        const bool parsed = !text.empty() && end == begin + text.size() &&
                            !std::isspace(static_cast<unsigned char>(text[0])) &&
                            text.find_first_of("xX") == std::string::npos;
        const bool whole = !integer || (text.find_first_of(".eEnNxX") == std::string::npos);
        // Underflow: "1e-308" is positive, and "expected a positive number" contradicted it.
        if (parsed && whole && errno == ERANGE && std::fabs(v) <= DBL_MIN)
          return "expected " + expected + (positive ? " of at least" : ": 0, or at least") +
                 " 2.2e-308 (the smallest a double holds), got '" + text + "'";
        if (parsed && whole && errno == ERANGE)  // overflow: "expected a positive number" again
          return "expected " + expected + (std::isfinite(max) ? at_most : std::string(" of at most 1.8e308 (the largest a double holds)")) +
                 ", got '" + text + "'";
        if (!parsed || !std::isfinite(v) || errno == ERANGE || !whole || (positive ? !(v > 0) : !(v >= 0)))
          return "expected " + expected + ", got '" + text + "'";
        if (v > max) return "expected " + expected + at_most + ", got '" + text + "'";
        drop_leading_zeros(text);
        return {};
      },
      expected);
}

namespace {

/// A bare number through `bare` (number_check's words and limits), else a quantity through
/// `parse`; the text becomes the SI value, which the option then reads.
CLI::Validator quantity_check(const CLI::Validator& bare, models::ParsedQuantity (*parse)(std::string_view),
                              bool positive, const std::string& expected) {
  return CLI::Validator(
      [bare, parse, positive, expected](std::string& text) -> std::string {
        std::string number = text;
        const std::string bare_error = bare(number);
        if (bare_error.empty()) {
          text = number;
          return {};
        }
        // A number without a unit ("0", "-5", "1e999") gets the bare number's words.
        char* end = nullptr;
        std::strtod(text.c_str(), &end);
        if (!text.empty() && end == text.c_str() + text.size()) return bare_error;
        const bool starts_like_a_number = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) ||
                                                            text[0] == '.' || text[0] == '$');
        if (!starts_like_a_number) return "expected " + expected + ", got '" + text + "'";
        const models::ParsedQuantity q = parse(text);
        if (!q.ok()) return q.error;  // the parser says what it expected
        if (!std::isfinite(*q.value) || (positive ? !(*q.value > 0) : !(*q.value >= 0)))
          return "expected " + expected + ", got '" + text + "'";
        char si[32];
        std::snprintf(si, sizeof si, "%.17g", *q.value);
        text = si;
        return {};
      },
      expected);
}

}  // namespace

CLI::Validator duration_check() {
  return quantity_check(number_check(false, false), models::parse_time, false,
                        "a non-negative duration: seconds, or with a unit such as \"90s\", \"2min\", \"500ms\"");
}

CLI::Validator price_per_hour_check() {
  return quantity_check(number_check(true, false), models::parse_price_per_hour, true,
                        "a positive price: dollars per hour, or with a unit such as \"$120/h\", \"$2880/day\"");
}

namespace {

/// The number of a value written bare ("10") or as a percentage ("10%"), and whether it had the
/// `%`; none for "", "%" or "10%%" (percent_check and fraction_check read both forms).
std::optional<std::pair<std::string, bool>> split_percent(const std::string& text) {
  std::string number = text;
  const bool percent = !number.empty() && number.back() == '%';
  if (percent) number.pop_back();
  if (number.empty() || number.back() == '%') return std::nullopt;
  return std::make_pair(number, percent);
}

}  // namespace

CLI::Validator percent_check(double max) {
  const CLI::Validator bare = number_check(false, false, max);
  char max_text[32];
  std::snprintf(max_text, sizeof max_text, "%g", max);
  const std::string expected = std::string("a percentage from 0 to ") + max_text;
  return CLI::Validator(
      [bare, expected](std::string& text) -> std::string {
        auto split = split_percent(text);
        if (!split || !bare(split->first).empty())
          return "expected " + expected + " (\"10\" or \"10%\"), got '" + text + "'";
        text = split->first;
        return {};
      },
      expected);
}

CLI::Validator fraction_check() {
  const CLI::Validator positive = number_check(true, false);
  const std::string expected = "a positive fraction (\"0.25\") or percentage (\"25%\")";
  return CLI::Validator(
      [positive, expected](std::string& text) -> std::string {
        auto split = split_percent(text);
        if (!split || !positive(split->first).empty()) return "expected " + expected + ", got '" + text + "'";
        const auto& [number, percent] = *split;
        const double v = std::strtod(number.c_str(), nullptr);
        if (!percent && v > 1) {
          char as_percent[32];
          std::snprintf(as_percent, sizeof as_percent, "%g%%", 100 * v);
          return "expected " + expected + ", got '" + text + "': as a fraction that is " + as_percent + "; write \"" +
                 text + "%\" for " + text + " percent, or \"" + as_percent + "\"";
        }
        char si[32];
        std::snprintf(si, sizeof si, "%.17g", percent ? v / 100 : v);
        text = si;
        return {};
      },
      expected);
}

CLI::Validator integer_check(unsigned long long min, unsigned long long max) {
  const std::string expected = "an integer between " + std::to_string(min) + " and " + std::to_string(max);
  return CLI::Validator(
      [expected, min, max](std::string& text) -> std::string {
        // Digits only, read exactly: through a double, 2^64 + 1 was 2^64 - 1.
        const bool digits = !text.empty() && text.size() <= 20 &&
                            std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
        errno = 0;
        const unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
        if (!digits || errno == ERANGE || v < min || v > max) return "expected " + expected + ", got '" + text + "'";
        drop_leading_zeros(text);
        return {};
      },
      expected);
}


namespace {

/// The items of a comma-separated list, each checked; an empty item is an error.
std::vector<std::string> checked_items(const std::string& name, const std::string& raw, const CLI::Validator& item_check) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = raw.find(',', start);
    std::string item = raw.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));  // "1, 2" as the user meant it
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) throw CLI::ValidationError(name, "empty item in '" + raw + "' (expected comma-separated values)");
    if (const std::string problem = item_check(item); !problem.empty()) throw CLI::ValidationError(name, problem);
    // As a sweep's `search:` lists say (`--tp-degrees 1,01` is 1 twice: the check wrote it as read).
    if (std::find(items.begin(), items.end(), item) != items.end())
      throw CLI::ValidationError(name, "'" + item + "' is listed twice in '" + raw + "' (expected each value once)");
    items.push_back(item);
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

}  // namespace

CLI::Option* add_list_option(CLI::App* verb, const std::string& name, std::vector<std::string>& into,
                             const std::string& help, const CLI::Validator& item_check) {
  return verb->add_option_function<std::string>(
      name, [&into, name, item_check](const std::string& raw) { into = checked_items(name, raw, item_check); }, help)
      ->type_name("LIST");
}

CLI::Option* add_list_option(CLI::App* verb, const std::string& name, std::vector<int>& into, const std::string& help,
                             const CLI::Validator& item_check) {
  return verb->add_option_function<std::string>(
      name,
      [&into, name, item_check](const std::string& raw) {
        into.clear();
        for (const std::string& item : checked_items(name, raw, item_check)) into.push_back(std::stoi(item));
      },
      help)
      ->type_name("LIST");
}

}  // namespace hetsim::cli
