// SPDX-License-Identifier: Apache-2.0
#include "plan_refine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <limits>
#include <numeric>

namespace hetsim::models {

RefineResult refine_top_plans(PlannerResult& result, const Cluster& cluster, const Workload& workload,
                              const TimedPredictFn& engine, int k, double time_limit_s) {
  RefineResult out;
  const std::size_t n = result.top.size();
  std::size_t refine = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(0, k)));
  std::vector<std::optional<Report>> figures(n);
  const auto start = std::chrono::steady_clock::now();
  const double limit_s = time_limit_s > 0 ? time_limit_s : std::numeric_limits<double>::infinity();  // 0: none
  for (std::size_t i = 0; i < refine; ++i) {
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!(elapsed_s < limit_s)) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "the time limit (%g s) passed after %zu of the %zu plans asked for; the rest keep "
                    "the analytic order", time_limit_s, i, refine);
      out.note = out.note.empty() ? std::string(buf) : out.note + "; " + buf;
      out.stopped_at_time_limit = true;
      refine = i;
      break;
    }
    try {
      Report r = engine(cluster, workload, result.top[i].plan, limit_s - elapsed_s);
      if (r.feasible && r.tokens_per_s > 0) {
        figures[i] = std::move(r);
      } else {
        out.note = "plan " + std::to_string(i + 1) + ": the engine gave no figure: " + r.infeasible_reason;
        // An engine that gives up when its time runs out returns then: no figure, limit reached.
        const double after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!(after_s < limit_s)) out.stopped_at_time_limit = true;
      }
    } catch (const std::exception& e) {
      out.note = "plan " + std::to_string(i + 1) + ": the engine failed: " + e.what();
    }
  }
  // Stable: equal figures (and plans without one) keep the analytic order.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // The engine's times at the planner's prices (spot ones with --spot) and preemptions.
  const auto score = [&](std::size_t i) {
    if (!figures[i]) return -std::numeric_limits<double>::infinity();
    Report priced = *figures[i];
    priced.cost_per_hour = result.top[i].report.cost_per_hour;
    return objective_score(result.objective, priced, result.top[i].spot.goodput_fraction);
  };
  std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(refine),
                   [&](std::size_t a, std::size_t b) { return score(a) > score(b); });
  std::vector<RankedPlan> top;
  top.reserve(n);
  for (std::size_t i : order) {
    top.push_back(std::move(result.top[i]));
    out.refined.push_back(std::move(figures[i]));
  }
  result.top = std::move(top);
  return out;
}

}  // namespace hetsim::models
