// SPDX-License-Identifier: Apache-2.0
// The checks of the verbs' option values, run by CLI11 before a verb starts its work: numbers,
// durations and prices with their units, comma-separated lists, empty values.
#pragma once
#include <cmath>
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace hetsim::cli {

// CLI11's PositiveNumber/NonNegativeNumber let "nan" through (every comparison with NaN is
// false), accept "-1" for unsigned options (strtoull wraps it) and word their errors as a range
// up to 1.8e308 written out in full. These say what was expected and reject non-finite values.

/// A finite number > 0 (`positive`) or >= 0 (with `integer`, a whole number), at most `max`:
/// an integer beyond its option's type was CLI11's "Could not convert: --tp = 99999999999999999999".
/// Give these to `->transform()`, not `->check()`: they pass the text on without leading zeros,
/// which CLI11 would read as octal (`--dp 010` ran dp 8).
CLI::Validator number_check(bool positive, bool integer, double max = HUGE_VAL);
/// A whole number in [min, max], read exactly (up to 2^64 - 1: seeds).
CLI::Validator integer_check(unsigned long long min, unsigned long long max);
/// For `int` options (degrees, sizes, counts).
inline CLI::Validator positive_integer() { return number_check(true, true, 2147483647.0); }
inline CLI::Validator non_negative_integer() { return number_check(false, true, 2147483647.0); }
inline CLI::Validator positive_number() { return number_check(true, false); }
inline CLI::Validator non_negative_number() { return number_check(false, false); }
/// A non-negative duration: seconds as a bare number ("90") or with a unit as everywhere in the
/// inputs ("90s", "1.5min", "500ms"; models::parse_time). The option reads the seconds.
CLI::Validator duration_check();
/// A positive price per hour: dollars as a bare number ("120") or as the inputs write prices
/// ("$120/h", "$2880/day"; models::parse_price_per_hour). The option reads dollars per hour.
CLI::Validator price_per_hour_check();

/// A non-negative percentage at most `max`: "10" or "10%" (both ten percent; the option reads
/// 10). A fraction such as "0.1" is 0.1 percent, as the help says; the `%` form makes it plain.
CLI::Validator percent_check(double max);

/// A positive relative error: a fraction ("0.25") or a percentage ("25%"); the option reads the
/// fraction. A bare number above 1 is refused with the percentage it would be ("25" is 2500%,
/// most likely meant as "25%"); write "2500%" for such a tolerance.
CLI::Validator fraction_check();

/// A comma-separated list option (`--tp-degrees 1,2,4`), each item checked by `item_check`; it
/// replaces the defaults `into` holds. CLI11's own delimiter dropped empty items ("1,,2" read as
/// 1,2, "1," as 1), and a lone "," read no item and took the next argument as the list.
CLI::Option* add_list_option(CLI::App* verb, const std::string& name, std::vector<std::string>& into,
                             const std::string& help, const CLI::Validator& item_check);
CLI::Option* add_list_option(CLI::App* verb, const std::string& name, std::vector<int>& into, const std::string& help,
                             const CLI::Validator& item_check);

/// Gives every option of `app`'s verbs that takes a value (positional ones too) a check that the
/// value is not empty: `--profile ""` (a script's unset variable) ran without the profile, exit 0,
/// and `--cluster ""` fell back to the plan header's cluster. Call once every verb is added; an
/// option's own checks run first (an output path's "empty path", a number's "got ''").
void reject_empty_values(CLI::App& app);
/// What an option given an empty value is told (reject_empty_values, and `--opt=` in main.cpp).
inline constexpr const char* kEmptyValueText = "empty value (expected a value; an unset shell variable gives an empty one)";

}  // namespace hetsim::cli
