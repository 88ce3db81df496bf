// SPDX-License-Identifier: Apache-2.0
// --plan or the --tp/--pp/--dp shorthand, shared by predict, simulate and run.
#include "plan_choice.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <tuple>
#include <utility>

#include "comm/launcher.hpp"
#include "input_loader.hpp"
#include "text_match.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

void add_plan_choice_options(CLI::App* verb, PlanChoice* o, int max_zero) {
  // Not required(): a --plan whose header names them gives them (check_plan_choice).
  verb->add_option("--cluster", o->cluster, "Cluster file (kind: cluster; default: the one the --plan's header names)");
  verb->add_option("--workload", o->workload, "Workload file (kind: workload; default: the one the --plan's header names)");
  verb->add_option("--plan", o->plan, "Plan file (kind: plan)");
  verb->add_option("--tp", o->tp, "Tensor-parallel degree (Megatron shorthand, instead of --plan; of --tp/--pp/--dp, one given is enough and the others default to 1)")
      ->transform(positive_integer());
  verb->add_option("--pp", o->pp, "Pipeline-parallel degree (default 1)")->transform(positive_integer());
  verb->add_option("--dp", o->dp, "Data-parallel degree (default 1)")->transform(positive_integer());
  verb->add_option("--micro", o->micro, "Micro-batch size (default: the fastest feasible)")->transform(positive_integer());
  verb->add_option("--schedule", o->schedule, "gpipe | 1f1b | interleaved (default 1f1b)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved"}));
  verb->add_option("--interleave", o->interleave, "Virtual stages per GPU (interleaved 1F1B)")->transform(positive_integer());
  verb->add_option("--recompute", o->recompute, "none | selective | full (default none)")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  verb->add_flag("--sequence-parallel", o->sequence_parallel, "Megatron sequence parallelism");
  verb->add_flag("--tp-comm-overlap", o->tp_comm_overlap,
                 "Overlap the sequence-parallel collectives with the GEMMs (Megatron-Core --tp-comm-overlap)");
  verb->add_flag("--overlap-p2p-comm", o->overlap_p2p_comm,
                 "Pipeline sends beside the compute, no host sync at them (Megatron-Core overlap_p2p_comm; interleaved only)");
  verb->add_option("--zero", o->zero, "ZeRO stage 0-" + std::to_string(max_zero))
      ->transform(non_negative_integer())  // as the degrees: "0x3" or " 3" are no stage
      ->check(CLI::Range(0, max_zero));
  verb->add_option("--sharded-collectives", o->sharded_collectives,
                   "ZeRO-2/3 gathers and reduce-scatters across nodes: member_nic (each GPU at its NIC share, "
                   "DeepSpeed ZeRO-3; default) | node_nics (fanned out over the node's NICs, PyTorch FSDP)")
      ->check(CLI::IsMember({"member_nic", "node_nics"}));
}

namespace {

[[noreturn]] void usage_error(const std::string& verb, const std::string& msg) {
  std::cerr << "hetsim " << verb << ": error: " << msg << '\n';
  throw VerbExit{kExitBadInput};
}

}  // namespace

namespace {

/// --cluster and --workload left out: the files the --plan's header comment names (`# cluster:
/// NAME`, docs/inputs.md), when they exist; else the error CLI11's required() gave before.
void take_inputs_from_plan_header(PlanChoice& o, const std::string& verb) {
  if (!o.cluster.empty() && !o.workload.empty()) return;
  const std::string missing = o.cluster.empty() ? "--cluster" : "--workload";
  const std::string required = missing + " is required (see `hetsim " + verb + " --help`)";
  std::error_code ec;
  if (o.plan.empty()) usage_error(verb, required);
  if (!std::filesystem::is_regular_file(o.plan, ec))
    usage_error(verb, required + ", or a --plan whose header names it, and --plan '" + o.plan + "' " +
                          (std::filesystem::is_directory(o.plan, ec) ? "is a folder"
                           : std::filesystem::exists(o.plan, ec)        ? "is not a regular file"
                                                                        : "does not exist"));
  const models::PlanHeader header = models::read_plan_header(o.plan);
  models::DiagnosticCollector errors;
  const std::vector<models::Diagnostic> conflicts = plan_header_conflicts(o.plan, header);
  std::vector<std::pair<const char*, std::string>> readable;  // header files without a problem
  const char* unnamed = nullptr;  // the input neither an option nor the header names
  for (auto [what, value, named, line] : {std::tuple{"cluster", &o.cluster, &header.cluster, header.cluster_line},
                                          std::tuple{"workload", &o.workload, &header.workload, header.workload_line}}) {
    if (!value->empty()) continue;
    if (named->empty()) {  // said alone, or with the other input's problems below (all at once)
      if (!unnamed) unnamed = what;  // the first, as the usage error said before
      continue;
    }
    for (const models::Diagnostic& c : conflicts)
      if (c.field == what) errors.add(c);
    if (std::optional<models::Diagnostic> problem = plan_header_file_problem(o.plan, *named, line, what)) errors.add(*problem);
    else readable.emplace_back(what, *named);
    *value = *named;
  }
  // A header with a problem stops the verb here: the files it names that exist are read too, so
  // that their errors come with it (a workload file named as the cluster was reported only once
  // the missing workload was fixed; s52 bad-input hunt).
  if (!errors.empty())
    for (const auto& [what, path] : readable)
      errors.collect([&] {
        if (std::string(what) == "cluster") load_cluster_file(path);
        else load_workload_file(path);
      });
  if (unnamed && errors.empty())
    usage_error(verb, "--" + std::string(unnamed) + " is required (see `hetsim " + verb + " --help`): the --plan's header names no " + unnamed);
  if (unnamed)  // with a problem of the named input: both at once (only this one was said)
    errors.add({o.plan, 1, 1, "", std::string("the header names no ") + unnamed + " and --" + unnamed +
                                      " is not given (expected --" + unnamed + " FILE, or a '# " + unnamed + ": NAME' line)"});
  errors.throw_if_any();
}

}  // namespace

void check_plan_choice(PlanChoice& o, const std::string& verb) {
  take_inputs_from_plan_header(o, verb);
  const bool shorthand = o.tp > 0 || o.pp > 0 || o.dp > 0;
  if (o.plan.empty() && !shorthand)
    usage_error(verb, "no plan given (expected --plan FILE, or the shorthand --tp/--pp/--dp)");
  if (!o.plan.empty() && shorthand)
    usage_error(verb, "give either --plan or the shorthand --tp/--pp/--dp (not both)");
  if (!shorthand) {
    // The plan file sets these itself; taking them silently would predict another plan than asked.
    const std::pair<bool, const char*> given[] = {
        {o.micro > 0, "--micro"},           {!o.schedule.empty(), "--schedule"}, {o.interleave != 1, "--interleave"},
        {!o.recompute.empty(), "--recompute"}, {o.sequence_parallel, "--sequence-parallel"},
        {o.tp_comm_overlap, "--tp-comm-overlap"}, {o.overlap_p2p_comm, "--overlap-p2p-comm"}, {o.zero != 0, "--zero"},
        {!o.sharded_collectives.empty(), "--sharded-collectives"}};
    for (const auto& [is_given, option] : given)
      if (is_given)
        usage_error(verb, std::string(option) + ": goes with the shorthand --tp/--pp/--dp (expected it in the --plan file)");
    return;
  }
  if (o.tp_comm_overlap && !o.sequence_parallel)
    usage_error(verb, "--tp-comm-overlap overlaps the sequence-parallel collectives (expected --sequence-parallel too)");
  if (o.overlap_p2p_comm && o.interleave <= 1)
    usage_error(verb, "--overlap-p2p-comm overlaps the interleaved schedule's sends (expected --interleave 2 or more)");
  if (!o.sharded_collectives.empty() && o.zero < 2)
    usage_error(verb, "--sharded-collectives " + o.sharded_collectives +
                          ": only ZeRO-2 and ZeRO-3 run per-pass sharded collectives (expected --zero 2 or 3)");
  if (o.schedule == "interleaved" && o.interleave <= 1)
    usage_error(verb, "--schedule interleaved with --interleave 1 is plain 1F1B (expected --interleave 2 or more, or "
                      "--schedule 1f1b)");
  if (o.interleave > 1 && !o.schedule.empty() && o.schedule != "interleaved")
    usage_error(verb, "--interleave " + std::to_string(o.interleave) + " needs --schedule interleaved (got --schedule " +
                          o.schedule + ")");
  // A degree left out of the shorthand is 1 (`--tp 8` alone is TP 8, no PP, no DP).
  o.tp = std::max(o.tp, 1);
  o.pp = std::max(o.pp, 1);
  o.dp = std::max(o.dp, 1);
}

models::UniformPlanOptions uniform_options(const PlanChoice& o) {
  models::UniformPlanOptions u;
  u.schedule = o.interleave > 1 || o.schedule == "interleaved" ? models::Schedule::kInterleaved
               : o.schedule == "gpipe"                          ? models::Schedule::kGpipe
                                                                : models::Schedule::k1f1b;
  u.interleave = o.interleave;
  u.recompute = models::recompute_named(o.recompute).value_or(models::Recompute::kNone);  // "": not given
  u.sequence_parallel = o.sequence_parallel;
  u.tp_comm_overlap = o.tp_comm_overlap;
  u.overlap_p2p_comm = o.overlap_p2p_comm;
  u.zero = o.zero;
  // "": not given; CLI11 checked the names.
  u.sharded_collectives = models::sharded_collectives_named(o.sharded_collectives).value_or(models::ShardedCollectives::kMemberNic);
  if (o.micro > 0) u.micro_batch = o.micro;
  return u;
}

// The planner's Megatron-style plans use these flags (s26 walkthrough 14d): a user read "stage 0
// needs 124 GiB of 80 GiB" as the plan's verdict.
void add_memory_flags_hint(const PlanChoice& o, models::Report& report) {
  if (report.feasible || models::max_memory_ratio(report) <= 1) return;
  // Only what the flags left at the shorthand's defaults: `--zero 3` was told "is ZeRO 0".
  std::vector<std::string> flags, defaults;
  if (o.zero == 0 && o.dp > 1) flags.push_back("--zero 1"), defaults.push_back("ZeRO 0");
  if (!o.sequence_parallel && o.tp > 1) flags.push_back("--sequence-parallel"), defaults.push_back("no sequence parallelism");
  if (o.recompute.empty() || o.recompute == "none")
    flags.push_back("--recompute selective (or full)"), defaults.push_back("no recompute");
  if (flags.empty()) return;
  report.infeasible_reason += " (the --tp/--pp/--dp plan has " + models::join_with_and(defaults) +
                              " unless flags say otherwise: " + models::join_with_and(flags) +
                              (flags.size() == 1 ? " shrinks" : " shrink") + " it; `hetsim plan` searches them)";
}

namespace {

/// choose_plan's search: the plan file's plan, or the shorthand's; nullopt, with the reason in
/// `why`, when none can be made (a plan file whose TP degree does not divide the model included).
std::optional<models::Plan> find_plan(const PlanChoice& o, const Inputs& in, const PlanScore& score,
                                      models::Report* report, std::string& why) {
  if (in.plan && !in.plan_infeasible_reason.empty()) {
    why = in.plan_infeasible_reason;
    return std::nullopt;
  }
  if (in.plan) {
    if (report) *report = score(*in.plan);
    return *in.plan;
  }
  models::UniformPlanOptions u = uniform_options(o);
  std::vector<int> micros;
  const int global_batch = in.workload.training.global_batch;
  why = "training.global_batch (" + std::to_string(global_batch) + ") is not divisible by dp (" +
        std::to_string(o.dp) + ")";  // without --micro, what no micro-batch size can mend
  if (o.micro > 0) {
    micros.push_back(o.micro);
  } else if (o.dp > 0 && global_batch % o.dp == 0) {
    const int per_replica = global_batch / o.dp;
    for (int b = 1; b <= per_replica; ++b)
      if (per_replica % b == 0) micros.push_back(b);
  }
  std::optional<models::Plan> best;
  std::optional<models::Report> best_report;
  std::size_t refused = 0;
  std::string first_reason;
  bool same_reason = true;  // every size refused for the same reason: the micro-batch is not why
  for (int micro : micros) {
    u.micro_batch = micro;
    auto plan = models::make_uniform_plan(in.cluster, in.workload, o.tp, o.pp, o.dp, u);
    if (auto* bad = std::get_if<models::Infeasible>(&plan)) {
      // Without --micro, the smallest size's reason: the largest's (one micro-batch) read as if
      // the user had asked for it ("micro_batches: 1 is no multiple of the 6 stages").
      if (refused++ == 0) {
        first_reason = bad->reason;
        why = o.micro > 0 ? bad->reason
                          : "no micro-batch size dividing the " + std::to_string(global_batch / o.dp) +
                                " sequences of a replica makes this plan (" + std::to_string(micros.size()) +
                                " tried); with --micro " + std::to_string(micro) + ": " + bad->reason;
      }
      same_reason = same_reason && bad->reason == first_reason;
      continue;
    }
    models::Report r = score(std::get<models::Plan>(plan));
    const bool better = !best_report || (r.feasible && (!best_report->feasible || r.iteration_time_s < best_report->iteration_time_s));
    if (better) {
      best_report = std::move(r);
      best = std::get<models::Plan>(std::move(plan));
    }
  }
  // "tp*pp*dp (64) exceeds the cluster's 32 GPUs" whatever the size: said without the sizes.
  if (refused > 1 && refused == micros.size() && same_reason) why = first_reason;  // every size refused: no best
  if (best && report) {
    *report = *best_report;
    add_memory_flags_hint(o, *report);
  }
  return best;
}

}  // namespace

models::Plan choose_plan(const PlanChoice& o, const Inputs& in, const std::string& verb, const PlanScore& score,
                         models::Report* report) {
  std::string why;
  std::optional<models::Plan> plan = find_plan(o, in, score, report, why);
  if (plan) return *std::move(plan);
  // Degrees that do not divide are a result with a reason (exit 1), not bad input.
  exit_infeasible(verb, why);
}

models::Plan choose_plan_or_report(const PlanChoice& o, const Inputs& in, const std::string& verb, const std::string& engine,
                                   OutputFormat format, const PlanScore& score, models::Report* report) {
  std::string why;
  std::optional<models::Plan> plan = find_plan(o, in, score, report, why);
  if (plan) return *std::move(plan);
  print_refused_report(engine, why, format);
  exit_infeasible(verb, why);
}

void exit_infeasible(const std::string& verb, const std::string& reason) {
  // Under mpirun every rank parses the inputs; only the first reports a plan that cannot be made.
  if (exec::first_process()) std::cerr << "hetsim " << verb << ": infeasible plan: " << reason << '\n';
  throw VerbExit{kExitFailure};
}

}  // namespace hetsim::cli
