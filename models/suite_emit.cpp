// SPDX-License-Identifier: Apache-2.0
// Suite rows -> cluster.yaml, workload.yaml, plan.yaml (readable by describe/predict/simulate).
#include "suite_emit.hpp"

#include <cstdio>
#include <filesystem>
#include <system_error>

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

}  // namespace

int emit_suite_inputs(const Suite& suite, const SuiteResult& result, const Catalog& catalog, const std::string& dir) {
  namespace fs = std::filesystem;
  int written = 0;
  for (std::size_t i = 0; i < suite.rows.size(); ++i) {
    const SuiteRow& row = suite.rows[i];
    const fs::path folder = fs::path(dir) / path_component(suite.name) / path_component(row.id);
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) throw std::runtime_error("cannot create " + folder.string() + ": " + ec.message());
    const Workload workload = suite_workload(suite, row);
    const Cluster cluster = suite_cluster(row.system, suite_row_gpus(row), catalog);
    const std::string origin = suite.file + ": suite " + suite.name + ", row " + row.id;
    write_text_file_atomic((folder / "cluster.yaml").string(), cluster_to_yaml(cluster, origin));
    write_text_file_atomic((folder / "workload.yaml").string(), workload_to_yaml(workload, origin));
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
        write_plan_file((folder / "plan.yaml").string(), *p, cluster, o);
      }
    }
    ++written;
  }
  return written;
}

}  // namespace hetsim::models
