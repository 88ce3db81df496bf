// SPDX-License-Identifier: Apache-2.0
// A strict YAML reading layer (yaml_document.cpp: file -> one document; yaml_reader.cpp:
// typed getters): parses a file safely, reads typed values with units,
// and reports every problem as a Diagnostic (unknown keys with did-you-mean, missing keys,
// wrong types, bare numbers, enum values) instead of throwing at the first one.
#pragma once
#include <yaml-cpp/yaml.h>

#include <climits>
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "diagnostics.hpp"
#include "text_match.hpp"
#include "units.hpp"

namespace hetsim::models {

/// Collects the diagnostics of one input file and remembers where each field was written,
/// so that checks done later (e.g. plan cross-checks) can point to the right line:col.
class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::string file) : file_(std::move(file)) {}
  /// Records an error at a yaml-cpp mark (0-based; printed 1-based; a null mark prints no position).
  void error(const YAML::Mark& at, const std::string& field, const std::string& message);
  bool empty() const { return diagnostics_.empty(); }
  size_t count() const { return diagnostics_.size(); }
  const std::vector<Diagnostic>& get_diagnostics() const { return diagnostics_; }
  /// Throws ConfigError with every diagnostic, ordered by position, when there is any.
  void throw_if_any() const;

  /// Remembers that `field` was written at `at`.
  void remember(const std::string& field, const YAML::Mark& at);
  /// The mark of `field`, or of its longest remembered prefix ("a.b[2].c" -> "a.b[2]" -> "a.b" -> "a").
  YAML::Mark locate(const std::string& field) const;

 private:
  std::string file_;
  std::vector<Diagnostic> diagnostics_;
  std::map<std::string, YAML::Mark> marks_;
};

/// Largest input file accepted (inputs are hand-written configuration, not data).
inline constexpr size_t kMaxInputBytes = 16u << 20;

/// Reads a file into memory; records a diagnostic (cannot open, too large) and returns nullopt on failure.
std::optional<std::string> read_input_text(const std::string& path, DiagnosticSink& sink);

/// Parses one YAML document whose top level is a map. Rejects binary (NUL bytes), non-UTF-8
/// text, empty files, several documents and malformed YAML (tabs in indentation, unclosed
/// brackets, ...), recording a diagnostic with its position. Never throws.
/// `first_key`: what an empty file or a top level that is no map is told the file starts with
/// ("'kind:'"; a validation suite has no kind: "'suite:'").
std::optional<YAML::Node> parse_yaml_document(std::string_view text, DiagnosticSink& sink,
                                              const std::string& first_key = "'kind:'");

enum class Need { kRequired, kOptional };

/// Allowed values of an enumeration, in the order they are listed in error messages.
template <class E>
using EnumTable = std::vector<std::pair<std::string, E>>;

/// Line or column of a yaml-cpp mark (0-based, -1 unknown) as printed: 1-based, 0 unknown.
inline int one_based(int zero_based) { return zero_based >= 0 ? zero_based + 1 : 0; }

/// "a" + "b" -> "a.b", "" + "b" -> "b"; index_path("a", 2) -> "a[2]".
std::string field_path(const std::string& parent, std::string_view key);
std::string index_path(const std::string& parent, size_t index);

/// Mark to report for a value node: its own, or `fallback` when yaml-cpp has none (null values).
YAML::Mark value_mark(const YAML::Node& node, const YAML::Mark& fallback);

/// An untagged, unquoted scalar: the only form numbers and booleans may take. yaml-cpp gives
/// plain scalars the tag "?", quoted ones "!", and explicitly tagged ones (`!!str 8`) their tag.
bool is_plain(const YAML::Node& node);

// ---- typed scalar readers: record a diagnostic and return nullopt on error -------------
std::optional<std::string> read_string(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                                       DiagnosticSink& sink);
std::optional<long long> read_integer(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                                      DiagnosticSink& sink, long long min = LLONG_MIN, long long max = LLONG_MAX);
std::optional<double> read_number(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                                  DiagnosticSink& sink);
std::optional<bool> read_bool(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                              DiagnosticSink& sink);
/// A value with a unit ("300GB/s"); a bare number is an error naming the expected unit.
/// `expected` describes the value for wrong-type messages ("a bandwidth such as \"300GB/s\"").
std::optional<double> read_quantity(const YAML::Node& node, const std::string& field, const YAML::Mark& at,
                                    DiagnosticSink& sink, ParsedQuantity (*parse)(std::string_view),
                                    const char* expected);

/// Reads one map: typed getters declare which keys are known, finish() reports the others.
/// A reader over something that is not a map records one "expected a map" error and then
/// answers nullopt to every getter without further messages.
class MapReader {
 public:
  /// `anchor` is where "missing key" errors point (the map's own key in its parent).
  MapReader(const YAML::Node& node, std::string path, DiagnosticSink& sink, const YAML::Mark& anchor);
  MapReader(const MapReader&) = delete;
  MapReader& operator=(const MapReader&) = delete;
  MapReader(MapReader&&) = default;

  bool ok() const { return ok_; }
  const std::string& get_path() const { return path_; }
  const YAML::Mark& get_anchor() const { return anchor_; }
  DiagnosticSink& get_sink() const { return *sink_; }
  /// The dotted path of `key`; of the defaults' map for a key that came from add_defaults().
  std::string field(std::string_view key) const {
    const Item* item = find(key);
    return field_path(item != nullptr && !item->path.empty() ? item->path : path_, key);
  }

  /// Declares `key` as known; true when it is present (null values count as present).
  bool has(std::string_view key);
  /// The value node of `key` (declares it); nullopt and a "missing key" error when required and absent.
  std::optional<YAML::Node> get_node(std::string_view key, Need need, const char* expected = "a value");
  /// Mark of the key itself / of its value (the key's mark for null values). Null mark if absent.
  YAML::Mark key_mark(std::string_view key) const;
  YAML::Mark value_mark_of(std::string_view key) const;

  std::optional<std::string> get_string(std::string_view key, Need need);
  std::optional<int> get_int(std::string_view key, Need need, int min = INT_MIN, int max = INT_MAX);
  /// A plain number in [min, max]; `min_exclusive` makes the lower bound strict.
  std::optional<double> get_number(std::string_view key, Need need, double min, double max,
                                   bool min_exclusive = false);
  std::optional<bool> get_bool(std::string_view key, Need need);
  /// A value with a unit; `positive` rejects zero (negative values are always rejected). `max`
  /// (SI) bounds it where the unit parser's own range is far wider than the field's; `max_text`
  /// says that bound in the field's unit ("1ms").
  std::optional<double> get_quantity(std::string_view key, Need need, ParsedQuantity (*parse)(std::string_view),
                                     const char* expected, bool positive, double max = HUGE_VAL,
                                     const char* max_text = nullptr);
  template <class E>
  std::optional<E> get_enum(std::string_view key, Need need, const EnumTable<E>& allowed);
  /// A nested map (the caller reads it and calls finish() on it).
  std::optional<MapReader> get_map(std::string_view key, Need need);
  /// A list; each element is returned with its mark. `min_size` > 0 rejects shorter lists.
  std::optional<std::vector<YAML::Node>> get_list(std::string_view key, Need need, size_t min_size = 0);
  /// A map whose keys are user-chosen names (e.g. node_types): (name, key mark, value) in file order.
  struct Entry {
    std::string name;
    YAML::Mark key_mark;
    YAML::Node value;
  };
  std::optional<std::vector<Entry>> get_entries(std::string_view key, Need need, size_t min_size = 0);

  /// Adds the entries of `defaults` (a map) whose keys this map lacks: a suite's `defaults`
  /// under a row's own keys. The nodes are shared, not copied into a new document, so their
  /// marks stay and yaml-cpp's node memory is not merged (merging grows with the whole file).
  /// Errors about those entries name `defaults_path` ("defaults.model"), where they were written.
  void add_defaults(const YAML::Node& defaults, const std::string& defaults_path);

  /// Reports every key of the map that no getter asked for, with a did-you-mean.
  void finish();

 private:
  struct Item {
    std::string key;
    YAML::Mark key_mark;
    YAML::Node value;
    std::string path;  ///< the map it was written in, when not this one (add_defaults)
  };
  const Item* find(std::string_view key) const;
  void missing(std::string_view key, const std::string& expected);
  /// Common front of the typed getters: declares the key, reports it missing when required.
  const Item* lookup(std::string_view key, Need need, const std::string& expected);
  std::string enum_error(const std::string& text, const std::vector<std::string>& names) const;

  YAML::Node node_;
  std::string path_;
  DiagnosticSink* sink_;
  YAML::Mark anchor_;
  bool ok_ = false;
  bool finished_ = false;
  std::vector<Item> items_;
  std::unordered_map<std::string, std::size_t> index_;  // items_ by key (a map may hold thousands)
  std::vector<std::string> known_;  // keys declared by getters, in call order
};

/// Description of a node's type for "expected X, got Y" messages ("a list", "the string \"x\"").
std::string describe_node(const YAML::Node& node);

template <class E>
std::optional<E> MapReader::get_enum(std::string_view key, Need need, const EnumTable<E>& allowed) {
  std::vector<std::string> names;
  for (const auto& [name, value] : allowed) names.push_back(name);
  const Item* item = lookup(key, need, "one of: " + join_names(names));
  if (item == nullptr) return std::nullopt;
  const YAML::Mark at = value_mark(item->value, item->key_mark);
  const auto text = read_string(item->value, field(key), at, *sink_);
  if (!text) return std::nullopt;
  for (const auto& [name, value] : allowed)
    if (name == *text) return value;
  sink_->error(at, field(key), enum_error(*text, names));
  return std::nullopt;
}

}  // namespace hetsim::models
