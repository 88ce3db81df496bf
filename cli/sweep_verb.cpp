// SPDX-License-Identifier: Apache-2.0
// `hetsim sweep SPEC.yaml [--out results.csv] [--checkpoint FILE] [--profile P] [--time-limit S]
//  [--threads N] [--format table|json|csv]`: a cluster-design what-if study (models/sweep_run.hpp).
// Every workload of the spec is planned on every grid point's cluster; the CSV is rewritten
// atomically after each row and finished rows go to a checkpoint, so a killed sweep resumes.
#include <cstdio>
#include <iostream>

#include "atomic_file.hpp"
#include "cli_common.hpp"
#include "json_writer.hpp"
#include "diagnostics.hpp"
#include "profile.hpp"
#include "sweep_run.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

namespace {

struct SweepVerbOptions {
  std::string spec, out, checkpoint, profile;
  double time_limit_s = 60;
  int threads = 0;
  OutputFormat format = OutputFormat::kTable;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// "hgx-h100.nodes=2, mi300x-platform.gpu=mi300x".
std::string point_text(const models::SweepSpec& spec, const models::SweepRow& r) {
  std::string s;
  for (size_t a = 0; a < spec.axes.size(); ++a) s += (a ? ", " : "") + spec.axes[a].column() + "=" + r.values[a];
  return s.empty() ? "base cluster" : s;
}

void print_table(const models::SweepSpec& spec, const models::SweepResult& r) {
  std::vector<std::string> header = {"#", "workload"};
  for (const models::SweepAxis& a : spec.axes) header.push_back(a.column());
  for (const char* h : {"GPUs", "$/h", "tokens/s", "MFU", "$/Mtok", "vs uniform", "vs fastest type", "best plan"})
    header.push_back(h);
  TextTable t(header);
  t.left_align(header.size() - 1);
  for (const models::SweepRow& row : r.rows) {
    std::vector<std::string> cells = {std::to_string(row.point), row.workload};
    cells.insert(cells.end(), row.values.begin(), row.values.end());
    cells.push_back(std::to_string(row.gpus));
    cells.push_back(format_price_per_hour(row.cluster_price_per_hour));
    if (!row.found) {
      for (int i = 0; i < 5; ++i) cells.push_back("-");
      cells.push_back("none: " + row.reason);
    } else {
      const auto ratio = [&](double baseline) { return baseline > 0 ? fmt("%.2fx", row.tokens_per_s / baseline) : "none fits"; };
      cells.push_back(fmt("%.0f", row.tokens_per_s));
      cells.push_back(fmt("%.3f", row.mfu));
      cells.push_back(fmt("%.3f", row.cost_per_million_tokens));
      cells.push_back(ratio(row.uniform_tokens_per_s));
      cells.push_back(ratio(row.fastest_type_only_tokens_per_s));
      cells.push_back(row.shape);
    }
    t.add_row(std::move(cells));
  }
  std::cout << "sweep " << spec.name << ": " << spec.point_count() << " points x " << spec.workload_paths.size()
            << " workloads, objective " << models::to_string(spec.objective) << "\n";
  t.print(std::cout);
  if (r.resumed > 0) std::cout << r.resumed << " of " << r.rows.size() << " rows resumed from the checkpoint\n";
}

void print_json(const models::SweepSpec& spec, const models::SweepResult& r) {
  models::JsonOut j;
  j.begin_object().key("sweep").value(spec.name).key("objective").value(models::to_string(spec.objective));
  j.key("points").value(static_cast<long long>(spec.point_count())).key("resumed").value(static_cast<long long>(r.resumed));
  j.key("axes").begin_array();
  for (const models::SweepAxis& a : spec.axes) j.value(a.column());
  j.end_array().key("rows").begin_array();
  for (const models::SweepRow& row : r.rows) {
    j.begin_object().key("point").value(static_cast<long long>(row.point)).key("workload").value(row.workload);
    j.key("values").begin_object();
    for (size_t a = 0; a < spec.axes.size(); ++a) j.key(spec.axes[a].column()).value(row.values[a]);
    j.end_object();
    j.key("gpus").value(row.gpus).key("cluster_price_per_hour").value(row.cluster_price_per_hour);
    j.key("found").value(row.found);
    if (row.found) {
      j.key("tokens_per_s").value(row.tokens_per_s).key("mfu").value(row.mfu);
      j.key("plan_gpus").value(row.plan_gpus).key("plan_price_per_hour").value(row.plan_price_per_hour);
      j.key("cost_per_million_tokens").value(row.cost_per_million_tokens).key("shape").value(row.shape);
    } else {
      j.key("reason").value(row.reason);
    }
    j.key("uniform_tokens_per_s").value(row.uniform_tokens_per_s);
    j.key("fastest_type_only_tokens_per_s").value(row.fastest_type_only_tokens_per_s);
    j.key("search_time_s").value(row.search_time_s).key("resumed").value(row.resumed).end_object();
  }
  j.end_array().end_object();
  std::cout << j.str();
}

/// The sweep's inputs and the profile: the errors of every file together (one ConfigError).
std::pair<models::SweepInputs, std::optional<models::Profile>> load_all(const SweepVerbOptions& o) {
  std::vector<models::Diagnostic> errors;
  const auto collect = [&](auto&& load) {
    try {
      load();
    } catch (const models::ConfigError& e) {
      errors.insert(errors.end(), e.get_diagnostics().begin(), e.get_diagnostics().end());
    }
  };
  models::SweepInputs in;
  std::optional<models::Profile> profile;
  collect([&] { in = models::load_sweep_inputs(o.spec, models::Catalog::builtin()); });
  if (!o.profile.empty()) collect([&] { profile = models::load_profile(o.profile); });
  if (!errors.empty()) throw models::ConfigError(std::move(errors));
  return {std::move(in), std::move(profile)};
}

void run_sweep_verb(const SweepVerbOptions& o) {
  const auto [in, profile] = load_all(o);
  models::SweepRunOptions ro;
  ro.planner.time_limit_s = o.time_limit_s;
  ro.planner.threads = o.threads;
  ro.checkpoint_path = !o.checkpoint.empty() ? o.checkpoint : o.out.empty() ? "" : o.out + ".checkpoint.jsonl";
  if (profile) ro.profile = &*profile;
  std::vector<models::SweepRow> so_far;
  ro.on_row = [&](const models::SweepRow& row, long done, long total) {
    so_far.push_back(row);
    std::cerr << "[" << done << "/" << total << "] " << point_text(in.spec, row) << ", " << row.workload << ": "
              << (row.found ? fmt("%.0f tokens/s", row.tokens_per_s) : "no plan") << (row.resumed ? " (resumed)" : "")
              << "\n";
    // The CSV so far, whole: a killed sweep leaves every finished row readable.
    if (!o.out.empty()) models::write_text_file_atomic(o.out, models::sweep_csv(in.spec, so_far));
  };
  const models::SweepResult r = models::run_sweep(in.spec, in.cluster, in.workloads, models::Catalog::builtin(), ro);
  if (!o.out.empty()) models::write_text_file_atomic(o.out, models::sweep_csv(in.spec, r.rows));
  if (o.format == OutputFormat::kJson) print_json(in.spec, r);
  else if (o.format == OutputFormat::kCsv) std::cout << models::sweep_csv(in.spec, r.rows);
  else print_table(in.spec, r);
  if (!o.out.empty() && o.format == OutputFormat::kTable) std::cout << "results written to " << o.out << "\n";
}

}  // namespace

void add_sweep_verb(CLI::App& app) {
  auto o = std::make_shared<SweepVerbOptions>();
  CLI::App* verb = app.add_subcommand(
      "sweep", "Cluster-design what-if study: plan each workload on every point of a grid of cluster variants (kind: sweep)");
  verb->add_option("spec", o->spec, "Sweep file (kind: sweep)")->required();
  verb->add_option("--out", o->out, "Write the results as CSV here (rewritten atomically after each row)")
      ->check(output_file_check());
  verb->add_option("--checkpoint", o->checkpoint,
                   "JSON lines of finished rows; a rerun resumes from it (default OUT.checkpoint.jsonl with --out)")
      ->check(output_file_check());
  add_profile_option(verb, &o->profile);
  verb->add_option("--time-limit", o->time_limit_s,
                   "Seconds each planner search of a row may take (default 60; 0: no limit)")
      ->check(non_negative_number());
  verb->add_option("--threads", o->threads, "Threads of each search, 0-1024 (default 0: one per CPU the process may use)")
      ->check(non_negative_integer())
      ->check(CLI::Range(0, 1024));
  add_format_option(verb, &o->format, {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kCsv});
  verb->callback([o] { run_sweep_verb(*o); });
}

}  // namespace hetsim::cli
