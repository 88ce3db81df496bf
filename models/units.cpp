// SPDX-License-Identifier: Apache-2.0
// Unit parsing and formatting: "<number><unit>" strings -> SI doubles, and back for reports.
//
// Prefixes follow SI (k = 1e3 ... E = 1e18) and IEC 80000-13 for binary sizes
// (Ki = 2^10 ... Ei = 2^60). `B` is a byte, `b`/`bit` a bit (8 bits per byte), as in the
// ns-3 DataRate and SimGrid bandwidth tables.
#include "units.hpp"

#include "text_match.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <array>
#include <charconv>
#include <chrono>
#include <ctime>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace hetsim::models {
/// number x factor, dividing by the reciprocal when the factor is a negative power of ten:
/// 5 * 1e-6 is one ulp above 5e-6 (1e-6 is not exact in binary), 5 / 1e6 is exactly 5e-6.
double to_si(double number, double factor) {
  if (factor < 1) {
    const double inverse = std::round(1.0 / factor);
    if (std::fabs(inverse * factor - 1.0) < 1e-15) return number / inverse;
  }
  return number * factor;
}

namespace {

struct UnitEntry {
  std::string name;
  double factor;  // SI value of one unit
};

struct Split {
  bool has_number = false;
  double number = 0;
  std::string unit;  // text after the number, surrounding spaces removed
  std::string error;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  out.append(s);
  out += '"';
  return out;
}

/// Values whose SI magnitude lies outside [kMinMagnitude, kMaxMagnitude] (zero aside) are
/// rejected: the model divides by them and sums them over thousands of GPUs, and "1e308GB/s"
/// (inf B/s) or "1e-320s" (a subnormal whose inverse is inf) would turn a report into inf/NaN.
constexpr double kMinMagnitude = 1e-300;
constexpr double kMaxMagnitude = 1e300;

std::string out_of_range_error(std::string_view text) {
  return "number out of range in " + quoted(text) + " (expected a value between 1e-300 and 1e300 in SI units, or 0)";
}

/// Splits "<number><unit>" (optional spaces between). Rejects signs other than a
/// leading '-', which is reported as negative, and non-finite values.
Split split_number(std::string_view text, std::string_view prefix_symbol = {}) {
  Split out;
  std::string_view s = trim(text);
  bool negative = false;
  if (!s.empty() && s.front() == '-') {
    negative = true;
    s.remove_prefix(1);
  }
  if (!prefix_symbol.empty() && s.substr(0, prefix_symbol.size()) == prefix_symbol) {
    s.remove_prefix(prefix_symbol.size());
  }
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  // Only plain decimal numbers: digits, one '.', optional exponent.
  size_t end = 0;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.')) ++end;
  if (end > 0 && end < s.size() && (s[end] == 'e' || s[end] == 'E')) {
    size_t e = end + 1;
    if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
    if (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) {
      while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
      end = e;
    }
  }
  if (end == 0) return out;  // no number at all
  double v = 0;
  const auto res = std::from_chars(s.data(), s.data() + end, v);
  if (res.ec == std::errc::result_out_of_range) {
    out.error = out_of_range_error(text);
    return out;
  }
  if (res.ec != std::errc() || res.ptr != s.data() + end) {
    out.error = "malformed number in " + quoted(text) + " (expected a plain decimal number before the unit)";
    return out;
  }
  if (!std::isfinite(v)) {
    out.error = out_of_range_error(text);
    return out;
  }
  if (negative && v != 0) {
    out.error = "negative value " + quoted(text) + " (expected a value >= 0)";
    return out;
  }
  out.has_number = true;
  out.number = v;
  out.unit = std::string(trim(s.substr(end)));
  return out;
}

/// The parsed SI value, or the out-of-range error (see kMaxMagnitude).
ParsedQuantity in_range(std::string_view text, double si_value) {
  ParsedQuantity out;
  const double magnitude = std::fabs(si_value);
  if (!std::isfinite(si_value) || (magnitude != 0 && (magnitude < kMinMagnitude || magnitude > kMaxMagnitude)))
    out.error = out_of_range_error(text);
  else
    out.value = si_value;
  return out;
}

/// Expands base units with SI (and optionally IEC binary) prefixes.
std::vector<UnitEntry> with_prefixes(const std::vector<UnitEntry>& bases, bool binary) {
  static const std::array<std::pair<const char*, double>, 7> kSi = {
      {{"", 1.0}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18}}};
  static const std::array<std::pair<const char*, double>, 6> kIec = {
      {{"Ki", 0x1p10}, {"Mi", 0x1p20}, {"Gi", 0x1p30}, {"Ti", 0x1p40}, {"Pi", 0x1p50}, {"Ei", 0x1p60}}};
  std::vector<UnitEntry> out;
  for (const auto& base : bases) {
    for (const auto& [p, f] : kSi) out.push_back({p + base.name, f * base.factor});
    out.push_back({"K" + base.name, 1e3 * base.factor});  // "KB", "Kbps": common spelling of k
    if (binary) {
      for (const auto& [p, f] : kIec) out.push_back({p + base.name, f * base.factor});
    }
  }
  return out;
}

struct QuantityKind {
  const char* what;     // "a bandwidth"
  const char* example;  // "300GB/s"
  std::vector<UnitEntry> units;
};

const QuantityKind& bandwidth_kind() {
  static const QuantityKind k{"a bandwidth", "300GB/s",
                              with_prefixes({{"B/s", 1.0},
                                             {"Bps", 1.0},
                                             {"b/s", 0.125},
                                             {"bps", 0.125},
                                             {"bit/s", 0.125}},
                                            /*binary=*/true)};
  return k;
}

const QuantityKind& size_kind() {
  static const QuantityKind k{"a size", "80GiB", with_prefixes({{"B", 1.0}}, /*binary=*/true)};
  return k;
}

const QuantityKind& flops_kind() {
  static const QuantityKind k{"a FLOP rate", "312TFLOP/s",
                              with_prefixes({{"FLOP/s", 1.0}, {"FLOPS", 1.0}, {"flop/s", 1.0}, {"flops", 1.0}},
                                            /*binary=*/false)};
  return k;
}

const QuantityKind& flop_kind() {
  static const QuantityKind k{"an amount of work", "1GFLOP",
                              with_prefixes({{"FLOP", 1.0}, {"flop", 1.0}}, /*binary=*/false)};
  return k;
}

const QuantityKind& time_kind() {
  static const QuantityKind k{"a time",
                              "5us",
                              {{"ps", 1e-12},
                               {"ns", 1e-9},
                               {"us", 1e-6},
                               {"\xC2\xB5s", 1e-6},  // µs (micro sign)
                               {"\xCE\xBCs", 1e-6},  // μs (Greek mu)
                               {"ms", 1e-3},
                               {"nsec", 1e-9},  // spelt out: "2usec" was told "did you mean 2sec"
                               {"usec", 1e-6},
                               {"msec", 1e-3},
                               {"s", 1.0},
                               {"sec", 1.0},
                               {"min", 60.0},
                               {"h", 3600.0},
                               {"hour", 3600.0},
                               {"d", 86400.0},
                               {"day", 86400.0}}};
  return k;
}

/// "per time" units, as factors converting "per unit" into "per hour".
const std::vector<UnitEntry>& per_hour_units() {
  static const std::vector<UnitEntry> u = {{"s", 3600.0},     {"sec", 3600.0},     {"min", 60.0},
                                           {"h", 1.0},        {"hr", 1.0},         {"hour", 1.0},
                                           {"d", 1.0 / 24},   {"day", 1.0 / 24},   {"week", 1.0 / 168},
                                           {"month", 1.0 / 730}};  // 730 h = 8760 h / 12 (cloud billing month)
  return u;
}

const UnitEntry* find_unit(const std::vector<UnitEntry>& units, std::string_view name) {
  for (const auto& u : units)
    if (u.name == name) return &u;
  return nullptr;
}

/// What a unit the user wrote most likely meant, when letters alone mislead: spelt-out or
/// abbreviated time words ("/wk" was told "/s", 604,800x off; "5m" "5ms", "80G" of memory "80B").
/// Each applies only where its target is a unit of the quantity at hand.
const std::vector<std::pair<std::string_view, std::string_view>>& unit_aliases() {
  static const std::vector<std::pair<std::string_view, std::string_view>> a = {
      {"m", "min"},       {"mins", "min"},    {"minute", "min"},  {"minutes", "min"}, {"second", "sec"},
      {"seconds", "sec"}, {"secs", "sec"},    {"hours", "hour"},  {"hrs", "hr"},      {"days", "day"},
      {"w", "week"},      {"wk", "week"},     {"wks", "week"},    {"weeks", "week"},  {"mo", "month"},
      {"mon", "month"},   {"mth", "month"},   {"months", "month"}, {"K", "KiB"},      {"M", "MiB"},
      {"G", "GiB"},       {"T", "TiB"}};
  return a;
}

std::string closest_unit(const std::vector<UnitEntry>& units, std::string_view name, std::string_view fallback) {
  for (const auto& [alias, target] : unit_aliases())
    if (alias == name && find_unit(units, target)) return std::string(target);
  // The same letters in another case ("/H" was told "/s", 3600x off).
  for (const auto& u : units)
    if (ascii_lower(u.name) == ascii_lower(name)) return u.name;
  // A unit followed by more ("200Gbps/port", "5us each"): that unit, not the nearest by letters.
  std::string_view longest;
  for (const auto& u : units)
    if (u.name.size() > longest.size() && name.size() > u.name.size() && name.substr(0, u.name.size()) == u.name &&
        (name[u.name.size()] == '/' || name[u.name.size()] == ' '))
      longest = u.name;
  if (!longest.empty()) return std::string(longest);
  std::string best(fallback);
  size_t best_d = static_cast<size_t>(-1);
  for (const auto& u : units) {
    const size_t d = edit_distance(name, u.name);
    if (d < best_d) {
      best_d = d;
      best = u.name;
    }
  }
  return best_d <= std::max<size_t>(2, name.size() / 2) ? best : std::string(fallback);
}

std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// Why `sp.unit` is no unit of `kind`, with what was meant where that can be told: digits in the
/// "unit" are a malformed number ("1,000GB/s", "0x10GB/s"); a unit of another quantity is named
/// as such ("5us" for a bandwidth); a unit in the wrong case lists the spellings that differ only
/// in case, since case matters ("gb/s": GB/s is bytes, Gb/s bits). Otherwise the closest unit.
std::string unknown_unit_error(std::string_view text, const Split& sp, const QuantityKind& kind,
                               const std::string& example_unit) {
  const std::string expected = "(expected " + std::string(kind.what) + " such as \"" + kind.example + "\")";
  if (std::any_of(sp.unit.begin(), sp.unit.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return "malformed number in " + quoted(text) + " (expected a plain decimal number and a unit, such as \"" +
           kind.example + "\")";
  std::string same_but_case;
  for (const UnitEntry& e : kind.units)
    if (ascii_lower(e.name) == ascii_lower(sp.unit))
      same_but_case += (same_but_case.empty() ? "\"" : " or \"") + format_number(sp.number) + e.name + "\"";
  if (!same_but_case.empty())
    return "unknown unit '" + sp.unit + "' in " + quoted(text) + " (case matters: " + same_but_case + ")";
  for (const QuantityKind* other : {&bandwidth_kind(), &size_kind(), &flops_kind(), &flop_kind(), &time_kind()})
    if (other != &kind && find_unit(other->units, sp.unit))
      return "'" + sp.unit + "' in " + quoted(text) + " is a unit of " + other->what + " " + expected;
  // The unit's words as symbols ("Gbyte/s" is GB/s: by letters the closest unit was Gbit/s, 8x off).
  std::string symbols = sp.unit;
  for (const auto& [word, symbol] : {std::pair<const char*, const char*>{"bytes", "B"}, {"byte", "B"}, {"bits", "b"},
                                     {"bit", "b"}}) {
    for (std::size_t at = ascii_lower(symbols).find(word); at != std::string::npos; at = ascii_lower(symbols).find(word))
      symbols.replace(at, std::strlen(word), symbol);
  }
  if (symbols != sp.unit && find_unit(kind.units, symbols))
    return "unknown unit '" + sp.unit + "' in " + quoted(text) + " (units are written as symbols: \"" +
           format_number(sp.number) + symbols + "\")";
  return "unknown unit '" + sp.unit + "' in " + quoted(text) + " (e.g. \"" + format_number(sp.number) +
         closest_unit(kind.units, sp.unit, example_unit) + "\")";
}

/// The unit a bare `number` was most likely written in: the example's ("300" for a bandwidth:
/// 300GB/s) or the SI unit ("5e-6" for a latency: 5e-06s, where the example's unit suggested
/// "5e-06us", a millionth of it), whichever puts it nearer the example's value (log scale).
std::string likely_unit(double number, const QuantityKind& kind, const std::string& example_unit) {
  const UnitEntry* example = find_unit(kind.units, example_unit);
  const UnitEntry* si = nullptr;
  for (const UnitEntry& u : kind.units)
    if (u.factor == 1.0 && si == nullptr) si = &u;
  if (example == nullptr || si == nullptr || !(number > 0)) return example_unit;
  const double example_si = std::atof(kind.example) * example->factor;
  const auto distance = [&](double factor) { return std::fabs(std::log(number * factor / example_si)); };
  return distance(si->factor) < distance(example->factor) ? si->name : example_unit;
}

ParsedQuantity parse_with(std::string_view text, const QuantityKind& kind) {
  ParsedQuantity out;
  const Split sp = split_number(text);
  const std::string example_unit = std::string(kind.example).substr(std::string(kind.example).find_first_not_of("0123456789."));
  if (!sp.error.empty()) {
    out.error = sp.error;
    return out;
  }
  if (!sp.has_number) {
    out.error = "not a number with a unit: " + quoted(text) + " (expected " + kind.what + " such as \"" + kind.example + "\")";
    return out;
  }
  if (sp.unit.empty()) {
    out.error = "missing unit in " + quoted(text) + " (expected " + kind.what + " such as \"" + format_number(sp.number) +
                likely_unit(sp.number, kind, example_unit) + "\")";
    return out;
  }
  const UnitEntry* u = find_unit(kind.units, sp.unit);
  if (u == nullptr) {
    out.error = unknown_unit_error(text, sp, kind, example_unit);
    return out;
  }
  return in_range(text, to_si(sp.number, u->factor));
}

/// "$<number>/<per>" where <per> is looked up in `per` (factor: value multiplier).
ParsedQuantity parse_money(std::string_view text, const std::vector<UnitEntry>& per, const char* what,
                           const char* example, const char* example_per) {
  ParsedQuantity out;
  const std::string_view s = trim(text);
  const bool has_dollar = s.find('$') != std::string_view::npos;
  if (s.rfind("$-", 0) == 0) {  // written "$-1/h": the same mistake as "-$1/h", said the same way
    // "$-0/h" is $0/h, as "-0us" is 0 s (it was refused as negative).
    const ParsedQuantity unsigned_part = parse_money("$" + std::string(s.substr(2)), per, what, example, example_per);
    if (unsigned_part.ok() && *unsigned_part.value == 0) return unsigned_part;
    out.error = "negative value " + quoted(text) + " (expected a value >= 0)";
    return out;
  }
  const Split sp = split_number(s, "$");
  if (!sp.error.empty()) {
    out.error = sp.error;
    return out;
  }
  if (!sp.has_number || !has_dollar || sp.unit.empty() || sp.unit.front() != '/') {
    out.error = "malformed " + std::string(what) + " " + quoted(text) + " (expected dollars per unit such as \"" +
                example + "\")";
    return out;
  }
  const std::string unit = std::string(trim(std::string_view(sp.unit).substr(1)));
  const UnitEntry* u = find_unit(per, unit);
  if (u == nullptr) {
    out.error = "unknown unit '/" + unit + "' in " + quoted(text) + " (e.g. \"$" + format_number(sp.number) + "/" +
                closest_unit(per, unit, example_per) + "\")";
    return out;
  }
  return in_range(text, to_si(sp.number, u->factor));
}

std::string format_scaled(double v, const char* const* prefixes, int count, double step, const char* unit) {
  if (!std::isfinite(v)) return format_number(v) + " " + unit;
  int i = 0;
  double x = v;
  while (i + 1 < count && std::fabs(x) >= step * 0.9995) {
    x /= step;
    ++i;
  }
  char buf[64];
  // Three significant digits: "312 TFLOP/s", "80.0 GiB", "2.53 ms".
  const double ax = std::fabs(x);
  // Outside the prefixes' reach (below the smallest's 1, above the largest's 999) the same three
  // digits in exponent form: "0.00 FLOP/s" for 0.004 and "7056287934487609 EFLOP" (s66 fuzz).
  if (ax > 0 && ((i == 0 && ax < 0.995) || (i + 1 == count && ax >= 999.5))) {
    std::snprintf(buf, sizeof buf, "%.3g %s%s", x, prefixes[i], unit);
    return buf;
  }
  const int decimals = ax >= 99.95 ? 0 : (ax >= 9.995 ? 1 : 2);
  std::snprintf(buf, sizeof buf, "%.*f %s%s", decimals, x, prefixes[i], unit);
  return buf;
}

}  // namespace

namespace {

/// A non-zero value outside [min, max] is an error: the SI range of every value (kMinMagnitude)
/// keeps single figures finite, but a link of "1e-300B/s" still made a step of inf seconds and a
/// latency of "1e300s" summed over a pipeline overflows. The bounds lie far outside anything real.
/// Beyond the SI range too ("1e308GB/s"), the quantity's own bounds are what the user needs.
ParsedQuantity within_bounds(ParsedQuantity q, std::string_view text, double min, double max, const char* expected) {
  const bool beyond_si = !q.value && q.error.rfind("number out of range", 0) == 0;
  if (beyond_si || (q.value && *q.value != 0 && (*q.value < min || *q.value > max))) {
    q.error = "value out of range in " + quoted(text) + " (expected " + expected + ")";
    q.value.reset();
  }
  return q;
}

}  // namespace

ParsedQuantity parse_bandwidth(std::string_view text) {
  return within_bounds(parse_with(text, bandwidth_kind()), text, 1.0, 1e18, "a bandwidth between 1B/s and 1e18B/s");
}
ParsedQuantity parse_time(std::string_view text) {
  return within_bounds(parse_with(text, time_kind()), text, 1e-12, 1e12, "a time between 1ps and 1e12s");
}
ParsedQuantity parse_size(std::string_view text) {
  // An exabyte is a million times any device's memory: "1e300B" printed as 63 digits.
  return within_bounds(parse_with(text, size_kind()), text, 1.0, 1e18, "a size between 1B and 1e18B");
}
ParsedQuantity parse_flops(std::string_view text) {
  // A peak of "1e-300FLOP/s" made every step infinite (predict printed "inf s" with exit 0).
  return within_bounds(parse_with(text, flops_kind()), text, 1.0, 1e21, "a rate between 1FLOP/s and 1e21FLOP/s");
}
ParsedQuantity parse_flop(std::string_view text) {
  // A GEMM's half-efficiency work of "1e300FLOP" put every GEMM at ~0 efficiency: inf seconds.
  return within_bounds(parse_with(text, flop_kind()), text, 1.0, 1e18, "0, or an amount of work between 1FLOP and 1e18FLOP");
}

namespace {

/// Dollars per byte of each size unit ("$0.05/GB": value / bytes-in-unit).
const std::vector<UnitEntry>& per_byte_units() {
  static const std::vector<UnitEntry> per_byte = [] {
    std::vector<UnitEntry> u = size_kind().units;
    for (auto& e : u) e.factor = 1.0 / e.factor;
    return u;
  }();
  return per_byte;
}

/// A money value whose unit belongs to the other kind of price ("$5/GB" given as a price per
/// hour) says which it is, as every other quantity of another kind does (units.hpp).
void name_other_price_kind(std::string_view text, const std::vector<UnitEntry>& other, const char* other_what,
                           const char* expected_example, ParsedQuantity& out) {
  if (out.value || out.error.rfind("unknown unit", 0) != 0) return;
  const std::string_view s = trim(text);
  const std::size_t slash = s.rfind('/');
  if (slash == std::string_view::npos || find_unit(other, std::string(trim(s.substr(slash + 1)))) == nullptr) return;
  out.error = quoted(text) + " is " + other_what + " (expected a price such as \"" + expected_example + "\")";
}

}  // namespace

ParsedQuantity parse_price_per_hour(std::string_view text) {
  ParsedQuantity out = parse_money(text, per_hour_units(), "price", "$32.77/h", "h");
  name_other_price_kind(text, per_byte_units(), "a price per byte (an egress price), not per unit of time", "$32.77/h",
                        out);
  // A bound far above any node's or budget's price (a cloud GPU node rents for tens of dollars
  // an hour), so that sums over clusters of up to kMaxClusterGpus GPUs stay finite: "$1e308/h"
  // summed to inf.
  constexpr double kMaxPricePerHour = 1e9;
  if (out.value && *out.value > kMaxPricePerHour) {
    out.error = "price " + quoted(text) + " is more than $1e9/h (expected a realistic price per hour)";
    out.value.reset();
  }
  return out;
}

ParsedQuantity parse_price_per_byte(std::string_view text) {
  ParsedQuantity out = parse_money(text, per_byte_units(), "egress price", "$0.05/GB", "GB");
  name_other_price_kind(text, per_hour_units(), "a price per unit of time, not per byte", "$0.05/GB", out);
  // A bound far above any cloud's egress (cents per GB), so that a link's bytes an hour times it
  // stay finite: "$1e300/B" made cost_per_hour inf (null in JSON) and ranked plans on it.
  constexpr double kMaxPricePerByte = 1000.0 / 1e9;  // $1000/GB
  if (out.value && *out.value > kMaxPricePerByte) {
    out.error = "egress price " + quoted(text) + " is more than $1000/GB (expected a realistic price per GB such as \"$0.05/GB\")";
    out.value.reset();
  }
  return out;
}

ParsedQuantity parse_rate_per_hour(std::string_view text) {
  ParsedQuantity out;
  const Split sp = split_number(text);
  if (!sp.error.empty()) {
    out.error = sp.error;
    return out;
  }
  if (!sp.has_number || sp.unit.empty() || sp.unit.front() != '/') {
    out.error = "malformed rate " + quoted(text) + " (expected events per time such as \"0.05/h\")";
    return out;
  }
  const std::string unit = std::string(trim(std::string_view(sp.unit).substr(1)));
  const UnitEntry* u = find_unit(per_hour_units(), unit);
  if (u == nullptr) {
    out.error = "unknown unit '/" + unit + "' in " + quoted(text) + " (e.g. \"" + format_number(sp.number) + "/" +
                closest_unit(per_hour_units(), unit, "h") + "\")";
    return out;
  }
  return in_range(text, to_si(sp.number, u->factor));
}

std::string format_bandwidth(double bytes_per_s) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  return format_scaled(bytes_per_s, kPrefixes, 7, 1e3, "B/s");
}

std::string format_size(double bytes) {
  static const char* const kPrefixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  return format_scaled(bytes, kPrefixes, 7, 1024.0, "B");
}

std::string format_percent(double fraction) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * fraction);
  return text;
}

std::string format_flops(double flop_per_s) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  return format_scaled(flop_per_s, kPrefixes, 7, 1e3, "FLOP/s");
}

std::string format_tokens_per_s(double tokens_per_s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, std::fabs(tokens_per_s) < 1 ? "%.3g" : "%.0f", tokens_per_s);
  return buf;
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::tm utc{};
  gmtime_r(&t, &utc);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::string format_time(double seconds) {
  if (!std::isfinite(seconds)) return format_number(seconds) + " s";
  const double a = std::fabs(seconds);
  char buf[64];
  auto fmt = [&](double x, const char* unit) {
    const double ax = std::fabs(x);
    const int decimals = ax >= 99.95 ? 0 : (ax >= 9.995 ? 1 : 2);
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, x, unit);
    return std::string(buf);
  };
  if (a == 0) return "0 s";
  if (a < 0.9995e-6) return fmt(seconds * 1e9, "ns");
  if (a < 0.9995e-3) return fmt(seconds * 1e6, "us");
  if (a < 0.9995) return fmt(seconds * 1e3, "ms");
  if (a < 120) return fmt(seconds, "s");
  if (a < 7200) return fmt(seconds / 60, "min");
  if (a < 3.6e9) return fmt(seconds / 3600, "h");
  // A million hours and more (a link of "1e-300B/s"): "%.0f" printed 300 digits, cut at the
  // buffer's end without the unit.
  std::snprintf(buf, sizeof buf, "%.3g h", seconds / 3600);
  return buf;
}

}  // namespace hetsim::models
