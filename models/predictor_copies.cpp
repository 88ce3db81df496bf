// SPDX-License-Identifier: Apache-2.0
// Replicas of a plan that repeat an earlier one exactly: the predictor copies their figures
// instead of computing them again (a uniform plan evaluates one replica).
#include "predictor_evaluation.hpp"

namespace hetsim::models {

/// Marks replica r as a copy of the replica `base` compared with it (the last one evaluated
/// itself) when everything the evaluation reads of r equals what it reads of base:
///  - depth, micro-batch count, and per stage the layers and TP degree (shapes, memory, p2p sizes);
///  - per stage a TP group of consecutive GPUs of one node (tp_group_cost then depends only on
///    its size and node type, and step_cost's memory figures only on the node type), on a node
///    of the same type and zone as base's stage (stage costs, p2p path keys, memory capacity);
///  - per pipeline boundary the same "both ends on one node" relation (p2p path key), and the
///    same NIC sender count (drop_copies_with_other_senders, once the counts are known).
/// Then every per-stage figure of r (shape, p2p, stage times, pipeline time, memory, report
/// row) is computed by the same operations on the same values as base's, so copying base's
/// figures is bit-exact. What depends on the GPUs themselves (DP group members, nodes in use,
/// tied-embedding pairs) is still walked for every replica. In work mode (build_plan_work)
/// nothing is a copy: every stage's ops are recorded.
/// Also fills front_node, front_gpu and in_node for every stage, counts stages and GPUs, and returns
/// whether some pipeline boundary stays inside one node.
bool Evaluation::find_copies(int* stage_count_out, int* gpu_count_out) {
  const int dp = plan.dp();
  const int max_pp = this->max_pp;
  front_node.assign(static_cast<std::size_t>(dp) * max_pp, -1);
  front_gpu.assign(static_cast<std::size_t>(dp) * max_pp, -1);
  in_node.assign(static_cast<std::size_t>(dp) * max_pp, 0);
  copy_of.assign(dp, -1);
  // Raw pointers and local counts: stores through the vectors' ints could alias the cluster's
  // ints, which would make the compiler reload every vector's storage at each stage.
  const GpuSlot* gpus = cluster.gpus.data();
  const Node* nodes = cluster.nodes.data();
  int* fn = front_node.data();
  int* fg = front_gpu.data();
  char* in = in_node.data();
  const bool wraps = interleave > 1;  // interleaved: the last stage sends to the first
  bool consecutive_on_a_node = false;
  int stages = 0, gpu_total = 0;
  int base = 0;
  for (int r = 0; r < dp; ++r) {
    const Replica& rep = plan.replicas[r];
    const Replica& b = plan.replicas[base];
    const int pp = static_cast<int>(rep.stages.size());
    int* f = fn + static_cast<std::size_t>(r) * max_pp;
    const int* fb = fn + static_cast<std::size_t>(base) * max_pp;
    char* o = in + static_cast<std::size_t>(r) * max_pp;
    const char* ob = in + static_cast<std::size_t>(base) * max_pp;
    stages += pp;
    bool copy = !work && r > 0 && pp == static_cast<int>(b.stages.size()) && rep.micro_batches == b.micro_batches;
    const Stage* stage = rep.stages.data();
    const Stage* base_stage = b.stages.data();
    int previous = -1, base_previous = -1;  // nodes of stage s - 1 (none at s = 0; nodes are >= 0)
    for (int s = 0; s < pp; ++s) {
      const int* g = stage[s].gpus.data();
      const int n = stage[s].tp();
      gpu_total += n;
      const int node = gpus[g[0]].node;
      const bool one = gpus[g[n - 1]].node == node && consecutive_gpus(g, n);
      f[s] = node;
      fg[static_cast<std::size_t>(r) * max_pp + s] = g[0];
      o[s] = one;
      const bool boundary_in_node = node == previous;  // stage s - 1 sends to s
      consecutive_on_a_node = consecutive_on_a_node || boundary_in_node;
      previous = node;
      if (copy) {
        const Stage& sb = base_stage[s];
        const int node_b = fb[s];
        copy = one && ob[s] && stage[s].layers == sb.layers && n == sb.tp() &&
               nodes[node].node_type == nodes[node_b].node_type && nodes[node].zone == nodes[node_b].zone &&
               boundary_in_node == (node_b == base_previous);
        base_previous = node_b;
      }
    }
    if (wraps && pp > 1) {
      const bool boundary_in_node = f[pp - 1] == f[0];
      consecutive_on_a_node = consecutive_on_a_node || boundary_in_node;
      copy = copy && boundary_in_node == (fb[pp - 1] == fb[0]);
    }
    if (copy) copy_of[r] = base;
    else base = r;
  }
  *stage_count_out = stages;
  *gpu_count_out = gpu_total;
  return consecutive_on_a_node;
}

/// The last condition of find_copies: a path leaving a node shares its NICs with the node's
/// other senders (path_senders), a count that depends on the nodes themselves.
void Evaluation::drop_copies_with_other_senders() {
  if (boundary_out.empty() && !partial) return;  // every path's counts are 0
  for (int r = 0; r < plan.dp(); ++r) {
    const int base = copy_of[r];
    if (base < 0) continue;
    const Replica& rep = plan.replicas[r];
    const int pp = static_cast<int>(rep.stages.size());
    const std::size_t k0 = static_cast<std::size_t>(r) * max_pp, b0 = static_cast<std::size_t>(base) * max_pp;
    for (int s = 0; s < pp && copy_of[r] >= 0; ++s) {
      if (!next_stage(rep, s)) continue;
      const int to = s == pp - 1 ? 0 : s + 1;
      // Both directions: the activation a -> b and the gradient b -> a.
      const int na = front_node[k0 + s], nb = front_node[k0 + to], ba = front_node[b0 + s], bb = front_node[b0 + to];
      const int tp_a = rep.stages[s].tp(), tp_b = rep.stages[to].tp();  // a copy's equal its base's
      if (path_senders(2 * s, na, nb, tp_a) != path_senders(2 * s, ba, bb, tp_a) ||
          path_senders(2 * s + 1, nb, na, tp_b) != path_senders(2 * s + 1, bb, ba, tp_b))
        copy_of[r] = -1;
    }
  }
}

const std::vector<NodeSenders>& Evaluation::cross_node_tp_senders() {
  if (!tp_senders_ready) tp_senders_on_node = models::cross_node_tp_senders(plan, cluster);
  tp_senders_ready = true;
  return tp_senders_on_node;
}

}  // namespace hetsim::models
