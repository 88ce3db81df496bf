// SPDX-License-Identifier: Apache-2.0
// Strict YAML reading: safe parsing, typed getters, unknown/missing key reporting.
#include "yaml_reader.hpp"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <tuple>

namespace hetsim::models {
namespace {

int one_based(int zero_based) { return zero_based >= 0 ? zero_based + 1 : 0; }

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

YAML::Mark make_mark(int line0, int col0) {
  YAML::Mark m;
  m.line = line0;
  m.column = col0;
  return m;
}

bool is_plain(const YAML::Node& node) { return node.IsScalar() && node.Tag() != "!"; }

/// Position (0-based line/col) of byte `offset` in `text`.
std::pair<int, int> position_of(std::string_view text, size_t offset) {
  int line = 0, col = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 0;
    } else {
      ++col;
    }
  }
  return {line, col};
}

/// Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629), or npos.
size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    unsigned min_cp = 0;
    unsigned cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min_cp = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min_cp = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min_cp = 0x10000;
    } else {
      return i;
    }
    if (i + len > s.size()) return i;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

/// First tab in the indentation of a line (0-based line/col), up to and including `max_line`.
std::optional<std::pair<int, int>> first_indent_tab(std::string_view text, int max_line) {
  int line = 0;
  size_t start = 0;
  while (start <= text.size() && line <= max_line) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    for (size_t i = start; i < end; ++i) {
      if (text[i] == '\t') return std::make_pair(line, static_cast<int>(i - start));
      if (text[i] != ' ' && text[i] != '-') break;  // indentation is spaces (and "- " of list items)
    }
    start = end + 1;
    ++line;
  }
  return std::nullopt;
}

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

// ---- DiagnosticSink ---------------------------------------------------------------------

void DiagnosticSink::error(const YAML::Mark& at, const std::string& field, const std::string& message) {
  Diagnostic d;
  d.file = file_;
  d.line = one_based(at.line);
  d.col = d.line > 0 ? one_based(at.column) : 0;
  d.field = field;
  d.message = message;
  diagnostics_.push_back(std::move(d));
}

void DiagnosticSink::throw_if_any() const {
  if (diagnostics_.empty()) return;
  std::vector<Diagnostic> sorted = diagnostics_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.col) < std::tie(b.line, b.col);
  });
  throw ConfigError(std::move(sorted));
}

void DiagnosticSink::remember(const std::string& field, const YAML::Mark& at) {
  if (at.line >= 0) marks_.emplace(field, at);
}

YAML::Mark DiagnosticSink::locate(const std::string& field) const {
  std::string f = field;
  while (!f.empty()) {
    const auto it = marks_.find(f);
    if (it != marks_.end()) return it->second;
    const size_t cut = f.find_last_of(".[");
    if (cut == std::string::npos) break;
    f.resize(cut);
  }
  return YAML::Mark::null_mark();
}

// ---- reading and parsing ----------------------------------------------------------------

std::optional<std::string> read_input_text(const std::string& path, DiagnosticSink& sink) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    sink.error(YAML::Mark::null_mark(), "", "cannot open file (expected a readable YAML file)");
    return std::nullopt;
  }
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes) {
      sink.error(YAML::Mark::null_mark(), "",
                 "file larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB (expected a hand-written YAML input)");
      return std::nullopt;
    }
  }
  if (in.bad()) {
    sink.error(YAML::Mark::null_mark(), "", "read error (expected a readable YAML file)");
    return std::nullopt;
  }
  return text;
}

std::optional<YAML::Node> parse_yaml_document(std::string_view text, DiagnosticSink& sink) {
  if (text.size() > kMaxInputBytes) {
    sink.error(YAML::Mark::null_mark(), "", "input larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB");
    return std::nullopt;
  }
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const auto [line, col] = position_of(text, nul);
    sink.error(make_mark(line, col), "", "binary data: NUL byte (expected a YAML text file)");
    return std::nullopt;
  }
  if (const size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    const auto [line, col] = position_of(text, bad);
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[bad]));
    sink.error(make_mark(line, col), "", std::string("invalid UTF-8 byte ") + hex + " (expected a UTF-8 YAML text file)");
    return std::nullopt;
  }
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    sink.error(e.mark, "", "nesting too deep (expected a configuration map of a few levels)");
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    // A tab in indentation is the most common cause and yaml-cpp's message does not say so.
    if (const auto tab = first_indent_tab(text, e.mark.line >= 0 ? e.mark.line : INT_MAX)) {
      sink.error(make_mark(tab->first, tab->second), "",
                 "tab character in indentation (YAML indents with spaces only)");
    } else {
      sink.error(e.mark, "", "invalid YAML: " + e.msg);
    }
    return std::nullopt;
  } catch (const std::exception& e) {
    sink.error(YAML::Mark::null_mark(), "", std::string("invalid YAML: ") + e.what());
    return std::nullopt;
  }
  if (docs.empty() || (docs.size() == 1 && docs[0].IsNull())) {
    sink.error(YAML::Mark::null_mark(), "", "empty file (expected a YAML map starting with 'kind:')");
    return std::nullopt;
  }
  if (docs.size() > 1) {
    sink.error(docs[1].Mark(), "",
               "several YAML documents in one file (expected one; put each input in its own file)");
    return std::nullopt;
  }
  if (!docs[0].IsMap()) {
    sink.error(docs[0].Mark(), "", "top level is " + describe_node(docs[0]) + " (expected a map starting with 'kind:')");
    return std::nullopt;
  }
  return docs[0];
}

// ---- small helpers ----------------------------------------------------------------------

std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = static_cast<size_t>(-1);
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    // A prefix relation ("gpu" vs "gpus_per_node") is a likely typo even when far in edits.
    const bool prefix = std::min(word.size(), c.size()) >= 3 &&
                        (c.compare(0, word.size(), word) == 0 || word.compare(0, c.size(), c) == 0);
    if (d > limit && !prefix) continue;
    if (prefix) d = std::min(d, limit);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

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
  return is_plain(node) ? "'" + text + "'" : "the string \"" + text + "\"";
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

std::optional<double> read_quantity(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                                    DiagnosticSink& sink, ParsedQuantity (*parse)(std::string_view),
                                    const char* expected) {
  if (!node.IsScalar()) {
    sink.error(at, field, std::string("expected ") + expected + ", got " + describe_node(node));
    return std::nullopt;
  }
  const ParsedQuantity q = parse(node.Scalar());
  if (!q.ok()) {
    sink.error(at, field, q.error);
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
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node& k = it->first;
    if (!k.IsScalar()) {
      sink.error(value_mark(k, anchor_), path_, "keys must be plain names, got " + describe_node(k));
      continue;
    }
    const auto dup = std::find_if(items_.begin(), items_.end(), [&](const Item& i) { return i.key == k.Scalar(); });
    if (dup != items_.end()) {
      sink.error(k.Mark(), path_,
                 "duplicate key '" + k.Scalar() + "' (first given at line " + std::to_string(one_based(dup->key_mark.line)) + ")");
      continue;
    }
    items_.push_back(Item{k.Scalar(), k.Mark(), it->second});
  }
}

const MapReader::Item* MapReader::find(std::string_view key) const {
  for (const auto& i : items_)
    if (i.key == key) return &i;
  return nullptr;
}

void MapReader::missing(std::string_view key, const std::string& expected) {
  sink_->error(anchor_, path_, "missing key '" + std::string(key) + "' (expected " + expected + ")");
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
    sink_->error(at, field(key), "empty string (expected a non-empty name)");
    return std::nullopt;
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
  return v;
}

std::optional<bool> MapReader::get_bool(std::string_view key, Need need) {
  const Item* item = lookup(key, need, "true or false");
  if (item == nullptr) return std::nullopt;
  return read_bool(item->value, field(key), value_mark(item->value, item->key_mark), *sink_);
}

std::optional<double> MapReader::get_quantity(std::string_view key, Need need,
                                              ParsedQuantity (*parse)(std::string_view), const char* expected,
                                              bool positive) {
  const Item* item = lookup(key, need, expected);
  if (item == nullptr) return std::nullopt;
  const YAML::Mark at = value_mark(item->value, item->key_mark);
  const auto v = read_quantity(item->value, field(key), at, *sink_, parse, expected);
  if (!v) return std::nullopt;
  if (positive && *v <= 0) {
    sink_->error(at, field(key), "\"" + item->value.Scalar() + "\" must be > 0 (expected " + expected + ")");
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
    const YAML::Node& k = it->first;
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
    if (const auto guess = did_you_mean(item.key, known_)) {
      msg += "did you mean '" + *guess + "'?)";
    } else {
      msg += "expected one of: " + join_names(known_) + ")";
    }
    sink_->error(item.key_mark, path_, msg);
  }
}

}  // namespace hetsim::models
