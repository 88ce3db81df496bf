// SPDX-License-Identifier: Apache-2.0
// The flows the schedule actors start, built from the layout on first use and cached (one TP
// collective per actor, op kind and size; one pipeline transfer per replica, stage pair and
// direction), and the size of a run counted from them before it starts. No SimGrid here: the
// actors (actors.cpp) hand these phases to the Runtime.
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "collective_flows.hpp"
#include "plan.hpp"
#include "plan_work.hpp"
#include "sim_layout.hpp"
#include "sim_topology.hpp"
#include "simulator.hpp"

namespace hetsim::sim {

/// What every actor of one run reads: the inputs and layout, and the flows built so far.
struct StageFlows {
  const Topology& topo;
  const models::Plan& plan;
  const models::PlanWork& work;
  const SimLayout& lay;
  bool fold;
  std::map<std::tuple<int, int, double>, std::vector<FoldedPhase>> tp_cache;  // (actor, kind, bytes)
  std::map<std::tuple<int, int, int, int>, FoldedPhase> transfer_cache;        // (r, s_from, s_to, dir)
};

/// The phases of one TP collective op (all-reduce, all-gather, reduce-scatter) of an actor's stage.
const std::vector<FoldedPhase>& tp_phases(StageFlows& w, int actor, const models::Op& op);

/// The pipeline transfer from stage `from` to stage `to` of a replica (forward: activations; else gradients).
const FoldedPhase& transfer(StageFlows& w, int replica, int from, int to, bool forward);

/// The gradient buckets a DP sync class runs in: one without overlap, else the option's count or
/// the cost model's (models::grad_bucket_count, in the layout).
int sync_buckets(const models::Plan& plan, const SimOptions& options, const DpSyncClass& spec);

/// What a run will do, counted from its layout before it starts: the flows it moves (as the stage
/// actors, the DP actors and the step's end start them; a pass's ops and sends, each micro-batch),
/// the spans its trace can hold and the links its flows cross.
struct RunSize {
  double flows = 0;
  double gpu_spans = 0;   ///< at most, on all GPU tracks
  double gpu_tracks = 0;
  double links = 0;       ///< links on the flows' paths (the trace's counter tracks, at most)
};

/// Links are counted only when options.record_trace asks for a trace (the only reader of them).
RunSize size_of_run(StageFlows& w, const SimOptions& options);

}  // namespace hetsim::sim
