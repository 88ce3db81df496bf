// SPDX-License-Identifier: Apache-2.0
// Internals shared by the input loaders: opening a document and checking its `kind:`.
// Not part of the public API (include input_loader.hpp instead).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "input_loader.hpp"
#include "yaml_reader.hpp"

namespace hetsim::models::detail {

/// Enumeration tables shared by loaders (the spellings of docs/inputs.md).
const EnumTable<InputKind>& input_kind_table();
const EnumTable<Dtype>& dtype_table();
const EnumTable<ShardedCollectives>& sharded_collectives_table();
const EnumTable<Recompute>& recompute_table();
const EnumTable<Activation>& activation_table();

/// The `model:` keys of a workload file and of a suite row, with the same bounds and the same
/// cross-key checks (hidden / heads / kv_heads). `with_dropout`: workloads have `dropout`, the
/// suite format does not. `where(key)` prefixes a cross-key error (a suite names the row when the
/// key came from its `defaults`); none by default.
void read_model_spec(MapReader& m, ModelSpec& spec, bool with_dropout,
                     const std::function<std::string(const char*)>& where = {});

/// Parses `text` and checks that its `kind:` is `expected`. Returns the root reader, or
/// nullopt after recording why (the caller then throws via sink.throw_if_any()).
std::optional<MapReader> open_document(std::string_view text, DiagnosticSink& sink, InputKind expected);

/// Applies an optional parsed value to a field: keeps the default when absent or invalid.
template <class T, class U>
void set_if(T& field, const std::optional<U>& v) {
  if (v) field = static_cast<T>(*v);
}

/// Reads a file's text for a loader; throws ConfigError when it cannot be read.
std::string read_file_or_throw(const std::string& path);

}  // namespace hetsim::models::detail
