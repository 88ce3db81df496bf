// SPDX-License-Identifier: Apache-2.0
// Unit parsing at the input edge: every value is converted once to SI base units.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hetsim::models {

/// Result of parsing a value with a unit: the SI value, or an error text that says
/// what was wrong and what was expected (e.g. `unknown unit 'TBs' in "3.35TBs" (e.g. "3.35TB/s")`).
struct ParsedQuantity {
  std::optional<double> value;
  std::string error;
  bool ok() const { return value.has_value(); }
};

/// "300GB/s", "2.4TB/s", "16GiB/s", "200Gbps", "25Gb/s", "1.25MB/s" -> bytes per second.
ParsedQuantity parse_bandwidth(std::string_view text);
/// "5us", "2.5ms", "30ms", "1s", "1.5min", "2h", "100ns" -> seconds.
/// number x factor as the parsers compute it: exact for "5us" (divides by 1e6 where the factor is
/// a negative power of ten). Writers use it to check that a printed value reads back unchanged.
double to_si(double number, double factor);
ParsedQuantity parse_time(std::string_view text);
/// "80GiB", "40GB", "512MiB", "1.5TB", "64B", "16KiB" -> bytes.
ParsedQuantity parse_size(std::string_view text);
/// "312TFLOP/s", "19.5TFLOPS", "1.2PFLOP/s", "900GFLOP/s" -> FLOP per second.
ParsedQuantity parse_flops(std::string_view text);
/// "1GFLOP", "3.5TFLOP" -> FLOP (a work amount).
ParsedQuantity parse_flop(std::string_view text);
/// "$32.77/h", "$0.5/hour", "$12/day" -> dollars per hour (the unit prices are quoted in).
ParsedQuantity parse_price_per_hour(std::string_view text);
/// "$0.05/GB", "$0.09/GiB" -> dollars per byte.
ParsedQuantity parse_price_per_byte(std::string_view text);
/// "0.05/h", "1.2/day" -> events per hour (spot preemption rate).
ParsedQuantity parse_rate_per_hour(std::string_view text);

/// Human-readable formatting for reports ("312 TFLOP/s", "80.0 GiB", "2.53 ms").
std::string format_bandwidth(double bytes_per_s);
std::string format_time(double seconds);
/// The current time as "2026-11-30T07:49:42Z" (profiles and calibration samples say when they
/// were made).
std::string utc_now();
std::string format_size(double bytes);
std::string format_flops(double flop_per_s);
/// A fraction as a percentage with one decimal ("12.3%").
std::string format_percent(double fraction);
/// Tokens per second in the tables: whole tokens ("29750"), three significant figures below one
/// ("0.000861": "%.0f" printed 0 beside a baseline of 0.000861 and ratios of 1e5).
std::string format_tokens_per_s(double tokens_per_s);

}  // namespace hetsim::models
