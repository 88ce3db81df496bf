// SPDX-License-Identifier: Apache-2.0
// Append-only JSON-lines files: the checkpoints that let long jobs (calibration, sweeps) resume
// where a killed run stopped. Each record is one line appended whole and flushed; a line that a
// kill cut short has no closing '}' and is skipped when the file is read back.
#pragma once
#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

namespace hetsim::models {

/// Appends `json_object` (one line, no newline inside) and a newline to `path`, and flushes.
/// Throws std::runtime_error naming the path when it cannot be written.
void append_json_line(const std::string& path, const std::string& json_object);

/// What makes `path` no checkpoint to resume from and append to ("" when it is one, or is
/// missing or empty): a checkpoint starts with a JSON object. A CSV, a YAML input or a profile
/// named as the checkpoint (swapped --out and --checkpoint) would otherwise get records
/// appended to it while nothing in it is resumed.
std::string json_lines_problem(const std::string& path);

/// One non-empty line of a JSON-lines file: its number (from 1) and its record, which is null
/// when the line is no complete JSON object (a write cut short by a kill, or damage): test
/// record.IsMap(), not the node itself (a null node converts to true).
struct JsonLine {
  int line = 0;
  YAML::Node record;
};

/// Calls `visit` with every non-empty line of `path`, parsed (JSON is YAML 1.2), one line at a
/// time: a reader that keeps what it needs of each record holds one parsed line, not the file's
/// (a parsed record takes some 20 KB: 64,000 sweep rows took 1.5 GB as a vector of them).
/// A missing file gives none.
void for_each_json_line(const std::string& path, const std::function<void(const JsonLine&)>& visit);

/// Every non-empty line of `path`, parsed (JSON is YAML 1.2). A missing file gives none.
std::vector<JsonLine> read_json_lines_numbered(const std::string& path);

}  // namespace hetsim::models
