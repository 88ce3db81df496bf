// SPDX-License-Identifier: Apache-2.0
// `hetsim validate SUITE.yaml... [--format table|json] [--engine analytic]`: predicts every row
// of ground-truth suites and prints the errors (DESIGN.md "Ground-truth validation").
// Exit code 1 when a row could not be predicted, 2 on bad input.
#include <iostream>

#include "catalog.hpp"
#include "cli_common.hpp"
#include "diagnostics.hpp"
#include "engines.hpp"
#include "validation_suite.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

namespace {

struct ValidateOptions {
  std::vector<std::string> suites;
  OutputFormat format = OutputFormat::kTable;
  std::string engine = "analytic";
};

void run_validate(const ValidateOptions& o) {
  const models::PredictFn* engine = find_engine(o.engine);
  if (!engine) {
    std::string known;
    for (const auto& n : engine_names()) known += (known.empty() ? "" : ", ") + n;
    std::cerr << "hetsim validate: error: --engine: unknown engine '" << o.engine << "' (known: " << known << ")\n";
    throw VerbExit{kExitBadInput};
  }
  const models::Catalog& catalog = models::Catalog::builtin();
  // Read every suite first and report the errors of all files together.
  std::vector<models::Suite> suites;
  std::vector<models::Diagnostic> errors;
  for (const std::string& path : o.suites) {
    try {
      suites.push_back(models::load_suite(path, catalog));
    } catch (const models::ConfigError& e) {
      errors.insert(errors.end(), e.get_diagnostics().begin(), e.get_diagnostics().end());
    }
  }
  if (!errors.empty()) throw models::ConfigError(std::move(errors));
  std::vector<models::SuiteResult> results;
  int failed = 0;
  for (const models::Suite& s : suites) {
    results.push_back(models::validate_suite(s, catalog, *engine));
    failed += results.back().rows_failed;
  }
  if (o.format == OutputFormat::kJson) std::cout << models::validation_json(results);
  else std::cout << models::validation_table(results);
  if (failed > 0) throw VerbExit{kExitFailure};
}

}  // namespace

void add_validate_verb(CLI::App& app) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* verb = app.add_subcommand("validate", "Predict every row of ground-truth suites and report the errors");
  verb->add_option("suites", opts->suites, "Suite files (../shared/validation/*.yaml)")->required()->check(CLI::ExistingFile);
  add_format_option(verb, &opts->format);
  verb->add_option("--engine", opts->engine, "Prediction engine: analytic (default) or a registered one such as sim");
  verb->callback([opts] { run_validate(*opts); });
}

}  // namespace hetsim::cli
