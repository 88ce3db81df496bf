// SPDX-License-Identifier: Apache-2.0
#include "sweep_run.hpp"

#include <map>

#include "json_writer.hpp"
#include "jsonl_file.hpp"

namespace hetsim::models {
namespace {

std::string row_json(const std::string& key, const SweepRow& r) {
  JsonOut j(-1);
  j.begin_object();
  j.key("key").value(key).key("point").value(static_cast<long long>(r.point)).key("workload").value(r.workload);
  j.key("gpus").value(r.gpus).key("cluster_price_per_hour").value(r.cluster_price_per_hour);
  j.key("found").value(r.found).key("reason").value(r.reason);
  j.key("tokens_per_s").value(r.tokens_per_s).key("mfu").value(r.mfu);
  j.key("plan_price_per_hour").value(r.plan_price_per_hour).key("cost_per_million_tokens").value(r.cost_per_million_tokens);
  j.key("plan_gpus").value(r.plan_gpus).key("shape").value(r.shape);
  j.key("uniform_tokens_per_s").value(r.uniform_tokens_per_s);
  j.key("fastest_type_only_tokens_per_s").value(r.fastest_type_only_tokens_per_s);
  j.key("search_time_s").value(r.search_time_s);
  j.end_object();
  return j.str();
}

/// A checkpoint record back into a row (its point, workload and values come from the spec).
bool row_from_json(const YAML::Node& j, SweepRow& r) {
  try {
    r.gpus = j["gpus"].as<int>();
    r.cluster_price_per_hour = j["cluster_price_per_hour"].as<double>();
    r.found = j["found"].as<bool>();
    r.reason = j["reason"].as<std::string>();
    r.tokens_per_s = j["tokens_per_s"].as<double>();
    r.mfu = j["mfu"].as<double>();
    r.plan_price_per_hour = j["plan_price_per_hour"].as<double>();
    r.cost_per_million_tokens = j["cost_per_million_tokens"].as<double>();
    r.plan_gpus = j["plan_gpus"].as<int>();
    r.shape = j["shape"].as<std::string>();
    r.uniform_tokens_per_s = j["uniform_tokens_per_s"].as<double>();
    r.fastest_type_only_tokens_per_s = j["fastest_type_only_tokens_per_s"].as<double>();
    r.search_time_s = j["search_time_s"].as<double>();
    return true;
  } catch (const YAML::Exception&) {
    return false;  // a record of another version of the format: plan the row again
  }
}

/// Plans one workload on one point's cluster.
void plan_row(const Cluster& cluster, const Workload& workload, const PlannerOptions& options, SweepRow& r) {
  r.gpus = cluster.gpu_count();
  r.cluster_price_per_hour = cluster.price_per_hour(options.spot);
  if (r.gpus == 0) {
    r.reason = "the cluster has no GPUs at this point";
    return;
  }
  const PlannerResult p = plan_training(cluster, workload, options);
  r.search_time_s = p.search_time_s;
  if (p.uniform.found) r.uniform_tokens_per_s = p.uniform.best.report.tokens_per_s;
  if (p.fastest_type_only.found) r.fastest_type_only_tokens_per_s = p.fastest_type_only.best.report.tokens_per_s;
  if (p.top.empty()) {
    r.reason = p.reason;
    return;
  }
  const RankedPlan& best = p.top.front();
  r.found = true;
  r.tokens_per_s = best.report.tokens_per_s;
  r.mfu = best.report.mfu;
  r.plan_price_per_hour = best.report.cost_per_hour;
  r.cost_per_million_tokens = best.report.cost_per_million_tokens;
  r.plan_gpus = best.plan.gpu_count();
  r.shape = best.shape;
}

/// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  JsonOut j(-1);  // shortest text that reads back to the same double
  j.value(v);
  return j.str();
}

}  // namespace

std::string sweep_row_key(const SweepSpec& spec, const std::string& workload_path, const std::vector<std::string>& values) {
  JsonOut j(-1);
  j.begin_object();
  j.key("objective").value(to_string(spec.objective)).key("budget_per_hour").value(spec.budget_per_hour);
  j.key("spot").value(spec.spot).key("cluster").value(spec.cluster_path).key("workload").value(workload_path);
  for (size_t a = 0; a < spec.axes.size(); ++a) j.key(spec.axes[a].column()).value(values[a]);
  j.end_object();
  return j.str();
}

SweepResult run_sweep(const SweepSpec& spec, const Cluster& base, const std::vector<Workload>& workloads,
                      const Catalog& catalog, const SweepRunOptions& options) {
  std::map<std::string, YAML::Node> done;
  if (!options.checkpoint_path.empty())
    for (const YAML::Node& j : read_json_lines(options.checkpoint_path))
      if (j["key"] && j["key"].IsScalar()) done[j["key"].Scalar()] = j;  // the last record of a key wins

  PlannerOptions po = options.planner;
  po.objective = spec.objective;
  po.budget_per_hour = spec.budget_per_hour;
  po.spot = spec.spot;
  po.top = 1;

  SweepResult result;
  const long points = spec.point_count();
  const long total = points * static_cast<long>(workloads.size());
  for (long p = 0; p < points; ++p) {
    const std::vector<int> choice = sweep_point(spec, p);
    std::vector<std::string> values;
    for (size_t a = 0; a < spec.axes.size(); ++a) values.push_back(spec.axes[a].labels[choice[a]]);
    std::optional<Cluster> cluster;  // built on the first workload that is not resumed
    for (size_t w = 0; w < workloads.size(); ++w) {
      SweepRow r;
      r.point = p;
      r.workload = workloads[w].name;
      r.values = values;
      const std::string key = sweep_row_key(spec, spec.workload_paths[w], values);
      if (auto it = done.find(key); it != done.end() && row_from_json(it->second, r)) {
        r.resumed = true;
        ++result.resumed;
      } else {
        if (!cluster) {
          cluster = sweep_cluster(spec, base, choice, catalog);
          if (options.profile) apply_profile(*cluster, *options.profile);
        }
        plan_row(*cluster, workloads[w], po, r);
        if (!options.checkpoint_path.empty()) append_json_line(options.checkpoint_path, row_json(key, r));
      }
      result.rows.push_back(r);
      if (options.on_row) options.on_row(result.rows.back(), static_cast<long>(result.rows.size()), total);
    }
  }
  return result;
}

std::string sweep_csv(const SweepSpec& spec, const std::vector<SweepRow>& rows) {
  std::string out = "point,workload";
  for (const SweepAxis& a : spec.axes) out += "," + csv_field(a.column());
  out += ",gpus,cluster_price_per_hour,found,tokens_per_s,mfu,plan_gpus,plan_price_per_hour,cost_per_million_tokens,"
         "uniform_tokens_per_s,fastest_type_only_tokens_per_s,search_time_s,shape,reason\n";
  for (const SweepRow& r : rows) {
    out += std::to_string(r.point) + "," + csv_field(r.workload);
    for (const std::string& v : r.values) out += "," + csv_field(v);
    out += "," + std::to_string(r.gpus) + "," + number(r.cluster_price_per_hour) + "," + (r.found ? "true" : "false");
    out += "," + number(r.tokens_per_s) + "," + number(r.mfu) + "," + std::to_string(r.plan_gpus) + "," +
           number(r.plan_price_per_hour) + "," + number(r.cost_per_million_tokens);
    out += "," + number(r.uniform_tokens_per_s) + "," + number(r.fastest_type_only_tokens_per_s) + "," +
           number(r.search_time_s);
    out += "," + csv_field(r.shape) + "," + csv_field(r.reason) + "\n";
  }
  return out;
}

}  // namespace hetsim::models
