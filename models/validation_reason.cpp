// SPDX-License-Identifier: Apache-2.0
// A suite row whose plan cannot be built, reported in the suite's own words and at the field
// (s26 audit F9): suite_plan() builds a Plan and check_plan() speaks of the Plan's paths, with
// replicas outside stages, where a version-2 row nests replicas inside stages and a version-1
// row writes degrees.
#include <regex>

#include "validation_suite.hpp"

namespace hetsim::models {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

/// Where a row's batch problem is written: `micro` when the row gives one, else `global`.
std::string batch_field(const SuiteRow& row) { return row.micro ? "batch.micro" : "batch.global"; }

/// The row's field for a Plan path: `replicas[R].stages[S].X`, `replicas[R].X`, or a plan key.
std::string row_field_of(const SuiteRow& row, const std::string& plan_field) {
  static const std::regex stage_field(R"(replicas\[(\d+)\]\.stages\[(\d+)\]\.(gpus|layers))");
  static const std::regex replica_field(R"(replicas\[(\d+)\]\.(micro_batches|stages))");
  std::smatch m;
  if (std::regex_match(plan_field, m, stage_field)) {
    const bool gpus = m[3] == "gpus";
    if (row.plan) return "plan.stages[" + m[2].str() + "]" + (gpus ? ".replicas[" + m[1].str() + "].gpus" : ".layers");
    // Version 1: TP is the GPUs of a stage, and layers are split by pp (and chunked by interleave).
    return gpus ? "parallel.tp" : (row.interleave > 1 ? "parallel.interleave" : "parallel.pp");
  }
  if (std::regex_match(plan_field, m, replica_field)) {
    if (m[2] == "stages") return row.plan ? "plan.stages" : "parallel.pp";
    return row.plan && !row.micro_batches.empty() ? "plan.micro_batches" : batch_field(row);
  }
  if (plan_field == "micro_batch") return "batch.micro";
  for (const char* key : kSuiteParallelKeys)
    if (plan_field == key) return std::string("parallel.") + key;
  return {};
}

}  // namespace

SuiteFieldReason suite_field_reason(const SuiteRow& row, const std::string& plan_reason) {
  const std::string batch = batch_field(row);
  // "field: what is wrong": the Plan's path, renamed.
  if (const auto colon = plan_reason.find(": "); colon != std::string::npos &&
                                                  plan_reason.find(' ') > colon) {
    const std::string plan_field = plan_reason.substr(0, colon);
    const std::string field = row_field_of(row, plan_field);
    if (field.empty()) return {{}, plan_reason};
    // A replica's micro-batch count the row does not write (batch.global / (replicas x micro)):
    // "batch.micro: 1 is no multiple..." read as if batch.micro were 1; name the count.
    static const std::regex count_reason(R"(replicas\[\d+\]\.micro_batches: (\d+) (.*))");
    std::smatch m;
    if (starts_with(field, "batch.") && std::regex_match(plan_reason, m, count_reason))
      return {field, field + ": batch.global / (replicas x batch.micro) gives " + m[1].str() + " micro-batch" +
                         (m[1] == "1" ? "" : "es") + " per pipeline, and " + m[1].str() + " " + m[2].str()};
    return {field, field + plan_reason.substr(colon)};
  }
  // Reasons that open with the quantity (make_uniform_plan, suite_explicit_plan): "name (value) rest".
  static const std::regex quantity(R"((training\.global_batch|batch\.global|pp) \((\d+)\) (.*))");
  std::smatch m;
  if (std::regex_match(plan_reason, m, quantity)) {
    if (m[1] == "pp") return {"parallel.pp", "parallel.pp: " + m[2].str() + " " + m[3].str() + " (expected at most one stage per layer)"};
    if (batch == "batch.global") return {batch, "batch.global: " + m[2].str() + " " + m[3].str()};
    return {batch, "batch.micro: batch.global (" + m[2].str() + ") " + m[3].str()};
  }
  if (starts_with(plan_reason, "model.layers (") && plan_reason.find("pp*interleave") != std::string::npos)
    return {"parallel.interleave", "parallel.interleave: " + plan_reason};
  if (starts_with(plan_reason, "tp*pp*dp")) return {"parallel", plan_reason};
  return {{}, plan_reason};
}

}  // namespace hetsim::models
