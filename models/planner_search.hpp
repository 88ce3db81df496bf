// SPDX-License-Identifier: Apache-2.0
// Enumeration of heterogeneous plan shapes with memoised partitions and bound pruning.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "planner.hpp"
#include "planner_estimate.hpp"

namespace hetsim::models::planner {

/// `stages` consecutive pipeline stages on units (TP groups) of one pool.
struct KindBlock {
  int pool = 0;
  int stages = 0;
};

/// A replica kind: `copies` identical pipelines made of blocks, with their layer split.
struct Kind {
  std::vector<KindBlock> blocks;
  int copies = 1;
  std::vector<int> layers;  ///< per stage, all blocks in order
  ReplicaTiming timing;
  std::vector<double> stage_s;  ///< per stage, forward + backward per micro-batch
  double headroom = 1;
  GroupMicroBatches micro;      ///< micro-batches per copy (filled by finish())
};

/// A plan shape: everything but the concrete GPU indices (materialize() adds them).
struct Shape {
  Knobs knobs;
  std::vector<int> pool_tp;      ///< TP per pool, 0 = pool unused
  std::vector<int> pool_nodes;   ///< nodes of each pool the search may use (the first n)
  std::vector<Kind> kinds;        ///< replicas: kinds in order, copies of a kind in order
  bool uniform = false;
  double step_s = 0;
  double tokens_per_s = 0;
  double price_per_hour = 0;
  double headroom = 1;
  /// Where the search found it: (search() call, task, shape within the task). Breaks ties
  /// between equal scores the way a one-thread search would (earlier wins), whatever the
  /// order in which threads hand shapes in.
  std::tuple<long, long, long> found_at{0, 0, 0};
};

/// Keeps the N best shapes by an objective score (larger is better; equal scores: found first).
class ShapeCollector {
 public:
  ShapeCollector(int capacity, std::function<double(const Shape&)> score) : capacity_(capacity), score_(std::move(score)) {}
  void offer(const Shape& shape);
  /// The score a shape must beat to enter (-inf while not full).
  double threshold() const;
  std::vector<Shape> take_sorted() const;

 private:
  int capacity_;
  std::function<double(const Shape&)> score_;
  /// Worst first: ascending score, then (equal scores: equally cheap shapes of the cost
  /// objective, e.g. free ones) fewer tokens/s first, then latest found first.
  struct Rank {
    double score;
    double tokens_per_s;
    std::tuple<long, long, long> found_at;
    bool operator<(const Rank& o) const {
      if (score != o.score) return score < o.score;
      if (tokens_per_s != o.tokens_per_s) return tokens_per_s < o.tokens_per_s;
      return found_at > o.found_at;
    }
  };
  std::map<Rank, Shape> best_;
};

class ShapeSearch {
 public:
  ShapeSearch(const Cluster& cluster, const Workload& workload, const PlannerOptions& options, UnitCostTable& costs);

  const std::vector<Pool>& get_pools() const { return pools_; }
  /// What the `bound` of a search is measured in: the objective's score (tokens/s, or -dollars
  /// per token for the cost objective), or tokens/s whatever the objective (the baselines).
  enum class BoundUnit { kObjective, kTokens };
  /// `bound` returns the score (in `unit`) a shape must beat to be kept.
  /// Enumerates shapes on the first `pool_nodes[p]` nodes of each pool (0 = pool unused) and
  /// offers each scored shape to `sink`. `uniform`: one TP degree everywhere, Megatron's
  /// layer split and equal micro-batches, every allotted GPU used. Runs the (knobs, TP)
  /// branches on PlannerOptions::threads threads; the shapes kept are those one thread would
  /// keep, ties included (Shape::found_at).
  void search(const std::vector<int>& pool_nodes, bool uniform, const std::function<void(const Shape&)>& sink,
              const std::function<double()>& bound, BoundUnit unit = BoundUnit::kObjective);
  /// The concrete plan of a shape.
  Plan materialize(const Shape& shape) const;
  /// "2x[a100 tp8 x2 | v100 tp4 x3] + 1x[v100 tp8 x4]".
  std::string describe(const Shape& shape) const;

  /// Shapes scored and discarded so far (all threads).
  long evaluated = 0;
  long pruned = 0;
  /// Starts a phase of searches that together may take PlannerOptions::time_limit_s.
  void start_clock();
  /// True once a search() of the phase stopped at the phase's time limit.
  bool stopped = false;
  /// True once a search() of the phase kept only kMaxTasks of its branches and ran them all
  /// without its N-th best rising above the best bound it dropped: its plans are the best found,
  /// not proven best (clusters of seven node types or more).
  bool truncated = false;
  static constexpr std::size_t kMaxTasks = kMaxSearchBranches;
  /// Threads the searches ran on so far, this one included (0 before any search): at most
  /// PlannerOptions' threads, fewer when the process could not start them all.
  int threads_started = 0;

  // The bounded set of branches a search runs (public for its tests).
  /// One (knobs, TP per pool) branch of a search and its upper bound.
  struct Task {
    Knobs knobs;
    std::vector<int> tp;
    double bound = 0;
    std::size_t order = 0;  ///< enumeration order: the tie-break between equal bounds
  };
  /// Search order of branches: higher bound first, equal bounds in enumeration order (what a
  /// stable sort by bound gives); as a heap's comparator it puts the worst branch on top.
  static bool better_task(const Task& a, const Task& b);
  /// Adds `t` to `tasks`, which holds at most kMaxTasks as a heap with the worst on top once
  /// full; returns the bound of what was dropped (-inf when nothing was).
  static double keep_task(std::vector<Task>& tasks, Task t);

 private:
  /// Tasks [begin, end) in order on this thread; the first whose bound cannot beat the N-th
  /// best ends the search (sorted: no later one can), counted as pruned with all after it.
  void run_tasks(const std::vector<Task>& tasks, size_t begin, size_t end, const std::vector<int>& pool_nodes,
                 bool uniform, const std::function<void(const Shape&)>& sink, const std::function<double()>& bound);
  /// Tasks [begin, end of tasks) on `threads` threads (this one and helpers_).
  void run_tasks_threaded(int threads, const std::vector<Task>& tasks, size_t begin, const std::vector<int>& pool_nodes,
                          bool uniform, const std::function<void(const Shape&)>& sink,
                          const std::function<double()>& bound);
  /// Stamps `s` with where it was found and hands it to `sink`.
  void emit(Shape& s, const std::function<void(const Shape&)>& sink);
  struct PoolOption {
    int pp = 0, copies = 0;
    PartitionResult part;
    double rate = 0;  ///< micro-batches per second of all copies in steady state
  };
  /// One (knobs, TP per pool) branch: per-pool kinds, then mixed kinds when two pools or more are used.
  void search_tp(const Knobs& knobs, const std::vector<int>& pool_nodes, const std::vector<int>& tp, bool uniform,
                 const std::function<void(const Shape&)>& sink, const std::function<double()>& bound);
  /// What search_tp() hands its two halves: the branch, the pools it uses and their TP groups
  /// ("units"), and the shape they fill in.
  struct TpBranch {
    const Knobs& knobs;
    const std::vector<int>& tp;
    bool uniform;
    std::vector<int> active;  ///< pools with tp > 0
    std::vector<int> units;   ///< TP groups per pool
    int total_units;
    Shape base;
  };
  /// Replicas of per-pool kinds only: the best few depths of each pool, all combinations.
  void search_per_pool_kinds(const TpBranch& branch, const std::function<void(const Shape&)>& sink,
                             const std::function<double()>& tokens_bound);
  /// The orders a mixed kind over `members` (sorted pool indices) is tried in: every order of up
  /// to kEveryOrderMembers pools, a few otherwise (planner_kinds.cpp); the uniform baseline's
  /// too, so that it does not depend on the order the cluster file lists its node types in.
  std::vector<std::vector<int>> pipeline_orders(const std::vector<int>& members, const TpBranch& b);
  /// The subsets of the branch's pools (>= 2) mixed kinds are tried over: every one of up to
  /// kEverySubsetPools pools, the largest first past kEveryOrderMembers; beyond, all pools, each
  /// zone's, each GPU type's and every pair; all pools alone for the uniform baseline.
  std::vector<std::vector<int>> mixed_subsets(const TpBranch& b) const;
  /// Mixed kinds over every subset of >= 2 pools in every order, with per-pool kinds on the rest.
  void search_mixed_kinds(const TpBranch& branch, const std::function<void(const Shape&)>& sink,
                          const std::function<double()>& tokens_bound);
  /// Depths of a single-pool pipeline on `units` TP groups, best steady-state rate first (memoised).
  const std::vector<PoolOption>& pool_options(int pool, int tp, int units, const Knobs& knobs, int replicas_hint,
                                              bool uniform);
  /// pool_options(pool, tp, units, knobs, 1, false)[0] (nullptr when empty), partitioning only
  /// the depths whose rate bound can beat the best found (memoised).
  const PoolOption* best_pool_option(int pool, int tp, int units, const Knobs& knobs);
  /// A lower bound on the step of a mixed kind of `copies` pipelines over `members` (any order,
  /// before partitioning), with the per-pool kinds `rest` beside it or alone.
  double mixed_step_lower_bound_s(const std::vector<int>& members, const std::vector<int>& units,
                                  const std::vector<int>& tp, const Knobs& knobs, int copies,
                                  const std::vector<std::pair<int, const PoolOption*>>& rest);
  /// False when a mixed kind of `copies` pipelines over `members` cannot fit in memory in any
  /// order (an optimistic form of partition_layers()'s capacity check).
  bool mixed_may_fit(const std::vector<int>& members, const std::vector<int>& units, const std::vector<int>& tp,
                     const Knobs& knobs, int copies);
  /// One depth `pp` of a single-pool pipeline; false when it does not fit.
  bool pool_option(int pool, int tp, int units, const Knobs& knobs, int replicas_hint, bool uniform, int pp,
                   PoolOption& out);
  PartitionResult partition_kind(const std::vector<KindBlock>& blocks, const std::vector<int>& tp,
                                 const Knobs& knobs, int copies, int replicas, bool uniform);
  /// The figures of a block's sends inside its pool that partition_kind met last (a handful
  /// repeat along a block), checked before boundary_memo_.
  struct RecentSends {
    struct Entry {
      bool same_node;
      int out, in;
      double send_s;
    };
    static constexpr int kSize = 4;
    Entry entries[kSize];
    int count = 0, next = 0;
  };
  /// One send of `copies` pipelines from stage j to j + 1 of a block of `stages` stages on pool p
  /// at TP `tp` (each way: equal TP and counts); `steady`: 1F1B's steady state dominates the
  /// schedule, so exchanges of one parity share nodes (with_same_parity_exchanges).
  double in_pool_send_s(int p, int tp, int j, int copies, int stages, bool before, bool after, bool steady,
                        double boundary_bytes, RecentSends& recent);
  /// Balances micro-batches, adds the gradient sync, fills step/tokens/price; false if infeasible
  /// or if it cannot reach `bound` tokens/s.
  bool finish(Shape& shape, double bound);
  int unit_gpu(int pool, int tp, int unit) const;
  double upper_bound_tokens_per_s(const Knobs& knobs, const std::vector<int>& pool_nodes,
                                  const std::vector<int>& tp);
  /// Pool p's term of upper_bound_tokens_per_s at TP t, in micro-batches per second (0 for a pool
  /// not used, t = 0; -inf when the pool cannot run the model at t, which makes the bound 0).
  double pool_rate_bound(const Knobs& knobs, const std::vector<int>& pool_nodes, int p, int t);
  /// Upper bound of the objective's score (tokens/s, or -dollars per token for kCost).
  double upper_bound_score(const Knobs& knobs, const std::vector<int>& pool_nodes, const std::vector<int>& tp);
  /// Upper bound of a branch in the running search's bound unit.
  double branch_bound(const Knobs& knobs, const std::vector<int>& pool_nodes, const std::vector<int>& tp);
  /// Reads the clock: true (and `stopped` set) once the phase is past its deadline.
  bool past_deadline();
  /// The same for the inner loops, reading the clock on every 64th call only.
  bool out_of_time();

  const Cluster& cluster_;
  const Workload& workload_;
  const PlannerOptions& options_;
  UnitCostTable& costs_;
  std::vector<Pool> pools_;
  /// What a pool's depth options depend on (pool_options() arguments).
  struct PoolKey {
    int pool, tp, units, replicas_hint, micro_batch, recompute, interleave, zero;
    bool sequence_parallel, uniform;
    bool operator==(const PoolKey&) const = default;
  };
  struct PoolKeyHash {
    size_t operator()(const PoolKey& k) const;
  };
  std::unordered_map<PoolKey, std::vector<PoolOption>, PoolKeyHash> pool_memo_;  // hashed: looked up per copies count
  std::unordered_map<PoolKey, PoolOption, PoolKeyHash> best_memo_;  ///< best_pool_option(); pp 0: none fits
  /// What pool_options() found before the deadline cut it short (not memoized).
  std::vector<PoolOption> partial_options_;
  std::vector<TimingGroup> timing_scratch_;  ///< finish()'s and mixed_step_lower_bound_s()'s buffers, reused: no allocation per shape
  std::vector<int> member_scratch_;
  std::vector<int> cursor_scratch_;
  std::vector<SlotCost> slot_scratch_;  ///< partition_kind()'s
  struct IntsHash {
    size_t operator()(const std::vector<int>& v) const;
  };
  /// finish()'s gradient all-reduce estimates by (ZeRO, first stage, runs of units per kind:
  /// pool, TP, first unit, copies, layers); cleared per branch to bound its size.
  std::unordered_map<std::vector<int>, SyncEstimate, IntsHash> sync_memo_;
  std::vector<int> sync_key_scratch_;
  /// partition_kind()'s sends across a boundary between two pools (forward, backward), by the
  /// pools, their TP degrees, the kind's copies where the pools' zones differ (they share the
  /// WAN link; 0 otherwise) and the activation's bytes.
  struct BoundaryKey {
    int from_pool, from_tp, to_pool, to_tp, wan_pipelines;  ///< wan_pipelines -1: a send inside one node
    int copies_out, copies_in;  ///< the copies' sends sharing the two nodes (boundary_crossings)
    double bytes;
    bool operator==(const BoundaryKey&) const = default;
  };
  struct BoundaryKeyHash {
    size_t operator()(const BoundaryKey& k) const;
  };
  std::unordered_map<BoundaryKey, std::pair<double, double>, BoundaryKeyHash> boundary_memo_;
  /// finish()'s tied-embedding all-reduces (tied_embedding_estimate_s) by first stage (from_pool,
  /// from_tp), last stage (to_pool, to_tp), the replicas crossing the WAN (wan_pipelines) and the
  /// GPUs in pairs on a node (copies_out); bytes 0 (the TP degrees set them).
  std::unordered_map<BoundaryKey, double, BoundaryKeyHash> embedding_memo_;
  /// The slowest tied-embedding all-reduce of a shape's pipelines (0 without tied embeddings);
  /// `cursor` row k holds the units the kinds before kind k took of each pool.
  double tied_embedding_s(const Shape& s, const std::vector<int>& cursor);
  bool bound_in_tokens_ = false;  ///< the running search's BoundUnit is kTokens
  long search_calls_ = 0;  ///< search() calls so far, and the task and shape of the running one
  long task_index_ = 0;
  long shapes_in_task_ = 0;
  size_t stop_at_ = 0;  ///< the task that cut the running search (max: none)
  std::vector<std::unique_ptr<ShapeSearch>> helpers_;  ///< one per extra thread, kept (with their memos) across searches
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  unsigned clock_reads_ = 0;
};

}  // namespace hetsim::models::planner
