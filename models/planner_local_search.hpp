// SPDX-License-Identifier: Apache-2.0
// The final ranking's local search of micro-batch counts and layer splits (planner.cpp
// rank_and_choose).
//
// The search gives unequal replicas micro-batch counts that equalise their steady-state compute
// (balance_micro_batches, planner_partition.cpp): m_r * tau_r + fill_r equal over replicas. The
// predictor also prices what that balance cannot see: the overlapped gradient sync, which waits
// for the last replica's last buckets, and the weight gather of the next step, which starts when
// each replica is done. Where they bind, the balanced counts can be a step off: on
// consumer-4090-a100 with the A100's memory bandwidth x1.25, the balance gave the eight A100
// replicas 6 micro-batches of 4 where 5 predicts 8% faster (s57 what-if hunt). This hill-climb
// moves whole classes of replicas one micro-batch at a time and keeps a move when predict()
// says the plan is better; a second one moves a layer between two stages of a pipeline, as the
// search's layer split rests on its unit costs too.
#pragma once
#include <chrono>
#include <functional>
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

/// The shape notation with each kind's layer split as its first replica now has it ("xK L..."
/// per block); a shape whose kinds or blocks do not match the plan is returned unchanged.
std::string with_replica_layers(const std::string& shape, const Plan& plan);

/// Hill-climbs `ranked` (a predicted, feasible plan) over the plans `moves` proposes from the
/// current one, each predicted as the ranking predicts (rank()): the best move better by the
/// objective is taken, unless it lengthens the step with one parity's pipeline sends in lockstep
/// (lockstep_parity_figure), for at most `rounds` moves or until `deadline`. Returns the best
/// plan found (`ranked` itself when no move is better) and adds the predictions to `predictions`.
RankedPlan hill_climb(const Cluster& cluster, const Workload& workload, const PlannerOptions& options, RankedPlan ranked,
                      std::chrono::steady_clock::time_point deadline, long& predictions, int rounds,
                      const std::function<std::vector<Plan>(const RankedPlan&)>& moves);

/// hill_climb over micro_batch_moves (ZeRO 0-2, two classes or more; interleaved when every
/// replica has the same depth).
RankedPlan shift_micro_batches(const Cluster& cluster, const Workload& workload, const PlannerOptions& options,
                               RankedPlan ranked, std::chrono::steady_clock::time_point deadline, long& predictions,
                               int rounds = 4);

/// One layer moved between two stages of every replica of a pipeline (same GPU types, TP
/// degrees and split), each stage keeping one layer at least: between every pair of stages in
/// pipelines of up to eight, between neighbours and to or from the end stages in deeper ones;
/// none for interleaved plans.
std::vector<Plan> layer_moves(const Cluster& cluster, const Plan& plan);

/// hill_climb over layer_moves, for plans of up to 256 GPUs: the search splits layers by its unit costs (min-max of the
/// stages' estimated times), predict() by the pipeline's exact schedule, sends and sync, and they
/// can disagree by a layer (spot-mix gpt3-6.7b with the V100 peak x1.25: the search's 9,8,8,7
/// predicts 0.19% below the base cluster's 10,8,8,6).
RankedPlan shift_layers(const Cluster& cluster, const Workload& workload, const PlannerOptions& options,
                        RankedPlan ranked, std::chrono::steady_clock::time_point deadline, long& predictions,
                        int rounds = 3);

}  // namespace hetsim::models::planner
