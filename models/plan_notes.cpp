// SPDX-License-Identifier: Apache-2.0
#include "plan_notes.hpp"

#include <set>

#include "predictor.hpp"
#include "units.hpp"

namespace hetsim::models {

namespace {

/// The node types of the plan's GPUs whose nodes have fewer NICs than GPUs.
std::set<int> shared_nic_node_types(const Cluster& cluster, const Plan& plan) {
  std::set<int> types;
  for (const Replica& r : plan.replicas)
    for (const Stage& s : r.stages)
      for (int gpu : s.gpus) {
        const int type = cluster.nodes[cluster.node_of_gpu(gpu)].node_type;
        const NodeType& t = cluster.node_types[type];
        if (t.nics.count < t.gpus_per_node) types.insert(type);
      }
  return types;
}

/// Whether some stage's data-parallel copies sit on more than one node: only then do the
/// sharded collectives cross a NIC.
bool data_parallel_groups_span_nodes(const Cluster& cluster, const Plan& plan) {
  for (int s = 0; s < plan.pp(); ++s) {
    std::set<int> nodes;
    for (const Replica& r : plan.replicas)
      if (s < static_cast<int>(r.stages.size()))
        for (int gpu : r.stages[s].gpus) nodes.insert(cluster.node_of_gpu(gpu));
    if (nodes.size() > 1) return true;
  }
  return false;
}

std::string member_nic_note(const Cluster& cluster, const Workload& workload, const Plan& plan,
                            const std::set<int>& types) {
  std::string where;
  for (int type : types) {
    const NodeType& t = cluster.node_types[type];
    if (!where.empty()) where += ", ";
    where += t.name + " (" + std::to_string(t.nics.count) + (t.nics.count == 1 ? " NIC" : " NICs") + " for " +
             std::to_string(t.gpus_per_node) + " GPUs)";
  }
  Plan fsdp = plan;
  fsdp.sharded_collectives = ShardedCollectives::kNodeNics;
  const Report alt = predict(cluster, workload, fsdp);
  std::string note = "ZeRO-" + std::to_string(plan.zero) +
                     "'s gathers and reduce-scatters are priced at each GPU's share of its node's NICs "
                     "(sharded_collectives: member_nic, DeepSpeed's per-layer gathers, checked on nodes of one NIC per "
                     "GPU: SC'21 Table 2); " +
                     where + " share theirs, where that rule was never checked.";
  if (alt.feasible)
    note += " With `sharded_collectives: node_nics` in the plan (PyTorch FSDP's flat gathers over the node's NICs) "
            "the analytic model gives " +
            format_time(alt.iteration_time_s) + " per step (docs/inputs.md).";
  return note;
}

}  // namespace

std::vector<std::string> plan_notes(const Cluster& cluster, const Workload& workload, const Plan& plan) {
  std::vector<std::string> notes;
  if (plan.zero >= 2 && plan.sharded_collectives == ShardedCollectives::kMemberNic && plan.dp() > 1 &&
      data_parallel_groups_span_nodes(cluster, plan)) {
    const std::set<int> types = shared_nic_node_types(cluster, plan);
    if (!types.empty()) notes.push_back(member_nic_note(cluster, workload, plan, types));
  }
  return notes;
}

}  // namespace hetsim::models
