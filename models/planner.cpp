// SPDX-License-Identifier: Apache-2.0
// Planner driver: which GPUs to use, the shape search, the baselines, the final ranking by predict().
#include "planner.hpp"

#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>
#include <variant>

#include "plan_notes.hpp"
#include "planner_allotments.hpp"
#include "planner_capacity.hpp"
#include "planner_megatron.hpp"
#include "planner_local_search.hpp"
#include "planner_ranking.hpp"
#include "planner_search.hpp"
#include "predictor.hpp"

namespace hetsim::models {

const char* to_string(PlanObjective o) {
  switch (o) {
    case PlanObjective::kThroughput: return "throughput";
    case PlanObjective::kCost: return "cost";
    case PlanObjective::kBudget: return "budget";
  }
  return "?";
}

double objective_score(PlanObjective objective, const Report& r, double goodput_fraction) {
  const double tokens_per_s = r.tokens_per_s * goodput_fraction;
  if (!r.feasible || !(tokens_per_s > 0)) return -std::numeric_limits<double>::infinity();
  if (objective == PlanObjective::kCost) return -cost_per_million_tokens(r.cost_per_hour, tokens_per_s);
  return tokens_per_s;
}

namespace {

using planner::Shape;
using planner::ShapeCollector;
using planner::ShapeSearch;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

using planner::Candidate;
using planner::over_budget;
using planner::over_node_budget;
using planner::single_gpu_beats_note;
using planner::rank;
using planner::top_plans;
using planner::busy_gpus;
using planner::widest_tp;
using planner::allotments;
using planner::pool_vendors;
using planner::split_by_vendor;
using planner::useful_nodes;

/// The fastest GPU type of the pools: the highest sustained GEMM rate in the workload's dtype
/// (dense peak times the catalog's GEMM efficiency: an MI300X's 1307 TFLOP/s peak sustains less
/// than an H100's 989, clusters/catalog/amd.yaml), what a user choosing "my fastest GPUs" would
/// pick. Empty when no type computes in the dtype.
std::string fastest_gpu_type(const Cluster& cluster, const std::vector<planner::Pool>& pools,
                             const TrainingSpec& training) {
  std::string fastest;
  double fastest_rate = 0;
  for (const planner::Pool& p : pools) {
    const GpuType& g = cluster.node_types[p.node_type].gpu;
    const double rate = g.sustained_flops(g.matmul_dtype(training.dtype, training.allow_tf32));
    if (rate > fastest_rate) {
      fastest_rate = rate;
      fastest = g.name;
    }
  }
  return fastest;
}

/// One planning run (plan_once): the shape search over the allotments of nodes, the two
/// baselines (the fastest GPU type alone; uniform splits over all GPUs, with Megatron's rank
/// order), and the final ranking of what they found by predict().
class PlanOnce {
 public:
  PlanOnce(const Cluster& cluster, const Workload& workload, const PlannerOptions& options)
      : cluster_(cluster),
        workload_(workload),
        options_(options),
        costs_(cluster, workload),
        search_(cluster, workload, options, costs_),
        pools_(search_.get_pools()),
        keep_(std::max(options.predict_candidates, options.top)),
        best_(keep_, [this](const Shape& s) { return score(s); }),
        fastest_(keep_, tokens_of),
        uniform_(keep_, tokens_of) {
    result_.objective = options.objective;
    result_.uniform.name = "uniform";
    result_.fastest_type_only.name = "fastest_type_only";
    result_.fastest_type = fastest_gpu_type(cluster, pools_, workload.training);
  }

  PlannerResult run() {
    search_allotments();
    search_fastest_type_alone();
    search_uniform_splits();
    long evaluated = 0, pruned = 0;
    bool megatron_stopped = false, fastest_megatron_stopped = false;
    megatron_ = planner::megatron_candidates(cluster_, workload_, options_, costs_, &evaluated, &pruned, {}, &megatron_stopped);
    if (options_.one_vendor)  // Megatron's rank order over all GPUs: kept where the cluster has one vendor
      std::erase_if(megatron_, [&](const Candidate& c) { return joins_vendors(cluster_, c.plan); });
    // Megatron's plans on the fastest type alone also feed that baseline (and the ranking): the
    // shape search keeps a TP group in one node, so `--tp-degrees 16` on 8-GPU nodes found no
    // plan on the fastest type alone beside a feasible TP-16 plan of it (s57 bad-input hunt).
    // The GPUs of the type must be one run of the rank order; all of them: megatron_ itself.
    const planner::GpuRange fast_gpus = planner::gpus_of_type(cluster_, result_.fastest_type);
    megatron_is_fastest_type_ = fast_gpus.count == cluster_.gpu_count();
    if (fast_gpus.count > 0 && !megatron_is_fastest_type_)
      megatron_fastest_ =
          planner::megatron_candidates(cluster_, workload_, options_, costs_, &evaluated, &pruned, fast_gpus, &fastest_megatron_stopped);
    // An enumeration cut short (it keeps the candidates the ranking predicts) leaves the plans the
    // best found, not proven best: the result says a search stopped, if the shape searches did not.
    if ((megatron_stopped || fastest_megatron_stopped) && result_.searches_stopped == 0) result_.searches_stopped = 1;
    rank_and_choose();
    result_.plans_evaluated = search_.evaluated + evaluated + result_.plans_predicted + costs_.get_probe_count();
    result_.threads = search_.threads_started;
    result_.plans_pruned = search_.pruned + pruned;
    return std::move(result_);
  }

 private:
  static double tokens_of(const Shape& s) { return s.tokens_per_s; }

  /// The objective's score of a shape (larger is better). Dollars per token, negated; a free shape
  /// (hardware priced at $0/h, e.g. owned) scores 0, the best there is, as the search's bound for
  /// a free pool says (upper_bound_score).
  double score(const Shape& s) const {
    const PlanObjective obj = options_.objective;
    if (obj == PlanObjective::kCost) return s.tokens_per_s > 0 ? -s.price_per_hour / s.tokens_per_s : kNegInf;
    if (obj == PlanObjective::kBudget && over_node_budget(s.price_per_hour, options_)) return kNegInf;
    return s.tokens_per_s;
  }

  /// Whether an allotment uses nodes of the fastest GPU type only.
  bool fastest_type_only(const std::vector<int>& nodes) const {
    for (size_t p = 0; p < pools_.size(); ++p)
      if (nodes[p] > 0 && cluster_.node_types[pools_[p].node_type].gpu.name != result_.fastest_type) return false;
    return true;
  }

  /// The peak FLOP/s of an allotment in the workload's matmul dtype.
  double peak_flop_per_s(const std::vector<int>& nodes) const {
    double sum = 0;
    for (size_t p = 0; p < pools_.size(); ++p) {
      const NodeType& t = cluster_.node_types[pools_[p].node_type];
      const Dtype matmul = t.gpu.matmul_dtype(workload_.training.dtype, workload_.training.allow_tf32);
      if (t.gpu.supports(matmul)) sum += nodes[p] * t.gpus_per_node * t.gpu.peak(matmul);
    }
    return sum;
  }

  /// Every allotment, largest first: their plans set the bound that prunes the smaller ones.
  /// The shapes on the fastest type alone also feed that baseline.
  void search_allotments() {
    std::vector<std::vector<int>> allotted = allotments(cluster_, pools_, workload_, options_);
    std::stable_sort(allotted.begin(), allotted.end(),
                     [&](const auto& a, const auto& b) { return peak_flop_per_s(a) > peak_flop_per_s(b); });
    // The fastest-type baseline ranks by tokens/s whatever the objective: it takes the shapes of
    // the allotments the throughput objective searches, not the cost objective's extra partial
    // pools (which gave bench1024's H100 baseline 2,425,068 tokens/s under cost, 2,423,080 else).
    std::vector<std::vector<int>> baseline_allotments;
    if (options_.objective == PlanObjective::kCost) {
      PlannerOptions by_tokens = options_;
      by_tokens.objective = PlanObjective::kThroughput;
      baseline_allotments = allotments(cluster_, pools_, workload_, by_tokens);
      std::erase_if(baseline_allotments, [&](const std::vector<int>& a) { return !fastest_type_only(a); });
    }
    const auto feeds_baseline = [&](const std::vector<int>& nodes) {
      return fastest_type_only(nodes) &&
             (options_.objective != PlanObjective::kCost ||
              std::find(baseline_allotments.begin(), baseline_allotments.end(), nodes) != baseline_allotments.end());
    };
    search_.start_clock();
    // The throughput objective's fastest-type allotments the cost objective does not search
    // (partial counts of several pools of that type): for the baseline alone.
    for (const std::vector<int>& nodes : baseline_allotments)
      if (std::find(allotted.begin(), allotted.end(), nodes) == allotted.end())
        search_.search(nodes, false, [&](const Shape& s) { fastest_.offer(s); }, [&] { return fastest_.threshold(); },
                       ShapeSearch::BoundUnit::kTokens);
    for (const std::vector<int>& nodes : allotted) {
      const bool fast_only = feeds_baseline(nodes);
      search_.search(
          nodes, false,
          [&](const Shape& s) {
            best_.offer(s);
            if (fast_only) fastest_.offer(s);
          },
          [&] {
            if (!fast_only) return best_.threshold();
            // The fastest-type collector ranks by tokens/s: only a tokens/s bound serves both.
            return options_.objective == PlanObjective::kCost ? kNegInf
                                                              : std::min(best_.threshold(), fastest_.threshold());
          });
    }
    result_.searches_stopped += search_.stopped;
    result_.searches_truncated += search_.truncated;
    fastest_stopped_ = search_.stopped > 0;
  }

  /// Baseline (b), the fastest type's pools alone, when the allotments did not cover them.
  void search_fastest_type_alone() {
    if (options_.objective != PlanObjective::kBudget && !fastest_.take_sorted().empty()) return;
    if (result_.fastest_type.empty()) return;
    std::vector<int> nodes(pools_.size(), 0);
    for (size_t p = 0; p < pools_.size(); ++p)
      if (cluster_.node_types[pools_[p].node_type].gpu.name == result_.fastest_type)
        nodes[p] = useful_nodes(cluster_, pools_[p], workload_, options_);
    search_.start_clock();
    search_.search(nodes, false, [&](const Shape& s) { fastest_.offer(s); }, [&] { return fastest_.threshold(); },
                   ShapeSearch::BoundUnit::kTokens);
    result_.searches_stopped += search_.stopped;
    result_.searches_truncated += search_.truncated;
    fastest_stopped_ = fastest_stopped_ || search_.stopped > 0;
  }

  /// Baseline (a): uniform layer and batch splits over all GPUs, in type-grouped placements and
  /// every order of the types the search tries (the Megatron rank order's plans come from
  /// megatron_candidates).
  void search_uniform_splits() {
    std::vector<int> all(pools_.size());
    for (size_t p = 0; p < pools_.size(); ++p) all[p] = static_cast<int>(pools_[p].nodes.size());
    // One vendor: every GPU of each vendor in turn (the uniform plans over all GPUs would join them).
    const std::vector<std::vector<int>> parts =
        options_.one_vendor ? split_by_vendor(all, pool_vendors(cluster_, pools_)) : std::vector<std::vector<int>>{all};
    search_.start_clock();
    for (const std::vector<int>& nodes : parts)
      search_.search(nodes, true, [&](const Shape& s) { uniform_.offer(s); }, [&] { return uniform_.threshold(); },
                     ShapeSearch::BoundUnit::kTokens);
    result_.searches_stopped += search_.stopped;
    result_.searches_truncated += search_.truncated;
    uniform_stopped_ = search_.stopped > 0;
  }

  /// A collector's shapes as plans, each followed by its ZeRO-3 twin when ZeRO-3 is searched.
  std::vector<Candidate> to_candidates(const ShapeCollector& collector) {
    const bool zero3 =
        std::find(options_.zero_stages.begin(), options_.zero_stages.end(), 3) != options_.zero_stages.end();
    std::vector<Candidate> out;
    for (const Shape& s : collector.take_sorted()) {
      out.push_back(Candidate{search_.materialize(s), search_.describe(s), s.tokens_per_s});
      if (!zero3) continue;
      if (std::optional<Plan> twin = planner::zero3_twin(out.back().plan, options_.sharded_collectives)) {
        const int m = twin->replicas.front().micro_batches;
        out.push_back(Candidate{std::move(*twin), planner::with_micro_batches(out.back().shape, m), s.tokens_per_s});
      }
    }
    return out;
  }

  /// The feasible ones of the candidates, as predict() rates them.
  /// Every candidate first in its list, best estimate first, is predicted: a search stopped early
  /// leaves fragmented shapes that take up to a second each to predict (bench1024 at --time-limit 1
  /// took 14-24 s in predictions). Past the time limit only the first kMinPredicted of a list are,
  /// and past twice the limit only up to its first feasible one: a plan of 131,072 replicas takes
  /// seconds to predict (1,048,576 GPUs at --time-limit 20 spent 365 s on the first eight of each).
  std::vector<RankedPlan> predict_feasible(std::vector<Candidate> candidates) {
    constexpr std::size_t kMinPredicted = 8;
    std::vector<RankedPlan> out;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const auto now = std::chrono::steady_clock::now();
      // Past 2S a list stops once it has a feasible plan and the final ranking has one too; a list
      // not begun by then is not predicted at all (a 100,000-GPU plan takes half a minute to
      // predict: seven took 166 s past --time-limit 5; s57 bad-input hunt), and says why.
      const bool past_hard = now > prediction_hard_deadline_ && rankable_found_;
      if (i == 0 && now > lists_deadline_ && rankable_found_) {
        ranking_cut_ = true;
        result_.predictions_skipped += static_cast<long>(candidates.size());
        break;
      }
      if (i > 0 && ((i >= kMinPredicted && now > prediction_deadline_) || (past_hard && !out.empty()))) {
        result_.predictions_skipped += static_cast<long>(candidates.size() - i);
        break;
      }
      RankedPlan r = rank(cluster_, workload_, std::move(candidates[i]), options_.spot);
      ++result_.plans_predicted;
      if (r.report.feasible && r.memory_headroom_fraction < options_.min_headroom_fraction) continue;
      if (r.report.feasible) {
        ++result_.plans_feasible;
        rankable_found_ = rankable_found_ || searched_zero(r);
        out.push_back(std::move(r));
      } else if (options_.spot && leaves_no_goodput(r.spot)) {
        ++result_.plans_without_goodput;
        no_goodput_reason_ = r.report.infeasible_reason;
      }
    }
    return out;
  }

  /// The search's best plans (the first three, and up to twelve within 10% of the best), each
  /// hill-climbed by predict() over its micro-batch counts, the first three over their layer
  /// splits first (planner_local_search.hpp): the search's balance sees steady-state compute only,
  /// and a plan a micro-batch off can rank below others it then beats (spot-mix, a faster A100:
  /// sixth, 3.7% below the best).
  void climb_best_plans(std::vector<RankedPlan>& ranked) {
    constexpr std::size_t kAlways = 3, kAtMost = 12, kLayersShifted = 3;  // layer moves are the many
    constexpr double kWithin = 0.10;
    const auto score = [&](const RankedPlan& r) { return objective_score(options_.objective, r.report, r.spot.goodput_fraction); };
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < ranked.size(); ++i)
      if (options_.objective != PlanObjective::kBudget || !over_budget(ranked[i].report.cost_per_hour, options_))
        order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return score(ranked[a]) > score(ranked[b]); });
    for (std::size_t k = 0; k < std::min(kAtMost, order.size()); ++k) {
      RankedPlan& r = ranked[order[k]];
      const double first = score(ranked[order.front()]);  // the best, as climbed
      if (k >= kAlways && !(std::abs(first - score(r)) <= kWithin * std::abs(first))) break;
      // Layers first: a split changes the stages' times, which the counts' moves are ordered by.
      if (k < kLayersShifted)
        r = planner::shift_layers(cluster_, workload_, options_, std::move(r), prediction_deadline_,
                                  result_.plans_predicted);
      r = planner::shift_micro_batches(cluster_, workload_, options_, std::move(r), prediction_deadline_,
                                       result_.plans_predicted);
    }
  }

  /// Whether the final ranking offers the plan: a ZeRO stage the search was asked for (with one
  /// replica the stage does not matter).
  bool searched_zero(const RankedPlan& r) const {
    return r.plan.dp() == 1 ||
           std::find(options_.zero_stages.begin(), options_.zero_stages.end(), r.plan.zero) != options_.zero_stages.end();
  }

  /// Budget: the least egress of the plans the budget refused whose nodes alone fit it
  /// (PlannerResult::refused_egress_per_hour).
  void note_refused_egress(const std::vector<RankedPlan>& ranked) {
    if (options_.objective != PlanObjective::kBudget) return;
    for (const RankedPlan& r : ranked) {
      const auto egress = r.report.extra.find("egress_dollars_per_step");
      if (egress == r.report.extra.end() || !(egress->second > 0) || !(r.report.iteration_time_s > 0)) continue;
      const double egress_per_hour = egress->second / r.report.iteration_time_s * 3600.0;
      if (!over_budget(r.report.cost_per_hour, options_) || over_budget(r.report.cost_per_hour - egress_per_hour, options_))
        continue;
      double& least = result_.refused_egress_per_hour;
      least = least > 0 ? std::min(least, egress_per_hour) : egress_per_hour;
    }
  }

  /// Fastest first; ties keep the order found.
  static std::vector<RankedPlan> fastest_first(std::vector<RankedPlan> ranked) {
    std::stable_sort(ranked.begin(), ranked.end(), [](const RankedPlan& a, const RankedPlan& b) {
      return a.goodput_tokens_per_s() > b.goodput_tokens_per_s();
    });
    return ranked;
  }

  /// The baselines' best plans (or why there is none), then the top plans of everything found.
  void rank_and_choose() {
    // The predictions have a time limit of their own, as each search has.
    const double limit_s = options_.time_limit_s;
    if (limit_s > 0 && limit_s < 1e6) {  // beyond: no limit (as start_clock treats a huge one)
      using Clock = std::chrono::steady_clock;
      const auto seconds = [](double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
      const auto start = Clock::now();
      prediction_deadline_ = start + seconds(limit_s);
      prediction_hard_deadline_ = start + seconds(2 * limit_s);
      // Whole lists are skipped past 2S only when that is more than a second or two of ranking: a
      // tiny limit still gets each baseline's first plan, predicted in milliseconds.
      lists_deadline_ = start + seconds(std::max(2 * limit_s, 2.0));
    }
    std::vector<RankedPlan> fast_ranked = predict_feasible(to_candidates(fastest_));
    for (RankedPlan& r : predict_feasible(std::move(megatron_fastest_))) fast_ranked.push_back(std::move(r));
    // The uniform shapes and the Megatron configurations as two lists (each has its first few
    // predicted whatever the time), in that order as before.
    std::vector<RankedPlan> uniform_ranked = predict_feasible(to_candidates(uniform_));
    const bool no_megatron = megatron_.empty();
    for (RankedPlan& r : predict_feasible(std::move(megatron_))) {
      if (megatron_is_fastest_type_) fast_ranked.push_back(r);  // the same plan in both lists: top_plans keeps one
      uniform_ranked.push_back(std::move(r));
    }
    fast_ranked = fastest_first(std::move(fast_ranked));
    uniform_ranked = fastest_first(std::move(uniform_ranked));
    const auto set_baseline = [](PlannerBaseline& b, const std::vector<RankedPlan>& ranked, const std::string& why) {
      b.found = !ranked.empty();
      if (b.found) b.best = ranked.front();
      else b.reason = why;
    };
    // A search cut short may have missed the plans it had not reached: not "no feasible plan".
    const std::string cut_short = "the search stopped at --time-limit before it found ";
    const std::string& fastest = result_.fastest_type;
    set_baseline(result_.fastest_type_only, fast_ranked,
                 fastest.empty()    ? std::string("no GPU type of the cluster computes in ") +
                                          to_string(workload_.training.dtype)
                 : fastest_stopped_ || ranking_cut_ ? cut_short + "a plan on " + fastest + " alone"
                                    : "no feasible plan on " + fastest + " alone");
    set_baseline(result_.uniform, uniform_ranked,
                 (uniform_stopped_ && no_megatron) || ranking_cut_ ? cut_short + "a plan with uniform splits"
                                                                   : "no feasible plan with uniform splits over all GPUs");

    // Final ranking: the best shapes and every baseline plan, by the predictor's figures. The
    // uniform baseline also tries ZeRO-0 (as the papers ran it); a plan of a ZeRO stage the user
    // left out of the search is not offered (with one replica the stage does not matter), but
    // for PlannerOptions::rank_faster_zero0_baselines a ZeRO-0 plan that beats them all is.
    // ZeRO-3 twins stand beside the ZeRO-1 shapes they come from, which a ZeRO-3-only search drops here.
    std::vector<RankedPlan> all, zero0;
    std::vector<RankedPlan> best_ranked = predict_feasible(to_candidates(best_));
    climb_best_plans(best_ranked);
    for (std::vector<RankedPlan>* ranked : {&best_ranked, &fast_ranked, &uniform_ranked})  // moved: see rank()
      for (RankedPlan& r : *ranked)
        if (searched_zero(r)) all.push_back(std::move(r));
        else if (r.plan.zero == 0 && options_.rank_faster_zero0_baselines) zero0.push_back(std::move(r));
    const auto score = [&](const RankedPlan& r) { return objective_score(options_.objective, r.report, r.spot.goodput_fraction); };
    double best_searched = -std::numeric_limits<double>::infinity();
    for (const RankedPlan& r : all)
      if (options_.objective != PlanObjective::kBudget || !over_budget(r.report.cost_per_hour, options_))
        best_searched = std::max(best_searched, score(r));
    for (RankedPlan& r : zero0)
      if (score(r) > best_searched) all.push_back(std::move(r));
    note_refused_egress(all);
    result_.top = top_plans(std::move(all), options_);
    if (result_.top.empty()) {
      // Plans that fit but that preemptions leave no goodput: that, not memory, is why; and not
      // the budget either when no plan trained at all (it was named, though $40/h bought several
      // spot nodes: s60 hunt). The budget is the reason where plans trained but cost too much.
      const bool budget_excluded = options_.objective == PlanObjective::kBudget && result_.plans_feasible > 0;
      result_.reason = no_goodput_reason_.empty() || budget_excluded ? planner::no_plan_reason(cluster_, workload_, options_)
                                                                     : "no feasible plan: " + no_goodput_reason_;
      if (result_.searches_stopped > 0)
        result_.reason += " (the search stopped at --time-limit: a longer one may find a plan)";
    }
  }

  const Cluster& cluster_;
  const Workload& workload_;
  const PlannerOptions& options_;
  planner::UnitCostTable costs_;
  ShapeSearch search_;
  const std::vector<planner::Pool>& pools_;
  const int keep_;
  ShapeCollector best_, fastest_, uniform_;
  std::vector<Candidate> megatron_;
  std::vector<Candidate> megatron_fastest_;  ///< Megatron's plans on the fastest type's GPUs alone
  bool megatron_is_fastest_type_ = false;    ///< every GPU is of the fastest type: megatron_ is on it alone
  bool ranking_cut_ = false;                 ///< predict_feasible skipped a whole list past twice the limit
  bool fastest_stopped_ = false, uniform_stopped_ = false;  ///< a baseline cut short by --time-limit
  /// When rank_and_choose stops predicting candidates past their first few (time_limit_s).
  std::chrono::steady_clock::time_point prediction_deadline_ = std::chrono::steady_clock::time_point::max();
  /// Past it, only the first candidate of each list is predicted.
  std::chrono::steady_clock::time_point prediction_hard_deadline_ = std::chrono::steady_clock::time_point::max();
  /// Past it (and a rankable plan found), a list not begun is not predicted (predict_feasible).
  std::chrono::steady_clock::time_point lists_deadline_ = std::chrono::steady_clock::time_point::max();
  bool rankable_found_ = false;  ///< a feasible plan the final ranking offers (searched_zero) was predicted
  std::string no_goodput_reason_;  ///< of a plan that fits but leaves no goodput at spot (the last one)
  PlannerResult result_;
};

PlannerResult plan_once(const Cluster& cluster, const Workload& workload, const PlannerOptions& options) {
  return PlanOnce(cluster, workload, options).run();
}

}  // namespace

int search_threads(const PlannerOptions& options) {
  if (options.threads > 0) return options.threads;
#ifdef __linux__
  // The affinity mask, not std::thread::hardware_concurrency() (every CPU of the machine).
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

PlannerResult plan_training(const Cluster& cluster, const Workload& workload, const PlannerOptions& asked) {
  const auto start = std::chrono::steady_clock::now();
  PlannerOptions options = asked;  // the estimator plans for what the headroom leaves
  options.memory_fraction = std::min(options.memory_fraction, 1.0 - options.min_headroom_fraction);
  PlannerResult result = plan_once(cluster, workload, options);
  // The estimator's memory is fitted, the predictor's exact: when every shape the estimator
  // liked turned out not to fit, search again with a safety margin before giving up. Not when
  // plans fit and only the budget left none: the margin would change the baselines for nothing.
  PlannerOptions retry = options;
  // The searches' counts add up over the passes below (not a PlannerResult copy: its plans are
  // large on the largest clusters).
  struct {
    long plans_evaluated, plans_pruned, plans_predicted, predictions_skipped;
    int searches_stopped, searches_truncated, threads;
  } counts{result.plans_evaluated, result.plans_pruned, result.plans_predicted, result.predictions_skipped,
           result.searches_stopped, result.searches_truncated, result.threads};
  const auto add_counts = [&](const PlannerResult& pass) {
    counts.plans_evaluated += pass.plans_evaluated;
    counts.plans_pruned += pass.plans_pruned;
    counts.plans_predicted += pass.plans_predicted;
    counts.searches_stopped += pass.searches_stopped;
    counts.searches_truncated += pass.searches_truncated;
    counts.predictions_skipped += pass.predictions_skipped;
    counts.threads = std::max(counts.threads, pass.threads);
  };
  // Not when plans fit and preemptions left them no goodput: a margin cannot help them (two
  // searches more, 19 s in all on spot-mix at 1000 preemptions an hour; s60 hunt).
  for (int attempt = 0; attempt < 2 && result.top.empty() && result.plans_predicted > 0 && result.plans_feasible == 0 &&
                        result.plans_without_goodput == 0;
       ++attempt) {
    retry.memory_fraction *= 0.9;  // assumption: a 10% margin per retry (two at most) covers the estimator's error
    result = plan_once(cluster, workload, retry);
    add_counts(result);
  }
  // Under a budget with priced egress between zones, a second search of one-zone allotments,
  // whose plans pay no egress: the first search ranks shapes by their nodes' price alone.
  const bool egress_priced = std::any_of(cluster.links.begin(), cluster.links.end(),
                                         [](const InterZoneLink& l) { return l.egress_price_per_byte > 0; });
  // A further pass whose plans are ranked beside those found so far.
  const auto merge_pass = [&](const PlannerOptions& pass_options) {
    PlannerResult pass = plan_once(cluster, workload, pass_options);
    add_counts(pass);
    std::vector<RankedPlan> all = std::move(result.top);
    for (RankedPlan& r : pass.top) all.push_back(std::move(r));
    result.top = planner::top_plans(std::move(all), options);
    if (!result.top.empty()) result.reason.clear();
  };
  if (options.objective == PlanObjective::kBudget && egress_priced && !options.one_zone) {
    PlannerOptions one_zone = options;
    one_zone.one_zone = true;
    merge_pass(one_zone);
    // And a search whose nodes leave room for the egress of the plans the budget refused: once
    // a budget covered every node, the search's best shapes all crossed zones and the egress put
    // them over it (geo-two-zones llama2-70b: 38,882 tokens/s at $557.1/h, 32,648 from $557.2/h,
    // the nodes' total being $557.16/h; s52 planner monotonicity hunt F1).
    if (result.refused_egress_per_hour > 0 && result.refused_egress_per_hour < options.budget_per_hour) {
      PlannerOptions room = options;
      room.node_budget_per_hour = options.budget_per_hour - result.refused_egress_per_hour;
      merge_pass(room);
    }
  }
  result.searches_stopped = counts.searches_stopped;
  result.searches_truncated = counts.searches_truncated;
  result.predictions_skipped = counts.predictions_skipped;
  result.plans_evaluated = counts.plans_evaluated;
  result.plans_pruned = counts.plans_pruned;
  result.plans_predicted = counts.plans_predicted;
  const int threads = counts.threads;
  if (options.objective == PlanObjective::kThroughput && !result.top.empty())
    result.single_gpu_note = single_gpu_beats_note(cluster, workload, options, result.top.front().report.tokens_per_s);
  result.search_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The threads that ran (a process limit can stop some from starting); before any search, the
  // threads it would have used.
  result.threads = threads > 0 ? threads : search_threads(options);
  return result;
}

}  // namespace hetsim::models
