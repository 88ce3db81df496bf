// SPDX-License-Identifier: Apache-2.0
// Shape enumeration: knobs -> TP per pool -> per-pool and mixed replica kinds -> balanced shapes.
//
// Two families of replicas are combined (Metis, ATC'24, and Sailor, 2025, search the same two):
//   per-pool kinds: every copy a pipeline on one pool (DP across GPU types, unequal micro-batches);
//   mixed kinds:    every copy a pipeline crossing pools in some order (PP across GPU types,
//                   unequal layers), with the units it leaves over used by per-pool kinds.
// Partitions are memoised per (pool, TP, pipeline depth, copies); a TP assignment whose upper
// bound (all GPUs busy, no bubble, no communication) cannot beat the current N-th best is pruned.
// This file runs the branches (tasks, threads, bounds, deadline); planner_kinds.cpp searches
// the replica kinds of one branch.
#include "planner_search.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <iterator>
#include <limits>
#include <mutex>
#include <numeric>
#include <system_error>
#include <thread>

namespace hetsim::models::planner {

namespace {

/// The TP degrees every pool in use allows (a pool left out has the one choice 0), in the order
/// of the first pool in use; {0} when no pool is in use.
std::vector<int> common_tp_degrees(const std::vector<std::vector<int>>& choices) {
  const std::vector<int> unused{0};
  const auto first = std::find_if(choices.begin(), choices.end(), [&](const std::vector<int>& c) { return c != unused; });
  if (first == choices.end()) return unused;
  std::vector<int> out;
  for (const int t : *first)
    if (std::all_of(choices.begin(), choices.end(), [&](const std::vector<int>& c) {
          return c == unused || std::find(c.begin(), c.end(), t) != c.end();
        }))
      out.push_back(t);
  return out;
}

}  // namespace

ShapeSearch::ShapeSearch(const Cluster& cluster, const Workload& workload, const PlannerOptions& options,
                         UnitCostTable& costs)
    : cluster_(cluster), workload_(workload), options_(options), costs_(costs), pools_(make_pools(cluster)) {}

int ShapeSearch::unit_gpu(int pool, int tp, int unit) const {
  const Pool& p = pools_[pool];
  const int index = unit * tp;
  return cluster_.nodes[p.nodes[index / p.gpus_per_node]].first_gpu + index % p.gpus_per_node;
}

bool ShapeSearch::past_deadline() {
  stopped = stopped || std::chrono::steady_clock::now() > deadline_;
  return stopped;
}

bool ShapeSearch::out_of_time() { return stopped || ((++clock_reads_ & 63u) == 0 && past_deadline()); }

void ShapeSearch::start_clock() {
  stopped = false;
  truncated = false;
  deadline_ = search_deadline(options_.time_limit_s, std::chrono::steady_clock::now());
}

bool ShapeSearch::better_task(const Task& a, const Task& b) {
  return a.bound > b.bound || (a.bound == b.bound && a.order < b.order);
}

void ShapeSearch::search(const std::vector<int>& pool_nodes, bool uniform,
                         const std::function<void(const Shape&)>& sink, const std::function<double()>& bound,
                         BoundUnit unit) {
  // Branch and bound: every (knobs, TP per pool) gets an upper bound on tokens/s; they are
  // searched best bound first, so the N-th best found rises fast and the rest is cut.
  ++search_calls_;
  stop_at_ = std::numeric_limits<size_t>::max();
  bound_in_tokens_ = unit == BoundUnit::kTokens;
  std::vector<Task> tasks;
  std::size_t order = 0;
  double dropped_bound = -std::numeric_limits<double>::infinity();  // the best bound of a branch not kept
  const ModelSpec& m = workload_.model;
  const int n = static_cast<int>(pools_.size());
  std::vector<std::vector<int>> choices(n);
  for (int p = 0; p < n; ++p) {
    if (pool_nodes[p] == 0) {
      choices[p] = {0};
      continue;
    }
    choices[p] = valid_tp_degrees(m, pools_[p].gpus_per_node, options_.tp_degrees);
    if (choices[p].empty()) return;  // a pool we must use cannot host any TP group
  }
  for (int mb : options_.micro_batches) {
    if (mb < 1 || workload_.training.global_batch % mb != 0) continue;
    for (Recompute rc : options_.recomputes) {
      for (int v : options_.interleaves) {
        if (v < 1 || m.layers % v != 0) continue;
        for (int z : shape_search_zero_stages(options_.zero_stages)) {
          Knobs k;
          k.micro_batch = mb;
          k.recompute = rc;
          k.interleave = v;
          k.zero = z;
          k.sequence_parallel = options_.sequence_parallel;
          k.tp_comm_overlap = options_.tp_comm_overlap;
          k.overlap_p2p_comm = options_.overlap_p2p_comm && v > 1;
          std::vector<int> tp(n, 0);
          const auto keep = [&] {
            Knobs shape_knobs = k;  // the bounds above keep sequence parallelism: an upper bound either way
            shape_knobs.sequence_parallel = k.sequence_parallel && sequence_parallel_fits(m, tp);
            dropped_bound = std::max(dropped_bound, keep_task(tasks, Task{shape_knobs, tp, branch_bound(shape_knobs, pool_nodes, tp), order++}));
          };
          if (uniform) {
            // One TP degree for every pool used: the degrees all of them allow, in the order the
            // product below would meet them (it enumerated 4^pools branches to keep 4; 12 pools
            // took seconds, 24 ran to the time limit).
            for (const int t : common_tp_degrees(choices)) {
              if (stopped || out_of_time()) break;
              for (int p = 0; p < n; ++p) tp[p] = choices[p] == std::vector<int>{0} ? 0 : t;
              keep();
            }
            continue;
          }
          // Once kMaxTasks branches are kept, a partial assignment whose best completion cannot beat
          // the worst kept is dropped whole, as keep_task would drop each of its leaves one by one
          // (4^pools per knob set: 17M for 12 pools, which ran every search to its time limit).
          // The throughput bound is a sum of per-pool terms, so the best completion is the sum of
          // each remaining pool's best term; the cost objective's bound is not such a sum.
          const bool additive = bound_in_tokens_ || options_.objective != PlanObjective::kCost;
          const double per_micro_batch_s = static_cast<double>(k.micro_batch) * m.seq_len;  // rate -> tokens/s
          std::vector<std::vector<double>> term(n);
          std::vector<double> best_rest(n + 1, 0.0), partial(n + 1, 0.0);
          if (additive)
            for (int p = n - 1; p >= 0; --p) {
              double best = -std::numeric_limits<double>::infinity();
              for (const int t : choices[p]) best = std::max(best, term[p].emplace_back(pool_rate_bound(k, pool_nodes, p, t)));
              best_rest[p] = best_rest[p + 1] + best;
            }
          std::function<void(int)> rec = [&](int p) {
            if (stopped) return;
            if (additive && tasks.size() == kMaxTasks) {
              const double best_leaf = (partial[p] + best_rest[p]) * per_micro_batch_s;
              // A margin for the summation order: only subtrees every leaf of which keep_task rejects.
              if (best_leaf < tasks.front().bound * (1 - 1e-9)) {
                if (best_leaf > 0) dropped_bound = std::max(dropped_bound, best_leaf);
                return;
              }
            }
            if (p == n) {
              if (out_of_time()) return;  // enumerating alone can outlast the limit (many node types)
              keep();
              return;
            }
            for (std::size_t i = 0; i < choices[p].size(); ++i) {
              tp[p] = choices[p][i];
              if (additive) partial[p + 1] = partial[p] + term[p][i];
              rec(p + 1);
            }
          };
          rec(0);
        }
      }
    }
  }
  std::sort(tasks.begin(), tasks.end(), better_task);
  const int threads = search_threads(options_);
  if (threads > 1 && tasks.size() > 1) {
    // The best-bound task alone first: it sets the bound that prunes most of the others, which
    // threads starting together would not yet see.
    run_tasks(tasks, 0, 1, pool_nodes, uniform, sink, bound);
    if (!past_deadline()) run_tasks_threaded(threads, tasks, 1, pool_nodes, uniform, sink, bound);
  } else {
    run_tasks(tasks, 0, tasks.size(), pool_nodes, uniform, sink, bound);
  }
  // A kept branch cut by its bound cuts every dropped one too (their bounds are lower); when
  // none was cut, a dropped branch might still have beaten the N-th best.
  const bool cut = stop_at_ < tasks.size();
  if (!stopped && !cut && std::isfinite(dropped_bound) && dropped_bound >= bound()) truncated = true;
}

double ShapeSearch::keep_task(std::vector<Task>& tasks, Task t) {
  if (std::isnan(t.bound)) t.bound = -std::numeric_limits<double>::infinity();  // a strict order for the heap
  if (tasks.size() < kMaxTasks) {
    tasks.push_back(std::move(t));
    if (tasks.size() == kMaxTasks) std::make_heap(tasks.begin(), tasks.end(), better_task);  // worst on top
    return -std::numeric_limits<double>::infinity();
  }
  // Full: `t` (enumerated last, so the later of equal bounds) replaces the worst kept if better.
  if (!(t.bound > tasks.front().bound)) return t.bound;
  std::pop_heap(tasks.begin(), tasks.end(), better_task);
  const double dropped = tasks.back().bound;
  tasks.back() = std::move(t);
  std::push_heap(tasks.begin(), tasks.end(), better_task);
  return dropped;
}

void ShapeSearch::run_tasks(const std::vector<Task>& tasks, size_t begin, size_t end, const std::vector<int>& pool_nodes,
                            bool uniform, const std::function<void(const Shape&)>& sink,
                            const std::function<double()>& bound) {
  for (size_t i = begin; i < end; ++i) {
    if (!std::isfinite(tasks[i].bound) || tasks[i].bound < bound()) {
      pruned += static_cast<long>(tasks.size() - i);  // sorted: no later task can do better
      stop_at_ = i;
      break;
    }
    if (past_deadline()) return;
    task_index_ = static_cast<long>(i);
    shapes_in_task_ = 0;
    search_tp(tasks[i].knobs, pool_nodes, tasks[i].tp, uniform, sink, bound);
  }
}

void ShapeSearch::run_tasks_threaded(int threads, const std::vector<Task>& tasks, size_t begin,
                                     const std::vector<int>& pool_nodes, bool uniform,
                                     const std::function<void(const Shape&)>& sink,
                                     const std::function<double()>& bound) {
  if (stop_at_ < tasks.size() || begin >= tasks.size()) return;  // the tasks before cut the rest
  threads = std::min<int>(threads, static_cast<int>(tasks.size() - begin));
  // Tasks are handed out best bound first from one counter. The collectors behind `sink` and
  // `bound` are shared: offers go through a mutex, and the bound the workers read is a copy
  // refreshed after every offer (only offers raise it), so the hot path takes no lock.
  while (static_cast<int>(helpers_.size()) < threads - 1) {
    helpers_.push_back(std::make_unique<ShapeSearch>(cluster_, workload_, options_, costs_));
  }
  std::mutex offer_mutex;
  std::atomic<double> shared_bound{bound()};
  std::atomic<size_t> next_task{begin};
  std::atomic<bool> cut{false};  // a task's bound fell below the N-th best: so do all later ones
  std::atomic<long> cut_tasks{0};
  const std::function<void(const Shape&)> locked_sink = [&](const Shape& s) {
    std::lock_guard<std::mutex> lock(offer_mutex);
    sink(s);
    shared_bound.store(bound(), std::memory_order_relaxed);
  };
  const std::function<double()> read_bound = [&] { return shared_bound.load(std::memory_order_relaxed); };
  for (int t = 0; t + 1 < threads; ++t) {  // before any thread starts: they read only their own
    ShapeSearch& h = *helpers_[t];
    h.search_calls_ = search_calls_;
    h.bound_in_tokens_ = bound_in_tokens_;
    h.deadline_ = deadline_;
    h.stopped = false;
  }
  const auto work = [&](ShapeSearch& w) {
    for (size_t i = next_task.fetch_add(1); i < tasks.size(); i = next_task.fetch_add(1)) {
      if (cut.load() || !std::isfinite(tasks[i].bound) || tasks[i].bound < read_bound()) {
        cut.store(true);
        cut_tasks.fetch_add(1);
        continue;
      }
      if (w.past_deadline()) break;
      w.task_index_ = static_cast<long>(i);
      w.shapes_in_task_ = 0;
      w.search_tp(tasks[i].knobs, pool_nodes, tasks[i].tp, uniform, locked_sink, read_bound);
    }
  };
  // An exception in a worker (std::bad_alloc near an address-space limit) ended the process in
  // std::terminate: the first one is kept, the others stop at their next task, and it is rethrown
  // here once every thread is joined, so the verb reports it like any other error.
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto guarded_work = [&](ShapeSearch& w) {
    try {
      work(w);
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      cut.store(true);
    }
  };
  std::vector<std::thread> running;
  running.reserve(static_cast<std::size_t>(std::max(0, threads - 1)));
  for (int t = 0; t + 1 < threads; ++t) {
    // A thread the process may not start (a pids or address-space limit; `plan --threads 1024`
    // aborted in 2 GB) is not needed: the others take its tasks and find the same plans.
    try {
      running.emplace_back(guarded_work, std::ref(*helpers_[t]));
    } catch (const std::system_error&) {
      break;
    }
  }
  threads_started = std::max(threads_started, 1 + static_cast<int>(running.size()));
  guarded_work(*this);
  for (std::thread& t : running) t.join();
  if (failure) std::rethrow_exception(failure);
  for (int t = 0; t + 1 < threads; ++t) {
    ShapeSearch& h = *helpers_[t];
    evaluated += h.evaluated;
    pruned += h.pruned;
    stopped = stopped || h.stopped;
    h.evaluated = h.pruned = 0;
  }
  pruned += cut_tasks.load();
  if (cut.load()) stop_at_ = std::min(stop_at_, tasks.size() - 1);  // some task was cut (which one is not kept)
}

void ShapeSearch::emit(Shape& s, const std::function<void(const Shape&)>& sink) {
  s.found_at = {search_calls_, task_index_, shapes_in_task_++};
  sink(s);
}

double ShapeSearch::upper_bound_tokens_per_s(const Knobs& knobs, const std::vector<int>& pool_nodes,
                                             const std::vector<int>& tp) {
  // All units busy on layers only: sum over pools of units / (L * layer_s) micro-batches per second.
  double rate = 0;
  for (size_t p = 0; p < pools_.size(); ++p) {
    if (tp[p] == 0) continue;
    const UnitCost& u = costs_.get(pools_[p].node_type, tp[p], knobs);
    if (!u.ok) return 0;  // a pool the task must use cannot run the model
    const int units = pool_nodes[p] * pools_[p].gpus_per_node / tp[p];
    rate += units / (workload_.model.layers * u.layer_s);
  }
  return rate * knobs.micro_batch * workload_.model.seq_len;
}

double ShapeSearch::pool_rate_bound(const Knobs& knobs, const std::vector<int>& pool_nodes, int p, int t) {
  if (t == 0) return 0;
  const UnitCost& u = costs_.get(pools_[p].node_type, t, knobs);
  if (!u.ok) return -std::numeric_limits<double>::infinity();
  const int units = pool_nodes[p] * pools_[p].gpus_per_node / t;
  return units / (workload_.model.layers * u.layer_s);
}

double ShapeSearch::branch_bound(const Knobs& knobs, const std::vector<int>& pool_nodes, const std::vector<int>& tp) {
  if (!bound_in_tokens_) return upper_bound_score(knobs, pool_nodes, tp);
  const double tokens = upper_bound_tokens_per_s(knobs, pool_nodes, tp);
  return tokens > 0 ? tokens : -std::numeric_limits<double>::infinity();
}

double ShapeSearch::upper_bound_score(const Knobs& knobs, const std::vector<int>& pool_nodes,
                                      const std::vector<int>& tp) {
  const double tokens = upper_bound_tokens_per_s(knobs, pool_nodes, tp);
  if (tokens <= 0) return -std::numeric_limits<double>::infinity();
  if (options_.objective != PlanObjective::kCost) return tokens;
  // Dollars per token of any mix >= the best dollars per token-rate bound of one node of a pool
  // (price and rate bound both add up over nodes).
  double best = std::numeric_limits<double>::infinity();
  for (size_t p = 0; p < pools_.size(); ++p) {
    if (tp[p] == 0) continue;
    std::vector<int> one(pools_.size(), 0), tp_one(pools_.size(), 0);
    one[p] = 1;
    tp_one[p] = tp[p];
    const NodeType& t = cluster_.node_types[pools_[p].node_type];
    const double price = t.price_per_hour_at(options_.spot);
    best = std::min(best, price / upper_bound_tokens_per_s(knobs, one, tp_one));
  }
  return -best;
}

}  // namespace hetsim::models::planner
