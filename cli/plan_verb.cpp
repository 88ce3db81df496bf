// SPDX-License-Identifier: Apache-2.0
// `hetsim plan --cluster C --workload W [--objective throughput|cost] [--budget-per-hour D]
//  [--top K] [--time-limit S] [--threads N] [--refine K] [--tp-comm-overlap] [--emit-plan FILE] [--format table|json]`:
//  the planner's best plans,
// the two baselines a homogeneous tool would give, and the best plan as a `kind: plan` file.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli_common.hpp"
#include "engines.hpp"
#include "json_writer.hpp"
#include "plan_notes.hpp"
#include "plan_refine.hpp"
#include "plan_writer.hpp"
#include "planner.hpp"
#include "text_match.hpp"
#include "units.hpp"
#include "verbs.hpp"

namespace hetsim::cli {

namespace {

struct PlanVerbOptions {
  std::string cluster, workload, objective, emit_plan;  // objective: "" = not given (throughput, or budget with --budget-per-hour)
  std::string profile;  // --profile
  double budget_per_hour = 0;
  double min_headroom_pct = 0;  ///< --min-headroom, percent of each GPU's memory
  double time_limit_s = models::PlannerOptions{}.time_limit_s;
  int threads = 0;
  int top = 5;
  int refine = 0;
  bool spot = false;
  bool tp_comm_overlap = false;
  bool overlap_p2p_comm = false;
  bool one_vendor = false;
  bool zero_given = false;  ///< --zero was on the command line
  std::string sharded_collectives;  ///< --sharded-collectives; "" = member_nic
  // The search space (PlannerOptions' lists; what the user's training stack can run).
  std::vector<int> tp_degrees = models::PlannerOptions{}.tp_degrees;
  std::vector<int> micro_batches = models::PlannerOptions{}.micro_batches;
  std::vector<int> interleaves = models::PlannerOptions{}.interleaves;
  std::vector<int> zero_stages = models::PlannerOptions{}.zero_stages;
  std::vector<std::string> recomputes = {"none", "selective", "full"};
  bool no_sequence_parallel = false;
  OutputFormat format = OutputFormat::kTable;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "hetsim plan: error: " << msg << '\n';
  throw VerbExit{kExitBadInput};
}

struct Refined {
  bool done = false;
  std::string note;
  std::vector<std::optional<double>> simulated;  ///< per top plan
};

/// The simulator's tokens/s of a baseline under --refine, when its plan is one of the refined top
/// plans (same shape and figure): its analytic figure can rank above the refined best, whose
/// ratio to it then reads below 1 unless the simulations are compared too.
std::optional<double> simulated_baseline(const models::PlannerResult& r, const Refined& ref,
                                         const models::PlannerBaseline& b) {
  if (!ref.done || !b.found) return std::nullopt;
  for (size_t i = 0; i < r.top.size() && i < ref.simulated.size(); ++i)
    if (r.top[i].shape == b.best.shape && r.top[i].report.tokens_per_s == b.best.report.tokens_per_s)
      return ref.simulated[i];
  return std::nullopt;
}

/// The simulator's tokens/s of the refined best plan (none when not refined or not simulated).
std::optional<double> simulated_best(const Refined& ref) {
  return ref.done && !ref.simulated.empty() ? ref.simulated[0] : std::nullopt;
}

/// --refine K: the best K plans re-ranked by the simulator (the engine `simulate` registers),
/// on the same in-memory cluster (with --profile applied) and workload the planner used.
Refined refine(const PlanVerbOptions& o, models::PlannerResult& r, const models::Cluster& c, const models::Workload& w) {
  Refined out;
  if (o.refine <= 0) return out;
  const models::TimedPredictFn* sim = find_timed_engine("sim");
  if (sim == nullptr) {
    out.note = "--refine: this hetsim has no simulator (built without SimGrid); kept the analytic ranking";
    return out;
  }
  models::RefineResult rr = models::refine_top_plans(r, c, w, *sim, o.refine, o.time_limit_s);
  for (const auto& report : rr.refined)
    out.simulated.push_back(report ? std::optional<double>(report->tokens_per_s) : std::nullopt);
  out.note = rr.note.empty() ? "" : "--refine: " + rr.note;
  out.done = true;
  return out;
}

void write_ranked(models::JsonOut& j, const models::RankedPlan& p, const models::Cluster& c, bool spot) {
  const models::Report& r = p.report;
  j.key("shape").value(p.shape);
  j.key("tokens_per_s").value(r.tokens_per_s);
  j.key("goodput_tokens_per_s").value(p.goodput_tokens_per_s());
  j.key("spot");
  if (spot) {
    const models::SpotOutlook& s = p.spot;
    j.begin_object().key("preemptions_per_hour").value(s.preemptions_per_hour);
    j.key("checkpoint_bytes").value(s.checkpoint_bytes).key("checkpoint_s").value(s.checkpoint_s);
    j.key("checkpoint_interval_s").value(models::if_preempted(s, s.checkpoint_interval_s));
    j.key("restart_s").value(models::if_preempted(s, s.restart_s));
    j.key("goodput_fraction").value(s.goodput_fraction).end_object();
  } else {
    j.null();
  }
  j.key("iteration_time_s").value(r.iteration_time_s);
  j.key("mfu").value(r.mfu);
  j.key("memory_peak_bytes").value(r.memory_peak_bytes);
  j.key("memory_headroom_bytes").value(p.memory_headroom_bytes);
  j.key("memory_headroom_fraction").value(p.memory_headroom_fraction);
  j.key("cost_per_hour").value(r.cost_per_hour);
  j.key("cost_per_million_tokens").value(r.cost_per_million_tokens);
  j.key("estimated_tokens_per_s").value(p.estimated_tokens_per_s);
  j.key("joins_vendors").value(p.joins_vendors);
  j.key("gpus").value(p.plan.gpu_count());
  j.key("micro_batch").value(p.plan.micro_batch);
  j.key("schedule").value(models::to_string(p.plan.schedule));
  j.key("interleave").value(p.plan.interleave);
  j.key("recompute").value(models::to_string(p.plan.recompute));
  j.key("sequence_parallel").value(p.plan.sequence_parallel);
  j.key("zero").value(p.plan.zero);
  j.key("replicas").begin_array();
  for (const models::Replica& rep : p.plan.replicas) {
    j.begin_object().key("micro_batches").value(rep.micro_batches).key("stages").begin_array();
    for (const models::Stage& s : rep.stages) {
      j.begin_object().key("layers").value(s.layers).key("tp").value(s.tp());
      j.key("gpu_type").value(c.gpu_type(s.gpus.front()).name);
      // As `describe` writes a plan's stage: the selector and the global GPU indices.
      j.key("gpus_text").value(models::gpu_selector(s.gpus, c));
      j.key("gpus").begin_array();
      for (int g : s.gpus) j.value(g);
      j.end_array().end_object();
    }
    j.end_array().end_object();
  }
  j.end_array();
}

/// Each listed plan's tokens/s if its pipeline sends of one parity coincided in every slot
/// (models::lockstep_parity_figure), where that is kLockstepNoteRatio or more below its figure.
std::vector<std::optional<double>> lockstep_rates(const models::PlannerResult& r, const models::Cluster& c,
                                                  const models::Workload& w) {
  std::vector<std::optional<double>> rates(r.top.size());
  for (size_t i = 0; i < r.top.size(); ++i) {
    const auto lockstep = models::lockstep_parity_worth_noting(c, w, r.top[i].plan, r.top[i].report.iteration_time_s);
    if (lockstep) rates[i] = lockstep->report.tokens_per_s;
  }
  return rates;
}

/// Which listed plans' figures leave out pipeline sends of one parity sharing a NIC, and what
/// they give if those sends coincide.
void print_lockstep_note(const std::vector<std::optional<double>>& rates) {
  std::vector<std::string> which, figures;
  for (size_t i = 0; i < rates.size(); ++i)
    if (rates[i]) {
      which.push_back(std::to_string(i + 1));
      figures.push_back(fmt("%.0f", *rates[i]));
    }
  if (which.empty()) return;
  const bool one = which.size() == 1;
  std::cout << "note: " << (one ? "plan " : "plans ") << models::join_with_and(which)
            << (one ? " sends" : " send")
            << " the pipeline tensors of boundaries of one parity through a node's NIC together in 1F1B's steady "
               "state, which " << (one ? "its figure prices" : "their figures price")
            << " apart: if those sends coincide in every slot, " << models::join_with_and(figures)
            << " tokens/s (`hetsim predict` of a plan names the nodes; `--refine K` ranks by the simulator, which "
               "times their contention)\n";
}

/// The notes on the whole listing, in the table's order (JSON `notes[]` too): the single-GPU
/// comparison, `--spot` without spot prices, and the catalog's assumed figures (default GEMM
/// efficiency, no FlashAttention figure) for the GPU types of the listed plans and baselines,
/// whose ranking rests on them as predict's figure does.
std::vector<std::string> listing_notes(const PlanVerbOptions& o, const models::PlannerResult& r,
                                       const models::Cluster& c, const models::Workload& w) {
  std::vector<std::string> notes;
  if (!r.single_gpu_note.empty()) notes.push_back(r.single_gpu_note);
  if (o.spot && !models::any_spot_price(c)) notes.push_back(models::kNoSpotPriceNote);
  std::vector<const models::Plan*> listed;
  for (const models::RankedPlan& p : r.top) listed.push_back(&p.plan);
  for (const models::PlannerBaseline* b : {&r.uniform, &r.fastest_type_only})
    if (b->found) listed.push_back(&b->best.plan);
  for (std::string& note : models::assumed_efficiency_notes(c, w, listed)) notes.push_back(std::move(note));
  return notes;
}

void write_json(const PlanVerbOptions& o, const models::PlannerOptions& po, const models::PlannerResult& r,
                const Refined& ref, const models::Cluster& c, const models::Workload& w) {
  models::JsonOut j;
  j.begin_object();
  j.key("cluster").value(c.name).key("workload").value(w.name);
  j.key("objective").value(models::to_string(r.objective));
  if (r.objective == models::PlanObjective::kBudget) j.key("budget_per_hour").value(o.budget_per_hour);
  j.key("search_space");
  models::write_search_space_json(j, po);
  j.key("search_time_s").value(r.search_time_s);
  j.key("threads").value(r.threads);
  j.key("plans_evaluated").value(static_cast<long long>(r.plans_evaluated));
  j.key("plans_pruned").value(static_cast<long long>(r.plans_pruned));
  j.key("plans_predicted").value(static_cast<long long>(r.plans_predicted));
  j.key("search_complete").value(r.searches_stopped == 0 && r.searches_truncated == 0 && r.predictions_skipped == 0);
  j.key("feasible").value(!r.top.empty());
  if (r.top.empty()) j.key("reason").value(r.reason);
  j.key("plans").begin_array();
  const std::vector<std::optional<double>> lockstep = lockstep_rates(r, c, w);
  for (size_t i = 0; i < r.top.size(); ++i) {
    j.begin_object().key("rank").value(static_cast<int>(i + 1));
    write_ranked(j, r.top[i], c, o.spot);
    j.key("lockstep_tokens_per_s");
    if (lockstep[i]) j.value(*lockstep[i]);
    else j.null();
    if (ref.done) {
      j.key("simulated_tokens_per_s");
      if (ref.simulated[i]) j.value(*ref.simulated[i]);
      else j.null();
    }
    j.end_object();
  }
  j.end_array();
  j.key("fastest_type").value(r.fastest_type);
  j.key("baselines").begin_object();
  for (const models::PlannerBaseline* b : {&r.uniform, &r.fastest_type_only}) {
    j.key(b->name).begin_object().key("found").value(b->found);
    if (b->found) {
      write_ranked(j, b->best, c, o.spot);
      if (r.objective == models::PlanObjective::kBudget)
        j.key("over_budget").value(b->best.report.cost_per_hour > o.budget_per_hour);
      if (!r.top.empty()) j.key("best_over_baseline").value(r.top[0].goodput_tokens_per_s() / b->best.goodput_tokens_per_s());
      if (ref.done) {
        const std::optional<double> sim = simulated_baseline(r, ref, *b);
        j.key("simulated_tokens_per_s");
        if (sim) j.value(*sim);
        else j.null();
        j.key("best_over_baseline_simulated");
        if (const std::optional<double> best = simulated_best(ref); sim && best) j.value(*best / *sim);
        else j.null();
      }
    } else {
      j.key("tokens_per_s").null().key("reason").value(b->reason);
    }
    j.end_object();
  }
  j.end_object();
  if (!ref.note.empty()) j.key("refine_note").value(ref.note);
  if (!r.single_gpu_note.empty()) j.key("single_gpu_note").value(r.single_gpu_note);
  if (o.spot && !models::any_spot_price(c)) j.key("spot_note").value(models::kNoSpotPriceNote);  // the table's note
  // Every note of the table in one list (the keys above stay for the scripts that read them).
  j.key("notes").begin_array();
  if (!ref.note.empty()) j.value(ref.note);
  for (const std::string& note : listing_notes(o, r, c, w)) j.value(note);
  j.end_array();
  if (!o.emit_plan.empty() && !r.top.empty()) j.key("emitted_plan").value(o.emit_plan);
  j.end_object();
  std::cout << j.str();
}

/// Which of the listed plans and baselines join NVIDIA and AMD GPUs, and what that means.
void print_vendor_note(const models::PlannerResult& r) {
  std::vector<std::string> which;
  for (size_t i = 0; i < r.top.size(); ++i)
    if (r.top[i].joins_vendors) which.push_back("plan " + std::to_string(i + 1));
  for (const models::PlannerBaseline* b : {&r.uniform, &r.fastest_type_only})
    if (b->found && b->best.joins_vendors) which.push_back("the " + b->name + " baseline");
  if (which.empty()) return;
  std::cout << "note: " << models::join_with_and(which) << (which.size() == 1 ? " exchanges" : " exchange")
            << " data between NVIDIA and AMD GPUs: " << models::kJoinsVendorsNote
            << " (--one-vendor keeps every plan on one vendor's GPUs)\n";
}

void write_table(const PlanVerbOptions& o, const models::PlannerResult& r, const Refined& ref,
                 const models::Cluster& c, const models::Workload& w) {
  std::cout << "plan: " << w.name << " on " << c.name << " (" << c.gpu_count() << " GPUs), objective "
            << models::to_string(r.objective);
  if (r.objective == models::PlanObjective::kBudget) std::cout << " <= " << format_price_per_hour(o.budget_per_hour);
  std::cout << "\n";
  std::vector<std::string> head = {"#", "tokens/s", "MFU", "headroom", "$/h", "$/Mtok", "GPUs"};
  if (ref.done) head.insert(head.begin() + 2, "sim tokens/s");
  // At spot prices: what preemptions leave of each plan (SpotOutlook), which the ranking uses.
  if (o.spot) head.insert(head.begin() + 2, {"goodput", "reclaimed/h"});
  TextTable t(head);
  for (size_t i = 0; i < r.top.size(); ++i) {
    const models::RankedPlan& p = r.top[i];
    std::vector<std::string> row = {std::to_string(i + 1), models::format_tokens_per_s(p.report.tokens_per_s),
                                    fmt("%.3f", p.report.mfu),
                                    models::format_size(p.memory_headroom_bytes) +
                                        fmt(" (%.0f%%)", 100 * p.memory_headroom_fraction),
                                    format_price_per_hour(p.report.cost_per_hour),
                                    // An exponent past a million dollars: %.3f printed 29 digits for a
                                    // plan of near-zero tokens/s (s52 bad-input hunt).
                                    fmt(p.report.cost_per_million_tokens < 1e6 ? "%.3f" : "%.3e",
                                        p.report.cost_per_million_tokens),
                                    std::to_string(p.plan.gpu_count())};
    if (ref.done) row.insert(row.begin() + 2, ref.simulated[i] ? fmt("%.0f", *ref.simulated[i]) : "-");
    if (o.spot)
      row.insert(row.begin() + 2, {fmt("%.0f", p.goodput_tokens_per_s()), fmt("%.2f", p.spot.preemptions_per_hour)});
    t.add_row(row);
  }
  if (r.top.empty()) {
    std::cout << "no plan: " << r.reason << "\n";
  } else {
    // The shape goes last, left-aligned, after the table's columns.
    std::ostringstream table;
    t.print(table);
    std::istringstream lines(table.str());
    std::string line;
    for (int i = -1; std::getline(lines, line); ++i) {
      std::cout << line << "  " << (i < 0 ? "shape" : r.top[i].shape) << "\n";
    }
  }
  std::cout << "baselines:\n";
  for (const models::PlannerBaseline* b : {&r.uniform, &r.fastest_type_only}) {
    std::cout << "  " << b->name;
    if (b->name == "fastest_type_only" && !r.fastest_type.empty()) std::cout << " (" << r.fastest_type << ")";
    if (!b->found) {
      std::cout << ": none (" << b->reason << ")\n";
      continue;
    }
    // With --spot the comparison is of goodput (tokens/s left after preemptions).
    const char* what = o.spot ? "goodput tokens/s" : "tokens/s";
    const double baseline_tokens_per_s = b->best.goodput_tokens_per_s();
    std::cout << ": " << models::format_tokens_per_s(baseline_tokens_per_s) << " " << what;
    // Under objective cost the best plan may be slower and still better: say what it ranks by.
    const bool by_cost = r.objective == models::PlanObjective::kCost;
    if (by_cost) std::cout << fmt(", $%.3f/Mtok", b->best.report.cost_per_million_tokens);
    if (!r.top.empty()) {
      const double ratio = r.top[0].goodput_tokens_per_s() / baseline_tokens_per_s;
      std::cout << fmt(ratio < 1000 ? ", best plan has %.2fx its " : ", best plan has %.3gx its ", ratio) << what;
    }
    const std::optional<double> sim = simulated_baseline(r, ref, *b), best_sim = simulated_best(ref);
    if (sim && best_sim)
      std::cout << "; simulated " << models::format_tokens_per_s(*sim) << " tokens/s"
                << fmt(", the best plan's simulation %.2fx it", *best_sim / *sim);
    if (!r.top.empty() && by_cost && b->best.report.cost_per_million_tokens > 0)
      std::cout << fmt(" at %.2fx its $/Mtok", r.top[0].report.cost_per_million_tokens / b->best.report.cost_per_million_tokens);
    // A baseline is the best plan of its kind whatever it costs: say when the budget rules it out.
    if (r.objective == models::PlanObjective::kBudget && b->best.report.cost_per_hour > o.budget_per_hour)
      std::cout << " (over the budget: " << format_price_per_hour(b->best.report.cost_per_hour) << ")";
    std::cout << "  " << b->best.shape << "\n";
  }
  print_vendor_note(r);
  print_lockstep_note(lockstep_rates(r, c, w));
  for (const std::string& note : listing_notes(o, r, c, w)) std::cout << "note: " << note << "\n";
  std::cout << fmt("search: %.3f s on ", r.search_time_s) << r.threads << (r.threads == 1 ? " thread, " : " threads, ") << r.plans_evaluated << " plans evaluated, " << r.plans_pruned
            << " pruned, " << r.plans_predicted << " predicted\n";
  if (r.searches_stopped > 0)
    std::cout << "search: " << r.searches_stopped << " of the searches stopped at --time-limit " << fmt("%g", o.time_limit_s)
              << " s: the plans above are the best found, not proven best (raise or drop the limit to search on)\n";
  if (r.predictions_skipped > 0)
    std::cout << "search: " << r.predictions_skipped << " candidate plans of lower estimates were not predicted: --time-limit "
              << fmt("%g", o.time_limit_s) << " s had passed in the final ranking\n";
  if (r.searches_truncated > 0)
    std::cout << "search: " << r.searches_truncated << " of the searches kept only the "
              << models::kMaxSearchBranches
              << " most promising (TP per node type, knobs) branches of more (many node types): the plans above are "
                 "the best found, not proven best (--tp-degrees, --micro-batches, --recompute or --interleave narrow "
                 "the search)\n";
  if (!ref.note.empty()) std::cout << ref.note << "\n";
  if (!o.emit_plan.empty() && !r.top.empty()) std::cout << "best plan written to " << o.emit_plan << "\n";
}

/// The values of a search-space option, checked and without repeats (the search would try a
/// repeated value twice).
std::vector<int> search_values(const char* option, models::SearchKnob knob, const std::vector<int>& values) {
  std::vector<int> out;
  for (int v : values) {
    if (const std::string problem = models::search_value_problem(knob, v); !problem.empty())
      usage_error(std::string(option) + ": " + problem);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

void run_plan(PlanVerbOptions o) {
  models::PlannerOptions po;
  po.tp_degrees = search_values("--tp-degrees", models::SearchKnob::kTpDegrees, o.tp_degrees);
  po.micro_batches = search_values("--micro-batches", models::SearchKnob::kMicroBatches, o.micro_batches);
  po.interleaves = search_values("--interleave", models::SearchKnob::kInterleave, o.interleaves);
  po.zero_stages = search_values("--zero", models::SearchKnob::kZero, o.zero_stages);
  po.rank_faster_zero0_baselines = !o.zero_given;
  po.recomputes.clear();
  for (const std::string& r : o.recomputes) {
    const models::Recompute rc = models::recompute_named(r).value_or(models::Recompute::kNone);  // CLI11 checked the names
    if (std::find(po.recomputes.begin(), po.recomputes.end(), rc) == po.recomputes.end()) po.recomputes.push_back(rc);
  }
  // --budget-per-hour alone means the budget objective; beside another objective it was ignored
  // (cost) or silently replaced it (throughput).
  if (o.budget_per_hour > 0 && (o.objective == "cost" || o.objective == "throughput"))
    usage_error("--budget-per-hour ranks plans by throughput within the budget (--objective budget); it cannot be "
                "combined with --objective " + o.objective + " (expected one of them)");
  if (o.objective == "cost") po.objective = models::PlanObjective::kCost;
  else if (o.objective == "budget" || o.budget_per_hour > 0) po.objective = models::PlanObjective::kBudget;
  if (po.objective == models::PlanObjective::kBudget && o.budget_per_hour <= 0) {
    usage_error("--objective budget needs --budget-per-hour (dollars per hour, > 0)");
  }
  if (o.top < 1) usage_error("--top must be >= 1");
  po.budget_per_hour = o.budget_per_hour;
  po.min_headroom_fraction = o.min_headroom_pct / 100.0;
  po.top = std::max(o.top, o.refine);
  po.spot = o.spot;
  if (o.no_sequence_parallel && o.tp_comm_overlap)
    usage_error("--tp-comm-overlap overlaps the sequence-parallel collectives: it needs sequence parallelism "
                "(expected one of --tp-comm-overlap and --no-sequence-parallel)");
  // A flag no searched plan can use is a mistake, as --sharded-collectives without ZeRO-3 is.
  const auto none_above_one = [](const std::vector<int>& v) {
    return std::none_of(v.begin(), v.end(), [](int x) { return x > 1; });
  };
  if (o.overlap_p2p_comm && none_above_one(po.interleaves))
    usage_error("--overlap-p2p-comm overlaps the sends of the interleaved schedule, and the search has no interleave "
                "factor above 1 (expected --interleave with a factor >= 2, e.g. --interleave 1,2)");
  if (o.tp_comm_overlap && none_above_one(po.tp_degrees))
    usage_error("--tp-comm-overlap overlaps the tensor-parallel collectives, and the search has no TP degree above 1 "
                "(expected --tp-degrees with a degree >= 2)");
  po.sequence_parallel = !o.no_sequence_parallel;
  po.tp_comm_overlap = o.tp_comm_overlap;
  po.overlap_p2p_comm = o.overlap_p2p_comm;
  po.one_vendor = o.one_vendor;
  po.sharded_collectives = models::sharded_collectives_named(o.sharded_collectives).value_or(models::ShardedCollectives::kMemberNic);
  if (!o.sharded_collectives.empty() && std::find(po.zero_stages.begin(), po.zero_stages.end(), 3) == po.zero_stages.end())
    usage_error("--sharded-collectives prices the ZeRO-3 plans of the search, and it searches none (expected --zero "
                "with 3, e.g. --zero 1,3)");
  po.time_limit_s = o.time_limit_s;
  po.threads = o.threads;
  check_output_files("plan", {{"--emit-plan", o.emit_plan}}, {o.cluster, o.workload, o.profile});
  Inputs in = load_inputs(o.cluster, o.workload, "", o.profile);
  models::PlannerResult result = models::plan_training(in.cluster, in.workload, po);
  const Refined ref = refine(o, result, in.cluster, in.workload);
  if (static_cast<int>(result.top.size()) > o.top) result.top.resize(o.top);
  std::string emit_error;
  if (!o.emit_plan.empty() && !result.top.empty()) {
    models::PlanWriteOptions w;
    w.cluster_path = models::header_path(o.cluster, o.emit_plan);
    w.workload_path = models::header_path(o.workload, o.emit_plan);
    w.comment = "written by hetsim plan (objective " + std::string(models::to_string(result.objective)) + "): " +
                result.top[0].shape + "\npredicted " + models::format_tokens_per_s(result.top[0].report.tokens_per_s) + " tokens/s";
    models::Plan best = result.top[0].plan;
    best.name = in.cluster.name + "-" + in.workload.name + "-planned";
    try {
      models::write_plan_file(o.emit_plan, best, in.cluster, w);
    } catch (const std::runtime_error& e) {  // the plans found are printed all the same
      emit_error = e.what();
      o.emit_plan.clear();
    }
  }
  if (o.format == OutputFormat::kJson) write_json(o, po, result, ref, in.cluster, in.workload);
  else write_table(o, result, ref, in.cluster, in.workload);
  if (!emit_error.empty()) {
    std::cerr << "hetsim plan: error: --emit-plan: " << emit_error << "\n";
    throw VerbExit{kExitFailure};
  }
  if (result.top.empty()) throw VerbExit{kExitFailure};
}

}  // namespace

void add_plan_verb(CLI::App& app) {
  auto o = std::make_shared<PlanVerbOptions>();
  CLI::App* verb = app.add_subcommand("plan", "Find the fastest (or cheapest) way to train a workload on a cluster");
  verb->add_option("--cluster", o->cluster, "Cluster file (kind: cluster)")->required();
  add_profile_option(verb, &o->profile);
  verb->add_option("--workload", o->workload, "Workload file (kind: workload)")->required();
  verb->add_option("--objective", o->objective, "throughput (tokens/s, default) | cost ($ per million tokens) | budget")
      ->check(CLI::IsMember({"throughput", "cost", "budget"}));
  verb->add_option("--budget-per-hour", o->budget_per_hour,
                   "Dollars per hour (\"120\" or \"$120/h\"): the fastest plan whose nodes cost at most this (chooses the GPUs too)")
      ->transform(price_per_hour_check());
  verb->add_option("--min-headroom", o->min_headroom_pct,
                   "Percent of each GPU's memory every stage of a plan keeps free, for what the memory model does not "
                   "count (allocator fragmentation, communicator buffers): \"10\" or \"10%\"; default 0, at most 90")
      ->transform(percent_check(90.0));
  verb->add_flag("--spot", o->spot,
                 "Price nodes at their spot price where the cluster gives one, and rank plans by the tokens/s their "
                 "nodes' preemptions leave (node types' preemption_rate, checkpoint_bandwidth, restart_time)");
  verb->add_flag("--tp-comm-overlap", o->tp_comm_overlap,
                 "The stack overlaps TP communication with the GEMMs (Megatron-Core --tp-comm-overlap): plans with "
                 "sequence parallelism use it");
  verb->add_flag("--overlap-p2p-comm", o->overlap_p2p_comm,
                 "The stack overlaps pipeline sends with compute and does not sync the host at them (Megatron-Core "
                 "overlap_p2p_comm): interleaved plans use it");
  verb->add_flag("--one-vendor", o->one_vendor,
                 "Keep every plan, baselines too, on GPUs of one vendor: NCCL and RCCL build no communicator "
                 "across NVIDIA and AMD GPUs, so Megatron-LM, DeepSpeed and FSDP cannot run a plan that joins them");
  // The search space: what the training stack can run (docs/planner.md "Restricting the search").
  add_list_option(verb, "--tp-degrees", o->tp_degrees,
                  "TP degrees to search, comma-separated (default 1,2,4,8; the searched shapes keep a TP group in one node, Megatron's (tp, pp, dp) plans may span nodes)",
                  non_negative_integer());
  add_list_option(verb, "--micro-batches", o->micro_batches,
                  "Micro-batch sizes to search, comma-separated (default 1,2,4,8)", non_negative_integer());
  add_list_option(verb, "--interleave", o->interleaves,
                  "Interleave factors to search, comma-separated (default 1,2; 1 = 1F1B without interleaving)",
                  non_negative_integer());
  add_list_option(verb, "--recompute", o->recomputes,
                  "Activation recomputation to search, comma-separated: none, selective, full (default all three)",
                  CLI::IsMember({"none", "selective", "full"}));
  CLI::Option* zero = add_list_option(
      verb, "--zero", o->zero_stages,
      "ZeRO stages to search, comma-separated: 0 (no sharding), 1 (sharded optimizer states), 3 (fully sharded, "
      "one-stage plans) (default 1, and the uniform baseline's ZeRO-0 plans where they are faster)",
      non_negative_integer());
  verb->add_option("--sharded-collectives", o->sharded_collectives,
                   "How the stack's ZeRO-3 gathers and reduce-scatters cross nodes: member_nic (each GPU at its NIC "
                   "share, DeepSpeed ZeRO-3; default) | node_nics (over all of a node's NICs, PyTorch FSDP)")
      ->check(CLI::IsMember({"member_nic", "node_nics"}));
  verb->add_flag("--no-sequence-parallel", o->no_sequence_parallel,
                 "The stack has no sequence parallelism: plans with TP > 1 run without it (default: with it)");
  verb->add_option("--top", o->top, "Plans listed (default 5); above 48 the search also predicts that many candidates, so a longer listing can rank plans first that a shorter one missed (docs/planner.md, Limits)")->transform(positive_integer());
  verb->add_option("--time-limit", o->time_limit_s,
                   "Seconds (\"90\", or with a unit: \"90s\", \"2min\") each of the three searches (best plan and the two baselines) may take; the most "
                   "promising branches go first, so a search stopped at the limit keeps its best so far (default 60; 0: no limit)")
      ->transform(duration_check());
  verb->add_option("--threads", o->threads,
                   "Threads of the search, 0-1024 (default 0: one per CPU the process may use); the plans found do not depend on it")
      ->transform(non_negative_integer())
      ->check(CLI::Range(0, 1024));
  verb->add_option("--refine", o->refine, "Re-rank the best K plans with the SimGrid simulator (about a second each on a few "
                   "nodes, minutes on a thousand GPUs; the refinement stops at --time-limit seconds, a running simulation "
                   "included, and the plans not simulated keep the analytic order)")->transform(non_negative_integer());
  verb->add_option("--emit-plan", o->emit_plan, "Write the best plan to this file (kind: plan)")
      ->check(output_file_check());
  add_format_option(verb, &o->format);
  verb->callback([o, zero] {
    o->zero_given = zero->count() > 0;
    run_plan(*o);
  });
}

}  // namespace hetsim::cli
