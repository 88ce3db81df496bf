// SPDX-License-Identifier: Apache-2.0
// The plan a verb acts on, as `predict`, `simulate` and `run` take it: a plan file
// (`--plan P`) or the Megatron shorthand (`--tp T --pp P --dp D [--micro M] ...`).
// One definition of these options, so every verb spells and checks them the same way.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "plan.hpp"
#include "report.hpp"

namespace hetsim::cli {

struct PlanChoice {
  std::string cluster, workload, plan;
  std::string profile;  ///< --profile, for the verbs that add it (add_profile_option)
  int tp = 0, pp = 0, dp = 0;
  int micro = 0;  ///< 0: the fastest feasible micro-batch
  int interleave = 1, zero = 0;
  std::string schedule, recompute;  ///< "" when not given: 1f1b, none
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;
  bool overlap_p2p_comm = false;
  std::string sharded_collectives;  ///< "" when not given: member_nic
};

/// Adds --cluster, --workload, --plan, --tp, --pp, --dp, --micro, --schedule, --interleave,
/// --recompute, --sequence-parallel, --zero (0..max_zero) and --sharded-collectives to a verb.
void add_plan_choice_options(CLI::App* verb, PlanChoice* o, int max_zero = 3);

/// Exit 2 with "hetsim <verb>: error: ..." unless exactly one of --plan and the shorthand is
/// given, when a shorthand option (--micro, --schedule, ...) comes with --plan, or when
/// --interleave contradicts --schedule; a degree the shorthand leaves out becomes 1.
void check_plan_choice(PlanChoice& o, const std::string& verb);

/// The shorthand's plan-wide settings (schedule, interleave, recompute, SP, ZeRO).
models::UniformPlanOptions uniform_options(const PlanChoice& o);

/// A `--tp/--pp/--dp` plan's report over memory names the flags that shrink it and that the
/// shorthand leaves off (ZeRO 0, no sequence parallelism, no recompute), in its reason. For
/// shorthand plans only: a plan file's settings are its own.
void add_memory_flags_hint(const PlanChoice& o, models::Report& report);

/// Scores a candidate plan (lower is better); infeasible reports lose.
using PlanScore = std::function<models::Report(const models::Plan&)>;

/// The plan file's plan, or the shorthand's plan with --micro or, without it, the micro-batch
/// (a divisor of the per-replica batch) whose Report from `score` is fastest. The winning
/// Report is returned through `report` when not null. Exit 1 with the reason on stderr when no
/// shorthand plan can be made (degrees that do not divide, batch not divisible).
models::Plan choose_plan(const PlanChoice& o, const Inputs& in, const std::string& verb, const PlanScore& score,
                         models::Report* report = nullptr);

/// Exit 1 with "hetsim <verb>: infeasible plan: <reason>" on stderr (the first process's only,
/// under mpirun): a verb that fails says why on stderr, whatever it printed on stdout.
[[noreturn]] void exit_infeasible(const std::string& verb, const std::string& reason);

// print_refused_report: cli_common.hpp.

/// choose_plan for the verbs that print a Report (predict, simulate): a shorthand plan that
/// cannot be made is a Report like any infeasible one, "feasible: no" and its reason, printed in
/// `format` (JSON readers got nothing on stdout), then exit_infeasible.
models::Plan choose_plan_or_report(const PlanChoice& o, const Inputs& in, const std::string& verb, const std::string& engine,
                                   OutputFormat format, const PlanScore& score, models::Report* report = nullptr);

}  // namespace hetsim::cli
