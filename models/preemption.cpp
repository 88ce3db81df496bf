// SPDX-License-Identifier: Apache-2.0
// Spot preemptions: checkpoint size and time, Daly's interval, the goodput left (preemption.hpp).
#include "preemption.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <set>

#include "memory_cost.hpp"
#include "units.hpp"

namespace hetsim::models {

namespace {

/// The cluster nodes a plan runs on.
std::set<int> nodes_of(const Cluster& cluster, const Plan& plan) {
  std::set<int> nodes;
  for (const Replica& r : plan.replicas)
    for (const Stage& st : r.stages)
      for (int g : st.gpus) nodes.insert(cluster.node_of_gpu(g));
  return nodes;
}

}  // namespace

double checkpoint_bytes(const Workload& workload) {
  const StateBytes b = state_bytes_per_param(workload.training);
  // The weights as trained (FP8 runs keep 16-bit weights; the FP8 copy is rebuilt from them).
  const bool fp32 = workload.training.dtype == Dtype::kFp32 || workload.training.dtype == Dtype::kTf32;
  const double weights = fp32 ? b.weights : 2.0;
  return workload.model.params_total() * (weights + b.optimizer);
}

double checkpoint_bandwidth_Bps(const NodeType& type) {
  if (type.checkpoint_bandwidth_Bps) return *type.checkpoint_bandwidth_Bps;
  return type.nics.bandwidth_Bps;
}

double goodput_fraction(double per_s, double checkpoint_s, double restart_s, double* interval_s,
                        double min_interval_s) {
  if (interval_s) *interval_s = 0;
  if (!(per_s > 0)) return 1.0;
  const double m = 1.0 / per_s, c = checkpoint_s;
  // Daly (2006) eq. 37: the interval that minimises eq. 13 to higher order than Young's.
  // sqrt(2c) sqrt(m), not sqrt(2cm): at the rate's lower bound (1e-300/h) 2cm overflows a double.
  double tau = c < 2 * m ? std::sqrt(2 * c) * std::sqrt(m) * (1 + std::sqrt(c / (2 * m)) / 3 + c / (18 * m)) - c : m;
  // Eq. 13 over tau has one minimum: where it falls inside a step, the step is the best interval.
  tau = std::max(tau, min_interval_s);
  if (interval_s) *interval_s = tau;
  if (!(tau > 0)) return 0.0;
  const double segment_s = m * std::exp(restart_s / m) * std::expm1((tau + c) / m);  // eq. 13, one segment
  return std::isfinite(segment_s) && segment_s > 0 ? std::clamp(tau / segment_s, 0.0, 1.0) : 0.0;
}

SpotOutlook spot_outlook(const Cluster& cluster, const Workload& workload, const std::vector<NodesOfType>& nodes,
                         bool spot, double step_s) {
  SpotOutlook out;
  double write_Bps = 0, rate_per_s = 0;
  // A node bought on demand (no spot price, or not priced at spot) is not reclaimed.
  const auto reclaimed = [spot](const NodeType& t) { return spot && t.spot_price_per_hour && t.preemption_rate_per_hour > 0; };
  const auto rate_of = [](const NodesOfType& n, const NodeType& t) { return n.count * t.preemption_rate_per_hour / 3600.0; };
  for (const NodesOfType& n : nodes) {
    const NodeType& t = cluster.node_types[n.node_type];
    write_Bps += n.count * checkpoint_bandwidth_Bps(t);
    if (reclaimed(t)) rate_per_s += rate_of(n, t);
  }
  out.checkpoint_bytes = checkpoint_bytes(workload);
  out.checkpoint_s = write_Bps > 0 ? out.checkpoint_bytes / write_Bps : 0;
  out.preemptions_per_hour = rate_per_s * 3600.0;
  if (rate_per_s > 0) {
    // The restarts' mean weighted by each type's share of the preemptions (shares, not rate x
    // restart: at the bounds, 1e300/h and 1e12 s, that product overflows a double).
    double restart_s = 0;
    for (const NodesOfType& n : nodes)
      if (const NodeType& t = cluster.node_types[n.node_type]; reclaimed(t)) restart_s += rate_of(n, t) / rate_per_s * t.restart_time_s;
    out.restart_s = restart_s + out.checkpoint_s;  // + reading it back
  }
  out.goodput_fraction =
      goodput_fraction(rate_per_s, out.checkpoint_s, out.restart_s, &out.checkpoint_interval_s, step_s);
  return out;
}

SpotOutlook spot_outlook(const Cluster& cluster, const Workload& workload, const Plan& plan, bool spot,
                         double step_s) {
  std::vector<NodesOfType> nodes;
  for (int n : nodes_of(cluster, plan)) {
    const int type = cluster.nodes[n].node_type;
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const NodesOfType& x) { return x.node_type == type; });
    if (it == nodes.end()) nodes.push_back({type, 1});
    else ++it->count;
  }
  return spot_outlook(cluster, workload, nodes, spot, step_s);
}

std::string no_goodput_reason(const SpotOutlook& s) {
  char figures[160];
  std::snprintf(figures, sizeof figures, "%.3g preemptions per hour, each a restart of %s; checkpoints take %s",
                s.preemptions_per_hour, format_time(s.restart_s).c_str(), format_time(s.checkpoint_s).c_str());
  return std::string("spot preemptions leave no time to train (") + figures +
         "; expected fewer preemptions, faster restarts and checkpoints, or on-demand nodes)";
}

SpotOutlook price_at_spot(const Cluster& cluster, const Workload& workload, const Plan& plan, Report& report) {
  double on_demand = 0, at_spot = 0;
  for (int n : nodes_of(cluster, plan)) {
    const NodeType& t = cluster.node_types[cluster.nodes[n].node_type];
    on_demand += t.price_per_hour_at(false);
    at_spot += t.price_per_hour_at(true);
  }
  // The predictor's figure is the nodes on demand plus the egress between zones, which stays.
  const double egress_per_hour = std::max(0.0, report.cost_per_hour - on_demand);
  report.cost_per_hour = at_spot + egress_per_hour;
  const SpotOutlook out = spot_outlook(cluster, workload, plan, true, report.iteration_time_s);
  // A plan its preemptions leave (next to) no time to train buys nothing: infinitely dear (not
  // free), and infeasible with the reason, since no figure of it means anything.
  const bool no_goodput = leaves_no_goodput(out);
  if (no_goodput) {
    report.feasible = false;
    report.infeasible_reason = no_goodput_reason(out);
  }
  // "Next to no" goodput is still a positive figure: its price per token ($1.4e37 per million)
  // would read as a result.
  const double goodput = no_goodput ? 0.0 : report.tokens_per_s * out.goodput_fraction;
  report.cost_per_million_tokens = goodput > 0 || report.cost_per_hour <= 0
                                       ? cost_per_million_tokens(report.cost_per_hour, goodput)
                                       : std::numeric_limits<double>::infinity();
  return out;
}

}  // namespace hetsim::models
