// SPDX-License-Identifier: Apache-2.0
// The final ranking's local search of micro-batch counts (planner.cpp rank_and_choose).
//
// The search gives unequal replicas micro-batch counts that equalise their steady-state compute
// (balance_micro_batches, planner_partition.cpp): m_r * tau_r + fill_r equal over replicas. The
// predictor also prices what that balance cannot see: the overlapped gradient sync, which waits
// for the last replica's last buckets, and the weight gather of the next step, which starts when
// each replica is done. Where they bind, the balanced counts can be a step off: on
// consumer-4090-a100 with the A100's memory bandwidth x1.25, the balance gave the eight A100
// replicas 6 micro-batches of 4 where 5 predicts 8% faster (s57 what-if hunt). This hill-climb
// moves whole classes of replicas one micro-batch at a time and keeps a move when predict()
// says the plan is better.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "planner.hpp"

namespace hetsim::models::planner {

/// Replicas that run the same pipeline (per stage: GPU type, TP degree, layers) with the same
/// micro-batch count, in plan order.
std::vector<std::vector<int>> micro_batch_classes(const Cluster& cluster, const Plan& plan);

/// The one-step moves from `counts`: for each class, every member `step` micro-batches fewer (the
/// freed ones given, `step` at a time, to the replica whose closed-form time grows least) and
/// every member `step` more (taken from the replicas whose closed-form time is longest). `sum_s`
/// and `bottleneck_s` are per replica, per micro-batch (the predictor's stage rows), priced with
/// `interleave` chunks; a move keeps the total and every count at least `step` (1, or an
/// interleaved pipeline's depth). Duplicates and `counts` itself are left out.
std::vector<std::vector<int>> micro_batch_moves(const std::vector<std::vector<int>>& classes,
                                                const std::vector<int>& counts, const std::vector<double>& sum_s,
                                                const std::vector<double>& bottleneck_s, int step = 1,
                                                int interleave = 1);

/// The shape notation with each kind's micro-batch counts as the plan now has them: "] m5" when
/// a kind's replicas agree, "] m3-2" (most-least) when not. The kinds' replica counts come from
/// the shape's "Nx[" prefixes; a shape whose kinds do not add up to the plan's replicas is returned
/// unchanged.
std::string with_replica_micro_batches(const std::string& shape, const Plan& plan);

/// Hill-climbs `ranked` (a predicted, feasible plan of the search; ZeRO 0-2, two classes or more;
/// interleaved when every replica has the same depth) over micro_batch_moves, each predicted as
/// the ranking predicts (rank()), for at most `rounds` accepted moves or until `deadline`. Returns the best plan found (`ranked`
/// itself when no move is better by the objective) and adds the predictions it made to
/// `predictions`.
RankedPlan shift_micro_batches(const Cluster& cluster, const Workload& workload, const PlannerOptions& options,
                               RankedPlan ranked, std::chrono::steady_clock::time_point deadline, long& predictions,
                               int rounds = 4);

}  // namespace hetsim::models::planner
