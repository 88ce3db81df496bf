// SPDX-License-Identifier: Apache-2.0
#include "planner_local_search.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <regex>
#include <utility>

#include "pipeline_time.hpp"
#include "planner_ranking.hpp"
#include "planner_shape_text.hpp"
#include "predictor.hpp"

namespace hetsim::models::planner {

namespace {

/// Plans of more replicas than this are not hill-climbed: each move is a prediction, and one of
/// a plan of many thousand replicas takes a good part of a second.
constexpr int kMaxReplicas = 4096;
/// Plans of more GPUs than this are not hill-climbed over their layer splits: the moves grow as
/// the classes times the depth squared, and each is a prediction (the 1024-GPU planner benchmark
/// took 6.5 s with them, 1.8 s without, for 0.24% more tokens/s).
constexpr int kMaxLayerClimbGpus = 256;
/// Pipelines up to this depth try a layer move between every pair of stages; deeper ones between
/// neighbours and to or from the end stages (which hold the embedding and the LM head).
constexpr int kAllPairsDepth = 8;

/// A replica's time for m micro-batches at its per-micro-batch stage times (1F1B / GPipe bound,
/// pipeline_closed_form_s): what the moves order the receivers and donors by.
double closed_form_s(const std::vector<double>& sum_s, const std::vector<double>& bottleneck_s, int r, int m,
                     int interleave) {
  return pipeline_closed_form_s(sum_s[r], bottleneck_s[r], m, interleave);
}

/// Better by the objective, by more than rounding.
bool better(double score, double than) {
  return score > than + 1e-9 * std::abs(than);
}

/// The step if the pipeline sends of one parity that share a node's NIC coincide in every slot
/// (lockstep_parity_figure), or the predicted step where they do not share one: predict() prices
/// those sends apart and the simulator's step lies between the two figures.
double pessimistic_step_s(const Cluster& cluster, const Workload& workload, const RankedPlan& r) {
  const std::optional<LockstepParityFigure> f = lockstep_parity_figure(cluster, workload, r.plan);
  const double lockstep_s = f && f->report.feasible ? f->report.iteration_time_s : 0.0;
  return std::max(r.report.iteration_time_s, lockstep_s);
}

/// Replicas that run the same pipeline (per stage: GPU type, TP degree, layers), and with
/// `by_count` the same micro-batch count too, in plan order.
std::vector<std::vector<int>> replica_classes(const Cluster& cluster, const Plan& plan, bool by_count) {
  std::map<std::string, int> index;
  std::vector<std::vector<int>> classes;
  for (int r = 0; r < static_cast<int>(plan.replicas.size()); ++r) {
    const Replica& replica = plan.replicas[r];
    std::string key = by_count ? std::to_string(replica.micro_batches) : std::string();
    for (const Stage& s : replica.stages) {
      key += '|';
      key += s.gpus.empty() ? std::string("?") : cluster.gpu_type(s.gpus.front()).name;
      key += '/' + std::to_string(s.tp()) + '/' + std::to_string(s.layers);
    }
    const auto [it, added] = index.emplace(key, static_cast<int>(classes.size()));
    if (added) classes.emplace_back();
    classes[it->second].push_back(r);
  }
  return classes;
}

}  // namespace

std::vector<std::vector<int>> micro_batch_classes(const Cluster& cluster, const Plan& plan) {
  return replica_classes(cluster, plan, true);
}

std::vector<std::vector<int>> micro_batch_moves(const std::vector<std::vector<int>>& classes,
                                                const std::vector<int>& counts, const std::vector<double>& sum_s,
                                                const std::vector<double>& bottleneck_s, int step, int interleave) {
  const int n = static_cast<int>(counts.size());
  const auto time_s = [&](int r, int m) { return closed_form_s(sum_s, bottleneck_s, r, m, interleave); };
  std::vector<std::vector<int>> out;
  const auto add = [&](std::vector<int> c) {
    if (c != counts && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  };
  using Keyed = std::pair<double, int>;
  for (const std::vector<int>& cls : classes) {
    std::vector<char> member(n, 0);
    for (int r : cls) member[r] = 1;
    // Down: each member gives one; the replica whose time grows least takes the next (ties: the
    // lowest index), as balance_micro_batches hands them out.
    if (std::all_of(cls.begin(), cls.end(), [&](int r) { return counts[r] >= 2 * step; })) {
      std::vector<int> c = counts;
      std::priority_queue<Keyed, std::vector<Keyed>, std::greater<Keyed>> least;
      for (int r = 0; r < n; ++r)
        if (!member[r]) least.push({time_s(r, c[r] + step), r});
      if (!least.empty()) {
        for (int r : cls) c[r] -= step;
        for (std::size_t k = 0; k < cls.size(); ++k) {
          const int r = least.top().second;
          least.pop();
          c[r] += step;
          least.push({time_s(r, c[r] + step), r});
        }
        add(std::move(c));
      }
    }
    // Up: each member takes one from the replica that is then slowest (ties: the lowest index).
    std::vector<int> c = counts;
    std::priority_queue<Keyed> most;  // (time, -index): the longest first, then the lowest index
    for (int r = 0; r < n; ++r)
      if (!member[r] && c[r] >= 2 * step) most.push({time_s(r, c[r]), -r});
    bool enough = true;
    for (std::size_t k = 0; k < cls.size() && enough; ++k) {
      if (most.empty()) {
        enough = false;
        break;
      }
      const int r = -most.top().second;
      most.pop();
      if ((c[r] -= step) >= 2 * step) most.push({time_s(r, c[r]), -r});
    }
    if (!enough) continue;
    for (int r : cls) c[r] += step;
    add(std::move(c));
  }
  return out;
}

namespace {

/// `shape` with each kind that `kind` matches (group 1: its replica count) replaced by what
/// `rewrite` makes of it from its replicas [first, first + copies); nullopt from `rewrite`, or
/// kinds that do not add up to the plan's replicas, leave the shape unchanged.
std::string rewrite_kinds(
    const std::string& shape, const Plan& plan, const std::regex& kind,
    const std::function<std::optional<std::string>(const std::smatch&, std::size_t, std::size_t)>& rewrite) {
  std::string out;
  std::size_t replica = 0, copied = 0;
  for (auto it = std::sregex_iterator(shape.begin(), shape.end(), kind); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const std::size_t copies = std::stoul(m[1].str());
    if (copies == 0 || replica + copies > plan.replicas.size()) return shape;
    const std::optional<std::string> text = rewrite(m, replica, copies);
    if (!text) return shape;
    replica += copies;
    out += shape.substr(copied, static_cast<std::size_t>(m.position(0)) - copied) + *text;
    copied = static_cast<std::size_t>(m.position(0) + m.length(0));
  }
  if (replica != plan.replicas.size()) return shape;
  return out + shape.substr(copied);
}

}  // namespace

std::string with_replica_micro_batches(const std::string& shape, const Plan& plan) {
  static const std::regex kind(R"(([0-9]+)x\[[^\]]*\] m[0-9]+(-[0-9]+)?)");
  return rewrite_kinds(shape, plan, kind, [&](const std::smatch& m, std::size_t first, std::size_t copies) {
    int most = plan.replicas[first].micro_batches, least = most;
    for (std::size_t r = first; r < first + copies; ++r) {
      most = std::max(most, plan.replicas[r].micro_batches);
      least = std::min(least, plan.replicas[r].micro_batches);
    }
    const std::string text = m.str();
    std::string out = text.substr(0, text.rfind("] m")) + "] m" + std::to_string(most);
    if (least != most) out += "-" + std::to_string(least);
    return std::optional<std::string>(out);
  });
}

std::string with_replica_layers(const std::string& shape, const Plan& plan) {
  static const std::regex kind(R"(([0-9]+)x\[([^\]]*)\])");
  static const std::regex block(R"(x([0-9]+) L[0-9,*]+)");
  return rewrite_kinds(shape, plan, kind,
                       [&](const std::smatch& m, std::size_t first, std::size_t) -> std::optional<std::string> {
    // The kind's blocks, each "xK L<K layer counts>", from its first replica's stages.
    const std::vector<Stage>& stages = plan.replicas[first].stages;
    const std::string inner = m[2].str();
    std::string out = m[1].str() + "x[";
    std::size_t stage = 0, copied = 0;
    for (auto b = std::sregex_iterator(inner.begin(), inner.end(), block); b != std::sregex_iterator(); ++b) {
      const std::size_t k = std::stoul((*b)[1].str());
      if (stage + k > stages.size()) return std::nullopt;
      out += inner.substr(copied, static_cast<std::size_t>(b->position(0)) - copied) + "x" + std::to_string(k) + " L";
      std::vector<int> layers(k);
      for (std::size_t j = 0; j < k; ++j) layers[j] = stages[stage + j].layers;
      append_layer_list(out, layers.data(), k);
      stage += k;
      copied = static_cast<std::size_t>(b->position(0) + b->length(0));
    }
    if (stage != stages.size()) return std::nullopt;
    return out + inner.substr(copied) + "]";
  });
}

RankedPlan hill_climb(const Cluster& cluster, const Workload& workload, const PlannerOptions& options, RankedPlan ranked,
                      std::chrono::steady_clock::time_point deadline, long& predictions, int rounds,
                      const std::function<std::vector<Plan>(const RankedPlan&)>& moves) {
  if (!ranked.report.feasible) return ranked;
  // rank() appends the plan-wide knobs in parentheses; the moves rewrite the part before them.
  const std::size_t knobs_at = ranked.shape.rfind(" (");
  const std::string base_shape = knobs_at == std::string::npos ? ranked.shape : ranked.shape.substr(0, knobs_at);
  double score = objective_score(options.objective, ranked.report, ranked.spot.goodput_fraction);
  // A move must not lengthen the step between the predicted and the pessimistic one (their
  // geometric mean; the simulator's lies between the two): on consumer-nic's 10 Gb/s point one
  // gained 1.8% by predict() where the sends it added collide, -2.0% simulated and -2.5% in
  // lockstep. Requiring the pessimistic step itself not to grow stopped climbs at a first move of
  // +1.0% predicted and +0.1% in lockstep, short of a split 7.4% faster both ways (llama2-7b on
  // two RTX 4090 boxes beside an A100 node; s64 planner hunt).
  const auto between_s = [](const RankedPlan& r, double pessimistic) {
    return std::sqrt(r.report.iteration_time_s * pessimistic);
  };
  std::optional<double> pessimistic_s;  // of `ranked`, once a move needs it
  for (int round = 0; round < rounds; ++round) {
    bool moved = false;
    RankedPlan best;
    for (Plan& plan : moves(ranked)) {
      if (std::chrono::steady_clock::now() > deadline) return moved ? best : ranked;
      Candidate c{std::move(plan), "", ranked.estimated_tokens_per_s};
      c.plan.overlap_grad_sync = c.plan.dp() > 1;  // as the search's plans; rank() keeps after-backward if faster
      c.shape = with_replica_micro_batches(with_replica_layers(base_shape, c.plan), c.plan);
      RankedPlan tried = rank(cluster, workload, std::move(c), options.spot);
      ++predictions;
      if (!tried.report.feasible || tried.memory_headroom_fraction < options.min_headroom_fraction) continue;
      const double s = objective_score(options.objective, tried.report, tried.spot.goodput_fraction);
      if (!better(s, score)) continue;
      if (!pessimistic_s) pessimistic_s = pessimistic_step_s(cluster, workload, ranked);
      const double tried_pessimistic_s = pessimistic_step_s(cluster, workload, tried);
      if (between_s(tried, tried_pessimistic_s) > between_s(moved ? best : ranked, *pessimistic_s) * (1 + 1e-9)) continue;
      score = s;
      pessimistic_s = tried_pessimistic_s;
      best = std::move(tried);
      moved = true;
    }
    if (!moved) break;
    ranked = std::move(best);
  }
  return ranked;
}

RankedPlan shift_micro_batches(const Cluster& cluster, const Workload& workload, const PlannerOptions& options,
                               RankedPlan ranked, std::chrono::steady_clock::time_point deadline, long& predictions,
                               int rounds) {
  const Plan& p = ranked.plan;
  // ZeRO-3's replicas pair their gathers (equal counts): no move. Megatron-LM's interleaved
  // schedule runs micro-batches in groups of the pipeline depth (check_plan): counts move a group
  // at a time, when every replica has the same depth.
  if (p.zero >= 3 || p.dp() < 2 || p.dp() > kMaxReplicas) return ranked;
  const bool interleaved = p.schedule == Schedule::kInterleaved && p.interleave > 1;
  const int step = interleaved ? static_cast<int>(p.replicas.front().stages.size()) : 1;
  if (interleaved && std::any_of(p.replicas.begin(), p.replicas.end(), [&](const Replica& r) {
        return static_cast<int>(r.stages.size()) != step || r.micro_batches % step != 0;
      }))
    return ranked;
  const int interleave = interleaved ? p.interleave : 1;
  const auto moves = [&](const RankedPlan& at) {
    std::vector<Plan> out;
    const std::vector<std::vector<int>> classes = micro_batch_classes(cluster, at.plan);
    if (classes.size() < 2) return out;
    const int n = at.plan.dp();
    std::vector<int> counts(n);
    std::vector<double> sum_s(n, 0.0), bottleneck_s(n, 0.0);
    for (int r = 0; r < n; ++r) counts[r] = at.plan.replicas[r].micro_batches;
    for (const StageReport& s : at.report.stages) {
      if (s.replica < 0 || s.replica >= n) continue;
      const double t = s.forward_s + s.backward_s;
      sum_s[s.replica] += t;
      bottleneck_s[s.replica] = std::max(bottleneck_s[s.replica], t);
    }
    for (const std::vector<int>& move : micro_batch_moves(classes, counts, sum_s, bottleneck_s, step, interleave)) {
      out.push_back(at.plan);
      for (int r = 0; r < n; ++r) out.back().replicas[r].micro_batches = move[r];
    }
    return out;
  };
  return hill_climb(cluster, workload, options, std::move(ranked), deadline, predictions, rounds, moves);
}

std::vector<Plan> layer_moves(const Cluster& cluster, const Plan& plan) {
  std::vector<Plan> out;
  if (plan.schedule == Schedule::kInterleaved && plan.interleave > 1) return out;  // chunks split the layers
  // Replicas of one pipeline, whatever their counts, move together.
  for (const std::vector<int>& members : replica_classes(cluster, plan, false)) {
    const std::vector<Stage>& stages = plan.replicas[members.front()].stages;
    const int depth = static_cast<int>(stages.size());
    for (int from = 0; from < depth; ++from) {
      if (stages[from].layers < 2) continue;
      for (int to = 0; to < depth; ++to) {
        // Every pair in short pipelines (the moves grow as depth^2); in deep ones, neighbours and
        // the end stages.
        const bool near = std::abs(to - from) == 1 || from == 0 || to == 0 || from == depth - 1 || to == depth - 1;
        if (to == from || (depth > kAllPairsDepth && !near)) continue;
        Plan moved = plan;
        for (int r : members) {
          --moved.replicas[r].stages[from].layers;
          ++moved.replicas[r].stages[to].layers;
        }
        out.push_back(std::move(moved));
      }
    }
  }
  return out;
}

RankedPlan shift_layers(const Cluster& cluster, const Workload& workload, const PlannerOptions& options,
                        RankedPlan ranked, std::chrono::steady_clock::time_point deadline, long& predictions,
                        int rounds) {
  if (ranked.plan.gpu_count() > kMaxLayerClimbGpus) return ranked;
  return hill_climb(cluster, workload, options, std::move(ranked), deadline, predictions, rounds,
                    [&](const RankedPlan& at) { return layer_moves(cluster, at.plan); });
}

}  // namespace hetsim::models::planner
