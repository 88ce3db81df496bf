// SPDX-License-Identifier: Apache-2.0
// One evaluation of the analytic predictor (predict(), build_plan_work()): private to
// predictor.cpp (the steps) and predictor_copies.cpp (which replicas repeat an earlier one).
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "plan_work.hpp"
#include "report.hpp"
#include "scratch_vector.hpp"
#include "send_node_loads.hpp"
#include "small_copy.hpp"
#include "stage_cost.hpp"
#include "step_cost.hpp"
#include "topology.hpp"
#include "workload.hpp"

namespace hetsim::models {

template <int N>
inline bool consecutive_n(const int* g) {
  unsigned gaps = 0;  // no early exit: the compiler vectorises the whole check
  for (int i = 0; i < N; ++i) gaps |= static_cast<unsigned>(g[i] - i) ^ static_cast<unsigned>(g[0]);
  return gaps == 0;
}

/// Whether gpus[i] == gpus[0] + i for all i (TP groups are 1 to 8 GPUs, one check per stage).
/// The usual degrees get a loop of fixed length, which the compiler turns into a few vector
/// instructions without the set-up of a loop of unknown length (half the instructions at 8).
inline bool consecutive_gpus(const int* g, int n) {
  switch (n) {
    case 1: return true;
    case 2: return consecutive_n<2>(g);
    case 4: return consecutive_n<4>(g);
    case 8: return consecutive_n<8>(g);
    default: break;
  }
  unsigned gaps = 0;
  for (int i = 0; i < n; ++i) gaps |= static_cast<unsigned>(g[i] - i) ^ static_cast<unsigned>(g[0]);
  return gaps == 0;
}

/// The steps of run(), in order: stage costs deduplicated by shape (cost_stages), the pipeline
/// sends (count_pipeline_nic_senders, count_pipeline_wan_senders, price_pipeline_sends), each
/// replica's pipeline time (time_replicas), the data-parallel step (step_cost), the Report
/// (fill_report). Tables indexed [replica * max_pp + stage] are called slots.
struct Evaluation {
  Evaluation(const Cluster& cluster, const Workload& workload, const Plan& plan, PlanWork* work)
      : cluster(cluster), workload(workload), plan(plan), work(work) {}

  const Cluster& cluster;
  const Workload& workload;
  const Plan& plan;
  PlanWork* work;  ///< filled with ops when not null
  Report report;

  // Figures of the plan that every step reads (set at the start of run()).
  int max_pp = 0;               ///< deepest replica's stage count: the stride of the slot tables
  int interleave = 1;           ///< chunks per stage (Plan::interleave, at least 1)
  int stage_count = 0;          ///< stages of all replicas (Report rows)
  int gpu_count = 0;            ///< Plan::gpu_count() without a second walk
  bool partial = false;         ///< the plan leaves GPUs of the cluster idle
  double boundary_bytes = 0;    ///< activation a stage hands to the next, per micro-batch

  ScratchVector<StageShape> shapes;
  ScratchVector<StageCost> costs;
  /// Work mode only, as `shapes`: each shape's chunk ops, shared by the stages of that shape.
  std::vector<std::shared_ptr<const std::vector<ChunkWork>>> shape_ops;
  ScratchVector<int> shape_of;          ///< [slot] -> index into shapes
  ScratchVector<StageTimes> times;      ///< [slot] stage time per micro-batch, sends included
  ScratchVector<ChunkEnds> chunk_ends;  ///< interleaved only, [slot]: its first and last chunk's times
  ScratchVector<StageTimes> p2p;        ///< [slot] p2p sends in the forward / backward pass
  /// With overlap_p2p_comm only, [slot]: the latency part of p2p (it delays the receiver, not
  /// the sender's stream; interleaved_latency_pace).
  ScratchVector<StageTimes> p2p_latency;
  ScratchVector<StageTimes> send_delay;  ///< [slot] one send's arrival after its pass (overlap_p2p_comm; time_replicas)
  ScratchVector<char> tp_in_one_node;   ///< [slot]
  ScratchVector<int> front_node;        ///< [slot] node of the stage's first GPU
  ScratchVector<int> front_gpu;         ///< [slot] the stage's first GPU, -1: the replica has no such stage
  ScratchVector<char> in_node;          ///< [slot] consecutive GPUs of one node
  /// [replica] -> the earlier replica it is a copy of (see find_copies), -1: evaluated itself.
  ScratchVector<int> copy_of;
  ScratchVector<double> replica_time_s; ///< [replica] pipeline time
  int slowest_replica = 0;              ///< the replica with the longest pipeline time
  ScratchVector<int> first_row;         ///< [replica] its first StageReport in report.stages
  // Keys are compared field by field as ints: bool pairs that the compiler merges into one
  // 16-bit load right after two byte stores stall on store forwarding in the hot loops.
  struct PathKey {
    int type_a, type_b, zone_a, zone_b;
    int same_node;
    /// GPUs of a's node sending out, flows into b's node (senders 0: all of the node's GPUs)
    NodeSenders sending_a, receiving_b;
    int wan;      ///< flows of the plan sharing the zones' WAN link that way (0: one zone)
    bool operator==(const PathKey&) const = default;
  };
  ScratchVector<int> used_on_node;      ///< GPUs of the plan in each node (plans that leave GPUs idle; the senders below)
  /// The same GPUs as senders, with their busiest rail (plans that leave GPUs idle): a plan on
  /// GPUs 0 and 2 of a node with a NIC per pair sends on two rails, not one.
  ScratchVector<NodeSenders> used_senders_on_node;
  ScratchVector<int> used_gpu;  ///< [gpu] 1 when the plan uses it (plans that leave GPUs idle)
  /// [send * nodes + node], send = 2 * boundary + (1 for the gradient): the GPUs of the node
  /// sending that tensor of that boundary out of it (all replicas' boundaries of that index), and
  /// the flows of it arriving into the node, each with its busiest rail; empty: see
  /// count_pipeline_nic_senders. Boundary s: stage s to the stage it sends to (next_stage).
  /// The load is in tensors, a flow of a TP-t stage counting 1/t: a NIC or rail is shared by the
  /// bytes crossing it, so that all its flows end together as under max-min sharing (by flow
  /// count a TP-4 stage's flows beside a TP-8 stage's, into one A100 node's port, got a twelfth
  /// of it each for a quarter of the tensor: 19 ms a send where sharing by bytes gives 12.6 ms).
  SendNodeLoads boundary_out, boundary_in;
  /// [(send * zones + from zone) * zones + to zone]: the tensors of that send crossing the WAN
  /// link from one zone to the other, a flow counting 1/t (count_pipeline_wan_senders); empty
  /// with one zone.
  ScratchVector<double> boundary_wan;
  ScratchVector<std::pair<PathKey, PathCost>> paths;
  /// p2p_time() of each (path, sending TP, receiving TP) met in this evaluation (the size
  /// follows from the two TP degrees): a uniform plan sends one size over one kind of path at
  /// every stage boundary.
  struct P2pTime {
    int path_forward, path_backward;  ///< indices into paths: a to b, b to a
    int tp_a, tp_b;
    double forward_s, backward_s;  ///< a's activation to b, b's gradient back to a
  };
  ScratchVector<P2pTime> p2p_times;
  struct InNodeKey {
    int node_type, tp, layers;
    int ends;   ///< 1: first stage, 2: last stage (embedding / LM head)
    int shape;  ///< index into shapes
    bool same_stage(const InNodeKey& o) const {
      return node_type == o.node_type && tp == o.tp && layers == o.layers && ends == o.ends;
    }
  };
  ScratchVector<InNodeKey> in_node_shapes;  ///< shapes of one-node, consecutive-GPU TP groups
  LayerCostMemo layer_costs;  ///< one layer's sums per node type and TP group (stage_cost)
  std::vector<NodeSenders> tp_senders_on_node;  ///< cross_node_tp_senders(), once built
  bool tp_senders_ready = false;
  /// Price the pipeline sends as if those of one parity coincided (lockstep_parity_figure); off
  /// in predict().
  bool lockstep_parity = false;
  std::vector<int> parity_nodes;  ///< nodes whose NIC loads that added to (fold_same_parity_loads)

  bool run();

  // The steps of run() (predictor.cpp).
  bool cost_stages();
  /// Work mode: appends stage s of replica r to work->replicas[r], with the ops of its shape.
  void record_stage_ops(int r, int s, int shape);
  void count_pipeline_nic_senders(bool consecutive_on_a_node);
  bool stages_of_several_indices_share_a_node() const;
  /// Calls f(send, from GPU, to GPU, sending TP) for every pipeline flow, send by send (send as
  /// in boundary_out): rank d of the sending stage to rank pipeline_peer(d) of the receiving one.
  template <class F>
  void for_each_pipeline_flow(F&& f) const {
    for (int boundary = 0; boundary < max_pp; ++boundary)
      for (int backward = 0; backward < 2; ++backward)
        for (const Replica& rep : plan.replicas) {
          if (boundary >= static_cast<int>(rep.stages.size())) continue;
          const Stage* next = next_stage(rep, boundary);
          if (!next) continue;
          const Stage& from = backward ? *next : rep.stages[boundary];
          const Stage& to = backward ? rep.stages[boundary] : *next;
          for (int d = 0; d < from.tp(); ++d)
            f(2 * boundary + backward, from.gpus[d], to.gpus[pipeline_peer(d, from.tp(), to.tp())], from.tp());
        }
  }
  /// The slot of GPU `gpu`'s rail in per-rail tables indexed like Cluster::gpus: its node's
  /// first GPU plus its rail (rail_of_gpu; 0 when the node has no NIC).
  int rail_slot(int gpu) const {
    return cluster.nodes[cluster.gpus[gpu].node].first_gpu + std::max(0, rail_of_gpu(cluster, gpu));
  }
  /// lockstep_parity_figure's evaluation (predictor_parity.cpp): every send's NIC load becomes
  /// that of all the sends of its phase through the node (boundaries of one parity, both
  /// directions), and the nodes where that adds flows go to parity_nodes.
  void fold_same_parity_loads();
  void count_pipeline_wan_senders();
  void price_pipeline_sends();
  void time_replicas();
  void record_sends(PlanWork& w) const;
  void fill_report(const StepCost& sc);
  void add_stage_rows(const StepCost& sc);
  bool fail(std::string reason);

  // Replicas that repeat an earlier one, and the NIC counts they depend on (predictor_copies.cpp).
  bool find_copies(int* stage_count, int* gpu_count);
  void drop_copies_with_other_senders();
  /// models::cross_node_tp_senders of the plan, built on first use (only a TP group across nodes
  /// needs it).
  const std::vector<NodeSenders>& cross_node_tp_senders();

  const Stage* next_stage(const Replica& rep, int s) const {  // the stage s sends to, if any
    const int pp = static_cast<int>(rep.stages.size());
    if (pp < 2 || (s == pp - 1 && interleave == 1)) return nullptr;
    return &rep.stages[s == pp - 1 ? 0 : s + 1];
  }
  /// A load of `tensors` (NicLoad, boundary_wan) as flows of a TP-`sender_tp` stage, each 1/t of
  /// the tensor: the flow count whose equal shares of a link are that flow's share by bytes.
  static int flows_of_size(double tensors, int sender_tp) {
    return std::max(1, static_cast<int>(std::lround(tensors * sender_tp)));
  }
  /// On a pipeline path from node na to node nb of send `send` (as in boundary_out), for a flow of
  /// a TP-`sender_tp` stage: the flows of its size that would load those sides of the nodes' NICs
  /// as the send's flows do (count_pipeline_nic_senders; senders 0: all of the node's GPUs).
  std::pair<NodeSenders, NodeSenders> path_senders(int send, int na, int nb, int sender_tp) const {
    if (na == nb) return {};
    if (!boundary_out.empty()) {
      const auto as_flows = [sender_tp](const NicLoad& l) {
        return NodeSenders{flows_of_size(l.tensors, sender_tp), flows_of_size(l.on_busiest_rail, sender_tp)};
      };
      return {as_flows(boundary_out.get(send, na)), as_flows(boundary_in.get(send, nb))};
    }
    if (partial) return {used_senders_on_node[na], used_senders_on_node[nb]};
    return {};
  }
  /// Index into paths of the path from GPU ga to GPU gb of send `send` (as in boundary_out; built
  /// on first use).
  int path_index(int ga, int gb, int send, int sender_tp);
};

}  // namespace hetsim::models
