// SPDX-License-Identifier: Apache-2.0
// `hetsim simulate`: the options of `predict`, answered by the SimGrid simulator: the same
// Report (engine "sim", plus simulated-only figures in `extra`), and with --trace FILE a Chrome
// trace-event timeline. Also registers the "sim" engine for `predict/validate --engine sim`
// (each plan simulated in a child process: SimGrid keeps one Engine per process).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <variant>

#include "cli_common.hpp"
#include "plan_choice.hpp"
#include "plan_notes.hpp"
#include "type_utilisation.hpp"
#include "engines.hpp"
#include "predictor.hpp"
#include "report.hpp"
#include "sim_report.hpp"
#include "trace_writer.hpp"
#include "verbs.hpp"
#include "wall_clock_limit.hpp"

namespace hetsim::cli {
namespace {

struct SimulateOptions {
  PlanChoice choice;
  std::string trace;
  int grad_buckets = 0;
  bool no_fold = false;
  double time_limit_s = 0;  ///< wall-clock seconds the simulation may take; 0: no limit
  OutputFormat format = OutputFormat::kTable;
};

/// The simulated-only figures of the table format: folding and the busiest links.
void print_links(const models::Report& report) {
  if (!report.feasible || report.extra.empty()) return;
  const auto get = [&](const std::string& k) { return report.extra.count(k) ? report.extra.at(k) : 0.0; };
  std::cout << "simulation\n  replicas simulated  " << get("sim_replicas_simulated") << " of " << get("sim_replicas_total")
            << (get("sim_folded") > 0 ? " (folded)" : "") << "\n  flows               " << format_count(get("sim_flows")) << '\n';
  TextTable t({"link", "utilisation"});
  std::vector<std::pair<double, std::string>> rows;
  for (const std::string prefix : {"link_utilisation:", "link_utilisation_max:"})
    for (const auto& [k, v] : report.extra)
      if (k.rfind(prefix, 0) == 0)
        rows.push_back({v, prefix == "link_utilisation:" ? k.substr(prefix.size()) : "(busiest " + k.substr(prefix.size()) + ")"});
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [v, name] : rows) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
    t.add_row({name, buf});
  }
  std::cout << "busiest links\n";
  t.print(std::cout, "  ");
}

/// More buckets than this is a typo: Megatron-Core's own count is at most 32, and each bucket is a
/// collective the simulator lays out (2^31 of them ran the machine out of memory).
constexpr int kMaxGradBuckets = 4096;

/// Why `--time-limit` stopped a run: how far it got (the last line the run printed, its size or
/// its progress, without the "simulate: " prefix) and what to do instead.
std::string time_limit_reason(const SimulateOptions& o, const std::string& last_report) {
  const std::string prefix = "simulate: ";
  const std::string last = last_report.rfind(prefix, 0) == 0 ? last_report.substr(prefix.size()) : last_report;
  return "stopped at --time-limit " + fmt("%g", o.time_limit_s) + " s of wall time" +
         (last.empty() ? std::string() : " (last report: " + last + ")") +
         "; no --trace was written (`hetsim predict` gives the cost model's figure for the same plan" +
         (o.no_fold ? "; without --no-fold the simulator folds congruent replicas and runs faster" : "") +
         "; --time-limit 0 lets the run finish)";
}

/// At the limit: the Report of a simulation that could not finish on stdout (as for one that ran
/// out of memory: JSON readers get a document), the error line for stderr returned.
std::string stop_at_time_limit(const SimulateOptions& o, int micro_batch, const std::string& last_report) {
  models::Report report;
  report.engine = "sim";
  report.feasible = false;
  report.micro_batch = micro_batch;
  report.infeasible_reason = sim::kSimulationFailed + time_limit_reason(o, last_report);
  std::cout << (o.format == OutputFormat::kJson ? models::to_json(report) : models::to_table(report)) << std::flush;
  return "hetsim simulate: error: " + report.infeasible_reason;
}

void run_simulate(const SimulateOptions& o) {
  PlanChoice choice = o.choice;
  check_plan_choice(choice, "simulate");
  check_output_files("simulate", {{"--trace", o.trace}}, {choice.cluster, choice.workload, choice.plan, choice.profile});
  const Inputs in = load_inputs(choice.cluster, choice.workload, choice.plan, choice.profile);
  // Without --micro, the micro-batch the cost model finds fastest (as `predict` picks it).
  const models::Plan plan = choose_plan_or_report(choice, in, "simulate", "sim", o.format, [&](const models::Plan& p) {
    return models::predict(in.cluster, in.workload, p);
  });
  if (o.grad_buckets > 0 && plan.zero >= 3) {
    // Checked first: such a plan may set overlap_grad_sync, and the buckets then changed nothing.
    std::cerr << "hetsim simulate: error: --grad-buckets: under ZeRO-3 each pass reduce-scatters its own gradients; "
                 "there is no bucketed sync after the backward pass to split (expected a plan with zero 0-2)\n";
    throw VerbExit{kExitBadInput};
  }
  if (o.grad_buckets > 0 && !(plan.overlap_grad_sync && plan.dp() > 1)) {
    std::cerr << "hetsim simulate: error: --grad-buckets: the plan's gradient sync is one collective after the backward "
                 "pass, not overlapped in buckets (expected a plan with data parallelism and overlap_grad_sync: true)\n";
    throw VerbExit{kExitBadInput};
  }
  sim::SimOptions opt;
  opt.fold = !o.no_fold;
  opt.grad_buckets = o.grad_buckets;
  opt.record_trace = !o.trace.empty();
  // Long runs report on stderr (the size up front, then progress every few seconds); runs of
  // under kProgressQuiet_s print nothing, so short outputs stay as they were. --time-limit ends
  // the process if the run is still going then (SimGrid cannot be stopped from outside).
  sim::SimResult result;
  models::Report report;
  {
    WallClockLimit limit(
        o.time_limit_s, [&o, &plan](const std::string& last) { return stop_at_time_limit(o, plan.micro_batch, last); },
        kExitFailure);
    opt.progress = [&limit](const std::string& line) { limit.progress(line); };
    report = sim::simulate_report(in.cluster, in.workload, plan, opt, &result);
    opt.progress = nullptr;  // it points at the limit, which ends here
  }
  report.micro_batch = plan.micro_batch;
  if (choice.plan.empty()) add_memory_flags_hint(choice, report);  // as `predict` says it
  if (report.feasible) report.notes = models::plan_notes(in.cluster, in.workload, plan);
  if (report.feasible)
    report.by_gpu_type = models::utilisation_by_type(in.cluster, in.workload, plan, report.iteration_time_s);
  if (!in.profile_note.empty()) report.notes.push_back(in.profile_note);
  if (!o.trace.empty() && report.feasible && result.trace_refused.empty()) sim::write_chrome_trace(result, o.trace);
  if (!o.trace.empty() && report.feasible && !result.trace_refused.empty())
    std::cerr << "hetsim simulate: note: --trace " << o.trace << " not written: " << result.trace_refused << '\n';
  if (!o.trace.empty() && !report.feasible)
    std::cerr << "hetsim simulate: note: --trace " << o.trace << " not written: nothing was simulated\n";
  if (o.format == OutputFormat::kJson) {
    std::cout << models::to_json(report);
  } else {
    std::cout << models::to_table(report);
    print_links(report);
  }
  // A run the simulator could not finish (out of memory) is a failure of the verb, not of the plan.
  if (!report.feasible && report.infeasible_reason.rfind(sim::kSimulationFailed, 0) == 0) {
    std::cerr << "hetsim simulate: error: " << report.infeasible_reason << '\n';
    throw VerbExit{kExitFailure};
  }
  if (!report.feasible) exit_infeasible("simulate", report.infeasible_reason);
}

}  // namespace

void add_simulate_verb(CLI::App& app) {
  register_engine("sim", [](const models::Cluster& c, const models::Workload& w, const models::Plan& p, double limit_s) {
    return sim::simulate_report_in_child(c, w, p, sim::SimOptions{}, limit_s);
  });
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* verb = app.add_subcommand("simulate", "Simulate one training step of a plan with SimGrid (contention, timeline)");
  add_profile_option(verb, &o->choice.profile);
  add_plan_choice_options(verb, &o->choice);
  verb->add_option("--trace", o->trace, "Write a Chrome trace-event timeline (Perfetto) to this file")
      ->check(output_file_check());
  verb->add_flag("--no-fold", o->no_fold, "Simulate every replica and flow (slower; for checking folding)");
  verb->add_option("--time-limit", o->time_limit_s,
                   "Seconds (\"90\", or with a unit: \"90s\", \"2min\") of wall time the simulation may take; a run still going then ends the verb with exit "
                   "code 1 and a Report of how far it got, writing no trace (default 0: no limit; so is 1e6 or more)")
      ->transform(duration_check());
  verb->add_option("--grad-buckets", o->grad_buckets, "Gradient buckets of an overlapped DP sync (default: Megatron-Core's, one per max(40M, 1M x dp) parameters, at most 32; never more than the smallest group's gradient elements)")
      ->transform(integer_check(1, kMaxGradBuckets));
  add_format_option(verb, &o->format);
  verb->callback([o] { run_simulate(*o); });
}

}  // namespace hetsim::cli
