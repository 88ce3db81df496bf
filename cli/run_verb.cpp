// SPDX-License-Identifier: Apache-2.0
// `hetsim run`: trains a few steps of a Plan for real with the execution engine and prints the
// measured Report (the same keys as `predict`). Threads as ranks by default; under
// `mpirun -np K hetsim run ...` one process per rank (rank 0 prints the Report, every rank
// writes its own measurements).
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

#include "atomic_file.hpp"
#include "cli_common.hpp"
#include "plan_choice.hpp"
#include "predictor.hpp"
#include "comm/launcher.hpp"
#include "json_writer.hpp"
#include "comm/mpi_communicator.hpp"
#include "report.hpp"
#include "runner/measurement_stream.hpp"
#include "runner/run.hpp"
#include "verbs.hpp"

namespace hetsim::cli {
namespace {

struct RunVerbOptions {
  PlanChoice choice;
  int steps = 1;
  std::string out;
  OutputFormat format = OutputFormat::kTable;
  std::uint64_t seed = 1234;
  double learning_rate = 1e-3;
  std::string inject_fault;  // RANK[:throw|kill[:STEP]]
};

/// A whole decimal integer: an optional '-' and digits only (std::stoi would take "3x" as 3, and
/// " 3" or "+3"; a negative one is kept to be reported as outside the range). One beyond int's
/// range reads as that end of it, so that the range checks below say "outside" (with the number
/// as written) instead of "malformed".
bool parse_int(const std::string& text, int& value) {
  const std::size_t digits = !text.empty() && text[0] == '-' ? 1 : 0;
  if (text.size() == digits || text.find_first_not_of("0123456789", digits) != std::string::npos) return false;
  std::size_t used = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::out_of_range&) {
    value = digits ? std::numeric_limits<int>::min() : std::numeric_limits<int>::max();
    return true;
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size();
}

/// --inject-fault RANK[:throw|kill[:STEP]] for a plan of `ranks` ranks and a run of `steps`
/// steps: a rank or step that the run does not have is bad input (it would never fire).
void parse_fault(const std::string& text, int ranks, int steps, exec::RunOptions& options) {
  if (text.empty()) return;
  std::istringstream in(text);
  std::string rank, mode, step;
  std::getline(in, rank, ':');
  std::getline(in, mode, ':');
  std::getline(in, step, ':');
  std::string rest;
  // A trailing ':' ("1:throw:2:") is a malformed value, not an empty fourth field.
  const bool extra = static_cast<bool>(std::getline(in, rest)) || (!text.empty() && text.back() == ':');
  if (extra || !parse_int(rank, options.fail_rank) || (!step.empty() && !parse_int(step, options.fail_step))) {
    throw CLI::ValidationError("--inject-fault", "expected RANK[:throw|kill[:STEP]], got '" + text + "'");
  }
  if (!mode.empty()) options.fail_mode = mode;
  if (options.fail_mode != "throw" && options.fail_mode != "kill") {
    throw CLI::ValidationError("--inject-fault", "mode must be throw or kill, got '" + options.fail_mode + "'");
  }
  if (options.fail_rank < 0 || options.fail_rank >= ranks) {
    throw CLI::ValidationError("--inject-fault", "rank " + rank +
                                                     " is outside the plan's ranks 0.." + std::to_string(ranks - 1));
  }
  if (options.fail_step < 1 || options.fail_step > steps) {
    throw CLI::ValidationError("--inject-fault", "step " + (step.empty() ? std::to_string(options.fail_step) : step) +
                                                     " is outside the run's steps 1.." + std::to_string(steps) +
                                                     " (--steps)");
  }
}

/// Where rank `rank` writes its measurements under MPI: %r in the path is replaced by the
/// rank, otherwise ".rank<R>" is appended.
std::string rank_path(const std::string& path, int rank) {
  const auto at = path.find("%r");
  if (at != std::string::npos) return path.substr(0, at) + std::to_string(rank) + path.substr(at + 2);
  return path + ".rank" + std::to_string(rank);
}

/// The timings stand (the kernels ran the same work), but a diverged run should not pass unseen.
void warn_if_diverged(const std::vector<exec::StepResult>& steps) {
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (!std::isfinite(steps[i].loss)) {
      std::cerr << "hetsim run: warning: the loss is " << steps[i].loss << " from step " << i + 1
                << " (training diverged; a smaller --lr may help); the timings below are still measured\n";
      break;
    }
}

void print_report(const models::Report& report, const std::vector<exec::StepResult>& steps, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    // The Report's keys, and rank 0's steps as the table prints them (loss and wall time; a
    // diverged run's loss is null there, JSON having no NaN).
    models::JsonOut j;
    j.begin_object();
    models::write_report_keys(j, report);
    j.key("steps").begin_array();
    for (std::size_t i = 0; i < steps.size(); ++i) {
      j.begin_object().key("step").value(static_cast<int>(i + 1)).key("loss").value(steps[i].loss);
      j.key("time_s").value(steps[i].time_s).end_object();
    }
    j.end_array();
    j.end_object();
    std::cout << j.str();
    warn_if_diverged(steps);
    return;
  }
  // Rank 0's wall time per step, as it happened; the Report's iteration time is the slowest
  // rank's mean over the measured steps (the first is warm-up: exec/runner/run.cpp summarize).
  if (!steps.empty())
    std::cout << "steps as rank 0 saw them (the report below: the slowest rank, mean of steps "
              << (steps.size() > 1 ? "2-" + std::to_string(steps.size()) : std::string("1")) << "):\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::cout << "step " << i + 1 << ": loss " << steps[i].loss << ", " << steps[i].time_s << " s\n";
  }
  warn_if_diverged(steps);
  std::cout << models::to_table(report);
}

/// The engine's own checks first (they name what it cannot execute), then the cost model's: what
/// does not fit the devices' memory is not started (on CPU devices it would take the host's
/// memory from everything else on the machine before failing). Returns the model's Report.
models::Report refuse_what_cannot_run(const exec::RunSpec& spec, OutputFormat format) {
  try {
    exec::check_executable(spec.workload);
    const exec::RankLayout layout(spec.plan, spec.workload.model);
  } catch (const std::invalid_argument& e) {
    std::cerr << "hetsim run: cannot execute the plan: " << e.what() << '\n';
    // As an infeasible plan below: a script reading JSON gets a Report saying why (it got nothing).
    if (format == OutputFormat::kJson && exec::first_process())
      print_refused_report("exec", std::string("cannot execute the plan: ") + e.what(), format);
    throw VerbExit{kExitFailure};
  }
  // What the engine leaves out of the workload, said before it trains (exec/README.md).
  if (spec.workload.model.dropout > 0 && exec::first_process())
    std::cerr << "hetsim run: note: the execution engine trains without dropout: the workload's dropout "
              << spec.workload.model.dropout << " is not applied (exec/README.md)\n";
  const exec::Executed executed = exec::as_executed(spec.workload, spec.plan);
  models::Report predicted = models::predict(spec.cluster, executed.workload, executed.plan);
  // As predict: a script reading JSON gets the Report with "feasible": false and its reason.
  if (!predicted.feasible && format == OutputFormat::kJson && exec::first_process()) std::cout << models::to_json(predicted);
  refuse_if_infeasible("run", predicted);
  return predicted;
}

/// Runs `run_it` with `spec`'s records of `ranks` ranks written to `path` as they are measured
/// (atomically: the file appears when the run has ended, and not at all when it fails); an empty
/// path runs it without records. Under mpirun each process writes its own rank's (`first_rank`).
void write_records_while_running(const std::string& path, int ranks, exec::RunSpec& spec,
                                 const std::function<void()>& run_it, int first_rank = 0) {
  if (path.empty()) return run_it();
  models::write_file_atomic(path, [&](std::ostream& file) {
    exec::MeasurementStream stream(file, ranks);
    spec.on_step_records = [&](int rank, std::vector<exec::Measurement> records) {
      stream.add(rank - first_rank, std::move(records));
    };
    run_it();
    stream.close();
  });
  spec.on_step_records = nullptr;
}

/// A run that failed (a rank's fault, a plan the engine cannot execute): the reason on stderr and,
/// for --format json, as {"completed": false, "reason"} on stdout, where scripts read the Report.
[[noreturn]] void failed_run(OutputFormat format, const std::string& reason) {
  exit_with_reason("run", "completed", reason, reason, format);
}

void run(const RunVerbOptions& o) {
  PlanChoice choice = o.choice;
  check_plan_choice(choice, "run");
  check_output_files("run", {{"--out", o.out}}, {choice.cluster, choice.workload, choice.plan});
  if (choice.micro == 0) choice.micro = 1;  // a run measures the micro-batch it is given (default 1)
  const Inputs in = load_inputs(choice.cluster, choice.workload, choice.plan);
  exec::RunSpec spec;
  spec.cluster = in.cluster;
  spec.workload = in.workload;
  // A shorthand plan that cannot be made: JSON readers get a Report saying why (as predict's),
  // from the first process only under mpirun.
  const auto unscored = [](const models::Plan&) { return models::Report{}; };
  spec.plan = o.format == OutputFormat::kJson && exec::first_process()
                  ? choose_plan_or_report(choice, in, "run", "exec", o.format, unscored)
                  : choose_plan(choice, in, "run", unscored);
  const models::Report predicted = refuse_what_cannot_run(spec, o.format);
  spec.steps = o.steps;
  spec.options.seed = o.seed;
  spec.options.adam.learning_rate = static_cast<float>(o.learning_rate);
  spec.options.keep_measurements = false;  // --out streams each step's (write_records_while_running)
  parse_fault(o.inject_fault, spec.plan.gpu_count(), spec.steps, spec.options);
  note_if_long_run("run", predicted, spec.steps);

  if (exec::launched_by_mpi()) {
    exec::MpiSession mpi(nullptr, nullptr);
    exec::MpiCommunicator comm;
    if (comm.get_size() != spec.plan.gpu_count()) {
      if (comm.get_rank() == 0) {
        std::cerr << "hetsim run: error: the plan uses " << spec.plan.gpu_count() << " devices; start it with mpirun -np "
                  << spec.plan.gpu_count() << " (got " << comm.get_size() << ")\n";
      }
      throw VerbExit{kExitBadInput};
    }
    // Each rank writes its own file (rank_path): every one is checked, on every rank, so that
    // all stop together ('--plan pl0.yaml --out pl%r.yaml' overwrote the plan with rank 0's log).
    std::vector<std::pair<std::string, std::string>> rank_outputs;
    for (int r = 0; r < comm.get_size() && !o.out.empty(); ++r)
      rank_outputs.emplace_back("--out (rank " + std::to_string(r) + ")", rank_path(o.out, r));
    if (const std::string problem = output_files_problem(rank_outputs, {choice.cluster, choice.workload, choice.plan});
        !problem.empty()) {
      if (comm.get_rank() == 0) std::cerr << "hetsim run: error: " << problem << '\n';
      throw VerbExit{kExitBadInput};
    }
    exec::RankOutcome out;
    write_records_while_running(o.out.empty() ? "" : rank_path(o.out, comm.get_rank()), 1, spec,
                                [&] { out = exec::run_rank_or_abort(spec, comm); }, comm.get_rank());
    if (comm.get_rank() == 0) print_report(out.report, out.steps, o.format);
    return;
  }
  refuse_if_host_memory_short("run", spec.cluster, spec.plan, predicted, o.format);  // ranks are this process's threads
  // --out holds each step's records whole (exec::RunSpec::max_step_records): half of what is
  // available, shared by the ranks (the other half: the writer's queue and the engine).
  if (const std::optional<double> available = available_host_memory_bytes(); available && !o.out.empty())
    spec.max_step_records = static_cast<std::size_t>(
        std::max(1.0, 0.5 * *available / exec::kHeldRecordBytes / std::max(1, spec.plan.gpu_count())));
  note_if_ranks_share_cores("run", spec.cluster, spec.plan);
  note_if_machine_busy("run", "the ranks get shares of cores, so the times measured are slow by what the other work takes");
  try {
    exec::RunOutcome out;
    write_records_while_running(o.out, spec.plan.gpu_count(), spec, [&] { out = exec::run_in_process(spec); });
    print_report(out.report, out.steps, o.format);
  } catch (const exec::RankFailure& e) {
    failed_run(o.format, e.what());
  } catch (const std::invalid_argument& e) {
    failed_run(o.format, std::string("cannot execute the plan: ") + e.what());
  }
}

}  // namespace

void add_run_verb(CLI::App& app) {
  auto opts = std::make_shared<RunVerbOptions>();
  CLI::App* verb = app.add_subcommand(
      "run", "Train steps of a plan for real with the execution engine (CPU devices: threads as ranks, "
             "or one process per rank under mpirun) and print the measured Report");
  add_plan_choice_options(verb, &opts->choice, /*max_zero=*/3);
  // A run measures the micro-batch it is given; it does not search the fastest as predict does.
  verb->get_option("--micro")->description("Micro-batch size (default 1)");
  // At most 10000, as check's (which keeps every step's records until its comparison); run folds
  // each step's into the Report and, with --out, streams them to the file as it goes.
  verb->add_option("--steps", opts->steps, "training steps (default 1; the first is warm-up when there are several)")
      ->transform(integer_check(1, 10000));
  verb->add_option("--out", opts->out,
                   "write the per-op measurements as JSON lines (under mpirun each rank writes FILE.rank<R>, "
                   "or FILE with %r replaced by the rank)")
      ->check(output_file_check());
  verb->add_option("--seed", opts->seed, "seed of the initial parameters and of the synthetic data (default 1234)")
      ->transform(integer_check(0, 18446744073709551615ULL));  // a 64-bit seed
  // At most 1 (Adam's rates are ~1e-4..1e-2): 1e308 became an inf float and a NaN loss.
  // At least float's smallest normal value: the engine trains in float, and 1e-300 became a rate
  // of 0 that trained nothing and said nothing (s68 hunt).
  verb->add_option("--lr", opts->learning_rate, "Adam learning rate, at most 1 (default 0.001)")
      ->transform(number_check(true, false, 1.0))
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (std::strtod(text.c_str(), nullptr) >= std::numeric_limits<float>::min()) return {};
            return "expected a learning rate of at least 1.2e-38 (the engine trains in float: below that the rate "
                   "is 0), got '" + text + "'";
          },
          "a learning rate of at least 1.2e-38"));
  verb->add_option("--inject-fault", opts->inject_fault,
                   "testing: RANK[:throw|kill[:STEP]] makes that rank fail at the start of STEP (default 1)")
      ->check(CLI::Validator(  // given empty, it ran without a fault and said nothing
          [](std::string& text) { return text.empty() ? "expected RANK[:throw|kill[:STEP]], got ''" : std::string(); },
          "RANK[:MODE[:STEP]]"));
  add_format_option(verb, &opts->format);
  verb->callback([opts] { run(*opts); });
}

}  // namespace hetsim::cli
