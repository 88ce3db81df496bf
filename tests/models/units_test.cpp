// SPDX-License-Identifier: Apache-2.0
// Unit parsing and formatting (models/units.hpp): SI values, prefixes, bits vs bytes, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "units.hpp"

namespace hetsim::models {
namespace {

using ::testing::HasSubstr;

double ok(const ParsedQuantity& q) {
  EXPECT_TRUE(q.ok()) << q.error;
  return q.value.value_or(-1);
}

TEST(Units, BandwidthBytesAndBits) {
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("300GB/s")), 300e9);
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("3.35TB/s")), 3.35e12);
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("16GiB/s")), 16.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("200Gbps")), 25e9);  // 200 Gbit/s = 25 GB/s
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("25Gb/s")), 3.125e9);
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("800MB/s")), 800e6);
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("1.25 GB/s")), 1.25e9);  // a space is allowed
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("100KB/s")), 100e3);
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("100kB/s")), 100e3);
}

TEST(Units, Time) {
  EXPECT_DOUBLE_EQ(ok(parse_time("100ns")), 100e-9);
  EXPECT_DOUBLE_EQ(ok(parse_time("5us")), 5e-6);
  EXPECT_DOUBLE_EQ(ok(parse_time("5\xC2\xB5s")), 5e-6);
  EXPECT_DOUBLE_EQ(ok(parse_time("2.5ms")), 2.5e-3);
  EXPECT_DOUBLE_EQ(ok(parse_time("1s")), 1.0);
  EXPECT_DOUBLE_EQ(ok(parse_time("2min")), 120.0);
  EXPECT_DOUBLE_EQ(ok(parse_time("1h")), 3600.0);
  EXPECT_DOUBLE_EQ(ok(parse_time("1e-3s")), 1e-3);
  // Exactly the literal, not within 4 ulps: written inputs must read back to the same double.
  EXPECT_EQ(ok(parse_time("5us")), 5e-6);
  EXPECT_EQ(ok(parse_time("30ms")), 30e-3);
  EXPECT_EQ(ok(parse_time("100ns")), 100e-9);
}

TEST(Units, SizeDecimalAndBinary) {
  EXPECT_DOUBLE_EQ(ok(parse_size("64B")), 64);
  EXPECT_DOUBLE_EQ(ok(parse_size("16KiB")), 16384);
  EXPECT_DOUBLE_EQ(ok(parse_size("512MB")), 512e6);
  EXPECT_DOUBLE_EQ(ok(parse_size("80GiB")), 80.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(ok(parse_size("1.5TB")), 1.5e12);
}

TEST(Units, FlopRatesAndWork) {
  EXPECT_DOUBLE_EQ(ok(parse_flops("19.5TFLOP/s")), 19.5e12);
  EXPECT_DOUBLE_EQ(ok(parse_flops("989TFLOP/s")), 989e12);
  EXPECT_DOUBLE_EQ(ok(parse_flops("1.3PFLOP/s")), 1.3e15);
  EXPECT_DOUBLE_EQ(ok(parse_flops("900GFLOPS")), 900e9);
  EXPECT_DOUBLE_EQ(ok(parse_flop("1GFLOP")), 1e9);
  EXPECT_DOUBLE_EQ(ok(parse_flop("2.5TFLOP")), 2.5e12);
}

TEST(Units, Money) {
  EXPECT_DOUBLE_EQ(ok(parse_price_per_hour("$32.77/h")), 32.77);
  EXPECT_DOUBLE_EQ(ok(parse_price_per_hour("$0.5/hour")), 0.5);
  EXPECT_DOUBLE_EQ(ok(parse_price_per_hour("$12/day")), 0.5);
  EXPECT_DOUBLE_EQ(ok(parse_price_per_hour("$0/h")), 0.0);
  EXPECT_DOUBLE_EQ(ok(parse_price_per_byte("$0.05/GB")), 0.05 / 1e9);
  EXPECT_DOUBLE_EQ(ok(parse_price_per_byte("$0.02/GiB")), 0.02 / (1ull << 30));
  EXPECT_DOUBLE_EQ(ok(parse_rate_per_hour("0.05/h")), 0.05);
  EXPECT_DOUBLE_EQ(ok(parse_rate_per_hour("1/day")), 1.0 / 24);
  // A price of the other kind is named as such, as other quantities of another kind are.
  EXPECT_EQ(parse_price_per_hour("$5/GB").error,
            "\"$5/GB\" is a price per byte (an egress price), not per unit of time (expected a price such as \"$32.77/h\")");
  EXPECT_EQ(parse_price_per_byte("$0.02/h").error,
            "\"$0.02/h\" is a price per unit of time, not per byte (expected a price such as \"$0.05/GB\")");
  EXPECT_THAT(parse_price_per_hour("$3/xyz").error, HasSubstr("unknown unit '/xyz'"));
}

TEST(Units, BareNumberNeedsAUnit) {
  const auto q = parse_bandwidth("300");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error, "missing unit in \"300\" (expected a bandwidth such as \"300GB/s\")");
  EXPECT_THAT(parse_time("5").error, HasSubstr("\"5us\""));
  EXPECT_THAT(parse_price_per_hour("32.77").error, HasSubstr("\"$32.77/h\""));
  // A number written in SI is read as such: "5e-6" for a latency suggested "5e-06us", 1e6 times less.
  EXPECT_EQ(parse_time("5e-6").error, "missing unit in \"5e-6\" (expected a time such as \"5e-06s\")");
  EXPECT_THAT(parse_bandwidth("2.5e10").error, HasSubstr("\"2.5e+10B/s\""));
}

// A unit spelt in words is answered with its symbol ("Gbyte/s" was told "Gbit/s", 8x less).
TEST(Units, AUnitInWordsIsAnsweredWithItsSymbol) {
  EXPECT_EQ(parse_bandwidth("300Gbyte/s").error,
            "unknown unit 'Gbyte/s' in \"300Gbyte/s\" (units are written as symbols: \"300GB/s\")");
  EXPECT_THAT(parse_bandwidth("100Gbits/s").error, HasSubstr("\"100Gb/s\""));
  EXPECT_THAT(parse_size("80Gbytes").error, HasSubstr("\"80GB\""));
}

TEST(Units, UnknownUnitSuggestsTheClosest) {
  EXPECT_EQ(parse_bandwidth("3.35TBs").error, "unknown unit 'TBs' in \"3.35TBs\" (e.g. \"3.35TB/s\")");
  EXPECT_THAT(parse_price_per_hour("$3/hours").error, HasSubstr("\"$3/hour\""));
}

// The closest unit by letters changed the value by large factors (s63 message hunt): "/H" was
// told "/s" (3600x), "/wk" "/s", "5m" "5ms", "80G" of memory "80B", "200Gbps/port" "200GB/s" (8x).
TEST(Units, UnknownUnitSuggestionsKeepTheMeaning) {
  EXPECT_THAT(parse_price_per_hour("$40.97/H").error, HasSubstr("(e.g. \"$40.97/h\")"));
  EXPECT_THAT(parse_price_per_hour("$40.97/wk").error, HasSubstr("(e.g. \"$40.97/week\")"));
  EXPECT_THAT(parse_price_per_hour("$40.97/mo").error, HasSubstr("(e.g. \"$40.97/month\")"));
  EXPECT_THAT(parse_price_per_hour("$40.97/m").error, HasSubstr("(e.g. \"$40.97/min\")"));
  EXPECT_THAT(parse_time("5m").error, HasSubstr("(e.g. \"5min\")"));
  EXPECT_THAT(parse_time("5minutes").error, HasSubstr("(e.g. \"5min\")"));
  EXPECT_THAT(parse_size("80G").error, HasSubstr("(e.g. \"80GiB\")"));
  EXPECT_THAT(parse_bandwidth("200Gbps/port").error, HasSubstr("(e.g. \"200Gbps\")"));
}

// The closest unit misled: "5us" for a bandwidth suggested "5B/s", "300gb/s" suggested "300b/s"
// (bits: 8e9 times less than meant), "1,000GB/s" and "0x10GB/s" suggested "1GB/s" and "0GB/s".
TEST(Units, UnknownUnitSaysWhatWasProbablyMeant) {
  EXPECT_EQ(parse_bandwidth("5us").error, "'us' in \"5us\" is a unit of a time (expected a bandwidth such as \"300GB/s\")");
  EXPECT_EQ(parse_flops("312TB/s").error,
            "'TB/s' in \"312TB/s\" is a unit of a bandwidth (expected a FLOP rate such as \"312TFLOP/s\")");
  EXPECT_EQ(parse_bandwidth("300gb/s").error, "unknown unit 'gb/s' in \"300gb/s\" (case matters: \"300GB/s\" or \"300Gb/s\")");
  for (const char* bad : {"1,000GB/s", "1_000GB/s", "0x10GB/s"})
    EXPECT_EQ(parse_bandwidth(bad).error, std::string("malformed number in \"") + bad +
                                              "\" (expected a plain decimal number and a unit, such as \"300GB/s\")");
}

TEST(Units, RejectsNegativeMalformedAndNonFinite) {
  EXPECT_THAT(parse_time("-5us").error, HasSubstr("negative"));
  EXPECT_THAT(parse_price_per_hour("-$3/h").error, HasSubstr("negative"));
  EXPECT_FALSE(parse_size("").ok());
  EXPECT_FALSE(parse_size("GB").ok());
  EXPECT_FALSE(parse_size("1.2.3GB").ok());
  EXPECT_FALSE(parse_size("1e999GB").ok());
  EXPECT_FALSE(parse_size("nanGB").ok());
  EXPECT_FALSE(parse_size("infGB").ok());
  EXPECT_FALSE(parse_bandwidth("0x10GB/s").ok());
  EXPECT_FALSE(parse_price_per_byte("$0.05").ok());
  // An egress price past $1000/GB made a plan's cost per hour inf (null in JSON).
  EXPECT_THAT(parse_price_per_byte("$1e300/B").error, HasSubstr("is more than $1000/GB"));
  EXPECT_THAT(parse_price_per_byte("$2000/GB").error, HasSubstr("is more than $1000/GB"));
  EXPECT_DOUBLE_EQ(ok(parse_price_per_byte("$1000/GB")), 1e-6);
}

// A number that is finite as written but not once scaled to SI ("1e308GB/s" = inf B/s) passed,
// and the simulator aborted on the inf link; a subnormal ("1e-320s") has an infinite inverse.
TEST(Units, RejectsValuesOutOfRangeOnceInSiUnits) {
  const std::string expected = " (expected a value between 1e-300 and 1e300 in SI units, or 0)";
  // Bandwidths and times name their own bounds (BandwidthsAndTimesLieWithinPhysicalBounds).
  EXPECT_EQ(parse_bandwidth("1e308GB/s").error,
            "value out of range in \"1e308GB/s\" (expected a bandwidth between 1B/s and 1e18B/s)");
  EXPECT_EQ(parse_time("1e308h").error, "value out of range in \"1e308h\" (expected a time between 1ps and 1e12s)");
  EXPECT_EQ(parse_time("1e-320s").error, "value out of range in \"1e-320s\" (expected a time between 1ps and 1e12s)");
  EXPECT_EQ(parse_size("1e400GB").error, "value out of range in \"1e400GB\" (expected a size between 1B and 1e18B)");
  EXPECT_EQ(parse_flops("1e-400TFLOP/s").error,
            "value out of range in \"1e-400TFLOP/s\" (expected a rate between 1FLOP/s and 1e21FLOP/s)");
  EXPECT_EQ(parse_price_per_hour("$1e305/s").error.rfind("number out of range", 0), 0u);
  EXPECT_DOUBLE_EQ(ok(parse_time("0s")), 0);
}

// Inside the SI range but not in a real machine: a link of "1e-300B/s" made predict print a step
// of inf s with exit 0, and the simulator deadlock; "1e290GB/s" printed as 63 digits.
TEST(Units, BandwidthsAndTimesLieWithinPhysicalBounds) {
  EXPECT_EQ(parse_bandwidth("1e-300B/s").error,
            "value out of range in \"1e-300B/s\" (expected a bandwidth between 1B/s and 1e18B/s)");
  EXPECT_EQ(parse_bandwidth("1e290GB/s").error,
            "value out of range in \"1e290GB/s\" (expected a bandwidth between 1B/s and 1e18B/s)");
  EXPECT_EQ(parse_time("1e300s").error, "value out of range in \"1e300s\" (expected a time between 1ps and 1e12s)");
  EXPECT_EQ(parse_time("1e-13s").error, "value out of range in \"1e-13s\" (expected a time between 1ps and 1e12s)");
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("1B/s")), 1);
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("1e9GB/s")), 1e18);
  EXPECT_DOUBLE_EQ(ok(parse_bandwidth("0GB/s")), 0);  // callers that need > 0 say so
  EXPECT_DOUBLE_EQ(ok(parse_time("1ps")), 1e-12);
}

// A peak of "1e-300FLOP/s" (catalog or profile) made every step infinite with exit 0 and the
// simulator deadlock; a memory of "1e300B" printed as 63 digits (s25 audit).
TEST(Units, FlopRatesAndSizesLieWithinPhysicalBounds) {
  EXPECT_EQ(parse_flops("1e-300FLOP/s").error,
            "value out of range in \"1e-300FLOP/s\" (expected a rate between 1FLOP/s and 1e21FLOP/s)");
  EXPECT_EQ(parse_flops("1e10PFLOP/s").error,
            "value out of range in \"1e10PFLOP/s\" (expected a rate between 1FLOP/s and 1e21FLOP/s)");
  EXPECT_EQ(parse_size("1e300B").error, "value out of range in \"1e300B\" (expected a size between 1B and 1e18B)");
  EXPECT_EQ(parse_size("0.5B").error, "value out of range in \"0.5B\" (expected a size between 1B and 1e18B)");
  EXPECT_DOUBLE_EQ(ok(parse_flops("989.5TFLOP/s")), 989.5e12);
  EXPECT_DOUBLE_EQ(ok(parse_size("80GiB")), 80.0 * (1ull << 30));
  // A GEMM's half-efficiency work (gemm_half_work) of "1e300FLOP" put every GEMM at ~0
  // efficiency: "iteration time inf s", feasible, exit 0 (adversarial pass, 2026-12-05).
  EXPECT_EQ(parse_flop("1e300FLOP").error,
            "value out of range in \"1e300FLOP\" (expected 0, or an amount of work between 1FLOP and 1e18FLOP)");
  EXPECT_DOUBLE_EQ(ok(parse_flop("0FLOP")), 0);  // no saturation
  EXPECT_DOUBLE_EQ(ok(parse_flop("1EFLOP")), 1e18);
  EXPECT_EQ(parse_price_per_hour("$-1/h").error, "negative value \"$-1/h\" (expected a value >= 0)");  // was "malformed"
  // Minus zero is zero, as "-0us" is 0 s ("$-0/h" was refused as negative; s56 bad-input hunt).
  EXPECT_DOUBLE_EQ(ok(parse_price_per_hour("$-0/h")), 0.0);
  EXPECT_EQ(parse_price_per_hour("$-0.001/h").error, "negative value \"$-0.001/h\" (expected a value >= 0)");
}

// "2usec" was told "did you mean 2sec" (a million times longer); ".infGB/s" had no expectation.
TEST(Units, SpeltOutTimeUnitsAndMalformedNumbersSayWhatWasMeant) {
  EXPECT_DOUBLE_EQ(ok(parse_time("2usec")), 2e-6);
  EXPECT_DOUBLE_EQ(ok(parse_time("3msec")), 3e-3);
  EXPECT_DOUBLE_EQ(ok(parse_time("4nsec")), 4e-9);
  EXPECT_EQ(parse_bandwidth("3.0.0GB/s").error,
            "malformed number in \"3.0.0GB/s\" (expected a plain decimal number before the unit)");
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_flops(312e12), "312 TFLOP/s");
  EXPECT_EQ(format_flops(0.004), "0.004 FLOP/s");         // "0.00 FLOP/s" (s66 fuzz)
  EXPECT_EQ(format_flops(7.056e33), "7.06e+15 EFLOP/s");  // past the largest prefix
  EXPECT_EQ(format_tokens_per_s(29750.46), "29750");
  EXPECT_EQ(format_tokens_per_s(0.000861), "0.000861");  // "%.0f" printed 0 (s66 fuzz)
  EXPECT_EQ(format_tokens_per_s(0), "0");
  EXPECT_EQ(format_flops(19.5e12), "19.5 TFLOP/s");
  EXPECT_EQ(format_size(80.0 * (1ull << 30)), "80.0 GiB");
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_time(2.53e-3), "2.53 ms");
  EXPECT_EQ(format_time(5e-6), "5.00 us");
  EXPECT_EQ(format_time(0), "0 s");
  EXPECT_EQ(format_time(8.23e305), "2.29e+302 h");  // was 63 digits cut off without the unit
  EXPECT_EQ(format_time(3.6e9 - 1), "1000000 h");
  EXPECT_EQ(format_bandwidth(300e9), "300 GB/s");
  EXPECT_EQ(format_bandwidth(25e9), "25.0 GB/s");
}

TEST(Units, FormatThenParseRoundTrips) {
  for (double bps : {1.0, 999.0, 12.5e9, 3.35e12}) {
    EXPECT_NEAR(ok(parse_bandwidth(format_bandwidth(bps))), bps, bps * 0.005);
  }
  for (double s : {1e-9, 5e-6, 2.53e-3, 1.0, 90.0, 7200.0, 4e11}) {
    EXPECT_NEAR(ok(parse_time(format_time(s))), s, s * 0.005);
  }
}

}  // namespace
}  // namespace hetsim::models
