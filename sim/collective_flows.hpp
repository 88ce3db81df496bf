// SPDX-License-Identifier: Apache-2.0
// Collectives as phase-level flows: a collective is a sequence of phases; a phase is a set
// of concurrent point-to-point flows (one flow per ring step and rank, not per chunk) that
// all must finish before the next phase starts. No SimGrid here.
#pragma once
#include <vector>

#include "plan.hpp"

namespace hetsim::sim {

class Topology;

struct Flow {
  int src = 0;          ///< global GPU index
  int dst = 0;
  double bytes = 0;
};
using Phase = std::vector<Flow>;

/// Ring all-reduce (Patarasuk & Yuan, JPDC 2009): p-1 reduce-scatter steps then p-1
/// all-gather steps; in each step every rank sends n/p bytes to its successor.
/// Alone on links of latency α and bandwidth B: 2(p-1)·α + 2(p-1)/p · n/B.
std::vector<Phase> ring_all_reduce(const std::vector<int>& ring, double bytes);
/// Ring all-gather of a gathered buffer of `bytes` per rank: p-1 steps of n/p bytes.
std::vector<Phase> ring_all_gather(const std::vector<int>& ring, double bytes);
/// Ring reduce-scatter of an input buffer of `bytes` per rank: p-1 steps of n/p bytes.
std::vector<Phase> ring_reduce_scatter(const std::vector<int>& ring, double bytes);
/// Hierarchical all-reduce (as NCCL/Horovod do across nodes; Sergeev & Del Balso 2018):
/// reduce-scatter inside each node, all-reduce across nodes among GPUs of the same local
/// rank (n/k bytes each, k = GPUs of the group per node), all-gather inside each node.
/// `node_of` gives the node of each member. Falls back to a ring when the members are not
/// spread evenly over nodes.
std::vector<Phase> hierarchical_all_reduce(const std::vector<int>& gpus, const std::vector<int>& node_of, double bytes);
/// Double binary tree all-reduce, phase-level (Sanders et al., Parallel Computing 2009, as
/// used by NCCL): reduce up a binary tree, then broadcast down, each level one phase of
/// n/2 bytes per tree (two trees each carry half the data).
std::vector<Phase> tree_all_reduce(const std::vector<int>& gpus, double bytes);

/// The all-reduce a DP gradient sync uses for the given algorithm (kAuto: hierarchical when
/// the group has several members per node and spans nodes, else ring).
std::vector<Phase> dp_all_reduce(models::GradSyncAlgorithm algorithm, const std::vector<int>& gpus,
                                 const std::vector<int>& node_of, double bytes);

/// Merges collectives that run at the same time into one phase list (phase i of each).
void merge_phases(std::vector<Phase>& into, const std::vector<Phase>& more);

/// A phase after folding: the flows to simulate, and the flows they stand for (simulated
/// once, counted in link statistics with the representative's timing).
struct FoldedPhase {
  Phase simulated;
  Phase shadows;
};
/// Folding inside a phase: when the flows' paths share no link and their figures (size,
/// path latency, path bandwidth) are equal, one flow stands for all of them (each would take
/// the same time alone). Otherwise every flow is simulated (shared links kept exact).
FoldedPhase fold_phase(const Topology& topology, const Phase& phase, bool fold);

}  // namespace hetsim::sim
