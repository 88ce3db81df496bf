// SPDX-License-Identifier: Apache-2.0
// `hetsim sweep SPEC.yaml [--out results.csv] [--checkpoint FILE] [--profile P] [--time-limit S]
//  [--threads N] [--refine K] [--format table|json|csv]`: a cluster-design what-if study (models/sweep_run.hpp).
// Every workload of the spec is planned on every grid point's cluster; the CSV is rewritten
// atomically every few seconds and at the end, and finished rows go to a checkpoint, so a killed
// sweep resumes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "atomic_file.hpp"
#include "cli_common.hpp"
#include "diagnostics.hpp"
#include "engines.hpp"
#include "json_writer.hpp"
#include "jsonl_file.hpp"
#include "model_fingerprint.hpp"
#include "plan_notes.hpp"
#include "profile.hpp"
#include "sweep_run.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

namespace {

/// Seconds between rewrites of the --out CSV while a sweep runs (and once at its end).
constexpr int kCsvRewriteEvery_s = 2;

struct SweepVerbOptions {
  std::string spec, out, checkpoint, profile;
  double time_limit_s = 60;
  int threads = 0;
  int refine = 0;
  OutputFormat format = OutputFormat::kTable;
};

/// "hgx-h100.nodes=2, mi300x-platform.gpu=mi300x".
std::string point_text(const models::SweepSpec& spec, const models::SweepRow& r) {
  std::string s;
  for (size_t a = 0; a < spec.axes.size(); ++a) s += (a ? ", " : "") + spec.axes[a].column() + "=" + r.values[a];
  return s.empty() ? "base cluster" : s;
}

/// The catalog's assumed figures (default GEMM efficiency, no FlashAttention figure) of the GPU
/// types the sweep's points have: the base cluster's and each value of a `gpu` axis, with the
/// profile applied as the points apply it. The rows' ranking rests on them as plan's does.
std::vector<std::string> sweep_notes(const models::SweepInputs& in, const models::Profile* profile) {
  const models::Catalog& catalog = models::Catalog::builtin();
  std::vector<int> point(in.spec.axes.size(), 0);
  std::vector<models::Cluster> clusters = {models::sweep_cluster(in.spec, in.cluster, point, catalog, profile)};
  for (size_t a = 0; a < in.spec.axes.size(); ++a)
    if (in.spec.axes[a].kind == models::SweepAxisKind::kGpu)
      for (size_t v = 1; v < in.spec.axes[a].labels.size(); ++v) {
        std::vector<int> at = point;
        at[a] = static_cast<int>(v);
        clusters.push_back(models::sweep_cluster(in.spec, in.cluster, at, catalog, profile));
      }
  std::vector<const models::GpuType*> gpus;
  for (const models::Cluster& c : clusters)
    for (const models::NodeType& t : c.node_types)
      if (std::none_of(gpus.begin(), gpus.end(), [&](const models::GpuType* g) { return g->name == t.gpu.name; }))
        gpus.push_back(&t.gpu);
  std::vector<std::string> notes;
  for (const models::Workload& w : in.workloads)
    for (std::string& note : models::assumed_efficiency_notes(gpus, w))
      if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(std::move(note));
  return notes;
}

void print_table(const models::SweepSpec& spec, const models::SweepResult& r, bool refined,
                 const std::vector<std::string>& notes) {
  std::vector<std::string> header = {"#", "workload"};
  for (const models::SweepAxis& a : spec.axes) header.push_back(a.column());
  // At spot prices the tokens/s are goodput: what the nodes' preemptions leave (docs/sweep.md).
  // Under objective cost the baselines are compared by what it ranks ($/Mtok: 0.80x is 20%
  // cheaper), otherwise by tokens/s (1.25x is 25% faster).
  const bool by_cost = spec.objective == models::PlanObjective::kCost;
  for (const char* h : {"GPUs", "$/h", "tokens/s", "MFU", "$/Mtok", "vs uniform", "vs fastest type", "best plan"}) {
    const std::string name = h;
    const bool tokens = name == "tokens/s";
    if (by_cost && name.rfind("vs ", 0) == 0) header.push_back("$/Mtok " + name);
    else header.push_back(tokens && spec.spot ? "goodput tokens/s" : h);
    if (refined && tokens) header.push_back(spec.spot ? "sim goodput" : "sim tokens/s");
  }
  TextTable t(header);
  t.left_align(header.size() - 1);
  for (const models::SweepRow& row : r.rows) {
    std::vector<std::string> cells = {std::to_string(row.point), row.workload};
    cells.insert(cells.end(), row.values.begin(), row.values.end());
    cells.push_back(std::to_string(row.gpus));
    cells.push_back(format_price_per_hour(row.cluster_price_per_hour));
    if (!row.found) {
      for (int i = 0; i < (refined ? 6 : 5); ++i) cells.push_back("-");
      cells.push_back("none: " + row.reason);
    } else {
      // At spot prices a baseline that fits may still train nothing between its preemptions;
      // a search --time-limit stopped may not have reached one.
      const auto ratio = [&](double baseline_tokens_per_s, double baseline_cost, bool over_budget) {
        if (baseline_tokens_per_s > 0 && by_cost)
          return baseline_cost > 0 ? fmt("%.2fx", row.cost_per_million_tokens / baseline_cost) : std::string("-");
        if (baseline_tokens_per_s > 0) return fmt("%.2fx", row.tokens_per_s / baseline_tokens_per_s);
        if (over_budget) return std::string("over budget");
        return std::string(row.search_stopped ? "stopped" : spec.spot ? "no goodput" : "none fits");
      };
      cells.push_back(fmt("%.0f", row.tokens_per_s));
      if (refined) cells.push_back(row.simulated_tokens_per_s > 0 ? fmt("%.0f", row.simulated_tokens_per_s) : "-");
      cells.push_back(fmt("%.3f", row.mfu));
      cells.push_back(fmt("%.3f", row.cost_per_million_tokens));
      cells.push_back(ratio(row.uniform_tokens_per_s, row.uniform_cost_per_million_tokens, row.uniform_over_budget));
      cells.push_back(ratio(row.fastest_type_only_tokens_per_s, row.fastest_type_only_cost_per_million_tokens,
                            row.fastest_type_only_over_budget));
      std::string plan = row.search_stopped ? row.shape + " [search stopped at --time-limit]" : row.shape;
      if (row.joins_vendors) plan += " (*)";
      if (row.lockstep_tokens_per_s > 0) plan += fmt(" (lockstep %.0f)", row.lockstep_tokens_per_s);
      if (!row.reason.empty()) plan += " [--refine: " + row.reason + "]";
      cells.push_back(std::move(plan));
    }
    t.add_row(std::move(cells));
  }
  std::cout << "sweep " << spec.name << ": " << spec.point_count() << " points x " << spec.workload_paths.size()
            << " workloads, objective " << models::to_string(spec.objective) << "\n";
  t.print(std::cout);
  if (std::any_of(r.rows.begin(), r.rows.end(), [](const models::SweepRow& row) { return row.joins_vendors; }))
    std::cout << "(*) the plan exchanges data between NVIDIA and AMD GPUs: " << models::kJoinsVendorsNote
              << " (`one_vendor: true` in the spec keeps every plan on one vendor's GPUs)\n";
  if (std::any_of(r.rows.begin(), r.rows.end(), [](const models::SweepRow& row) { return row.lockstep_tokens_per_s > 0; }))
    std::cout << "(lockstep N) the plan's tokens/s if its pipeline sends of one parity, which 1F1B passes through a "
                 "node's NIC at once, coincide in every slot: its figure prices them apart, and the simulator's lies "
                 "between the two (--refine K; docs/report.md)\n";
  for (const std::string& note : notes) std::cout << "note: " << note << "\n";
  if (r.resumed > 0) std::cout << r.resumed << " of " << r.rows.size() << " rows resumed from the checkpoint\n";
}

void print_json(const models::SweepSpec& spec, const models::SweepResult& r, const std::vector<std::string>& notes) {
  models::JsonOut j;
  j.begin_object().key("sweep").value(spec.name).key("objective").value(models::to_string(spec.objective));
  j.key("points").value(static_cast<long long>(spec.point_count())).key("resumed").value(static_cast<long long>(r.resumed));
  j.key("axes").begin_array();
  for (const models::SweepAxis& a : spec.axes) j.value(a.column());
  j.end_array().key("rows").begin_array();
  for (const models::SweepRow& row : r.rows) models::write_sweep_row_json(j, spec, row);
  j.end_array().key("notes").begin_array();
  for (const std::string& note : notes) j.value(note);
  j.end_array().end_object();
  std::cout << j.str();
}

/// The sweep's inputs and the profile: the errors of every file together (one ConfigError).
std::pair<models::SweepInputs, std::optional<models::Profile>> load_all(const SweepVerbOptions& o) {
  models::DiagnosticCollector errors;
  models::SweepInputs in;
  std::optional<models::Profile> profile;
  errors.collect([&] { in = models::load_sweep_inputs(o.spec, models::Catalog::builtin()); });
  if (!o.profile.empty()) errors.collect([&] { profile = models::load_profile(o.profile); });
  errors.throw_if_any();
  // As predict and plan: a profile that changes nothing of any point is another cluster's. It
  // may name a type only a `gpu` axis brings in.
  if (profile) {
    models::Cluster probe = in.cluster;
    bool used = models::apply_profile(probe, *profile) > 0;
    std::vector<std::string> swept;  // the GPU types a `gpu` axis swaps in, named in the error
    for (const models::SweepAxis& a : in.spec.axes)
      for (const std::string& label : a.labels)
        if (const models::GpuType* t = a.kind == models::SweepAxisKind::kGpu ? models::Catalog::builtin().by_name_or_null(label) : nullptr) {
          swept.push_back(t->name);
          for (const auto& entry : profile->devices) used = used || models::names_type(*t, entry.first);
        }
    if (!used) throw models::ConfigError({profile_matching_nothing(o.profile, *profile, in.cluster, swept)});
  }
  return {std::move(in), std::move(profile)};
}

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "hetsim sweep: error: " << msg << '\n';
  throw VerbExit{kExitBadInput};
}

void run_sweep_verb(const SweepVerbOptions& o) {
  const std::string checkpoint = !o.checkpoint.empty() ? o.checkpoint : o.out.empty() ? "" : o.out + ".checkpoint.jsonl";
  const auto [in, profile] = load_all(o);
  std::vector<std::string> inputs = {o.spec, o.profile, in.spec.cluster_path};
  inputs.insert(inputs.end(), in.spec.workload_paths.begin(), in.spec.workload_paths.end());
  check_output_files("sweep", {{"--out", o.out}, {"--checkpoint", checkpoint}}, inputs);
  // A checkpoint that cannot be written is found now, not after the first search.
  if (!checkpoint.empty() && !checkpoint_writable(checkpoint))
    usage_error("--checkpoint: cannot write '" + checkpoint + "' (expected a writable file)");
  if (const std::string p = checkpoint.empty() ? "" : models::json_lines_problem(checkpoint); !p.empty())
    usage_error("--checkpoint: " + p);
  models::SweepRunOptions ro;
  ro.planner.time_limit_s = o.time_limit_s;
  ro.planner.threads = o.threads;
  ro.checkpoint_path = checkpoint;
  ro.catalog_fingerprint = models::catalog_fingerprint(models::Catalog::builtin_dir());
  ro.model_fingerprint = models::cost_model_fingerprint();
  if (profile) {
    ro.profile = &*profile;
    ro.profile_fingerprint = models::file_fingerprint(o.profile);
  }
  if (o.refine > 0) {
    if (const models::TimedPredictFn* sim = find_timed_engine("sim")) {
      ro.refine = o.refine;
      ro.refine_engine = *sim;
    } else {
      std::cerr << "hetsim sweep: --refine: this hetsim has no simulator (built without SimGrid); kept the analytic ranking\n";
    }
  }
  std::vector<models::SweepRow> so_far;
  auto last_write = std::chrono::steady_clock::now();
  ro.on_row = [&](const models::SweepRow& row, long done, long total) {
    so_far.push_back(row);
    std::cerr << "[" << done << "/" << total << "] " << point_text(in.spec, row) << ", " << row.workload << ": "
              << (row.found ? fmt("%.0f tokens/s", row.tokens_per_s) : "no plan") << (row.resumed ? " (resumed)" : "")
              << (row.search_stopped ? " (search stopped at --time-limit)" : "") << "\n";
    // The CSV so far, whole, at most every few seconds (rewriting it after every row would
    // cost time quadratic in the rows): the checkpoint has every row the CSV may lack.
    const auto now = std::chrono::steady_clock::now();
    if (!o.out.empty() && now - last_write > std::chrono::seconds(kCsvRewriteEvery_s)) {
      models::write_text_file_atomic(o.out, models::sweep_csv(in.spec, so_far));
      last_write = now;
    }
  };
  models::SweepResult r;
  try {
    r = models::run_sweep(in.spec, in.cluster, in.workloads, models::Catalog::builtin(), ro);
  } catch (const models::ForeignCheckpoint& e) {
    usage_error(std::string("--checkpoint: ") + e.what());
  }
  if (!o.out.empty()) models::write_text_file_atomic(o.out, models::sweep_csv(in.spec, r.rows));
  const std::vector<std::string> notes = o.format == OutputFormat::kCsv ? std::vector<std::string>()
                                                                       : sweep_notes(in, profile ? &*profile : nullptr);
  if (o.format == OutputFormat::kJson) print_json(in.spec, r, notes);
  else if (o.format == OutputFormat::kCsv) std::cout << models::sweep_csv(in.spec, r.rows);
  else print_table(in.spec, r, ro.refine > 0, notes);
  if (!o.out.empty() && o.format == OutputFormat::kTable) std::cout << "results written to " << o.out << "\n";
}

}  // namespace

void add_sweep_verb(CLI::App& app) {
  auto o = std::make_shared<SweepVerbOptions>();
  CLI::App* verb = app.add_subcommand(
      "sweep", "Cluster-design what-if study: plan each workload on every point of a grid of cluster variants (kind: sweep)");
  verb->add_option("spec", o->spec, "Sweep file (kind: sweep)")->required();
  verb->add_option("--out", o->out, "Write the results as CSV here (rewritten atomically every 2 s and at the end)")
      ->check(output_file_check());
  verb->add_option("--checkpoint", o->checkpoint,
                   "JSON lines of finished rows; a rerun resumes from it (default OUT.checkpoint.jsonl with --out)")
      ->check(output_file_check());
  add_profile_option(verb, &o->profile);
  verb->add_option("--time-limit", o->time_limit_s,
                   "Seconds (\"90\", or with a unit: \"90s\", \"2min\") each planner search of a row may take (default 60; 0: no limit)")
      ->transform(duration_check());
  verb->add_option("--threads", o->threads, "Threads of each search, 0-1024 (default 0: one per CPU the process may use)")
      ->transform(non_negative_integer())
      ->check(CLI::Range(0, 1024));
  verb->add_option("--refine", o->refine,
                   "Simulate each row's best K plans with SimGrid and report the one the simulator finds best "
                   "(its figure in the simulated_tokens_per_s column; a row's refinement stops at --time-limit seconds, a running "
                   "simulation included)")
      ->transform(non_negative_integer());
  add_format_option(verb, &o->format, {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kCsv});
  verb->callback([o] { run_sweep_verb(*o); });
}

}  // namespace hetsim::cli
