// SPDX-License-Identifier: Apache-2.0
// `hetsim predict --cluster C --workload W (--plan P | --tp T --pp P --dp D [--micro M])`:
// the Report of one plan (DESIGN.md "Outputs"), as a table or JSON.
#include <cstdio>
#include <cmath>
#include <iostream>
#include <optional>

#include "cli_common.hpp"
#include "plan_choice.hpp"
#include "plan_notes.hpp"
#include "type_utilisation.hpp"
#include "engines.hpp"
#include "op_breakdown.hpp"
#include "predictor.hpp"
#include "preemption.hpp"
#include "report.hpp"
#include "runner/run.hpp"
#include "units.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

namespace {

struct PredictOptions {
  PlanChoice choice;
  std::string engine = "analytic";
  OutputFormat format = OutputFormat::kTable;
  bool spot = false;
  bool ops = false;
  bool as_executed = false;
};

/// --spot: the report at spot prices, and what its spot nodes' preemptions leave of it
/// (models/preemption.hpp), in its `extra` figures.
void add_spot_outlook(const Inputs& in, const models::Plan& plan, models::Report& report) {
  const models::SpotOutlook s = models::price_at_spot(in.cluster, in.workload, plan, report);
  report.extra["spot_preemptions_per_hour"] = s.preemptions_per_hour;
  report.extra["spot_checkpoint_bytes"] = s.checkpoint_bytes;
  report.extra["spot_checkpoint_s"] = s.checkpoint_s;
  report.extra["spot_checkpoint_interval_s"] = models::if_preempted(s, s.checkpoint_interval_s);  // JSON null when
  report.extra["spot_restart_s"] = models::if_preempted(s, s.restart_s);                            // never preempted
  report.extra["spot_goodput_fraction"] = s.goodput_fraction;
  report.extra["goodput_tokens_per_s"] = report.tokens_per_s * s.goodput_fraction;
}

std::string spot_table(const models::Report& r) {
  const auto x = [&](const char* k) { return r.extra.at(k); };
  char line[512];
  std::snprintf(line, sizeof line,
                "spot (preemptions)\n  reclaimed        %.3g per hour\n  checkpoint       %s, %s to write, every %s\n"
                "  restart          %s\n  goodput          %.1f%% = %.0f tokens/s\n",
                x("spot_preemptions_per_hour"), models::format_size(x("spot_checkpoint_bytes")).c_str(),
                models::format_time(x("spot_checkpoint_s")).c_str(),
                x("spot_checkpoint_interval_s") > 0 ? models::format_time(x("spot_checkpoint_interval_s")).c_str() : "-",
                std::isfinite(x("spot_restart_s")) ? models::format_time(x("spot_restart_s")).c_str() : "-",
                100 * x("spot_goodput_fraction"),
                x("goodput_tokens_per_s"));
  return line;
}

void run_predict(const PredictOptions& o) {
  const models::PredictFn* engine = find_engine(o.engine);
  if (!engine) {
    std::cerr << unknown_engine_error("predict", o.engine) << '\n';
    throw VerbExit{kExitBadInput};
  }
  PlanChoice choice = o.choice;
  check_plan_choice(choice, "predict");
  Inputs in = load_inputs(choice.cluster, choice.workload, choice.plan, choice.profile);
  // --as-executed: the workload and every plan tried as `hetsim run` trains them (exec/README.md).
  const auto as_run = [&](const models::Plan& p) { return o.as_executed ? exec::as_executed(in.workload, p).plan : p; };
  if (o.as_executed) {
    try {
      exec::check_executable(in.workload);
    } catch (const std::invalid_argument& e) {
      // As `run` and `check` refuse the same workload: a plan the engine cannot train, exit 1
      // (the inputs are valid; 2 is for bad input).
      if (o.format == OutputFormat::kJson)
        print_refused_report(o.engine, std::string("--as-executed: cannot execute the plan: ") + e.what(), o.format);
      std::cerr << "hetsim predict: --as-executed: cannot execute the plan: " << e.what() << '\n';
      throw VerbExit{kExitFailure};
    }
    in.workload = exec::as_executed(in.workload, models::Plan{}).workload;
  }
  models::Report report;
  const models::Plan plan = as_run(choose_plan_or_report(
      choice, in, "predict", o.engine, o.format,
      [&](const models::Plan& p) { return (*engine)(in.cluster, in.workload, as_run(p)); }, &report));
  report.micro_batch = plan.micro_batch;
  if (report.feasible) report.notes = models::plan_notes(in.cluster, in.workload, plan);
  // A well-formed plan over capacity still prints its figures: the assumed ones are noted too.
  else if (models::check_plan(plan, in.cluster, in.workload).empty())
    report.notes = models::assumed_efficiency_notes(in.cluster, in.workload, {&plan});
  if (report.feasible && o.engine == "analytic")
    if (std::string note = models::lockstep_parity_note(in.cluster, in.workload, plan, report.iteration_time_s);
        !note.empty())
      report.notes.push_back(std::move(note));
  if (report.feasible)
    report.by_gpu_type = models::utilisation_by_type(in.cluster, in.workload, plan, report.iteration_time_s);
  if (!in.profile_note.empty()) report.notes.push_back(in.profile_note);
  if (o.as_executed)
    report.notes.push_back("priced as `hetsim run` trains the plan: the execution engine's own kernels, no dropout, "
                           "FP32 GEMMs, blocking ZeRO-3 gathers, gradient sync after the backward (exec/README.md)");
  if (o.spot && report.feasible) {
    add_spot_outlook(in, plan, report);
    if (!models::any_spot_price(in.cluster)) report.notes.push_back(models::kNoSpotPriceNote);
  }
  // The cost model's ops, whichever engine predicted: both run these (models/plan_work.hpp).
  if (o.ops && report.feasible)
    report.stage_ops = models::op_breakdown(in.cluster, plan, models::build_plan_work(in.cluster, in.workload, plan));
  if (o.format == OutputFormat::kJson) std::cout << models::to_json(report);
  else std::cout << models::to_table(report) << (o.spot && report.feasible ? spot_table(report) : "");
  if (!report.feasible) exit_infeasible("predict", report.infeasible_reason);
}

}  // namespace

void add_predict_verb(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  CLI::App* verb = app.add_subcommand("predict", "Predict the iteration time, throughput, memory and cost of a plan");
  add_profile_option(verb, &o->choice.profile);
  add_plan_choice_options(verb, &o->choice);
  verb->add_option("--engine", o->engine, "Prediction engine: analytic (default) or a registered one such as sim");
  add_format_option(verb, &o->format);
  verb->add_flag("--spot", o->spot,
                 "Price nodes at their spot price where the cluster gives one, and report the goodput their preemptions "
                 "leave (JSON: extra.goodput_tokens_per_s, extra.spot_*)");
  verb->add_flag("--ops", o->ops,
                 "Also print the cost model's ops per micro-batch of each distinct stage, longest first (JSON: "
                 "stage_ops)");
  verb->add_flag("--as-executed", o->as_executed,
                 "Price the plan as `hetsim run` trains it (the execution engine's kernels, no dropout, FP32 GEMMs, "
                 "blocking ZeRO-3 gathers, gradient sync after the backward): what `run` and `check` compare with");
  verb->callback([o] { run_predict(*o); });
}

}  // namespace hetsim::cli
