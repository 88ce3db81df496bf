// SPDX-License-Identifier: Apache-2.0
// Suite rows -> cluster.yaml, workload.yaml, plan.yaml (readable by describe/predict/simulate).
#include "suite_emit.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>

#include <unistd.h>

#include "atomic_file.hpp"
#include "input_writers.hpp"
#include "plan_writer.hpp"

namespace hetsim::models {

namespace {

/// A suite or row id as one safe path component ('/' and leading dots replaced).
std::string path_component(std::string s) {
  for (char& ch : s)
    if (ch == '/' || ch == '\\' || static_cast<unsigned char>(ch) < 0x20) ch = '_';
  if (s.empty() || s == "." || s == "..") s = "_" + s;
  return s;
}

/// Longest file name of Linux file systems (NAME_MAX of ext4, xfs, btrfs).
constexpr std::size_t kMaxFolderNameBytes = 255;

constexpr const char* kEmittedFiles[] = {"cluster.yaml", "workload.yaml", "plan.yaml"};

}  // namespace

std::vector<std::string> check_emit_targets(const std::vector<Suite>& suites, const std::string& dir,
                                            DiagnosticCollector& errors, const std::vector<std::string>& other_inputs) {
  namespace fs = std::filesystem;
  std::vector<std::string> problems;
  // The files read: one of them where an emitted file goes was replaced by it, exit 0.
  std::vector<std::string> inputs = other_inputs;
  for (const Suite& suite : suites) inputs.push_back(suite.file);
  std::map<std::string, const Suite*> suite_of_folder;
  const auto too_long = [&](const std::string& file, int line, const std::string& field, const std::string& name) {
    if (path_component(name).size() <= kMaxFolderNameBytes) return false;
    errors.add({file, line, 1, field,
                "'" + name.substr(0, 40) + "...' is " + std::to_string(name.size()) +
                    " bytes, too long for the folder --emit-dir names after it (expected at most " +
                    std::to_string(kMaxFolderNameBytes) + ")"});
    return true;
  };
  for (const Suite& suite : suites) {
    const std::string suite_folder = path_component(suite.name);
    if (too_long(suite.file, 1, "suite", suite.name)) continue;
    const auto [other, fresh] = suite_of_folder.emplace(suite_folder, &suite);
    if (!fresh && other->second->name != suite.name)  // the same name is load_suite_files()'s error
      errors.add({suite.file, suite.name_at.first, suite.name_at.second, "suite",
                  "suite '" + suite.name + "' and suite '" + other->second->name + "' of " + other->second->file +
                      " would share the --emit-dir folder '" + suite_folder +
                      "' (expected names that differ in more than '/' and control characters)"});
    std::map<std::string, const SuiteRow*> row_of_folder;
    for (const SuiteRow& row : suite.rows) {
      if (too_long(suite.file, row.line, "id", row.id)) continue;
      const std::string row_folder = path_component(row.id);
      const auto [first, new_row] = row_of_folder.emplace(row_folder, &row);
      const auto id_at = row.field_at.find("id");
      const auto [id_line, id_col] = id_at != row.field_at.end() ? id_at->second : std::pair{row.line, 1};
      if (!new_row)
        errors.add({suite.file, id_line, id_col, "rows[" + std::to_string(&row - suite.rows.data()) + "].id",
                    "row '" + row.id + "' and row '" + first->second->id + "' (line " + std::to_string(first->second->line) +
                        ") would share the --emit-dir folder '" + row_folder +
                        "' (expected ids that differ in more than '/' and control characters)"});
      // A file where a folder goes, or a folder where a file goes: found now, not after every row.
      const fs::path folder = fs::path(dir) / suite_folder / row_folder;
      std::error_code ec;
      for (const fs::path& p : {folder.parent_path(), folder})
        if (fs::exists(p, ec) && !fs::is_directory(p, ec)) problems.push_back(p.string() + " is a file (expected a folder, or nothing)");
      for (const char* name : kEmittedFiles) {
        const fs::path file = folder / name;
        if (fs::is_directory(file, ec)) problems.push_back(file.string() + " is a folder (expected a file, or nothing)");
        if (!fs::exists(file, ec)) continue;
        for (const std::string& input : inputs)
          if (!input.empty() && fs::equivalent(file, input, ec))
            problems.push_back(file.string() + " is the input file " + input +
                               " (expected a folder where no input lies: it would be overwritten)");
      }
    }
  }
  std::sort(problems.begin(), problems.end());
  problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
  return problems;
}

namespace {

/// Puts the finished `staging` folder's files in place: one rename of the folder where the row
/// is new (the row appears whole or not at all); else file by file over the row's own files (each
/// whole), so that whatever else a user keeps in the row's folder stays, and an emitted file this
/// run does not write (a plan for a row that now has none) goes.
void move_into_place(const std::filesystem::path& staging, const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(folder, ec)) {
    fs::rename(staging, folder, ec);
    if (ec) throw std::runtime_error("cannot rename " + staging.string() + " to " + folder.string() + ": " + ec.message());
    return;
  }
  for (const char* name : kEmittedFiles) {
    if (fs::exists(staging / name, ec)) {
      fs::rename(staging / name, folder / name, ec);
      if (ec) throw std::runtime_error("cannot write " + (folder / name).string() + ": " + ec.message());
    } else {
      fs::remove(folder / name, ec);
    }
  }
  fs::remove_all(staging, ec);
}

}  // namespace

int emit_suite_inputs(const Suite& suite, const SuiteResult& result, const Catalog& catalog, const std::string& dir,
                      const std::string& profile_path) {
  namespace fs = std::filesystem;
  int written = 0;
  // A run killed while a row was staged (any signal: the staging folder is not a temporary file
  // the signal handler knows) left a hidden .<row>.tmp.<pid> folder here.
  const fs::path suite_folder = fs::path(dir) / path_component(suite.name);
  std::error_code scan;
  for (fs::directory_iterator it(suite_folder, scan), end; !scan && it != end; it.increment(scan)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] != '.') continue;
    if (left_by_a_dead_process(name, ".tmp.")) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
  for (std::size_t i = 0; i < suite.rows.size(); ++i) {
    const SuiteRow& row = suite.rows[i];
    const fs::path folder = fs::path(dir) / path_component(suite.name) / path_component(row.id);
    // A row's files are written into a hidden staging folder beside it and moved into place once
    // all are written: an interrupted run left a row folder of cluster.yaml and workload.yaml
    // without its plan.yaml (s63 CLI hunt, SIGINT during `validate --emit-dir`).
    const fs::path staging =
        folder.parent_path() / ("." + folder.filename().string() + ".tmp." + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(staging, ec);
    fs::create_directories(staging, ec);
    if (ec) throw std::runtime_error("cannot create " + staging.string() + ": " + ec.message());
    const Workload workload = suite_workload(suite, row);
    const Cluster cluster = suite_cluster(row.system, suite_row_gpus(row), catalog);
    const std::string origin = suite.file + ": suite " + suite.name + ", row " + row.id;
    write_text_file_atomic((staging / "cluster.yaml").string(), cluster_to_yaml(cluster, origin));
    write_text_file_atomic((staging / "workload.yaml").string(), workload_to_yaml(workload, origin));
    int micro = row.micro.value_or(0);
    if (i < result.rows.size() && result.rows[i].id == row.id && result.rows[i].micro > 0) micro = result.rows[i].micro;
    if (micro > 0) {
      auto plan = suite_plan(row, cluster, workload, micro);
      if (Plan* p = std::get_if<Plan>(&plan)) {
        PlanWriteOptions o;
        o.cluster_path = "cluster.yaml";
        o.workload_path = "workload.yaml";
        char measured[64];
        std::snprintf(measured, sizeof measured, "%.9g", row.measured);
        o.comment = origin + "\nmeasured " + suite.metric + ": " + measured;
        if (!profile_path.empty())
          o.comment += "\npredicted by validate with --profile " + profile_path +
                       ": give predict and simulate the same --profile for the same figure";
        write_plan_file((staging / "plan.yaml").string(), *p, cluster, o);
      }
    }
    move_into_place(staging, folder);
    ++written;
  }
  return written;
}

}  // namespace hetsim::models
