// SPDX-License-Identifier: Apache-2.0
// The planner's Megatron baseline (planner_megatron.hpp).
#include "planner_megatron.hpp"

#include <algorithm>
#include <chrono>
#include <utility>
#include <variant>

#include "planner_estimate.hpp"

namespace hetsim::models::planner {

std::vector<Candidate> megatron_candidates(const Cluster& cluster, const Workload& workload,
                                           const PlannerOptions& o, UnitCostTable& costs, long* evaluated,
                                           long* pruned, GpuRange range, bool* stopped) {
  // Each configuration builds and estimates a plan of every GPU, which on many GPUs adds up (s57
  // bad-input hunt: 8,192 GPUs). The limit as the shape searches take it, read at every
  // configuration once the candidates to predict are kept.
  using Clock = std::chrono::steady_clock;
  const auto deadline = search_deadline(o.time_limit_s, Clock::now());
  bool out_of_time = false;
  // The best predict_candidates so far, as a heap with the worst on top: every feasible
  // configuration kept until the end held a whole plan each (1.5 GB on 32,768 GPUs with a global
  // batch of a million sequences). Equal estimates keep the configuration enumerated first.
  struct Kept {
    double tokens_per_s;
    long order;
    Candidate candidate;
  };
  const auto better = [](const Kept& a, const Kept& b) {
    return a.tokens_per_s > b.tokens_per_s || (a.tokens_per_s == b.tokens_per_s && a.order < b.order);
  };
  const std::size_t keep = static_cast<std::size_t>(std::max(0, o.predict_candidates));
  std::vector<Kept> best;
  long order = 0;
  const int n = range.count > 0 ? range.count : cluster.gpu_count();
  for (int tp : o.tp_degrees) {
    if (tp < 1 || n % tp != 0) continue;
    for (int pp = 1; pp <= std::min(n / tp, workload.model.layers); ++pp) {
      if ((n / tp) % pp != 0) continue;
      const int dp = n / tp / pp;
      for (int mb : o.micro_batches) {
        for (Recompute rc : o.recomputes) {
          for (int v : o.interleaves) {
            if (v > 1 && pp < 2) continue;  // interleaving needs a pipeline (check_plan)
            std::vector<int> zeros = o.zero_stages;
            if (std::find(zeros.begin(), zeros.end(), 0) == zeros.end()) zeros.insert(zeros.begin(), 0);
            for (int z : zeros) {
              if (z == 3 && pp > 1) continue;  // ZeRO-3 without pipeline parallelism (planner_zero3.cpp)
              for (bool sp : {false, true}) {
                if (sp && (tp == 1 || !o.sequence_parallel)) continue;
                // Past it once the candidates to predict are all kept: the baseline answers whatever
                // the limit, with as many plans as the ranking predicts.
                if (best.size() >= keep && (out_of_time || (out_of_time = Clock::now() > deadline))) continue;
                UniformPlanOptions u;
                u.first_gpu = range.first;
                u.micro_batch = mb;
                u.recompute = rc;
                u.schedule = v > 1 ? Schedule::kInterleaved : Schedule::k1f1b;
                u.interleave = v;
                u.zero = z;
                u.sequence_parallel = sp;
                u.tp_comm_overlap = o.tp_comm_overlap && sp;
                u.overlap_p2p_comm = o.overlap_p2p_comm && v > 1;
                u.overlap_grad_sync = dp > 1;  // one replica: no sync to overlap
                if (z >= 2) u.sharded_collectives = o.sharded_collectives;
                auto made = make_uniform_plan(cluster, workload, tp, pp, dp, u);
                ++*evaluated;
                if (std::holds_alternative<Infeasible>(made)) {
                  ++*pruned;
                  continue;
                }
                Candidate c;
                c.plan = std::get<Plan>(std::move(made));
                const auto e = estimate_plan(cluster, workload, c.plan, costs, o.memory_fraction, o.spot);
                if (!e.ok) {
                  ++*pruned;
                  continue;
                }
                c.estimated_tokens_per_s = e.tokens_per_s;
                c.shape = "megatron " + c.plan.name;
                Kept k{e.tokens_per_s, order++, std::move(c)};
                if (best.size() < keep) {
                  best.push_back(std::move(k));
                  std::push_heap(best.begin(), best.end(), better);
                } else if (keep > 0 && better(k, best.front())) {
                  std::pop_heap(best.begin(), best.end(), better);
                  best.back() = std::move(k);
                  std::push_heap(best.begin(), best.end(), better);
                }
              }
            }
          }
        }
      }
    }
  }
  if (stopped) *stopped = out_of_time;
  std::sort(best.begin(), best.end(), better);
  std::vector<Candidate> out;
  for (Kept& b : best) out.push_back(std::move(b.candidate));
  return out;
}

GpuRange gpus_of_type(const Cluster& cluster, const std::string& gpu_type) {
  GpuRange range{-1, 0};
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    if (cluster.gpu_type(g).name != gpu_type) continue;
    if (range.first < 0) range.first = g;
    else if (g != range.first + range.count) return {};  // a second run
    ++range.count;
  }
  return range.count > 0 ? range : GpuRange{};
}

}  // namespace hetsim::models::planner
