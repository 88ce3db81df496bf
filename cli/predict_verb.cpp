// SPDX-License-Identifier: Apache-2.0
// `hetsim predict --cluster C --workload W (--plan P | --tp T --pp P --dp D [--micro M])`:
// the Report of one plan (DESIGN.md "Outputs"), as a table or JSON.
#include <iostream>
#include <optional>

#include "cli_common.hpp"
#include "engines.hpp"
#include "report.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

namespace {

struct PredictOptions {
  std::string cluster, workload, plan;
  std::string profile;  // --profile
  int tp = 0, pp = 0, dp = 0, micro = 0, interleave = 1, zero = 0;
  std::string schedule = "1f1b", recompute = "none", engine = "analytic";
  bool sequence_parallel = false;
  OutputFormat format = OutputFormat::kTable;
};

models::Schedule parse_schedule(const std::string& s) {
  if (s == "gpipe") return models::Schedule::kGpipe;
  if (s == "interleaved") return models::Schedule::kInterleaved;
  return models::Schedule::k1f1b;
}

models::Recompute parse_recompute(const std::string& s) {
  if (s == "selective") return models::Recompute::kSelective;
  if (s == "full") return models::Recompute::kFull;
  return models::Recompute::kNone;
}

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "hetsim predict: error: " << msg << '\n';
  throw VerbExit{kExitBadInput};
}

void run_predict(const PredictOptions& o) {
  const models::PredictFn* engine = find_engine(o.engine);
  if (!engine) usage_error("--engine: unknown engine '" + o.engine + "'");
  const bool shorthand = o.tp > 0 || o.pp > 0 || o.dp > 0;
  if (o.plan.empty() == !shorthand) usage_error("give either --plan or all of --tp, --pp, --dp");
  if (shorthand && (o.tp < 1 || o.pp < 1 || o.dp < 1)) usage_error("--tp, --pp and --dp must all be given (>= 1)");
  Inputs in = load_inputs(o.cluster, o.workload, o.plan, o.profile);

  std::optional<models::Report> report;
  if (in.plan) {
    report = (*engine)(in.cluster, in.workload, *in.plan);
    report->micro_batch = in.plan->micro_batch;
  } else {
    models::UniformPlanOptions u;
    u.schedule = o.interleave > 1 ? models::Schedule::kInterleaved : parse_schedule(o.schedule);
    u.interleave = o.interleave;
    u.recompute = parse_recompute(o.recompute);
    u.sequence_parallel = o.sequence_parallel;
    u.zero = o.zero;
    // --micro omitted: the fastest feasible micro-batch that divides the per-replica batch.
    std::vector<int> micros;
    if (o.micro > 0) {
      micros.push_back(o.micro);
    } else {
      const int per_replica = in.workload.training.global_batch / o.dp;
      for (int b = 1; b <= per_replica; ++b)
        if (per_replica % b == 0) micros.push_back(b);
    }
    std::string why;
    for (int micro : micros) {
      u.micro_batch = micro;
      auto plan = models::make_uniform_plan(in.cluster, in.workload, o.tp, o.pp, o.dp, u);
      if (auto* bad = std::get_if<models::Infeasible>(&plan)) {
        why = bad->reason;
        continue;
      }
      models::Report r = (*engine)(in.cluster, in.workload, std::get<models::Plan>(plan));
      r.micro_batch = micro;
      const bool better = !report || (r.feasible && (!report->feasible || r.iteration_time_s < report->iteration_time_s));
      if (better) report = std::move(r);
    }
    if (!report) usage_error("no valid plan: " + why);
  }
  if (o.format == OutputFormat::kJson) std::cout << models::to_json(*report);
  else std::cout << models::to_table(*report);
  if (!report->feasible) throw VerbExit{kExitFailure};
}

}  // namespace

void add_predict_verb(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  CLI::App* verb = app.add_subcommand("predict", "Predict the iteration time, throughput, memory and cost of a plan");
  verb->add_option("--cluster", o->cluster, "Cluster file (kind: cluster)")->required()->check(CLI::ExistingFile);
  add_profile_option(verb, &o->profile);
  verb->add_option("--workload", o->workload, "Workload file (kind: workload)")->required()->check(CLI::ExistingFile);
  verb->add_option("--plan", o->plan, "Plan file (kind: plan)")->check(CLI::ExistingFile);
  verb->add_option("--tp", o->tp, "Tensor-parallel degree (Megatron shorthand)")->check(CLI::PositiveNumber);
  verb->add_option("--pp", o->pp, "Pipeline-parallel degree")->check(CLI::PositiveNumber);
  verb->add_option("--dp", o->dp, "Data-parallel degree")->check(CLI::PositiveNumber);
  verb->add_option("--micro", o->micro, "Micro-batch size (default: the fastest feasible)")->check(CLI::PositiveNumber);
  verb->add_option("--schedule", o->schedule, "gpipe | 1f1b | interleaved (default 1f1b)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved"}));
  verb->add_option("--interleave", o->interleave, "Virtual stages per GPU (interleaved 1F1B)")->check(CLI::PositiveNumber);
  verb->add_option("--recompute", o->recompute, "none | selective | full (default none)")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  verb->add_flag("--sequence-parallel", o->sequence_parallel, "Megatron sequence parallelism");
  verb->add_option("--zero", o->zero, "ZeRO stage 0-3")->check(CLI::Range(0, 3));
  verb->add_option("--engine", o->engine, "Prediction engine: analytic (default) or a registered one such as sim");
  add_format_option(verb, &o->format);
  verb->callback([o] { run_predict(*o); });
}

}  // namespace hetsim::cli
