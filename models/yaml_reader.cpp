// SPDX-License-Identifier: Apache-2.0
// Strict YAML reading: typed getters, unknown/missing key reporting.
#include "yaml_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

namespace hetsim::models {

bool is_plain(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "?"; }

namespace {

std::string integer_expectation(long long min, long long max) {
  const bool has_min = min > INT_MIN && min > LLONG_MIN;
  const bool has_max = max < INT_MAX && max < LLONG_MAX;
  if (has_min && has_max) return "an integer between " + std::to_string(min) + " and " + std::to_string(max);
  if (has_min) return "an integer >= " + std::to_string(min);
  if (has_max) return "an integer <= " + std::to_string(max);
  return "an integer";
}

std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

// ---- small helpers ----------------------------------------------------------------------

std::string field_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string index_path(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

YAML::Mark value_mark(const YAML::Node& node, const YAML::Mark& fallback) {
  if (!node.IsDefined() || node.IsNull()) return fallback;
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? m : fallback;
}

std::string describe_node(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  std::string text = node.Scalar();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  if (is_plain(node)) return "'" + text + "'";
  if (node.Tag() == "!") return "the string \"" + text + "\"";
  return "'" + text + "' tagged " + node.Tag();
}

// ---- typed scalar readers ---------------------------------------------------------------

std::optional<std::string> read_string(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                                       DiagnosticSink& sink) {
  if (!node.IsScalar()) {
    sink.error(at, field, "expected a string, got " + describe_node(node));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<long long> read_integer(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                                      DiagnosticSink& sink, long long min, long long max) {
  const std::string expected = integer_expectation(min, max);
  if (!is_plain(node)) {
    sink.error(at, field, "expected " + expected + ", got " + describe_node(node));
    return std::nullopt;
  }
  const std::string& text = node.Scalar();
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  long long v = 0;
  const auto res = std::from_chars(begin, end, v);
  if (res.ec == std::errc::result_out_of_range) {
    sink.error(at, field, "value " + text + " out of range (expected " + expected + ")");
    return std::nullopt;
  }
  if (res.ec != std::errc() || res.ptr != end) {
    sink.error(at, field, "expected " + expected + ", got " + describe_node(node));
    return std::nullopt;
  }
  if (v < min || v > max) {
    sink.error(at, field, "value " + text + " out of range (expected " + expected + ")");
    return std::nullopt;
  }
  return v;
}

std::optional<double> read_number(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                                  DiagnosticSink& sink) {
  if (!is_plain(node)) {
    sink.error(at, field, "expected a number, got " + describe_node(node));
    return std::nullopt;
  }
  const std::string& text = node.Scalar();
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  double v = 0;
  const auto res = std::from_chars(begin, end, v);
  if (res.ec != std::errc() || res.ptr != end || !std::isfinite(v)) {
    sink.error(at, field, "expected a number, got " + describe_node(node));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> read_bool(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                              DiagnosticSink& sink) {
  if (is_plain(node)) {
    const std::string& t = node.Scalar();
    if (t == "true" || t == "True" || t == "TRUE") return true;
    if (t == "false" || t == "False" || t == "FALSE") return false;
  }
  sink.error(at, field, "expected true or false, got " + describe_node(node));
  return std::nullopt;
}

namespace {

/// The quoted example of an `expected` text ('a bandwidth such as "200Gbps"'): its position and
/// length inside the quotes, or npos.
std::pair<size_t, size_t> quoted_example(std::string_view expected) {
  const size_t open = expected.find("such as \"");
  if (open == std::string_view::npos) return {std::string_view::npos, 0};
  const size_t from = open + 9;
  const size_t close = expected.find('"', from);
  if (close == std::string_view::npos) return {std::string_view::npos, 0};
  return {from, close - from};
}

/// The unit of an example ("200Gbps" -> "Gbps", "2e-06s" -> "s").
std::string unit_of(std::string_view example) {
  const std::string text(example);
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return std::string(end);
}

/// A number written without its unit: the unit parser suggests one by its own example (GB/s for
/// every bandwidth), which for a NIC's "100" meant 100 GB/s, 8x the 100 Gb/s port. The field's
/// own example unit ("200Gbps") is suggested instead, unless it puts the value more than 1000x
/// from the example's and the parser's unit does better ("0.000002" for a latency: seconds).
std::string missing_unit_message(std::string_view text, const std::string& parser_error, std::string_view expected,
                                 ParsedQuantity (*parse)(std::string_view)) {
  const auto [at, length] = quoted_example(expected);
  const auto [hint_at, hint_length] = quoted_example(parser_error);
  if (at == std::string_view::npos || hint_at == std::string_view::npos) return parser_error;
  const std::string_view example = expected.substr(at, length);
  const ParsedQuantity example_value = parse(example);
  std::string number(text);
  number.erase(0, number.find_first_not_of(" \t"));
  number.erase(number.find_last_not_of(" \t") + 1);
  if (!example_value.ok() || !(*example_value.value > 0)) return parser_error;
  const auto distance = [&](const std::string& unit) {
    const ParsedQuantity v = parse(number + unit);
    return v.ok() && *v.value > 0 ? std::fabs(std::log(*v.value / *example_value.value)) : HUGE_VAL;
  };
  const std::string field_unit = unit_of(example);
  const std::string parser_unit = unit_of(std::string_view(parser_error).substr(hint_at, hint_length));
  const double field_distance = distance(field_unit), parser_distance = distance(parser_unit);
  if (!std::isfinite(std::min(field_distance, parser_distance))) return parser_error;
  const bool field_near = field_distance <= std::log(1000.0);
  const std::string best = field_near || field_distance <= parser_distance ? field_unit : parser_unit;
  std::string message = "missing unit in \"" + number + "\" (expected " + std::string(expected);
  message.replace(message.size() - (expected.size() - at), length, number + best);
  return message + ")";
}

}  // namespace

std::optional<double> read_quantity(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                                    DiagnosticSink& sink, ParsedQuantity (*parse)(std::string_view),
                                    const char* expected) {
  if (!node.IsScalar()) {
    sink.error(at, field, std::string("expected ") + expected + ", got " + describe_node(node));
    return std::nullopt;
  }
  const ParsedQuantity q = parse(node.Scalar());
  if (!q.ok()) {
    const bool missing_unit = q.error.rfind("missing unit in ", 0) == 0;
    sink.error(at, field, missing_unit ? missing_unit_message(node.Scalar(), q.error, expected, parse) : q.error);
    return std::nullopt;
  }
  return q.value;
}

// ---- MapReader --------------------------------------------------------------------------

MapReader::MapReader(const YAML::Node& node, std::string path, DiagnosticSink& sink, const YAML::Mark& anchor)
    : node_(node), path_(std::move(path)), sink_(&sink), anchor_(anchor) {
  if (!node.IsMap()) {
    sink.error(value_mark(node, anchor), path_, "expected a map, got " + describe_node(node));
    return;
  }
  ok_ = true;
  if (anchor_.line < 0) anchor_ = node.Mark();
  sink.remember(path_, anchor_);
  const auto before_map = [&](const YAML::Mark& m) {
    const YAML::Mark start = node.Mark();
    return m.line < start.line || (m.line == start.line && m.column < start.column);
  };
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: `it->` yields a temporary proxy
    // Where the key is written: a null key (`~: 5`) has no mark, and an alias (`*n : 5`) carries
    // its anchor's, elsewhere in the file; the value beside it is on the key's line.
    const YAML::Mark value_at = value_mark(it->second, anchor_);
    YAML::Mark key_at = value_mark(k, value_at);
    if (before_map(key_at) && !before_map(value_at)) key_at = value_at;
    if (!k.IsScalar()) {
      sink.error(key_at, path_, "keys must be plain names, got " + describe_node(k));
      continue;
    }
    if (const Item* dup = find(k.Scalar())) {
      sink.error(key_at, path_,
                 "duplicate key '" + k.Scalar() + "' (first given at line " + std::to_string(one_based(dup->key_mark.line)) + ")");
      continue;
    }
    index_.emplace(k.Scalar(), items_.size());
    items_.push_back(Item{k.Scalar(), key_at, it->second, {}});
  }
}

void MapReader::add_defaults(const YAML::Node& defaults, const std::string& defaults_path) {
  if (!ok_ || !defaults.IsMap()) return;
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    const YAML::Node k = it->first;
    if (!k.IsScalar() || find(k.Scalar()) != nullptr) continue;
    index_.emplace(k.Scalar(), items_.size());
    items_.push_back(Item{k.Scalar(), k.Mark(), it->second, defaults_path});
  }
}

const MapReader::Item* MapReader::find(std::string_view key) const {
  const auto it = index_.find(std::string(key));
  return it == index_.end() ? nullptr : &items_[it->second];
}

void MapReader::missing(std::string_view key, const std::string& expected) {
  // A key given in another case or with '-' for '_' ("Kind:") is named: on its own, "missing
  // key 'kind'" sent the user looking for a key they had written. (Not any near key: "gpus" is
  // a key of its own beside "gpu".)
  const auto folded = [](std::string_view k) {
    std::string out(k);
    for (char& c : out) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  std::string hint;
  for (const auto& i : items_)
    if (i.key != key && folded(i.key) == folded(key)) {
      hint = "'" + i.key + "'" + (i.key_mark.line >= 0 ? " at line " + std::to_string(one_based(i.key_mark.line)) : "") +
             " is not '" + std::string(key) + "': keys are spelt exactly; ";
      break;
    }
  sink_->error(anchor_, path_, "missing key '" + std::string(key) + "' (" + hint + "expected " + expected + ")");
}

const MapReader::Item* MapReader::lookup(std::string_view key, Need need, const std::string& expected) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  if (!ok_) return nullptr;
  const Item* item = find(key);
  if (item == nullptr) {
    if (need == Need::kRequired) missing(key, expected);
    return nullptr;
  }
  sink_->remember(field(key), value_mark(item->value, item->key_mark));
  return item;
}

bool MapReader::has(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  return ok_ && find(key) != nullptr;
}

std::optional<YAML::Node> MapReader::get_node(std::string_view key, Need need, const char* expected) {
  const Item* item = lookup(key, need, expected);
  if (item == nullptr) return std::nullopt;
  return item->value;
}

YAML::Mark MapReader::key_mark(std::string_view key) const {
  const Item* item = find(key);
  return item ? item->key_mark : YAML::Mark::null_mark();
}

YAML::Mark MapReader::value_mark_of(std::string_view key) const {
  const Item* item = find(key);
  return item ? value_mark(item->value, item->key_mark) : YAML::Mark::null_mark();
}

std::optional<std::string> MapReader::get_string(std::string_view key, Need need) {
  const Item* item = lookup(key, need, "a string");
  if (item == nullptr) return std::nullopt;
  const YAML::Mark at = value_mark(item->value, item->key_mark);
  auto s = read_string(item->value, field(key), at, *sink_);
  if (s && s->empty()) {
    sink_->error(at, field(key), "empty string (expected a non-empty value)");
    return std::nullopt;
  }
  if (s) {
    // Control characters would garble the tables and messages that print the text; a name
    // is one line (a `source:` citation may span several).
    // C1 controls (U+0080-U+009F: NEL, CSI, which a terminal obeys) are control characters too,
    // and U+2028/U+2029 break a line as '\n' does (s52 bad-input hunt); the text is UTF-8.
    const bool is_name = key == "name" || key == "suite" || key == "id";  // suites name themselves and rows
    for (std::size_t i = 0; i < s->size(); ++i) {
      const auto u = static_cast<unsigned char>((*s)[i]);
      const auto next = [&](std::size_t k) { return i + k < s->size() ? static_cast<unsigned char>((*s)[i + k]) : 0u; };
      unsigned code = u < 0x80 ? u : 0x100u;  // a byte of a multi-byte character: printable unless below
      if (u == 0xC2 && next(1) >= 0x80 && next(1) <= 0x9F) code = next(1);  // C1, two bytes
      if (u == 0xE2 && next(1) == 0x80 && (next(2) == 0xA8 || next(2) == 0xA9)) code = 0x2000 + next(2) - 0x80;
      const bool line_break = code == '\n' || code == 0x2028 || code == 0x2029;
      const bool control = (code < 0x20 && code != '\n' && code != '\t') || (code >= 0x7f && code <= 0x9f);
      if (control || (line_break && is_name)) {
        char text[8];
        std::snprintf(text, sizeof text, "%04X", code);
        sink_->error(at, field(key), std::string(line_break && code != '\n' ? "line separator U+" : "control character U+") +
                                         text +
                                         (is_name ? " in a name (expected one line of printable text)"
                                                  : " in the text (expected printable text)"));
        return std::nullopt;
      }
    }
  }
  return s;
}

std::optional<int> MapReader::get_int(std::string_view key, Need need, int min, int max) {
  const Item* item = lookup(key, need, integer_expectation(min, max));
  if (item == nullptr) return std::nullopt;
  const auto v = read_integer(item->value, field(key), value_mark(item->value, item->key_mark), *sink_, min, max);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<double> MapReader::get_number(std::string_view key, Need need, double min, double max,
                                            bool min_exclusive) {
  const std::string expected = "a number " + std::string(min_exclusive ? "> " : ">= ") + number_text(min) +
                               (std::isfinite(max) ? " and <= " + number_text(max) : std::string());
  const Item* item = lookup(key, need, expected);
  if (item == nullptr) return std::nullopt;
  const YAML::Mark at = value_mark(item->value, item->key_mark);
  const auto v = read_number(item->value, field(key), at, *sink_);
  if (!v) return std::nullopt;
  if (*v < min || (min_exclusive && *v == min) || *v > max) {
    sink_->error(at, field(key), "value " + item->value.Scalar() + " out of range (expected " + expected + ")");
    return std::nullopt;
  }
  return *v == 0 ? 0.0 : *v;  // -0 is 0 (it printed "dropout -0")
}

std::optional<bool> MapReader::get_bool(std::string_view key, Need need) {
  const Item* item = lookup(key, need, "true or false");
  if (item == nullptr) return std::nullopt;
  return read_bool(item->value, field(key), value_mark(item->value, item->key_mark), *sink_);
}

std::optional<double> MapReader::get_quantity(std::string_view key, Need need,
                                              ParsedQuantity (*parse)(std::string_view), const char* expected,
                                              bool positive, double max, const char* max_text) {
  const Item* item = lookup(key, need, expected);
  if (item == nullptr) return std::nullopt;
  const YAML::Mark at = value_mark(item->value, item->key_mark);
  // A negative value where only > 0 will do: said so at once (the unit parser's own message,
  // "expected a value >= 0", sent the user to a 0 that is refused too).
  const std::string text = item->value.IsScalar() ? item->value.Scalar() : std::string();
  const size_t first = text.find_first_not_of(" \t");
  if (positive && first != std::string::npos && text[first] == '-') {
    sink_->error(at, field(key), "\"" + text + "\" must be > 0 (expected " + expected + ")");
    return std::nullopt;
  }
  const auto v = read_quantity(item->value, field(key), at, *sink_, parse, expected);
  if (!v) return std::nullopt;
  if (positive && *v <= 0) {
    sink_->error(at, field(key), "\"" + text + "\" must be > 0 (expected " + expected + ")");
    return std::nullopt;
  }
  if (*v > max) {
    sink_->error(at, field(key), "value out of range in \"" + text + "\" (expected " + expected + ", at most " +
                                     (max_text != nullptr ? std::string(max_text) : number_text(max)) + ")");
    return std::nullopt;
  }
  return v;
}

std::optional<MapReader> MapReader::get_map(std::string_view key, Need need) {
  const Item* item = lookup(key, need, "a map");
  if (item == nullptr) return std::nullopt;
  return std::optional<MapReader>(std::in_place, item->value, field(key), *sink_, item->key_mark);
}

std::optional<std::vector<YAML::Node>> MapReader::get_list(std::string_view key, Need need, size_t min_size) {
  const std::string expected = min_size == 0   ? std::string("a list")
                               : min_size == 1 ? std::string("a non-empty list")
                                               : "a list of at least " + std::to_string(min_size) + " entries";
  const Item* item = lookup(key, need, expected);
  if (item == nullptr) return std::nullopt;
  const YAML::Mark at = value_mark(item->value, item->key_mark);
  if (!item->value.IsSequence()) {
    sink_->error(at, field(key), "expected " + expected + ", got " + describe_node(item->value));
    return std::nullopt;
  }
  if (item->value.size() < min_size) {
    sink_->error(at, field(key), "list has " + std::to_string(item->value.size()) + " entries (expected " + expected + ")");
    return std::nullopt;
  }
  std::vector<YAML::Node> out;
  for (const auto& n : item->value) out.push_back(n);
  return out;
}

std::optional<std::vector<MapReader::Entry>> MapReader::get_entries(std::string_view key, Need need,
                                                                    size_t min_size) {
  const std::string expected = min_size == 0   ? std::string("a map of named entries")
                               : min_size == 1 ? std::string("a non-empty map of named entries")
                                               : "a map of at least " + std::to_string(min_size) + " named entries";
  const Item* item = lookup(key, need, expected);
  if (item == nullptr) return std::nullopt;
  const YAML::Mark at = value_mark(item->value, item->key_mark);
  if (!item->value.IsMap()) {
    sink_->error(at, field(key), "expected " + expected + ", got " + describe_node(item->value));
    return std::nullopt;
  }
  std::vector<Entry> out;
  for (auto it = item->value.begin(); it != item->value.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: `it->` yields a temporary proxy
    if (!k.IsScalar() || k.Scalar().empty()) {
      sink_->error(value_mark(k, at), field(key), "entry names must be plain names, got " + describe_node(k));
      continue;
    }
    const auto dup = std::find_if(out.begin(), out.end(), [&](const Entry& e) { return e.name == k.Scalar(); });
    if (dup != out.end()) {
      sink_->error(k.Mark(), field(key),
                   "duplicate key '" + k.Scalar() + "' (first given at line " + std::to_string(one_based(dup->key_mark.line)) + ")");
      continue;
    }
    out.push_back(Entry{k.Scalar(), k.Mark(), it->second});
  }
  if (out.size() < min_size) {
    sink_->error(at, field(key), "no entries (expected " + expected + ")");
    return std::nullopt;
  }
  return out;
}

std::string MapReader::enum_error(const std::string& text, const std::vector<std::string>& names) const {
  std::string msg = "unknown value '" + text + "' (";
  if (const auto guess = did_you_mean(text, names)) msg += "did you mean '" + *guess + "'? ";
  return msg + "expected one of: " + join_names(names) + ")";
}

void MapReader::finish() {
  if (finished_ || !ok_) return;
  finished_ = true;
  for (const auto& item : items_) {
    if (std::find(known_.begin(), known_.end(), item.key) != known_.end()) continue;
    std::string msg = "unknown key '" + item.key + "' (";
    if (item.key == "<<") {
      // yaml-cpp reads YAML 1.1's merge key as a plain key; say so rather than list the keys.
      msg += "YAML merge keys are not supported: expected the keys written out; an alias such as "
             "'intra: *fast' may stand for a whole value)";
    } else if (const auto guess = did_you_mean(item.key, known_)) {
      msg += "did you mean '" + *guess + "'?)";
    } else {
      msg += "expected one of: " + join_names(known_) + ")";
    }
    sink_->error(item.key_mark, item.path.empty() ? path_ : item.path, msg);
  }
}

}  // namespace hetsim::models
