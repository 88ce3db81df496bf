// SPDX-License-Identifier: Apache-2.0
// What the simulator simulates: which replicas (DP folding), which nodes the platform needs,
// which stage actors sync gradients together and with which flows. No SimGrid.
//
// Folding (DESIGN "Simulator"): replicas are grouped into blocks that share no node with
// each other (one replica per block when a replica fills whole nodes; several when
// replicas share a node). When the blocks are congruent (same op costs, GPU and node
// types, micro-batches, one zone), only block 0 is simulated; its DP flows towards block 1
// are kept, so block 1's nodes are in the platform as receivers ("ghosts") and every link
// block 0 uses carries the load it carries in the full run. Flows of other blocks are the
// same by symmetry and are not simulated.
#pragma once
#include <vector>

#include "collective_flows.hpp"
#include "comm_cost.hpp"
#include "plan.hpp"
#include "plan_work.hpp"
#include "sim_topology.hpp"

namespace hetsim::sim {

/// Most data-parallel ring flows a layout may simulate (check_simulation_size). Flows cost a few
/// microseconds each and more as rings grow (128 unfolded replicas of Llama 3 405B: 4.2M flows,
/// 13 s; 320: 26M flows, 120 s on the development machine), so the bound keeps a simulation
/// under about half a minute; beyond it the plan is reported as not simulated, with the reason.
inline constexpr double kMaxSimulatedFlows = 8e6;

/// Most micro-batch passes (micro-batches x stages x interleave) a simulation takes on, of one
/// replica (simulation_size_problem, before any work is built) and of all the replicas it
/// simulates (check_simulation_size): about a minute and 1 GB. (Checked per replica only, 16
/// unfolded replicas of 980,000 micro-batches each ran towards 8 GB and aborted on bad_alloc.)
inline constexpr long long kMaxSimulatedPasses = 1000000;

/// A replica's micro-batch passes to simulate: micro-batches x stages x interleave.
inline long long simulated_passes(const models::Plan& plan, const models::Replica& replica) {
  return static_cast<long long>(replica.micro_batches) * static_cast<long long>(replica.stages.size()) *
         (plan.interleave > 1 ? plan.interleave : 1);
}

/// The DP groups of a component whose gradients are ready at the same points of the same stage
/// actors' last backward passes (one model segment, all its shards; a component of an aligned
/// plan is one class): they reduce together, each bucket once every member has produced it.
struct DpSyncClass {
  std::vector<int> actors;                 ///< indices into SimLayout::actors
  /// Per actor: where in its last backward the class's gradients are produced, fractions of the
  /// pass (models::DpGroup::ready_from/ready_to)
  std::vector<double> ready_from, ready_to;
  std::vector<FoldedPhase> grad_phases;    ///< gradient sync (all-reduce, or reduce-scatter with ZeRO>=1)
  /// ZeRO 1-2: the updated weights' all-gather after the optimizer step. Each class's own: a
  /// stage waits for the gathers of the segments it holds, not for its whole component's (a
  /// GPU's groups are communicators of their own, each stage's forward waits for its own weights;
  /// the cost model's SlotLoad::gather), their flows sharing the links as they run together.
  std::vector<FoldedPhase> param_phases;
  int buckets = 1;                         ///< of an overlapped sync: the most of its groups' (DpGroup::buckets)
  double min_group_bytes = 0;              ///< the smallest of its groups' gradient bytes per GPU (0: none yet)

  /// Position of stage actor `actor` in `actors` (and ready_from/ready_to), or -1 when not a member.
  int member_index(int actor) const {
    for (std::size_t m = 0; m < actors.size(); ++m)
      if (actors[m] == actor) return static_cast<int>(m);
    return -1;
  }
};

/// Stage actors whose GPUs are linked by DP groups: they sync gradients together.
struct DpComponent {
  std::vector<int> actors;                 ///< indices into SimLayout::actors
  std::vector<DpSyncClass> classes;        ///< the gradient sync and weight gather, by readiness
};

/// Tied embeddings: the first and last stage of a replica all-reduce the embedding gradient
/// after their DP sync (Megatron-LM _allreduce_embedding_grads), as the cost model orders it.
struct EmbeddingSync {
  int first_actor = -1;
  int last_actor = -1;
  std::vector<FoldedPhase> phases;
};

struct StageActorSpec {
  int replica = 0;
  int stage = 0;
  int component = -1;                      ///< DP component, -1 when the stage syncs nothing
};

struct SimLayout {
  std::vector<int> replicas;               ///< simulated replicas
  std::vector<bool> replica_simulated;     ///< by replica index
  std::vector<bool> node_used;             ///< nodes the platform builds (simulated + ghosts)
  std::vector<StageActorSpec> actors;
  std::vector<DpComponent> components;
  std::vector<EmbeddingSync> embeddings;
  /// ZeRO-2/3, per actor: the flows of its ranks' share of one chunk's collectives in a forward
  /// and in a backward pass (models::pass_traffic: ZeRO-3 weight all-gathers, ZeRO-2/3 gradient
  /// reduce-scatter; each rank sends (n-1)/n of the bytes to its ring successor), started when a
  /// pass starts and awaited when it ends when hidden (ZeRO-3's prefetch, ZeRO-2's overlapped
  /// sync; Rajbhandari et al., SC'20 §5.3), as the cost model's exposed-traffic term assumes.
  std::vector<FoldedPhase> zero3_forward;
  std::vector<FoldedPhase> zero3_backward;
  std::vector<int> embedding_of_actor;     ///< index into embeddings, -1 when none
  std::vector<models::NodeSenders> tp_senders_on_node;  ///< models::cross_node_tp_senders
  std::vector<double> dp_wan_load;         ///< models::wan_load_of the DP groups (bytes): empty with one zone
  std::vector<double> dp_wan_senders;      ///< the same in senders (embedding groups' figure)
  bool folded = false;
};

/// Decides folding and builds the DP components. Throws std::runtime_error for an unroutable plan.
SimLayout make_layout(const Topology& topology, const models::Plan& plan, const models::PlanWork& work, bool fold);

}  // namespace hetsim::sim
