// SPDX-License-Identifier: Apache-2.0
// `hetsim fit SUITE.yaml... [--out profile.yaml] [--params gemm,memory,host,flash,links] [--checkpoint FILE]
// [--format table|json]`: fits the efficiency figures of each GPU type to measured iteration times
// (calibration/run_fit.hpp) and writes them as a profile that predict, plan, simulate and validate
// accept with --profile. Each figure search is checkpointed (default OUT.checkpoint.jsonl): a killed
// fit rerun with the same inputs resumes after the last search it finished.
// Exit code 2 on bad input, 1 when no row can be predicted.
#include <algorithm>
#include <iostream>
#include <sstream>

#include "atomic_file.hpp"
#include "calibrate.hpp"
#include "cli_common.hpp"
#include "diagnostics.hpp"
#include "json_writer.hpp"
#include "jsonl_file.hpp"
#include "run_fit.hpp"
#include "run_fit_checkpoint.hpp"
#include "units.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

namespace {

struct FitVerbOptions {
  std::vector<std::string> suites;
  std::string out = "profile.yaml";
  std::string checkpoint;  ///< default: out + ".checkpoint.jsonl"
  std::vector<std::string> params = {"gemm"};
  OutputFormat format = OutputFormat::kTable;
};

std::string three_decimals(double v) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(3);
  o << v;
  return o.str();
}

/// A fitted figure as the table shows it: efficiencies as fractions, times and bandwidths with units.
std::string figure(calibration::RunFitParam p, double v) {
  if (p == calibration::RunFitParam::kHost) return models::format_time(v);
  if (p == calibration::RunFitParam::kLinks) return models::format_bandwidth(v);
  return three_decimals(v);
}

/// The unit of a figure's `catalog` and `fitted` values in the JSON, which differs by figure.
const char* figure_unit(calibration::RunFitParam p) {
  if (p == calibration::RunFitParam::kHost) return "s";
  if (p == calibration::RunFitParam::kLinks) return "B/s";
  return "fraction";
}

void print_json(const calibration::RunFitResult& r, const std::string& out) {
  models::JsonOut j;
  j.begin_object().key("fitted").value(true).key("profile").value(out);  // "fitted": false when none (run_fit)
  j.key("objective_before").value(r.objective_before).key("objective_after").value(r.objective_after);
  j.key("searches").value(r.searches).key("searches_resumed").value(r.searches_resumed);
  j.key("figures").begin_array();
  for (const auto& f : r.figures) {
    j.begin_object().key("device_type").value(f.device_type).key("param").value(calibration::to_string(f.param));
    j.key("unit").value(figure_unit(f.param));
    j.key("catalog").value(f.catalog_value).key("fitted").value(f.fitted_value).key("rows").value(f.rows);
    j.key("changed").value(f.changed).key("at_bound").value(f.at_bound).end_object();
  }
  j.end_array().key("links_not_fitted").begin_array();
  for (const std::string& why : r.links_not_fitted) j.value(why);
  j.end_array().key("suites").begin_array();
  for (const auto& s : r.suites) {
    j.begin_object().key("suite").value(s.suite).key("rows_used").value(s.rows_used);
    j.key("rows_skipped").value(s.rows_skipped).key("mape_before").value(s.mape_before);
    j.key("mape_after").value(s.mape_after).end_object();
  }
  j.end_array().end_object();
  std::cout << j.str();
}

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "hetsim fit: error: " << msg << '\n';
  throw VerbExit{kExitBadInput};
}

/// Points `options` at the checkpoint: resumes from its last step of this fit and records each
/// new one. A checkpoint that cannot be written or is another verb's is refused before the fit.
void use_checkpoint(const std::string& checkpoint, const std::vector<std::string>& suites,
                    calibration::RunFitOptions& options) {
  if (!checkpoint_writable(checkpoint))
    usage_error("--checkpoint: cannot write '" + checkpoint + "' (expected a writable file)");
  if (const std::string p = models::json_lines_problem(checkpoint); !p.empty()) usage_error("--checkpoint: " + p);
  const std::string key = calibration::run_fit_key(suites, options);
  try {
    options.resume = calibration::last_run_fit_step(checkpoint, key);
  } catch (const std::invalid_argument& e) {
    usage_error(std::string("--checkpoint: ") + e.what());
  }
  options.on_progress = [checkpoint, key](const calibration::RunFitProgress& step) {
    calibration::append_run_fit_step(checkpoint, key, step);
  };
}

/// A fit that gives no profile: a result with a reason (exit_with_reason), as predict's
/// "feasible": false Report.
[[noreturn]] void nothing_fitted(const std::string& why, OutputFormat format) {
  exit_with_reason("fit", "fitted", "nothing fitted: " + why, why, format);
}

void run_fit(const FitVerbOptions& o) {
  const std::string checkpoint = o.checkpoint.empty() ? o.out + ".checkpoint.jsonl" : o.checkpoint;
  check_output_files("fit", {{"--out", o.out}, {"--checkpoint", checkpoint}}, o.suites);
  calibration::RunFitOptions options;
  options.params.clear();
  for (const std::string& name : o.params) {
    const auto p = calibration::parse_run_fit_param(name);
    if (!p) usage_error("--params: unknown figure '" + name + "' (expected gemm, memory, host, flash or links)");
    // A figure named twice is fitted once (as plan's search options drop repeats).
    if (std::find(options.params.begin(), options.params.end(), *p) == options.params.end()) options.params.push_back(*p);
  }
  // The search fits one figure at a time (coordinate descent), so the figures it lands on depend
  // on the order it takes them in where the rows do not pin each one down: `gemm,memory,host` and
  // `host,memory,gemm` gave Titan RTX gemm 0.451 / memory 0.799 and gemm 0.800 / memory 0.339 at
  // the same objective (s68 hunt). One order whatever the command line's: the enum's.
  std::sort(options.params.begin(), options.params.end());
  const models::Catalog& catalog = models::Catalog::builtin();
  const std::vector<models::Suite> suites = load_suite_files(o.suites, catalog);
  use_checkpoint(checkpoint, o.suites, options);

  calibration::RunFitResult r;
  try {
    r = calibration::fit_to_runs(suites, catalog, options);
  } catch (const std::runtime_error& e) {
    nothing_fitted(e.what(), o.format);
  }
  std::string params;
  for (const calibration::RunFitParam p : options.params) params += (params.empty() ? "" : ",") + std::string(calibration::to_string(p));
  int rows = 0;
  for (const auto& s : r.suites) rows += s.rows_used;
  r.profile.source = "`hetsim fit --params " + params + "` on " + utc_now() + ": " + r.profile.source +
                     "; mean |ln(predicted/measured)| " + three_decimals(r.objective_before) +
                     " -> " + three_decimals(r.objective_after);
  // Every figure left at the catalog's: a profile would name nothing, which every verb refuses
  // (it was written, "use it with --profile", and then rejected: s57 bad-input hunt).
  if (r.profile.devices.empty() && r.profile.links.empty()) {
    nothing_fitted("no figure fits the rows better than the catalog's (mean |ln(predicted/measured)| " +
                       three_decimals(r.objective_before) + " either way); no profile written",
                   o.format);
  }
  const std::vector<std::string> header = {
      "Profile fitted to measured iteration times (kind: profile, docs/inputs.md; calibration/run_fit.hpp).",
      "Only the fitted figures are set; every other figure stays the catalog's."};
  models::write_text_file_atomic(o.out, calibration::profile_to_yaml(r.profile, header));

  if (!r.resume_refused.empty())  // on stderr, as the other notes of a run: the JSON stays one document
    std::cerr << "hetsim fit: note: --checkpoint " << checkpoint << " was not resumed: " << r.resume_refused
              << " (an edited or damaged record); the fit searched afresh\n";
  if (o.format == OutputFormat::kJson) return print_json(r, o.out);
  if (r.searches_resumed > 0)
    std::cout << r.searches_resumed << " of " << r.searches << " figure searches resumed from " << checkpoint << "\n";
  std::cout << "fit: " << rows << " rows of " << r.suites.size() << " suite(s); mean |ln(predicted/measured)| "
            << three_decimals(r.objective_before) << " -> "
            << three_decimals(r.objective_after) << "\n";
  TextTable figures({"device type / link", "figure", "catalog", "fitted", "rows"});
  bool any_bound = false, any_unchanged = false;
  std::vector<std::string> far_from_catalog;
  for (const auto& f : r.figures) {
    // A fitted figure at a bound of its search, or off the catalog's by more than 2x either way,
    // is the fit absorbing what the model leaves out (a framework or network effect): the rows
    // are reproduced, but the figure is not the device's.
    const double ratio = f.catalog_value > 0 ? f.fitted_value / f.catalog_value : 1.0;
    if (f.changed && (f.at_bound || ratio < 0.5 || ratio > 2.0))
      far_from_catalog.push_back(f.device_type + " " + calibration::to_string(f.param) + " " +
                                 figure(f.param, f.fitted_value) + " (catalog " + figure(f.param, f.catalog_value) +
                                 (f.at_bound ? ", at the search's bound)" : ")"));
    std::string fitted = figure(f.param, f.fitted_value);
    if (!f.changed) fitted = "(unchanged)";
    else if (f.at_bound) fitted += " (bound)";
    any_bound = any_bound || f.at_bound;
    any_unchanged = any_unchanged || !f.changed;
    figures.add_row({f.device_type, calibration::to_string(f.param), figure(f.param, f.catalog_value), fitted,
                     std::to_string(f.rows)});
  }
  figures.print(std::cout);
  // Left where it started: the rows do not depend on it, or they pull it both ways (two runs of
  // one configuration measured apart leave the objective flat between them).
  if (any_unchanged)
    std::cout << "(unchanged): no value fits the rows better than the catalog's (they do not depend on it, or pull "
                 "it both ways); the profile leaves it to the catalog\n";
  if (any_bound) std::cout << "(bound): the search stopped at the end of its range; the rows ask for more than it allows\n";
  for (const std::string& why : r.links_not_fitted) std::cout << "link class not fitted: " << why << "\n";
  TextTable per_suite({"suite", "rows", "skipped", "MAPE before", "after"});
  for (const auto& s : r.suites)
    per_suite.add_row({s.suite, std::to_string(s.rows_used), std::to_string(s.rows_skipped), models::format_percent(s.mape_before),
                       models::format_percent(s.mape_after)});
  per_suite.print(std::cout);
  if (!far_from_catalog.empty()) {
    std::cout << "warning: figures no device runs at:";
    for (std::size_t i = 0; i < far_from_catalog.size(); ++i) std::cout << (i ? "; " : " ") << far_from_catalog[i];
    std::cout << ". The fit reproduces these rows by bending device figures around what the model leaves out; check "
                 "the profile on runs it was not fitted on (validate --profile) before predicting others with it\n";
  }
  std::cout << "wrote " << o.out << " (use it with --profile)\n";
}

}  // namespace

void add_fit_verb(CLI::App& app) {
  auto o = std::make_shared<FitVerbOptions>();
  CLI::App* verb = app.add_subcommand(
      "fit", "Fit each GPU type's efficiency figures to measured iteration times (suites) and write a Profile");
  verb->add_option("suites", o->suites, "Suite files of measured runs (format of docs/validation.md)")->required();
  verb->add_option("--out", o->out, "Profile to write (atomically; default profile.yaml)")->check(output_file_check());
  add_list_option(verb, "--params", o->params,
                  "Figures to fit per GPU type: gemm (default), memory, host, flash; links: the achieved bandwidth of "
                  "each link class",
                  CLI::Validator());  // the names are checked with the verb's own message (run_fit)
  verb->add_option("--checkpoint", o->checkpoint,
                   "JSON lines of finished figure searches; a rerun of the same fit resumes from it (default "
                   "OUT.checkpoint.jsonl)")
      ->check(output_file_check());
  add_format_option(verb, &o->format);
  verb->callback([o] { run_fit(*o); });
}

}  // namespace hetsim::cli
