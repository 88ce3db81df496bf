// SPDX-License-Identifier: Apache-2.0
// A found shape: the N best kept (ShapeCollector), its step time and price (finish), and what it
// becomes for the user (materialize: the concrete Plan; describe: the one-line shape).
#include <algorithm>
#include <cmath>
#include <limits>

#include "planner_search.hpp"
#include "planner_shape_text.hpp"
#include "preemption.hpp"

namespace hetsim::models::planner {

void ShapeCollector::offer(const Shape& shape) {
  const Rank rank{score_(shape), shape.tokens_per_s, shape.found_at};
  if (!std::isfinite(rank.score)) return;
  if (static_cast<int>(best_.size()) >= capacity_ && !(best_.begin()->first < rank)) return;
  best_.emplace(rank, shape);
  if (static_cast<int>(best_.size()) > capacity_) best_.erase(best_.begin());
}

double ShapeCollector::threshold() const {
  if (static_cast<int>(best_.size()) < capacity_) return -std::numeric_limits<double>::infinity();
  return best_.begin()->first.score;
}

std::vector<Shape> ShapeCollector::take_sorted() const {
  std::vector<Shape> out;
  for (auto it = best_.rbegin(); it != best_.rend(); ++it) out.push_back(it->second);
  return out;
}

double ShapeSearch::tied_embedding_s(const Shape& s, const std::vector<int>& cursor) {
  if (!workload_.model.tied_embeddings) return 0;
  const size_t pools = pools_.size();
  // Replicas whose pair crosses zones share the WAN link (by bytes, as the predictor does).
  const auto crosses = [&](const Kind& kind) {
    return kind.layers.size() > 1 && pools_[kind.blocks.front().pool].zone != pools_[kind.blocks.back().pool].zone;
  };
  int crossing_replicas = 0;
  for (const Kind& kind : s.kinds)
    if (crosses(kind)) crossing_replicas += kind.copies;
  double worst = 0;
  for (size_t k = 0; k < s.kinds.size(); ++k) {
    const Kind& kind = s.kinds[k];
    if (kind.layers.size() < 2) continue;
    const int p0 = kind.blocks.front().pool, pl = kind.blocks.back().pool;
    const int tp0 = s.pool_tp[p0], tpl = s.pool_tp[pl];
    const int wan = crosses(kind) ? crossing_replicas : 0;
    // Every GPU of the first and last stages is in a pair: a node holds up to `copies` of them.
    const int senders = std::max(std::min(kind.copies * tp0, pools_[p0].gpus_per_node),
                                 std::min(kind.copies * tpl, pools_[pl].gpus_per_node));
    const BoundaryKey key{p0, tp0, pl, tpl, wan, senders, 0, 0.0};
    auto [it, fresh] = embedding_memo_.try_emplace(key);
    if (fresh) {
      const int first = unit_gpu(p0, tp0, cursor[k * pools + p0]);
      const int last = unit_gpu(pl, tpl, cursor[k * pools + pl] + (kind.blocks.back().stages - 1) * kind.copies);
      it->second = tied_embedding_estimate_s(cluster_, workload_, first, tp0, last, tpl, senders, wan);
    }
    worst = std::max(worst, it->second);
  }
  return worst;
}

bool ShapeSearch::finish(Shape& s, double bound) {
  ++evaluated;
  const int v = s.knobs.interleave;
  timing_scratch_.clear();
  int replicas = 0;
  for (const Kind& k : s.kinds) {
    timing_scratch_.push_back({k.timing, k.copies});
    replicas += k.copies;
  }
  const int total_mb = workload_.training.global_batch / s.knobs.micro_batch;
  const std::vector<GroupMicroBatches> micro = balance_micro_batches(timing_scratch_, total_mb, v, s.uniform);
  if (micro.empty()) {
    ++pruned;
    return false;
  }
  // Megatron-LM's interleaved schedule runs micro-batches in groups of the pipeline depth: a
  // replica's count must be a multiple of its stages (check_plan), which the balance may miss.
  // Every replica needs a pipeline of two or more stages to interleave chunks (check_plan).
  if (v > 1)
    for (size_t k = 0; k < s.kinds.size(); ++k) {
      const int stages = static_cast<int>(s.kinds[k].layers.size());
      const GroupMicroBatches& g = micro[k];
      if (stages < 2 || (g.first_copies > 0 && g.first % stages != 0) ||
          (g.first_copies < s.kinds[k].copies && g.rest % stages != 0)) {
        ++pruned;
        return false;
      }
    }
  // The slowest replica: per kind the copies with the larger count (first kind on ties).
  double slowest = 0;
  size_t slowest_kind = 0;
  for (size_t k = 0; k < s.kinds.size(); ++k) {
    Kind& kind = s.kinds[k];
    kind.micro = micro[k];
    const int most = kind.micro.first_copies > 0 ? std::max(kind.micro.first, kind.micro.rest) : kind.micro.rest;
    const double t = replica_time_s(kind.timing, most, v);
    if (t > slowest) slowest = t, slowest_kind = k;
  }
  if (tokens_per_step(workload_) / slowest < bound) {  // the gradient sync can only add time
    ++pruned;
    return false;
  }
  // Gradient sync per stage index over the replicas that have that stage, with the GPUs
  // materialize() gives them: copy c of a kind's stage j of a block on pool p is unit
  // cursor[p] + j*copies + c, where cursor[p] counts the units the kinds before it took.
  const size_t pools = pools_.size();
  std::vector<int>& cursor = cursor_scratch_;
  cursor.assign(pools * (s.kinds.size() + 1), 0);  // row k: the cursors before kind k
  size_t max_stages = 0;
  s.headroom = 1;
  for (size_t k = 0; k < s.kinds.size(); ++k) {
    const Kind& kind = s.kinds[k];
    std::copy_n(cursor.begin() + k * pools, pools, cursor.begin() + (k + 1) * pools);
    for (const KindBlock& b : kind.blocks) cursor[(k + 1) * pools + b.pool] += b.stages * kind.copies;
    max_stages = std::max(max_stages, kind.layers.size());
    s.headroom = std::min(s.headroom, kind.headroom);
  }
  double sync_s = 0;
  if (replicas > 1) {
    const Kind& slow = s.kinds[slowest_kind];
    double before_s = 0;  // the slowest kind's first forwards before the stage (a third of each stage_s)
    for (size_t stage = 0; stage < max_stages; ++stage) {
      // The group is a run of `copies` consecutive units of one pool per kind: those runs (and
      // the layers they hold) key the all-reduce estimate, which orders and variants of a
      // branch share (sync_memo_, kept for one branch).
      std::vector<int>& key = sync_key_scratch_;
      key.assign({s.knobs.zero, stage == 0 ? 1 : 0});
      for (size_t k = 0; k < s.kinds.size(); ++k) {
        const Kind& kind = s.kinds[k];
        if (stage >= kind.layers.size()) continue;
        size_t j = stage;  // position inside its block
        size_t b = 0;
        while (j >= static_cast<size_t>(kind.blocks[b].stages)) j -= kind.blocks[b++].stages;
        const int pool = kind.blocks[b].pool;
        key.insert(key.end(), {pool, s.pool_tp[pool], cursor[k * pools + pool] + static_cast<int>(j) * kind.copies,
                               kind.copies, kind.layers[stage]});
      }
      auto [it, fresh] = sync_memo_.try_emplace(key);
      if (fresh) {
        member_scratch_.clear();
        double bytes = 0;
        for (size_t i = 2; i < key.size(); i += 5) {
          const int pool = key[i], tp = key[i + 1], first_unit = key[i + 2], copies = key[i + 3];
          for (int c = 0; c < copies; ++c) member_scratch_.push_back(unit_gpu(pool, tp, first_unit + c));
          bytes = std::max(bytes, stage_grad_bytes(workload_, key[i + 4], tp, stage == 0));
        }
        // The search's plans overlap the sync (materialize sets overlap_grad_sync).
        it->second = sync_estimate(cluster_, member_scratch_, bytes, s.knobs.zero, workload_.training, true);
      }
      const double stage_s = stage < slow.stage_s.size() ? slow.stage_s[stage] : 0.0;
      sync_s = std::max(sync_s, exposed_sync_s(it->second, stage_s, before_s));
      if (s.knobs.interleave <= 1) before_s += stage_s / 3.0;  // interleaved: the gather follows the step
    }
  }
  // The tied embedding's pairs reduce after their stages' DP sync: at least that long exposed.
  s.step_s = slowest + std::max(sync_s, tied_embedding_s(s, cursor));
  if (!std::isfinite(s.step_s) || s.step_s <= 0) {
    ++pruned;
    return false;
  }
  s.tokens_per_s = tokens_per_step(workload_) / s.step_s;
  s.price_per_hour = 0;
  const int* used = cursor.data() + s.kinds.size() * pools;  // units each pool gave to the shape
  thread_local std::vector<NodesOfType> nodes_used;  // reused: the search threads each have one
  nodes_used.clear();
  for (size_t p = 0; p < pools; ++p) {
    if (used[p] == 0) continue;
    const NodeType& t = cluster_.node_types[pools_[p].node_type];
    const int nodes = (used[p] * s.pool_tp[p] + pools_[p].gpus_per_node - 1) / pools_[p].gpus_per_node;
    const double price = t.price_per_hour_at(options_.spot);
    s.price_per_hour += nodes * price;
    if (options_.spot) nodes_used.push_back({pools_[p].node_type, nodes});  // a pool's types share their spot figures
  }
  // At spot prices the shape is worth the tokens its nodes' preemptions leave (preemption.hpp),
  // which is never more than its tokens/s: the search's bounds stay upper bounds.
  if (options_.spot) s.tokens_per_s *= spot_outlook(cluster_, workload_, nodes_used, true, s.step_s).goodput_fraction;
  return true;
}

Plan ShapeSearch::materialize(const Shape& s) const {
  Plan plan;
  plan.micro_batch = s.knobs.micro_batch;
  plan.schedule = s.knobs.interleave > 1 ? Schedule::kInterleaved : Schedule::k1f1b;
  plan.interleave = s.knobs.interleave;
  plan.recompute = s.knobs.recompute;
  plan.sequence_parallel = s.knobs.sequence_parallel;
  plan.zero = s.knobs.zero;
  std::vector<int> cursor(pools_.size(), 0);
  for (const Kind& k : s.kinds) {
    std::vector<Replica> copies(k.copies);
    int stage = 0;
    for (const KindBlock& b : k.blocks) {
      const int tp = s.pool_tp[b.pool];
      for (int j = 0; j < b.stages; ++j, ++stage) {
        for (int c = 0; c < k.copies; ++c) {
          Stage st;
          st.layers = k.layers[stage];
          const int first = unit_gpu(b.pool, tp, cursor[b.pool] + j * k.copies + c);
          for (int t = 0; t < tp; ++t) st.gpus.push_back(first + t);
          copies[c].stages.push_back(std::move(st));
        }
      }
      cursor[b.pool] += b.stages * k.copies;
    }
    for (int c = 0; c < k.copies; ++c) {
      copies[c].micro_batches = k.micro.of_copy(c);
      plan.replicas.push_back(std::move(copies[c]));
    }
  }
  if (plan.dp() == 1) plan.zero = 0;  // nothing to shard over
  plan.overlap_grad_sync = plan.dp() > 1;  // nothing to overlap (an emitted plan would say so in a note)
  if (plan.zero >= 2) plan.sharded_collectives = options_.sharded_collectives;
  bool any_tp = false;
  for (const Replica& r : plan.replicas) {
    for (const Stage& st : r.stages) any_tp = any_tp || st.tp() > 1;
  }
  plan.sequence_parallel = plan.sequence_parallel && any_tp;  // SP splits over TP ranks only
  plan.tp_comm_overlap = s.knobs.tp_comm_overlap && plan.sequence_parallel;
  plan.overlap_p2p_comm = s.knobs.overlap_p2p_comm && plan.schedule == Schedule::kInterleaved;
  plan.name = "planned";
  return plan;
}

std::string ShapeSearch::describe(const Shape& s) const {
  std::string out;
  for (const Kind& k : s.kinds) {
    if (!out.empty()) out += " + ";
    out += std::to_string(k.copies) + "x[";
    int stage = 0;
    for (size_t b = 0; b < k.blocks.size(); ++b) {
      const KindBlock& blk = k.blocks[b];
      if (b > 0) out += " | ";
      out += cluster_.node_types[pools_[blk.pool].node_type].name + " tp" + std::to_string(s.pool_tp[blk.pool]) +
             " x" + std::to_string(blk.stages) + " L";
      append_layer_list(out, k.layers.data() + stage, static_cast<std::size_t>(blk.stages));
      stage += blk.stages;
    }
    out += "] m" + std::to_string(k.micro.of_copy(0));
    if (k.micro.of_copy(k.copies - 1) != k.micro.of_copy(0)) out += "-" + std::to_string(k.micro.of_copy(k.copies - 1));
  }
  return out;
}

}  // namespace hetsim::models::planner
