// SPDX-License-Identifier: Apache-2.0
// What a workload can keep busy, and why the planner finds no plan (planner_capacity.hpp).
#include "planner_capacity.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <vector>

#include "memory_cost.hpp"
#include "planner_space.hpp"
#include "units.hpp"

namespace hetsim::models::planner {

int widest_tp(const Workload& w, int gpus_per_node, const PlannerOptions& o) {
  int widest = 1;
  for (int tp : planner::valid_tp_degrees(w.model, gpus_per_node, o.tp_degrees)) widest = std::max(widest, tp);
  return widest;
}

long busy_gpus(const Workload& w, int widest) {
  return static_cast<long>(w.training.global_batch) * w.model.layers * widest;
}

namespace {

/// The search places whole nodes; when even the smallest node has more GPUs than the workload
/// can keep busy (one sequence per replica, one layer per stage, the widest TP group), no shape
/// exists, and that, not memory, is why. Empty when some node is small enough.
std::string whole_node_too_big(const Cluster& cluster, const Workload& workload, const PlannerOptions& options) {
  const ModelSpec& m = workload.model;
  int smallest = std::numeric_limits<int>::max(), widest = 1;
  for (const NodeType& t : cluster.node_types) {
    smallest = std::min(smallest, t.gpus_per_node);
    widest = std::max(widest, widest_tp(workload, t.gpus_per_node, options));
  }
  const long busy = busy_gpus(workload, widest);
  if (cluster.node_types.empty() || busy >= smallest) return "";
  return "no feasible plan: the planner places whole nodes, and the smallest node has " + std::to_string(smallest) +
         " GPUs, more than " + workload.name + " can keep busy (at most " + std::to_string(busy) + ": global batch " +
         std::to_string(workload.training.global_batch) + " sequences x " + std::to_string(m.layers) +
         " layers x TP " + std::to_string(widest) + "); give a plan by hand (predict --plan) or a larger workload";
}

/// Why nothing can be planned when no GPU type of the cluster runs the workload's dtype
/// (e.g. a bf16 workload on CPU devices that compute in fp32 only); "" when one does.
std::string no_type_runs_dtype(const Cluster& cluster, const Workload& workload) {
  const Dtype dtype = workload.training.dtype;
  std::string types;
  // The types of the nodes the cluster has: a node type defined without nodes (a sweep point
  // with none of it) runs nothing.
  std::vector<bool> present(cluster.node_types.size(), false);
  for (const auto& node : cluster.nodes) present[node.node_type] = true;
  for (std::size_t i = 0; i < cluster.node_types.size(); ++i) {
    if (!present[i]) continue;
    const NodeType& t = cluster.node_types[i];
    if (t.gpu.supports(dtype)) return "";
    if (types.find(t.gpu.name) == std::string::npos) types += (types.empty() ? "" : ", ") + t.gpu.name;
  }
  if (types.empty()) return "";
  return std::string("no feasible plan: no GPU type of the cluster computes in ") + to_string(dtype) + " (" + types +
         "); set the workload's training.dtype to one they support (hetsim describe CATALOG lists them)";
}

/// By how much the model misses, for the reason's words: its weights, gradients and optimizer
/// states (ZeRO, SC'20 §3.1 bytes per parameter) against the memory of every GPU of the cluster,
/// and what the search could not shard when they would fit spread over all of them.
std::string memory_shortfall(const Cluster& cluster, const Workload& workload, const PlannerOptions& options) {
  const StateBytes per_param = state_bytes_per_param(workload.training);
  const double states_bytes =
      workload.model.params_total() * (per_param.weights + per_param.grads + per_param.optimizer);
  double usable_bytes = 0;
  for (const Node& node : cluster.nodes) {
    const NodeType& t = cluster.node_types[node.node_type];
    usable_bytes += t.gpus_per_node * std::max(0.0, t.gpu.memory_bytes * options.memory_fraction -
                                                        framework_reserve_bytes(t.gpu.vendor));
  }
  const std::string states = ": its weights, gradients and optimizer states are " + format_size(states_bytes);
  if (states_bytes > usable_bytes)
    return states + ", more than the " + format_size(usable_bytes) + " all " + std::to_string(cluster.gpu_count()) +
           " GPUs hold (after each GPU's framework reserve" +
           (options.memory_fraction < 1 ? std::string(" and --min-headroom") : std::string()) + ")";
  const bool zero3 = std::find(options.zero_stages.begin(), options.zero_stages.end(), 3) != options.zero_stages.end();
  return states + " of the " + format_size(usable_bytes) + " the GPUs hold, but no plan the search tries keeps every "
         "stage within its GPU's memory" + (zero3 ? std::string() : std::string(" (--zero 3 shards the states over every GPU)"));
}

}  // namespace

std::string no_plan_reason(const Cluster& cluster, const Workload& workload, const PlannerOptions& options) {
  if (const std::string empty = search_space_reason(cluster, workload, options); !empty.empty()) return empty;
  // Reasons that hold whatever the budget come first: naming the budget there would send the
  // user to raise it for nothing.
  const std::string no_dtype = no_type_runs_dtype(cluster, workload);
  if (!no_dtype.empty()) return no_dtype;
  const std::string too_big = whole_node_too_big(cluster, workload, options);
  if (!too_big.empty()) return too_big;
  const double cluster_price = cluster.price_per_hour(options.spot);
  if (options.objective == PlanObjective::kBudget && cluster_price > options.budget_per_hour) {
    const auto dollars = [](double v) {
      char text[48];  // cents, or 3 digits below a dollar: "$0.004/h" printed as $0.00/h
      std::snprintf(text, sizeof text, v >= 1 ? "$%.2f/h" : "$%.3g/h", v);
      return std::string(text);
    };
    return "no feasible plan within the budget of " + dollars(options.budget_per_hour) + " (the whole cluster costs " +
           dollars(cluster_price) + ")";
  }
  return "no feasible plan: the model does not fit on these GPUs" + memory_shortfall(cluster, workload, options);
}

}  // namespace hetsim::models::planner
