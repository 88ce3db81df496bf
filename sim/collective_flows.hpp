// SPDX-License-Identifier: Apache-2.0
// Collectives as phase-level flows: a collective is a sequence of phases; a phase is a set
// of concurrent point-to-point flows (one flow per ring step and rank, not per chunk) that
// all must finish before the next phase starts. No SimGrid here.
#pragma once
#include <vector>

#include "comm_cost.hpp"
#include "plan.hpp"

namespace hetsim::sim {

class Topology;

struct Flow {
  int src = 0;          ///< global GPU index
  int dst = 0;
  double bytes = 0;
  /// The ring hop the flow carries part of, when not (src, dst): a hop that leaves a node is
  /// split over the members' NICs (ring_all_reduce), one on a mesh node over the sender's links
  /// (spread_over_mesh_links). Each piece takes its own route, but its data is the hop's: the
  /// hop's sender sends it once that rank has what it forwards, and the hop's receiver forwards
  /// it (phase_dataflow.hpp). -1: the flow's own src and dst.
  int hop_src = -1;
  int hop_dst = -1;
  /// Which of the collectives merged into one phase list the flow belongs to (a sync class's
  /// DP groups: 1 + the group's index; 0 when not told): a rank in two groups runs two rings,
  /// each with its own hops (merge_repeated_phases follows each ring apart).
  int ring = 0;
  int sender() const { return hop_src >= 0 ? hop_src : src; }
  int receiver() const { return hop_dst >= 0 ? hop_dst : dst; }
};
using Phase = std::vector<Flow>;

/// Ring all-reduce (Patarasuk & Yuan, JPDC 2009): p-1 reduce-scatter steps then p-1
/// all-gather steps; in each step every rank sends n/p bytes to its successor.
/// Alone on links of latency α and bandwidth B: 2(p-1)·α + 2(p-1)/p · n/B.
///
/// With `node_of` (the node of each member), a hop that leaves a node is split into one flow
/// per member pair of the two nodes (k = fewer members of the two nodes, n/(p·k) bytes each):
/// NCCL runs one ring channel per member, each crossing on its own NIC (Jeaugey, "NCCL 2.0",
/// GTC 2017), which is the cost model's "NIC share x members" (models/topology.hpp).
std::vector<Phase> ring_all_reduce(const std::vector<int>& ring, double bytes, const std::vector<int>* node_of = nullptr);
/// Ring all-gather of a gathered buffer of `bytes` per rank: p-1 steps of n/p bytes.
std::vector<Phase> ring_all_gather(const std::vector<int>& ring, double bytes, const std::vector<int>* node_of = nullptr);
/// Ring reduce-scatter of an input buffer of `bytes` per rank: p-1 steps of n/p bytes.
std::vector<Phase> ring_reduce_scatter(const std::vector<int>& ring, double bytes, const std::vector<int>* node_of = nullptr);
/// Hierarchical all-reduce (as NCCL/Horovod do across nodes; Sergeev & Del Balso 2018):
/// reduce-scatter inside each node, all-reduce across nodes among GPUs of the same local
/// rank (n/k bytes each, k = GPUs of the group per node), all-gather inside each node.
/// `node_of` gives the node of each member. Falls back to a ring when the members are not
/// spread evenly over nodes.
std::vector<Phase> hierarchical_all_reduce(const std::vector<int>& gpus, const std::vector<int>& node_of, double bytes);
/// Double binary tree all-reduce (Sanders, Speck, Träff, Parallel Computing 2009, as used by
/// NCCL), pipelined: every tree edge carries n/2 bytes per tree, all levels at once, in one
/// reduce phase (up) and one broadcast phase (down); the pipeline's fill adds latency after
/// each phase (`tree_fill_latency_s`). Alone: 2·depth·α + 2·n/B. The cost model's tree_time()
/// has NCCL's tuning-table latency (models/comm_cost.cpp tree_latency_s: a chain inside each
/// node, log2 N levels between nodes), which the fill gives for trees between node heads; rank
/// trees over nodes with one member of the group each keep (depth-1) hops at the worst hop's
/// latency, so there the two engines' latencies can differ. With `node_of` and several
/// members on every node, the trees run between nodes
/// as NCCL's do (intra-node chain to a head, inter-node double binary tree; NCCL 2.4 release
/// notes): one channel per member of a node, each with its own head and NIC and 1/k of the
/// data, or a single channel when `one_channel` (models::GroupCost::node_shared).
std::vector<Phase> tree_all_reduce(const std::vector<int>& gpus, double bytes, const std::vector<int>* node_of = nullptr,
                                   bool one_channel = false);
/// Hop latencies of a tree phase's pipeline fill: ceil(log2 p) - 1.
int tree_fill_hops(int members);
/// The latency a tree phase adds after its flows: tree_fill_hops(p) hops at the group's worst
/// hop latency for rank trees; for trees between node heads (several members on every node)
/// the rest of the cost model's tree_latency_s per phase: (p/N - 1) intra-node hops and
/// ceil(log2 N) - 1 node crossings (a phase's flows pay one crossing themselves).
double tree_fill_latency_s(const models::GroupCost& g);

/// The all-reduce a DP gradient sync uses for the given algorithm (callers resolve kAuto with
/// the cost model's choice, see sim_layout.cpp; here kAuto means hierarchical, which is a ring
/// when the group has one member per node).
std::vector<Phase> dp_all_reduce(models::GradSyncAlgorithm algorithm, const std::vector<int>& gpus,
                                 const std::vector<int>& node_of, double bytes, bool one_channel = false);

/// On a mesh fabric (models::IntraFabric::mesh) NCCL/RCCL run a ring channel over each of a
/// GPU's links to the collective's other members on its node, so an intra-node send of a ring
/// step leaves on all of them: each flow between two of `members` on one mesh node (with more
/// than two of them there) becomes one flow to each other member on that node, with an equal
/// share of the bytes. Alone, k members then move at (k-1)/(gpus-1) of a GPU's total, the cost
/// model's models::intra_bandwidth_Bps.
void spread_over_mesh_links(const Topology& topology, const std::vector<int>& members, Phase& phase);

/// Merges collectives that run at the same time into one phase list (phase i of each).
void merge_phases(std::vector<Phase>& into, const std::vector<Phase>& more);

/// A phase after folding: the flows to simulate, and the flows they stand for (simulated
/// once, counted in link statistics with the representative's timing).
struct FoldedPhase {
  Phase simulated;
  Phase shadows;
  double delay_after_s = 0;  ///< pipeline fill of a tree phase (hop latencies not in the flows)
  /// The same for a run that follows the collective before back to back (an overlapped sync's
  /// backlogged buckets): merged ring steps then wait the mean hop latency a step, the steady
  /// rate of the dataflow the buckets make together, but never longer than a lone run's heaviest
  /// chain (the mean after one slow hop's latency overcounts on long rings).
  double delay_after_back_to_back_s = -1;  ///< -1: delay_after_s
  double delay_s(bool back_to_back) const {
    return back_to_back && delay_after_back_to_back_s >= 0 ? delay_after_back_to_back_s : delay_after_s;
  }
};
/// Folding inside a phase: when the flows' figures (size, path latency, path bandwidth) are
/// equal and no link they share would be loaded beyond its capacity by their rates alone, one
/// flow stands for all of them (each takes the same time alone). Otherwise every flow is
/// simulated (binding shared links kept exact).
FoldedPhase fold_phase(const Topology& topology, const Phase& phase, bool fold);
/// Whether two phases move the same flows (source, destination, bytes) in the same order.
bool same_flows(const Phase& a, const Phase& b);
/// Merges runs of identical consecutive phases (a ring's 2(p-1) equal steps) into one phase
/// whose flows carry the run's bytes, followed by the remaining steps' latencies: n·(α + s/B)
/// alone, as the steps take one after the other. A step's latency is the byte-weighted mean
/// of its flows' path latencies: a ring forwards what each rank has received, so its steps
/// advance at the mean hop latency around the ring (the cycle mean of the steps' max-plus
/// recurrence; Baccelli et al., "Synchronization and Linearity", 1992, ch. 3), as
/// run_dataflow_steps (phase_dataflow.hpp) times the unmerged steps. Where the flows form whole
/// rings (no replica folded away), the steps' latencies are instead the heaviest chain of n
/// consecutive hops, the recurrence's exact latency from a common start (its transient: a
/// short ring over one slow hop crosses it on more of its 2(p-1) steps than the mean says).
/// A run that follows another back to back waits the mean rule all the same
/// (FoldedPhase::delay_after_back_to_back_s: the buckets make one dataflow, whose rate is the
/// cycle mean). Under contention it is the average over the run. Part of folding (fewer flows
/// for SimGrid to move).
std::vector<FoldedPhase> merge_repeated_phases(const Topology& topology, const std::vector<FoldedPhase>& phases);

// ---- Collectives on the cluster: the group's figures pick the algorithm, as the cost model's ----

/// A collective as flows: its phases and the pipeline-fill delay after each (tree only).
struct CollectiveFlows {
  std::vector<Phase> phases;
  double delay_after_s = 0;
};
/// The collective the cost model prices (models::collective_time): `algorithm`, or for kAuto
/// the one models::resolve_algorithm picks on the group's figures (models::group_cost);
/// all-gather and reduce-scatter are rings (hierarchical for all-gather/reduce-scatter is not
/// modelled by either engine beyond its ring fallback).
/// `concurrent_on_node` as models::group_cost's (null: every GPU of a node sends): for DP groups
/// PlanWork::dp_nic_senders, for TP groups SimLayout::tp_senders_on_node, as the cost model
/// takes them, so that both engines pick the same algorithm and channels.
/// `wan_senders` as models::group_cost's (for DP groups from SimLayout::dp_wan_load).
/// `sources` (by GPU; null: all): an all-gather's or reduce-scatter's flows from the GPUs it
/// marks only, for a caller that keeps no others (the DP sync of a folded run keeps the
/// simulated replicas'): each of the ring's p - 1 steps moves the same flows, so the p^2 flows
/// of a large group are not built (dp 4096 at ZeRO 1: 2.3 GB and 8 s for 30 flows kept).
CollectiveFlows collective_flows(const Topology& topology, models::CollectiveKind kind,
                                 models::GradSyncAlgorithm algorithm, const std::vector<int>& members, double bytes,
                                 const std::vector<models::NodeSenders>* concurrent_on_node = nullptr,
                                 const std::vector<double>* wan_senders = nullptr,
                                 const std::vector<bool>* sources = nullptr);
/// Flows folded phase by phase (fold_phase), repeated phases merged when folding.
std::vector<FoldedPhase> fold_collective_flows(const Topology& topology, const CollectiveFlows& flows, bool fold);
/// The same, folded phase by phase.
std::vector<FoldedPhase> folded_collective(const Topology& topology, models::CollectiveKind kind,
                                           models::GradSyncAlgorithm algorithm, const std::vector<int>& gpus,
                                           double bytes, bool fold, const std::vector<models::NodeSenders>* concurrent_on_node = nullptr);

/// Flows of a point-to-point transfer between two TP groups: rank i sends to rank i·|dst|/|src|
/// (models::pipeline_peer; rank-wise when the groups have the same size), `bytes_per_rank` each.
Phase group_transfer(const std::vector<int>& src, const std::vector<int>& dst, double bytes_per_rank);

}  // namespace hetsim::sim
