// SPDX-License-Identifier: Apache-2.0
// `hetsim validate SUITE.yaml... [--format table|json] [--rows] [--engine analytic] [--emit-dir DIR] [--profile F]`:
// predicts every row of ground-truth suites and prints the errors (DESIGN.md "Ground-truth
// validation"); --emit-dir also writes each row's cluster/workload/plan YAML.
// Exit code 1 when a row could not be predicted, 2 on bad input.
#include <iostream>
#include <optional>

#include "catalog.hpp"
#include "cli_common.hpp"
#include "diagnostics.hpp"
#include "engines.hpp"
#include "progress_ticker.hpp"
#include "profile.hpp"
#include "suite_emit.hpp"
#include "validate_progress.hpp"
#include "validation_suite.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

namespace {

struct ValidateOptions {
  std::vector<std::string> suites;
  OutputFormat format = OutputFormat::kTable;
  std::string engine = "analytic";
  std::string emit_dir;  ///< when set: DIR/<suite>/<row>/{cluster,workload,plan}.yaml
  std::string profile;   ///< when set: applied to every row's cluster before predicting
  bool rows = false;     ///< table format: one line per row as well
};

void run_validate(const ValidateOptions& o) {
  const models::PredictFn* engine = find_engine(o.engine);
  if (!engine) {
    std::cerr << unknown_engine_error("validate", o.engine) << '\n';
    throw VerbExit{kExitBadInput};
  }
  const models::Catalog& catalog = models::Catalog::builtin();
  const auto changed = std::make_shared<std::atomic<long>>(0);  // rows whose system the profile changed
  models::DiagnosticCollector input_errors;  // the profile's and the suites' together
  std::shared_ptr<const models::Profile> profile;
  if (!o.profile.empty())
    input_errors.collect([&] { profile = std::make_shared<const models::Profile>(models::load_profile(o.profile)); });
  const std::vector<models::Suite> suites = load_suite_files(o.suites, catalog, &input_errors);
  const models::PredictFn predict = profile ? models::with_profile(profile, *engine, changed) : *engine;
  if (!o.emit_dir.empty()) {  // before any row is predicted
    models::DiagnosticCollector errors;
    const std::vector<std::string> problems = models::check_emit_targets(suites, o.emit_dir, errors, {o.profile});
    errors.throw_if_any();
    for (const std::string& p : problems) std::cerr << "hetsim validate: error: --emit-dir: " << p << "\n";
    if (!problems.empty()) throw VerbExit{kExitBadInput};
  }
  std::vector<models::SuiteResult> results;
  int failed = 0;
  std::string emit_error;  // reported after the results, which are not lost to it
  // Suites of many rows, or rows the simulator takes seconds over, report on stderr as
  // `simulate` does: nothing in the first seconds, then a line every few seconds, on a clock so
  // that one long row is not silent either.
  RowProgress progress;
  std::optional<ProgressTicker> ticker;
  ticker.emplace([&](double wall_s) { return progress.line(suites, wall_s); });
  for (std::size_t k = 0; k < suites.size(); ++k) {
    const models::Suite& s = suites[k];
    progress.start_suite(k);
    const auto row_done = [&](std::size_t done, std::size_t) { progress.row_done(done); };
    results.push_back(models::validate_suite(s, catalog, predict, row_done));
    failed += results.back().rows_failed;
    if (!o.emit_dir.empty() && emit_error.empty()) {
      try {
        models::emit_suite_inputs(s, results.back(), catalog, o.emit_dir, o.profile);
      } catch (const std::runtime_error& e) {
        emit_error = e.what();
      }
    }
  }
  ticker.reset();  // no progress line after the results
  // As predict and plan: a profile of other GPUs and links would print the catalog's figures
  // as if calibrated.
  if (profile && *changed == 0) {
    std::cerr << o.profile << ": error: profile '" << profile->name
              << "' names no device type or link class of any row's system and would change nothing "
                 "(expected a profile of these suites' GPUs or links)\n";
    throw VerbExit{kExitBadInput};
  }
  if (o.format == OutputFormat::kJson) std::cout << models::validation_json(results);
  else std::cout << models::validation_table(results, o.rows);
  if (!emit_error.empty()) {
    std::cerr << "hetsim validate: error: --emit-dir: " << emit_error << "\n";
    throw VerbExit{kExitFailure};
  }
  if (failed > 0) throw VerbExit{kExitFailure};
}

}  // namespace

void add_validate_verb(CLI::App& app) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* verb = app.add_subcommand("validate", "Predict every row of ground-truth suites and report the errors");
  verb->add_option("suites", opts->suites, "Suite files of measured runs (docs/validation.md; ../shared/validation/*.yaml, validation/*.yaml)")->required();
  add_format_option(verb, &opts->format);
  verb->add_option("--engine", opts->engine, "Prediction engine: analytic (default) or a registered one such as sim");
  verb->add_option("--emit-dir", opts->emit_dir,
                   "Also write each row's inputs as DIR/<suite>/<row>/{cluster,workload,plan}.yaml")
      ->check(output_dir_check());
  add_profile_option(verb, &opts->profile);
  verb->add_flag("--rows", opts->rows, "Table format: also list every row (micro-batch, measured, predicted, error)");
  verb->callback([opts] { run_validate(*opts); });
}

}  // namespace hetsim::cli
