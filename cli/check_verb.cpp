// SPDX-License-Identifier: Apache-2.0
// `hetsim check --cluster C --workload W --plan P --profile F [--tolerance 0.25] [--steps N]`:
// runs the plan for real with the execution engine (threads as ranks), predicts it with the
// analytic model under the calibrated profile, prints both Reports' key figures side by side and
// fails (exit 1) when the iteration time's relative error exceeds the tolerance. The tolerance is
// a model-accuracy check, not a wall-clock limit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli_common.hpp"
#include "json_writer.hpp"
#include "plan_choice.hpp"
#include "predictor.hpp"
#include "report.hpp"
#include "runner/run.hpp"
#include "stats.hpp"
#include "units.hpp"
#include "verbs.hpp"

namespace hetsim::cli {
namespace {

struct CheckOptions {
  std::string cluster, workload, plan, profile;
  double tolerance = 0.25;
  int steps = 8;
  OutputFormat format = OutputFormat::kTable;
};

/// models::relative_error, 0 where nothing was measured (a phase the run never timed).
double relative_error(double predicted, double measured) {
  return measured > 0 ? models::relative_error(predicted, measured) : 0.0;
}

std::string pct(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * x);
  return buf;
}

void run_check(const CheckOptions& o) {
  const Inputs in = load_inputs(o.cluster, o.workload, o.plan, o.profile);
  if (!in.plan_infeasible_reason.empty()) {
    // As `predict` of the same plan: JSON readers get a Report saying why.
    if (o.format == OutputFormat::kJson) print_refused_report("analytic", in.plan_infeasible_reason, o.format);
    exit_infeasible("check", in.plan_infeasible_reason);
  }
  exec::RunSpec spec;
  spec.cluster = in.cluster;
  spec.workload = in.workload;
  spec.plan = *in.plan;
  spec.steps = o.steps;
  spec.options.keep_measurements = false;  // check reads the Report: records folded as they come (~50 MB a step kept before)
  // Price what the engine runs (exec/README.md), not what the inputs say for training stacks.
  const exec::Executed executed = exec::as_executed(in.workload, *in.plan);
  const models::Report predicted = models::predict(in.cluster, executed.workload, executed.plan);
  if (!predicted.feasible && o.format == OutputFormat::kJson) std::cout << models::to_json(predicted);  // as predict
  refuse_if_infeasible("check", predicted);
  refuse_if_host_memory_short("check", in.cluster, executed.plan, predicted, o.format);
  exec::RunOutcome run;
  note_if_ranks_share_cores("check", spec.cluster, spec.plan);
  note_if_long_run("check", predicted, spec.steps);
  note_if_machine_busy("check", "the ranks get shares of cores, so the run measures slow against the profile's figures");
  try {
    run = exec::run_in_process(spec);
  } catch (const exec::RankFailure& e) {
    // As `run`: {"completed": false, "reason"} for JSON readers.
    exit_with_reason("check", "completed", e.what(), e.what(), o.format);
  } catch (const std::invalid_argument& e) {
    if (o.format == OutputFormat::kJson)
      print_refused_report("exec", std::string("cannot execute the plan: ") + e.what(), o.format);
    std::cerr << "hetsim check: cannot execute the plan: " << e.what() << '\n';
    throw VerbExit{kExitFailure};
  }
  // Measured iteration time: the median step after the warm-up step (robust to a noisy machine);
  // the breakdown is the engine's mean over the same steps, on the critical path like the
  // predictor's (its categories sum to the mean step; exec/README.md "Breakdown").
  std::vector<double> times;
  for (std::size_t i = run.steps.size() > 1 ? 1 : 0; i < run.steps.size(); ++i) times.push_back(run.steps[i].time_s);
  const models::Report& measured = run.report;
  const double measured_iteration = models::median(times);
  const double error = relative_error(predicted.iteration_time_s, measured_iteration);
  const bool pass = std::abs(error) <= o.tolerance;

  if (o.format == OutputFormat::kJson) {
    models::JsonOut j;
    j.begin_object();
    j.key("measured_iteration_time_s").value(measured_iteration);
    j.key("predicted_iteration_time_s").value(predicted.iteration_time_s);
    j.key("relative_error").value(error);
    j.key("tolerance").value(o.tolerance);
    j.key("pass").value(pass);
    // The iteration time is the median step (robust to a noisy machine); the breakdown is the
    // engine's mean over the same steps, which sums to measured_mean_iteration_time_s.
    j.key("measured_steps").value(static_cast<int>(times.size()));
    j.key("measured_mean_iteration_time_s").value(measured.iteration_time_s);
    j.key("profile").value(o.profile);
    // What ran (the GPU backend: which GEMM library), from the engine's report.
    j.key("measured_notes").begin_array();
    for (const std::string& n : measured.notes) j.value(n);
    j.end_array();
    j.key("measured").begin_object();
    j.key("compute_s").value(measured.breakdown.compute_s).key("tp_comm_s").value(measured.breakdown.tp_comm_s);
    j.key("pp_comm_s").value(measured.breakdown.pp_comm_s).key("dp_comm_s").value(measured.breakdown.dp_comm_s);
    j.key("bubble_s").value(measured.breakdown.bubble_s).key("optimizer_s").value(measured.breakdown.optimizer_s);
    j.end_object();
    j.key("predicted").begin_object();
    j.key("compute_s").value(predicted.breakdown.compute_s).key("tp_comm_s").value(predicted.breakdown.tp_comm_s);
    j.key("pp_comm_s").value(predicted.breakdown.pp_comm_s).key("dp_comm_s").value(predicted.breakdown.dp_comm_s);
    j.key("bubble_s").value(predicted.breakdown.bubble_s).key("optimizer_s").value(predicted.breakdown.optimizer_s);
    j.end_object();
    j.end_object();
    std::cout << j.str();
  } else {
    TextTable t({"figure", "measured", "predicted", "error"});
    auto row = [&](const std::string& name, double m, double p) {
      t.add_row({name, models::format_time(m), models::format_time(p), m > 0 ? pct(relative_error(p, m)) : "-"});
    };
    row("iteration time", measured_iteration, predicted.iteration_time_s);
    row("compute", measured.breakdown.compute_s, predicted.breakdown.compute_s);
    row("tp comm", measured.breakdown.tp_comm_s, predicted.breakdown.tp_comm_s);
    row("pp comm", measured.breakdown.pp_comm_s, predicted.breakdown.pp_comm_s);
    row("dp comm", measured.breakdown.dp_comm_s, predicted.breakdown.dp_comm_s);
    row("bubble", measured.breakdown.bubble_s, predicted.breakdown.bubble_s);
    row("optimizer", measured.breakdown.optimizer_s, predicted.breakdown.optimizer_s);
    const std::size_t stages = std::min(measured.stages.size(), predicted.stages.size());
    for (std::size_t s = 0; s < stages; ++s) {
      const auto &ms = measured.stages[s], &ps = predicted.stages[s];
      const std::string tag = "stage " + std::to_string(ms.replica) + "." + std::to_string(ms.stage) + " " + ms.gpu_type;
      row(tag + " fwd/mb", ms.forward_s, ps.forward_s);
      row(tag + " bwd/mb", ms.backward_s, ps.backward_s);
    }
    t.print(std::cout);
    char line[160];
    std::snprintf(line, sizeof line, "tokens/s: measured %.0f, predicted %.0f\n",
                  measured_iteration > 0 ? measured.tokens_per_s * measured.iteration_time_s / measured_iteration : 0.0,
                  predicted.tokens_per_s);
    std::cout << line;
    std::cout << "measured: the iteration time is the median of " << times.size()
              << " steps after the warm-up; the breakdown and stages are the engine's mean over them ("
              << models::format_time(measured.iteration_time_s)
              << " a step); predicted as the engine runs the plan (its own kernels, no dropout, FP32 GEMMs: "
                 "exec/README.md), with "
              << (in.profile_note.empty() ? std::string("the catalog's figures") : in.profile_note) << '\n';
    for (const std::string& n : measured.notes) std::cout << "note: " << n << '\n';
    char tolerance[32];  // three figures: "--tolerance 1e-300" printed as "0.0%"
    std::snprintf(tolerance, sizeof tolerance, "%.3g%%", 100.0 * o.tolerance);
    std::cout << (pass ? "PASS" : "FAIL") << ": iteration time error " << pct(error) << " (tolerance " << tolerance
              << ", median of " << times.size() << " step" << (times.size() == 1 ? "" : "s") << ")\n";
  }
  if (!pass) throw VerbExit{kExitFailure};
}

}  // namespace

void add_check_verb(CLI::App& app) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* verb = app.add_subcommand(
      "check", "Run a plan for real, predict it with a calibrated profile, compare; exit 1 beyond the tolerance");
  verb->add_option("--cluster", o->cluster, "Cluster file (kind: cluster)")->required();
  verb->add_option("--workload", o->workload, "Workload file (kind: workload)")->required();
  verb->add_option("--plan", o->plan, "Plan file (kind: plan)")->required();
  verb->add_option("--profile", o->profile, "Calibrated profile (kind: profile)")->required();
  verb->add_option("--tolerance", o->tolerance,
                   "Largest accepted relative error of the iteration time: \"0.25\" or \"25%\" (default 0.25)")
      ->transform(fraction_check());
  verb->add_option("--steps", o->steps, "Training steps to run; the first is warm-up (default 8)")
      ->transform(integer_check(2, 10000));
  add_format_option(verb, &o->format);
  verb->callback([o] { run_check(*o); });
}

}  // namespace hetsim::cli
