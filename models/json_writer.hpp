// SPDX-License-Identifier: Apache-2.0
// A small streaming JSON writer (RFC 8259) for the library's reports: keys in the order they
// are written, strings escaped, non-finite numbers written as null.
#pragma once
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "utf8.hpp"

namespace hetsim::models {

/// Escapes a string for a JSON string literal (quotes, backslash, control characters as \uXXXX).
/// JSON text is UTF-8 (RFC 8259 section 8.1): a byte that is not part of a well-formed sequence (a
/// file name in another encoding) becomes U+FFFD, as a decoder would show it, so the document
/// stays readable by every JSON parser.
inline std::string json_escape_string(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_bytes(s, i);
      if (n == 0) {
        out += "\\ufffd";
      } else {
        out.append(s.substr(i, n));
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

class JsonOut {
 public:
  /// indent < 0: compact; otherwise pretty-printed with that many spaces per level.
  explicit JsonOut(int indent = 2) : indent_(indent) {}

  JsonOut& begin_object() { return open('{'); }
  JsonOut& end_object() { return close('}'); }
  JsonOut& begin_array() { return open('['); }
  JsonOut& end_array() { return close(']'); }
  JsonOut& key(std::string_view k) {
    separator();
    out_ += '"';
    out_ += json_escape_string(k);
    out_ += indent_ >= 0 ? "\": " : "\":";
    after_key_ = true;
    return *this;
  }
  JsonOut& value(std::string_view s) {
    separator();
    out_ += '"';
    out_ += json_escape_string(s);
    out_ += '"';
    return *this;
  }
  JsonOut& value(const char* s) { return value(std::string_view(s)); }
  JsonOut& value(const std::string& s) { return value(std::string_view(s)); }
  JsonOut& value(double v) {
    separator();
    if (!std::isfinite(v)) {
      out_ += "null";
      return *this;
    }
    // Shortest text that reads back to the same double (exact integers without an exponent).
    // From 1e16, past the integers a double holds exactly (2^53), an exponent: a 22-digit
    // integer literal overflows the 64-bit integers that typed JSON readers parse it into.
    char buf[32];
    const auto res = std::fabs(v) >= 1e16 ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific)
                                          : std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, res.ptr);
    return *this;
  }
  JsonOut& value(int v) { return value(static_cast<long long>(v)); }
  JsonOut& value(long long v) {
    separator();
    out_ += std::to_string(v);
    return *this;
  }
  JsonOut& value(bool v) {
    separator();
    out_ += v ? "true" : "false";
    return *this;
  }
  JsonOut& null() {
    separator();
    out_ += "null";
    return *this;
  }
  /// The document text (with a trailing newline when pretty).
  std::string str() const { return indent_ >= 0 ? out_ + "\n" : out_; }

 private:
  JsonOut& open(char c) {
    separator();
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonOut& close(char c) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ += c;
    return *this;
  }
  void newline() {
    if (indent_ < 0) return;
    out_ += '\n';
    out_.append(first_.size() * indent_, ' ');
  }
  void separator() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    newline();
  }

  int indent_;
  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace hetsim::models
