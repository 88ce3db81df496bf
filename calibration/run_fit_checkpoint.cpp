// SPDX-License-Identifier: Apache-2.0
#include "run_fit_checkpoint.hpp"

#include <stdexcept>

#include "catalog.hpp"
#include "json_writer.hpp"
#include "jsonl_file.hpp"
#include "model_fingerprint.hpp"
#include "sweep_run.hpp"

namespace hetsim::calibration {

std::string run_fit_key(const std::vector<std::string>& suite_paths, const RunFitOptions& options) {
  models::JsonOut j(-1);
  j.begin_object().key("suites").begin_array();
  for (const std::string& p : suite_paths) j.value(models::file_fingerprint(p));
  j.end_array().key("params").begin_array();
  for (RunFitParam p : options.params) j.value(to_string(p));
  j.end_array().key("passes").value(options.sweeps);
  j.key("catalog").value(models::catalog_fingerprint(models::Catalog::builtin_dir()));
  j.key("model").value(models::cost_model_fingerprint()).end_object();
  return j.str();
}

void append_run_fit_step(const std::string& path, const std::string& key, const RunFitProgress& step) {
  models::JsonOut j(-1);
  j.begin_object().key("fit_key").value(key).key("pass").value(step.pass).key("searched").value(step.searched);
  j.key("variables").begin_array();
  for (const std::string& v : step.variables) j.value(v);
  j.end_array().key("values").begin_array();
  for (double v : step.values) j.value(v);
  j.end_array().key("objective").value(step.objective).key("pass_start_objective").value(step.pass_start_objective);
  j.end_object();
  models::append_json_line(path, j.str());
}

namespace {

/// A record back into a step; nullopt when a field is missing or of the wrong kind (a damaged line).
std::optional<RunFitProgress> read_step(const YAML::Node& j) {
  try {
    RunFitProgress s;
    s.pass = j["pass"].as<int>();
    s.searched = j["searched"].as<int>();
    for (const YAML::Node& v : j["variables"]) s.variables.push_back(v.as<std::string>());
    for (const YAML::Node& v : j["values"]) s.values.push_back(v.as<double>());
    s.objective = j["objective"].as<double>();
    s.pass_start_objective = j["pass_start_objective"].as<double>();
    return s;
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<RunFitProgress> last_run_fit_step(const std::string& path, const std::string& key) {
  // One record at a time (models::for_each_json_line): only the steps read are kept.
  std::optional<RunFitProgress> last;
  bool any_fit_record = false;
  std::size_t records = 0;
  models::for_each_json_line(path, [&](const models::JsonLine& line) {
    const YAML::Node& j = line.record;
    if (!j.IsMap()) return;
    ++records;
    if (!j["fit_key"] || !j["fit_key"].IsScalar()) return;
    any_fit_record = true;
    if (j["fit_key"].Scalar() != key) return;
    if (auto s = read_step(j)) last = std::move(s);  // the last complete step wins
  });
  if (records > 0 && !any_fit_record)
    throw std::invalid_argument("'" + path + "' holds " + std::to_string(records) +
                                " JSON lines and none is a step of hetsim fit (expected a checkpoint of hetsim fit, or "
                                "a new file)");
  return last;
}

}  // namespace hetsim::calibration
