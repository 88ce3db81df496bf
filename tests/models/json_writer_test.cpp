// SPDX-License-Identifier: Apache-2.0
// json_writer.hpp's string escaping: what every --format json output goes through.
#include <gtest/gtest.h>

#include <string>

#include "json_writer.hpp"

namespace hetsim::models {
namespace {

TEST(JsonEscape, QuotesBackslashAndControlCharacters) {
  EXPECT_EQ(json_escape_string("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
}

TEST(JsonEscape, WellFormedUtf8StaysAsIs) {
  const std::string text = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";  // é, €, an emoji
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_EQ(json_escape_string(text), text);
}

// A path in Latin-1 (`describe --format json lat\xe9.yaml`) made JSON that parsers refuse (s63
// CLI hunt): each byte outside a well-formed sequence becomes U+FFFD.
TEST(JsonEscape, BytesThatAreNotUtf8BecomeTheReplacementCharacter) {
  EXPECT_FALSE(is_valid_utf8("lat\xe9.yaml"));
  EXPECT_EQ(json_escape_string("lat\xe9.yaml"), "lat\\ufffd.yaml");
  EXPECT_EQ(json_escape_string("\xC0\xAF"), "\\ufffd\\ufffd");          // an overlong '/'
  EXPECT_EQ(json_escape_string("\xED\xA0\x80"), "\\ufffd\\ufffd\\ufffd");  // a surrogate
  EXPECT_EQ(json_escape_string("\xE2\x82"), "\\ufffd\\ufffd");          // cut short at the end
  EXPECT_EQ(json_escape_string("\xF4\x90\x80\x80"), "\\ufffd\\ufffd\\ufffd\\ufffd");  // above U+10FFFF
}

}  // namespace
}  // namespace hetsim::models
