// SPDX-License-Identifier: Apache-2.0
// CLI11's parse errors reworded in the verbs' form (cli/parse_error_text.hpp), on the texts
// CLI11 2.1 prints.
#include "parse_error_text.hpp"

#include <gtest/gtest.h>

namespace hetsim::cli {
namespace {

const std::vector<std::string> kOptions = {"--cluster", "--workload", "--min-headroom", "--format"};

TEST(ParseErrorText, RangesNameTheValueAndTheBounds) {
  EXPECT_EQ(parse_error_text("--zero: Value 4 not in range 0 to 3", kOptions), "--zero: 4 is out of range (expected 0 to 3)");
  EXPECT_EQ(parse_error_text("--min-headroom: Value 91 not in range 0.000000 to 90.000000", kOptions),
            "--min-headroom: 91 is out of range (expected 0 to 90)");
}

TEST(ParseErrorText, RepeatsChoicesAndMissingValues) {
  EXPECT_EQ(parse_error_text("--format: At Most 1 required but received 2", kOptions),
            "--format: given 2 times (expected once)");
  EXPECT_EQ(parse_error_text("--format: xml not in {table,json}", kOptions),
            "--format: unknown value 'xml' (expected one of: table, json)");
  EXPECT_EQ(parse_error_text("--cluster: 1 required TEXT missing", kOptions),
            "--cluster: no value given (expected a TEXT after it)");
  EXPECT_EQ(parse_error_text("--cluster is required", kOptions), "--cluster: missing (it is required)");
}

TEST(ParseErrorText, UnknownOptionsGetASuggestion) {
  EXPECT_EQ(parse_error_text("The following argument was not expected: --clustr", kOptions),
            "unknown argument '--clustr' (did you mean '--cluster'? expected one of the verb's options)");
  EXPECT_EQ(parse_error_text("The following arguments were not expected: x --bogus", kOptions),
            "unknown arguments 'x', '--bogus' (expected one of the verb's options)");
  // `predict ... -- --cluster c.yaml`: the verb's own option after a '--' (it said "did you mean
  // '--cluster'?", s56 bad-input hunt).
  EXPECT_EQ(parse_error_text("The following arguments were not expected: c.yaml --cluster", kOptions),
            "unknown arguments 'c.yaml', '--cluster' ('--cluster' is one of them, but a '--' before it ends the "
            "options; expected one of the verb's options)");
}

TEST(ParseErrorText, OtherMessagesAreKept) {
  EXPECT_EQ(parse_error_text("--tp: expected a positive integer, got 'abc'", kOptions),
            "--tp: expected a positive integer, got 'abc'");
}

}  // namespace
}  // namespace hetsim::cli
