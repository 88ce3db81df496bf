// SPDX-License-Identifier: Apache-2.0
#include "planner_micro_shift.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <queue>
#include <regex>
#include <utility>

#include "pipeline_time.hpp"
#include "planner_ranking.hpp"
#include "predictor.hpp"

namespace hetsim::models::planner {

namespace {

/// Plans of more replicas than this are not hill-climbed: each move is a prediction, and one of
/// a plan of many thousand replicas takes a good part of a second.
constexpr int kMaxReplicas = 4096;

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

}  // namespace

std::vector<std::vector<int>> micro_batch_classes(const Cluster& cluster, const Plan& plan) {
  std::map<std::string, int> index;
  std::vector<std::vector<int>> classes;
  for (int r = 0; r < static_cast<int>(plan.replicas.size()); ++r) {
    const Replica& replica = plan.replicas[r];
    std::string key = std::to_string(replica.micro_batches);
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

std::string with_replica_micro_batches(const std::string& shape, const Plan& plan) {
  static const std::regex kind(R"(([0-9]+)x\[[^\]]*\] m[0-9]+(-[0-9]+)?)");
  std::string out;
  std::size_t replica = 0, copied = 0;
  for (auto it = std::sregex_iterator(shape.begin(), shape.end(), kind); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const std::size_t copies = std::stoul(m[1].str());
    if (copies == 0 || replica + copies > plan.replicas.size()) return shape;
    int most = 0, least = 0;
    for (std::size_t r = replica; r < replica + copies; ++r) {
      const int c = plan.replicas[r].micro_batches;
      most = r == replica ? c : std::max(most, c);
      least = r == replica ? c : std::min(least, c);
    }
    replica += copies;
    const std::string text = m.str();
    const std::size_t counts_at = text.rfind("] m");
    out += shape.substr(copied, static_cast<std::size_t>(m.position(0)) - copied);
    out += text.substr(0, counts_at) + "] m" + std::to_string(most);
    if (least != most) out += "-" + std::to_string(least);
    copied = static_cast<std::size_t>(m.position(0) + m.length(0));
  }
  if (replica != plan.replicas.size()) return shape;
  return out + shape.substr(copied);
}

RankedPlan shift_micro_batches(const Cluster& cluster, const Workload& workload, const PlannerOptions& options,
                               RankedPlan ranked, std::chrono::steady_clock::time_point deadline, long& predictions,
                               int rounds) {
  const Plan& p = ranked.plan;
  // ZeRO-3's replicas pair their gathers (equal counts): no move. Megatron-LM's interleaved
  // schedule runs micro-batches in groups of the pipeline depth (check_plan): counts move a group
  // at a time, when every replica has the same depth.
  if (!ranked.report.feasible || p.zero >= 3 || p.dp() < 2 || p.dp() > kMaxReplicas) return ranked;
  const bool interleaved = p.schedule == Schedule::kInterleaved && p.interleave > 1;
  const int step = interleaved ? static_cast<int>(p.replicas.front().stages.size()) : 1;
  if (interleaved && std::any_of(p.replicas.begin(), p.replicas.end(), [&](const Replica& r) {
        return static_cast<int>(r.stages.size()) != step || r.micro_batches % step != 0;
      }))
    return ranked;
  const int interleave = interleaved ? p.interleave : 1;
  // rank() appends the plan-wide knobs in parentheses; the moves rewrite the part before them.
  const std::size_t knobs_at = ranked.shape.rfind(" (");
  const std::string base_shape = knobs_at == std::string::npos ? ranked.shape : ranked.shape.substr(0, knobs_at);
  double score = objective_score(options.objective, ranked.report, ranked.spot.goodput_fraction);
  // A move must not lengthen the pessimistic step: on consumer-nic's 10 Gb/s point one gained 1.8%
  // by predict() where the sends it added collide, -2.0% simulated and -2.5% in lockstep.
  std::optional<double> pessimistic_s;  // of `ranked`, once a move needs it
  for (int round = 0; round < rounds; ++round) {
    const std::vector<std::vector<int>> classes = micro_batch_classes(cluster, ranked.plan);
    if (classes.size() < 2) break;
    const int n = ranked.plan.dp();
    std::vector<int> counts(n);
    std::vector<double> sum_s(n, 0.0), bottleneck_s(n, 0.0);
    for (int r = 0; r < n; ++r) counts[r] = ranked.plan.replicas[r].micro_batches;
    for (const StageReport& s : ranked.report.stages) {
      if (s.replica < 0 || s.replica >= n) continue;
      const double t = s.forward_s + s.backward_s;
      sum_s[s.replica] += t;
      bottleneck_s[s.replica] = std::max(bottleneck_s[s.replica], t);
    }
    bool moved = false;
    RankedPlan best;
    for (const std::vector<int>& move : micro_batch_moves(classes, counts, sum_s, bottleneck_s, step, interleave)) {
      if (std::chrono::steady_clock::now() > deadline) return moved ? best : ranked;
      Candidate c{ranked.plan, "", ranked.estimated_tokens_per_s};
      for (int r = 0; r < n; ++r) c.plan.replicas[r].micro_batches = move[r];
      c.plan.overlap_grad_sync = true;  // the search's plans overlap it; rank() keeps after-backward if faster
      c.shape = with_replica_micro_batches(base_shape, c.plan);
      RankedPlan tried = rank(cluster, workload, std::move(c), options.spot);
      ++predictions;
      if (!tried.report.feasible || tried.memory_headroom_fraction < options.min_headroom_fraction) continue;
      const double s = objective_score(options.objective, tried.report, tried.spot.goodput_fraction);
      if (!better(s, score)) continue;
      if (!pessimistic_s) pessimistic_s = pessimistic_step_s(cluster, workload, ranked);
      const double tried_pessimistic_s = pessimistic_step_s(cluster, workload, tried);
      if (tried_pessimistic_s > *pessimistic_s * (1 + 1e-9)) continue;
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

}  // namespace hetsim::models::planner
