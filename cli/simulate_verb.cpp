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
#include "engines.hpp"
#include "predictor.hpp"
#include "report.hpp"
#include "sim_report.hpp"
#include "trace_writer.hpp"
#include "verbs.hpp"

namespace hetsim::cli {
namespace {

struct SimulateOptions {
  std::string cluster, workload, plan, trace;
  int tp = 0, pp = 0, dp = 0, micro = 0, interleave = 1, zero = 0, grad_buckets = 0;
  std::string schedule = "1f1b", recompute = "none";
  bool sequence_parallel = false, no_fold = false;
  OutputFormat format = OutputFormat::kTable;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "hetsim simulate: error: " << msg << '\n';
  throw VerbExit{kExitBadInput};
}

models::UniformPlanOptions uniform_options(const SimulateOptions& o) {
  models::UniformPlanOptions u;
  u.schedule = o.interleave > 1 || o.schedule == "interleaved" ? models::Schedule::kInterleaved
               : o.schedule == "gpipe"                          ? models::Schedule::kGpipe
                                                                : models::Schedule::k1f1b;
  u.interleave = o.interleave;
  u.recompute = o.recompute == "full"        ? models::Recompute::kFull
                : o.recompute == "selective" ? models::Recompute::kSelective
                                             : models::Recompute::kNone;
  u.sequence_parallel = o.sequence_parallel;
  u.zero = o.zero;
  return u;
}

/// The plan to simulate: the file's, or the Megatron shorthand with --micro or, without it,
/// the micro-batch the cost model finds fastest among the feasible ones (as `predict` picks).
models::Plan choose_plan(const SimulateOptions& o, const Inputs& in) {
  if (in.plan) return *in.plan;
  models::UniformPlanOptions u = uniform_options(o);
  std::vector<int> micros;
  if (o.micro > 0) {
    micros.push_back(o.micro);
  } else {
    const int per_replica = in.workload.training.global_batch / o.dp;
    for (int b = 1; b <= per_replica; ++b)
      if (per_replica % b == 0) micros.push_back(b);
  }
  std::optional<models::Plan> best;
  std::optional<models::Report> best_report;
  std::string why;
  for (int micro : micros) {
    u.micro_batch = micro;
    auto plan = models::make_uniform_plan(in.cluster, in.workload, o.tp, o.pp, o.dp, u);
    if (auto* bad = std::get_if<models::Infeasible>(&plan)) {
      why = bad->reason;
      continue;
    }
    models::Report r = models::predict(in.cluster, in.workload, std::get<models::Plan>(plan));
    const bool better = !best_report || (r.feasible && (!best_report->feasible || r.iteration_time_s < best_report->iteration_time_s));
    if (better) {
      best_report = std::move(r);
      best = std::get<models::Plan>(std::move(plan));
    }
  }
  if (!best) usage_error("no valid plan: " + why);
  return *best;
}

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

void run_simulate(const SimulateOptions& o) {
  const bool shorthand = o.tp > 0 || o.pp > 0 || o.dp > 0;
  if (o.plan.empty() == !shorthand) usage_error("give either --plan or all of --tp, --pp, --dp");
  if (shorthand && (o.tp < 1 || o.pp < 1 || o.dp < 1)) usage_error("--tp, --pp and --dp must all be given (>= 1)");
  const Inputs in = load_inputs(o.cluster, o.workload, o.plan);
  const models::Plan plan = choose_plan(o, in);
  sim::SimOptions opt;
  opt.fold = !o.no_fold;
  opt.grad_buckets = o.grad_buckets;
  opt.record_trace = !o.trace.empty();
  sim::SimResult result;
  models::Report report = sim::simulate_report(in.cluster, in.workload, plan, opt, &result);
  report.micro_batch = plan.micro_batch;
  if (!o.trace.empty() && report.feasible) sim::write_chrome_trace(result, o.trace);
  if (o.format == OutputFormat::kJson) {
    std::cout << models::to_json(report);
  } else {
    std::cout << models::to_table(report);
    print_links(report);
  }
  if (!report.feasible) throw VerbExit{kExitFailure};
}

}  // namespace

void add_simulate_verb(CLI::App& app) {
  register_engine("sim", [](const models::Cluster& c, const models::Workload& w, const models::Plan& p) {
    return sim::simulate_report_in_child(c, w, p, sim::SimOptions{});
  });
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* verb = app.add_subcommand("simulate", "Simulate one training step of a plan with SimGrid (contention, timeline)");
  verb->add_option("--cluster", o->cluster, "Cluster file (kind: cluster)")->required()->check(CLI::ExistingFile);
  verb->add_option("--workload", o->workload, "Workload file (kind: workload)")->required()->check(CLI::ExistingFile);
  verb->add_option("--plan", o->plan, "Plan file (kind: plan)")->check(CLI::ExistingFile);
  verb->add_option("--tp", o->tp, "Tensor-parallel degree (Megatron shorthand)")->check(CLI::PositiveNumber);
  verb->add_option("--pp", o->pp, "Pipeline-parallel degree")->check(CLI::PositiveNumber);
  verb->add_option("--dp", o->dp, "Data-parallel degree")->check(CLI::PositiveNumber);
  verb->add_option("--micro", o->micro, "Micro-batch size (default: the fastest feasible by the cost model)")
      ->check(CLI::PositiveNumber);
  verb->add_option("--schedule", o->schedule, "gpipe | 1f1b | interleaved (default 1f1b)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved"}));
  verb->add_option("--interleave", o->interleave, "Virtual stages per GPU (interleaved 1F1B)")->check(CLI::PositiveNumber);
  verb->add_option("--recompute", o->recompute, "none | selective | full (default none)")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  verb->add_flag("--sequence-parallel", o->sequence_parallel, "Megatron sequence parallelism");
  verb->add_option("--zero", o->zero, "ZeRO stage 0-3")->check(CLI::Range(0, 3));
  verb->add_option("--trace", o->trace, "Write a Chrome trace-event timeline (Perfetto) to this file");
  verb->add_flag("--no-fold", o->no_fold, "Simulate every replica and flow (slower; for checking folding)");
  verb->add_option("--grad-buckets", o->grad_buckets, "Gradient buckets of an overlapped DP sync (default 4)")
      ->check(CLI::PositiveNumber);
  add_format_option(verb, &o->format);
  verb->callback([o] { run_simulate(*o); });
}

}  // namespace hetsim::cli
