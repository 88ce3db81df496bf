// SPDX-License-Identifier: Apache-2.0
// `hetsim predict --cluster C --workload W (--plan P | --tp T --pp P --dp D [--micro M])`:
// the Report of one plan (DESIGN.md "Outputs"), as a table or JSON.
#include <iostream>
#include <optional>

#include "cli_common.hpp"
#include "plan_choice.hpp"
#include "engines.hpp"
#include "report.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

namespace {

struct PredictOptions {
  PlanChoice choice;
  std::string engine = "analytic";
  OutputFormat format = OutputFormat::kTable;
};

void run_predict(const PredictOptions& o) {
  const models::PredictFn* engine = find_engine(o.engine);
  if (!engine) {
    std::cerr << "hetsim predict: error: --engine: unknown engine '" << o.engine << "'\n";
    throw VerbExit{kExitBadInput};
  }
  PlanChoice choice = o.choice;
  check_plan_choice(choice, "predict");
  const Inputs in = load_inputs(choice.cluster, choice.workload, choice.plan);
  models::Report report;
  const models::Plan plan = choose_plan(
      choice, in, "predict", [&](const models::Plan& p) { return (*engine)(in.cluster, in.workload, p); }, &report);
  report.micro_batch = plan.micro_batch;
  if (o.format == OutputFormat::kJson) std::cout << models::to_json(report);
  else std::cout << models::to_table(report);
  if (!report.feasible) throw VerbExit{kExitFailure};
}

}  // namespace

void add_predict_verb(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  CLI::App* verb = app.add_subcommand("predict", "Predict the iteration time, throughput, memory and cost of a plan");
  add_plan_choice_options(verb, &o->choice);
  verb->add_option("--engine", o->engine, "Prediction engine: analytic (default) or a registered one such as sim");
  add_format_option(verb, &o->format);
  verb->callback([o] { run_predict(*o); });
}

}  // namespace hetsim::cli
