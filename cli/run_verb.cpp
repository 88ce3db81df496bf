// SPDX-License-Identifier: Apache-2.0
// `hetsim run`: trains a few steps of a Plan for real with the execution engine and prints the
// measured Report (the same keys as `predict`). Threads as ranks by default; under
// `mpirun -np K hetsim run ...` one process per rank (rank 0 prints the Report, every rank
// writes its own measurements).
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "cli_common.hpp"
#include "comm/mpi_communicator.hpp"
#include "report.hpp"
#include "runner/run.hpp"
#include "verbs.hpp"

namespace hetsim::cli {
namespace {

struct RunVerbOptions {
  std::string cluster, workload, plan;
  int tp = 0, pp = 0, dp = 0;
  int micro_batch = 1;
  std::string schedule = "1f1b";
  int interleave = 1;
  int zero = 0;
  std::string recompute = "none";
  int steps = 1;
  std::string out;
  OutputFormat format = OutputFormat::kTable;
  std::uint64_t seed = 1234;
  double learning_rate = 1e-3;
  std::string inject_fault;  // RANK[:throw|kill[:STEP]]
};

/// Under mpirun every rank parses the inputs; only the first reports a bad plan.
bool first_process() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* v = std::getenv(var)) return std::string(v) == "0";
  }
  return true;
}

models::Plan build_plan(const RunVerbOptions& o, const Inputs& in) {
  if (in.plan) return *in.plan;
  static const std::map<std::string, models::Schedule> schedules = {
      {"gpipe", models::Schedule::kGpipe}, {"1f1b", models::Schedule::k1f1b},
      {"interleaved", models::Schedule::kInterleaved}};
  static const std::map<std::string, models::Recompute> recomputes = {
      {"none", models::Recompute::kNone}, {"selective", models::Recompute::kSelective},
      {"full", models::Recompute::kFull}};
  models::UniformPlanOptions u;
  u.micro_batch = o.micro_batch;
  u.schedule = schedules.at(o.schedule);
  u.interleave = o.interleave;
  u.zero = o.zero;
  u.recompute = recomputes.at(o.recompute);
  auto made = models::make_uniform_plan(in.cluster, in.workload, o.tp, o.pp, o.dp, u);
  if (auto* bad = std::get_if<models::Infeasible>(&made)) {
    if (first_process()) std::cerr << "hetsim run: infeasible plan: " << bad->reason << '\n';
    throw VerbExit{kExitFailure};
  }
  return std::get<models::Plan>(made);
}

void parse_fault(const std::string& text, exec::RunOptions& options) {
  if (text.empty()) return;
  std::istringstream in(text);
  std::string rank, mode, step;
  std::getline(in, rank, ':');
  std::getline(in, mode, ':');
  std::getline(in, step, ':');
  try {
    options.fail_rank = std::stoi(rank);
    if (!mode.empty()) options.fail_mode = mode;
    if (!step.empty()) options.fail_step = std::stoi(step);
  } catch (const std::exception&) {
    throw CLI::ValidationError("--inject-fault", "expected RANK[:throw|kill[:STEP]], got '" + text + "'");
  }
  if (options.fail_mode != "throw" && options.fail_mode != "kill") {
    throw CLI::ValidationError("--inject-fault", "mode must be throw or kill, got '" + options.fail_mode + "'");
  }
}

/// Where rank `rank` writes its measurements under MPI: %r in the path is replaced by the
/// rank, otherwise ".rank<R>" is appended.
std::string rank_path(const std::string& path, int rank) {
  const auto at = path.find("%r");
  if (at != std::string::npos) return path.substr(0, at) + std::to_string(rank) + path.substr(at + 2);
  return path + ".rank" + std::to_string(rank);
}

void print_report(const models::Report& report, const std::vector<exec::StepResult>& steps, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    std::cout << models::to_json(report);
    return;
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::cout << "step " << i + 1 << ": loss " << steps[i].loss << ", " << steps[i].time_s << " s\n";
  }
  std::cout << models::to_table(report);
}

void run(const RunVerbOptions& o) {
  const Inputs in = load_inputs(o.cluster, o.workload, o.plan);
  exec::RunSpec spec;
  spec.cluster = in.cluster;
  spec.workload = in.workload;
  spec.plan = build_plan(o, in);
  spec.steps = o.steps;
  spec.options.seed = o.seed;
  spec.options.adam.learning_rate = static_cast<float>(o.learning_rate);
  parse_fault(o.inject_fault, spec.options);

  if (exec::MpiSession::launched_by_mpi()) {
    exec::MpiSession mpi(nullptr, nullptr);
    exec::MpiCommunicator comm;
    if (comm.get_size() != spec.plan.gpu_count()) {
      if (comm.get_rank() == 0) {
        std::cerr << "hetsim run: the plan uses " << spec.plan.gpu_count() << " devices; start it with mpirun -np "
                  << spec.plan.gpu_count() << " (got " << comm.get_size() << ")\n";
      }
      throw VerbExit{kExitBadInput};
    }
    const exec::RankOutcome out = exec::run_rank_or_abort(spec, comm);
    if (!o.out.empty()) exec::write_measurements(rank_path(o.out, comm.get_rank()), out.measurements);
    if (comm.get_rank() == 0) print_report(out.report, out.steps, o.format);
    return;
  }
  try {
    const exec::RunOutcome out = exec::run_in_process(spec);
    if (!o.out.empty()) exec::write_measurements(o.out, out.measurements);
    print_report(out.report, out.steps, o.format);
  } catch (const exec::RankFailure& e) {
    std::cerr << "hetsim run: " << e.what() << '\n';
    throw VerbExit{kExitFailure};
  } catch (const std::invalid_argument& e) {
    std::cerr << "hetsim run: cannot execute the plan: " << e.what() << '\n';
    throw VerbExit{kExitFailure};
  }
}

}  // namespace

void add_run_verb(CLI::App& app) {
  auto opts = std::make_shared<RunVerbOptions>();
  CLI::App* verb = app.add_subcommand(
      "run", "Train steps of a plan for real with the execution engine (CPU devices: threads as ranks, "
             "or one process per rank under mpirun) and print the measured Report");
  verb->add_option("--cluster", opts->cluster, "cluster YAML")->required()->check(CLI::ExistingFile);
  verb->add_option("--workload", opts->workload, "workload YAML")->required()->check(CLI::ExistingFile);
  auto* plan = verb->add_option("--plan", opts->plan, "plan YAML")->check(CLI::ExistingFile);
  auto* tp = verb->add_option("--tp", opts->tp, "tensor-parallel degree (uniform plan)")->check(CLI::PositiveNumber);
  auto* pp = verb->add_option("--pp", opts->pp, "pipeline stages (uniform plan)")->check(CLI::PositiveNumber);
  auto* dp = verb->add_option("--dp", opts->dp, "data-parallel replicas (uniform plan)")->check(CLI::PositiveNumber);
  tp->excludes(plan);
  pp->excludes(plan);
  dp->excludes(plan);
  verb->add_option("--micro-batch", opts->micro_batch, "sequences per micro-batch (uniform plan)")->check(CLI::PositiveNumber);
  verb->add_option("--schedule", opts->schedule, "pipeline schedule (uniform plan)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved"}));
  verb->add_option("--interleave", opts->interleave, "chunks per stage with --schedule interleaved")
      ->check(CLI::PositiveNumber);
  verb->add_option("--zero", opts->zero, "ZeRO stage (uniform plan)")->check(CLI::Range(0, 2));
  verb->add_option("--recompute", opts->recompute, "activation recompute (uniform plan)")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  verb->add_option("--steps", opts->steps, "training steps (the first is warm-up when there are several)")
      ->check(CLI::PositiveNumber);
  verb->add_option("--out", opts->out,
                   "write the per-op measurements as JSON lines (under mpirun each rank writes FILE.rank<R>, "
                   "or FILE with %r replaced by the rank)");
  verb->add_option("--seed", opts->seed, "seed of the initial parameters and of the synthetic data");
  verb->add_option("--lr", opts->learning_rate, "Adam learning rate")->check(CLI::PositiveNumber);
  verb->add_option("--inject-fault", opts->inject_fault,
                   "testing: RANK[:throw|kill[:STEP]] makes that rank fail at the start of STEP (default 1)");
  add_format_option(verb, &opts->format);
  verb->callback([opts, verb, plan, tp, pp, dp] {
    const bool uniform = tp->count() + pp->count() + dp->count() > 0;
    if (plan->count() == 0 && !uniform) throw CLI::RequiredError("--plan or --tp/--pp/--dp");
    if (uniform) {
      if (opts->tp == 0) opts->tp = 1;
      if (opts->pp == 0) opts->pp = 1;
      if (opts->dp == 0) opts->dp = 1;
    }
    (void)verb;
    run(*opts);
  });
}

}  // namespace hetsim::cli
