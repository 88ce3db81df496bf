// SPDX-License-Identifier: Apache-2.0
// RankLayout: ranks, chunks, units and groups of a Plan.
#include "runner/rank_layout.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace hetsim::exec {

RankLayout::RankLayout(const models::Plan& plan, const models::ModelSpec& model) {
  if (plan.replicas.empty()) throw std::invalid_argument("plan has no replicas");
  for (const auto& rep : plan.replicas) max_pp_ = std::max(max_pp_, static_cast<int>(rep.stages.size()));
  interleave_ = plan.schedule == models::Schedule::kInterleaved ? std::max(1, plan.interleave) : 1;
  if (plan.zero < 0 || plan.zero > 3)
    throw std::invalid_argument("exec: ZeRO stage " + std::to_string(plan.zero) + " is not supported (0 to 3)");
  zero_ = plan.zero;
  place_ranks(plan, model);
  // ZeRO-3's collectives pair up across replicas (models/plan.hpp zero3_asymmetry).
  if (std::string why = models::zero3_asymmetry(plan); !why.empty()) throw std::invalid_argument(why);
  map_units(plan, model);
  add_groups();
}

void RankLayout::place_ranks(const models::Plan& plan, const models::ModelSpec& model) {
  using std::to_string;
  const int layers_total = model.layers;
  const int kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
  for (std::size_t r = 0; r < plan.replicas.size(); ++r) {
    const auto& rep = plan.replicas[r];
    const int pp = static_cast<int>(rep.stages.size());
    if (pp < 1) throw std::invalid_argument("replicas[" + to_string(r) + "] has no stages");
    if (rep.micro_batches < 1) throw std::invalid_argument("replicas[" + to_string(r) + "].micro_batches must be >= 1");
    int layer_sum = 0;
    first_rank_.emplace_back();
    tp_.emplace_back();
    for (int s = 0; s < pp; ++s) {
      const auto& st = rep.stages[s];
      const int tp = st.tp();
      if (tp < 1) throw std::invalid_argument("replicas[" + to_string(r) + "].stages[" + to_string(s) + "] has no GPUs");
      // The engine splits every head group, KV ones included, over the TP ranks (no KV head
      // replication): each figure is named with its value, as check_plan names the heads.
      for (const auto& [field, value] : {std::pair<const char*, int>{"model.heads", model.heads},
                                         std::pair<const char*, int>{"model.kv_heads", kv_heads},
                                         std::pair<const char*, int>{"model.ffn_hidden", model.ffn_hidden}})
        if (value % tp != 0)
          throw std::invalid_argument("replicas[" + to_string(r) + "].stages[" + to_string(s) + "]: tp " + to_string(tp) +
                                      " does not divide " + field + " (" + to_string(value) +
                                      "; expected a TP degree that divides heads, kv_heads and ffn_hidden)");
      if (plan.sequence_parallel && tp > 1 && (static_cast<long>(plan.micro_batch) * model.seq_len) % tp != 0) {
        // Checked here, before any rank starts, so the run is refused rather than failing a rank.
        throw std::invalid_argument("replicas[" + to_string(r) + "].stages[" + to_string(s) +
                                    "]: sequence parallelism needs micro_batch * seq_len (" +
                                    to_string(static_cast<long>(plan.micro_batch) * model.seq_len) +
                                    ") divisible by tp (" + to_string(tp) + ")");
      }
      first_rank_[r].push_back(static_cast<int>(places_.size()));
      tp_[r].push_back(tp);
      for (int t = 0; t < tp; ++t) places_.push_back({static_cast<int>(r), s, t, tp, st.gpus[t]});
      layer_sum += st.layers;
    }
    if (layer_sum != layers_total) {
      throw std::invalid_argument("replicas[" + to_string(r) + "]: stages hold " + to_string(layer_sum) +
                                  " layers, the model has " + to_string(layers_total));
    }
    micro_batches_.push_back(rep.micro_batches);
    if (interleave_ > 1 && rep.micro_batches % pp != 0) {
      throw std::invalid_argument("replicas[" + to_string(r) + "]: interleaved schedule needs micro_batches (" +
                                  to_string(rep.micro_batches) + ") divisible by pp (" + to_string(pp) + ")");
    }
    // Chunks: stage s splits its layers over `interleave` chunks (the first ones take one more);
    // the model order is chunk-major: (c=0: s=0..pp-1), (c=1: s=0..pp-1), ...
    std::vector<std::vector<ChunkPlace>> stage_chunks(pp);
    int next_layer = 0;
    for (int c = 0; c < interleave_; ++c) {
      for (int s = 0; s < pp; ++s) {
        const int l = rep.stages[s].layers;
        ChunkPlace cp;
        cp.model_chunk = c * pp + s;
        cp.layers = l / interleave_ + (c < l % interleave_ ? 1 : 0);
        cp.first_layer = next_layer;
        cp.has_embedding = cp.model_chunk == 0;
        cp.has_head = cp.model_chunk == pp * interleave_ - 1;
        next_layer += cp.layers;
        stage_chunks[s].push_back(cp);
      }
    }
    chunks_.push_back(std::move(stage_chunks));
  }
}

void RankLayout::map_units(const models::Plan& plan, const models::ModelSpec& model) {
  // The cost model groups gradients by the same placement (models/dp_segments.hpp).
  // Tied embeddings: a replica of several stages keeps an LM-head copy of the word embedding on
  // its last stage, whose gradient (the head's part) its DP group sums apart from the
  // embedding's. So that the sums add up, a one-stage replica beside deeper ones keeps such a
  // copy too (on its one stage); alone among one-stage replicas it uses the embedding itself.
  const bool deeper = max_pp_ > 1;
  for (const auto& rep : plan.replicas) tied_copy_.push_back(model.tied_embeddings && (rep.stages.size() > 1 || deeper));
  unit_count_ = model.layers + (model.tied_embeddings && deeper ? 3 : 2);
  for (std::size_t r = 0; r < plan.replicas.size(); ++r) {
    std::vector<UnitPlace> units = models::place_model_parts(plan.replicas[r], interleave_, model.layers);
    if (tied_copy_[r]) units.push_back(units.back());  // the tied LM-head copy lives with the head
    units_.push_back(std::move(units));
  }
}

void RankLayout::add_groups() {
  const std::size_t replicas = chunks_.size();
  // Groups. 0 = world; then TP groups; then DP groups per (unit, shard); then tie groups.
  std::vector<int> all(places_.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  add_group(all);
  for (std::size_t r = 0; r < replicas; ++r) {
    tp_group_ids_.emplace_back();
    for (int s = 0; s < replica_pp(static_cast<int>(r)); ++s) {
      std::vector<int> ranks;
      for (int t = 0; t < tp_[r][s]; ++t) ranks.push_back(first_rank_[r][s] + t);
      tp_group_ids_[r].push_back(add_group(ranks));
    }
  }
  // DP groups per (unit, shard). Replicas may hold a unit at different TP degrees (tp2 beside
  // tp1): its gradients are then cut into T = lcm(TP degrees) shards, and a rank of TP degree tp
  // holds T / tp consecutive ones (its TP rank t holds shards t*T/tp ...), one group per shard.
  // The cost model prices the same groups: both cut and group them with models::GroupShard.
  for (int u = 0; u < unit_count_; ++u) {
    models::GroupShard cut;
    for (std::size_t r = 0; r < replicas; ++r) cut.add(tp_[r][units_[r][u].stage], 0);
    dp_group_ids_.emplace_back();
    for (int t = 0; t < cut.shards; ++t) {
      std::vector<int> ranks;
      for (std::size_t r = 0; r < replicas; ++r) {
        const int tp = tp_[r][units_[r][u].stage];
        ranks.push_back(first_rank_[r][units_[r][u].stage] + cut.member_rank(t, tp));
      }
      dp_group_ids_[u].push_back(add_group(ranks));
    }
  }
  for (std::size_t r = 0; r < replicas; ++r) {
    if (!tied_copy_[r] || replica_pp(static_cast<int>(r)) == 1) {  // (one stage: both copies on each rank)
      tie_group_ids_.push_back(-1);
      continue;
    }
    const int last = replica_pp(static_cast<int>(r)) - 1;
    std::vector<int> ranks;
    for (int t = 0; t < tp_[r][0]; ++t) ranks.push_back(first_rank_[r][0] + t);
    for (int t = 0; t < tp_[r][last]; ++t) ranks.push_back(first_rank_[r][last] + t);
    tie_group_ids_.push_back(add_group(ranks));
  }
}

int RankLayout::add_group(std::vector<int> ranks) {
  // Identical rank lists share one group (and one message stream, used in the same order by all).
  for (const auto& g : groups_) {
    if (g.ranks == ranks) return g.id;
  }
  groups_.push_back({static_cast<int>(groups_.size()), std::move(ranks)});
  return groups_.back().id;
}

int RankLayout::rank_of(int replica, int stage, int tp_rank) const { return first_rank_.at(replica).at(stage) + tp_rank; }
int RankLayout::stage_tp(int replica, int stage) const { return tp_.at(replica).at(stage); }
const Group& RankLayout::tie_group(int replica) const {
  const int id = tie_group_ids_.at(replica);
  if (id < 0) throw std::logic_error("replica " + std::to_string(replica) + " has no tie group (one stage)");
  return groups_[id];
}
const Group& RankLayout::dp_group(int unit, int shard) const { return groups_[dp_group_ids_.at(unit).at(shard)]; }
int RankLayout::dp_shards(int unit) const { return static_cast<int>(dp_group_ids_.at(unit).size()); }

std::vector<int> RankLayout::p2p_destinations(int replica, int src_stage, int src_tp_rank, int dst_stage) const {
  std::vector<int> out;
  const int tp_src = stage_tp(replica, src_stage);
  for (int d = 0; d < stage_tp(replica, dst_stage); ++d) {
    if (d % tp_src == src_tp_rank) out.push_back(rank_of(replica, dst_stage, d));
  }
  return out;
}

int RankLayout::p2p_source(int replica, int src_stage, int dst_tp_rank) const {
  return rank_of(replica, src_stage, dst_tp_rank % stage_tp(replica, src_stage));
}

int RankLayout::first_sequence(int replica, int micro_batch_size) const {
  int seqs = 0;
  for (int r = 0; r < replica; ++r) seqs += micro_batches_[r] * micro_batch_size;
  return seqs;
}

int RankLayout::global_micro_batches() const {
  int m = 0;
  for (int x : micro_batches_) m += x;
  return m;
}

}  // namespace hetsim::exec
