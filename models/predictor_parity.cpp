// SPDX-License-Identifier: Apache-2.0
// The predictor's figure of a plan whose pipeline sends of one parity share NICs in step
// (lockstep_parity_figure): what predict() leaves out, as a second figure beside it.
#include <algorithm>
#include <vector>

#include "predictor.hpp"
#include "predictor_evaluation.hpp"

namespace hetsim::models {

/// In 1F1B's steady state stage b runs a forward pass while stages b - 1 and b + 1 run backward
/// ones (Narayanan et al. SC'21 §2.2.1), and Megatron-LM exchanges the activation of boundary b
/// and its gradient in one call at the end of those passes (send_forward_recv_backward on stage
/// b, send_backward_recv_forward on stage b + 1). Stages of one parity run the same pass at once,
/// so the exchanges of boundaries b, b + 2, b + 4 ... fall together: a node holding stages b + 1
/// and b + 2 sends the gradient of boundary b and the activation of boundary b + 2 through its
/// NIC at the same time. count_pipeline_nic_senders counts each send's own flows (the schedule
/// staggers the sends where its passes leave slack); here each send's load on a node and on its
/// busiest rail becomes that of every send of its phase through the node, both boundary
/// directions, all replicas in step. GPipe pairs its sends otherwise (none here); the
/// interleaved schedule has no two such phases, and its figure takes every send through a node
/// together (one phase).
void Evaluation::fold_same_parity_loads() {
  if (boundary_out.empty() || plan.schedule == Schedule::kGpipe) return;
  const std::size_t nodes = cluster.nodes.size(), gpus = cluster.gpus.size();
  // The interleaved schedule's chunks make no such two phases: every boundary's sends through
  // a node are taken together, the bound of their contention (the simulator found two copies of
  // a 4090 pipeline, interleaved over boxes of two stages, 24% slower than predicted).
  const bool one_phase = interleave > 1;
  const auto phase_of = [one_phase](int send) { return one_phase ? std::size_t{0} : static_cast<std::size_t>((send / 2) & 1); };
  // Tensors of each phase leaving and entering each node and each rail (a flow counting 1/t).
  std::vector<double> out_node(2 * nodes, 0.0), in_node_load(2 * nodes, 0.0);
  std::vector<double> out_rail(2 * gpus, 0.0), in_rail(2 * gpus, 0.0);
  for_each_pipeline_flow([&](int send, int from, int to, int from_tp) {
    const std::size_t na = cluster.gpus[from].node, nb = cluster.gpus[to].node;
    if (na == nb) return;
    const std::size_t phase = phase_of(send);
    const double tensor = 1.0 / from_tp;
    out_node[phase * nodes + na] += tensor;
    in_node_load[phase * nodes + nb] += tensor;
    out_rail[phase * gpus + rail_slot(from)] += tensor;
    in_rail[phase * gpus + rail_slot(to)] += tensor;
  });
  SendNodeLoads out, in;
  out.reset(2 * static_cast<std::size_t>(max_pp), nodes);
  in.reset(2 * static_cast<std::size_t>(max_pp), nodes);
  for_each_pipeline_flow([&](int send, int from, int to, int) {
    const std::size_t na = cluster.gpus[from].node, nb = cluster.gpus[to].node;
    if (na == nb) return;
    const std::size_t phase = phase_of(send);
    NicLoad& o = out.at(send, na);
    o.tensors = out_node[phase * nodes + na];
    o.on_busiest_rail = std::max(o.on_busiest_rail, out_rail[phase * gpus + rail_slot(from)]);
    NicLoad& i = in.at(send, nb);
    i.tensors = in_node_load[phase * nodes + nb];
    i.on_busiest_rail = std::max(i.on_busiest_rail, in_rail[phase * gpus + rail_slot(to)]);
  });
  // A node whose sends gained flows of another boundary; the tolerance absorbs the sums' rounding.
  const auto gained = [](const NicLoad& now, const NicLoad& before) {
    return now.tensors > before.tensors + 1e-9 || now.on_busiest_rail > before.on_busiest_rail + 1e-9;
  };
  const auto note_gains = [&](const SendNodeLoads& now, const SendNodeLoads& before) {
    now.for_each([&](std::size_t send, std::size_t node, const NicLoad& load) {
      if (gained(load, before.get(send, node))) parity_nodes.push_back(static_cast<int>(node));
    });
  };
  note_gains(out, boundary_out);
  note_gains(in, boundary_in);
  std::sort(parity_nodes.begin(), parity_nodes.end());
  parity_nodes.erase(std::unique(parity_nodes.begin(), parity_nodes.end()), parity_nodes.end());
  boundary_out.swap(out);
  boundary_in.swap(in);
}

std::optional<LockstepParityFigure> lockstep_parity_figure(const Cluster& cluster, const Workload& workload,
                                                           const Plan& plan) {
  Evaluation ev(cluster, workload, plan, nullptr);
  ev.lockstep_parity = true;
  if (!ev.run() || ev.parity_nodes.empty()) return std::nullopt;
  return LockstepParityFigure{std::move(ev.report), std::move(ev.parity_nodes)};
}

}  // namespace hetsim::models
