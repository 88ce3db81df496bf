// SPDX-License-Identifier: Apache-2.0
// Where everything of a Plan lives: rank <-> (replica, stage, TP rank), the model chunks of each
// stage (virtual pipeline stages when interleaved), the communication groups and p2p peers.
// Every rank builds the same RankLayout from the same Plan, so group ids agree without messages.
#pragma once
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "dp_segments.hpp"
#include "plan.hpp"
#include "workload.hpp"

namespace hetsim::exec {

/// Ranks are numbered replica by replica, stage by stage, TP rank fastest.
struct RankPlace {
  int replica = 0;
  int stage = 0;
  int tp_rank = 0;
  int tp = 1;
  int gpu = 0;  ///< global GPU index in the cluster
};

/// A contiguous run of the model held by one stage: model chunk j = chunk * pp + stage
/// (Narayanan et al. SC'21, section 2.2: stage s holds chunks s, s+pp, s+2pp, ...).
struct ChunkPlace {
  int model_chunk = 0;
  int first_layer = 0;
  int layers = 0;
  bool has_embedding = false;  ///< model chunk 0
  bool has_head = false;       ///< the last model chunk: final norm, LM head, loss
};

/// Model "units" whose parameters are synchronised together: 0 = embedding,
/// 1..L = transformer layers, L+1 = final norm (+ untied LM head), L+2 = tied LM-head copy;
/// each at a (stage, chunk) of its replica.
using UnitPlace = models::PartPlace;

class RankLayout {
 public:
  /// Throws std::invalid_argument with a clear reason when the plan cannot be executed.
  RankLayout(const models::Plan& plan, const models::ModelSpec& model);

  int get_world_size() const { return static_cast<int>(places_.size()); }
  const RankPlace& place(int rank) const { return places_.at(rank); }
  int rank_of(int replica, int stage, int tp_rank) const;
  /// Pipeline depth of a replica (replicas may differ).
  int replica_pp(int replica) const { return static_cast<int>(tp_.at(replica).size()); }
  int get_dp() const { return static_cast<int>(micro_batches_.size()); }
  int get_interleave() const { return interleave_; }
  int get_zero() const { return zero_; }
  /// Model chunks (pp * interleave) of the deepest replica: the p2p tags cover them all.
  int get_max_model_chunks() const { return max_pp_ * interleave_; }
  int stage_tp(int replica, int stage) const;
  const std::vector<ChunkPlace>& chunks(int replica, int stage) const { return chunks_[replica][stage]; }
  /// Where replica r holds unit u.
  const UnitPlace& unit_place(int replica, int unit) const { return units_[replica][unit]; }
  int get_unit_count() const { return unit_count_; }
  /// Tied embeddings: the replica's last stage keeps an LM-head copy of the word embedding (when
  /// it has several stages, or beside a replica that has; map_units says why).
  bool has_tied_copy(int replica) const { return tied_copy_.at(replica); }

  /// Model chunk j of a replica lives on its stage j % pp (as its chunk j / pp).
  int stage_of_model_chunk(int replica, int j) const { return j % replica_pp(replica); }

  /// Point-to-point between adjacent model chunks with (possibly) different TP sizes: the
  /// receiving TP rank d gets its copy from source TP rank d % tp_src.
  std::vector<int> p2p_destinations(int replica, int src_stage, int src_tp_rank, int dst_stage) const;
  int p2p_source(int replica, int src_stage, int dst_tp_rank) const;
  static int activation_tag(int to_model_chunk) { return 2 * to_model_chunk; }
  static int gradient_tag(int to_model_chunk) { return 2 * to_model_chunk + 1; }
  /// The p2p tag that gathers tensors on rank 0 (after the pipeline streams' tags).
  int collect_tag() const { return 2 * get_max_model_chunks(); }
  /// Point-to-point tags the run uses: 0..p2p_tag_count()-1 (the collectives count down from
  /// the communicator's tag bound, comm/communicator.hpp collective_tag).
  int p2p_tag_count() const { return collect_tag() + 1; }
  int get_group_count() const { return static_cast<int>(groups_.size()); }

  const Group& world() const { return groups_[0]; }
  const Group& tp_group(int replica, int stage) const { return groups_[tp_group_ids_[replica][stage]]; }
  /// Ranks that hold shard `shard` of unit u's TP-sharded gradients, one per replica holding the
  /// unit (the DP group of that shard). Shards: dp_shards(u) = lcm of those replicas' TP degrees
  /// at the unit, so a rank of TP degree tp holds dp_shards(u) / tp of them (shard = tp_rank
  /// when equal).
  const Group& dp_group(int unit, int shard) const;
  int dp_shards(int unit) const;
  /// First-stage and last-stage TP ranks of a replica that share the tied word embedding (a
  /// replica with has_tied_copy and several stages only).
  const Group& tie_group(int replica) const;

  /// Sequences of the global batch before replica r's first micro-batch.
  int first_sequence(int replica, int micro_batch_size) const;
  int micro_batches(int replica) const { return micro_batches_[replica]; }
  int global_micro_batches() const;

 private:
  /// Checks the plan against the model and places its ranks (replica, stage, TP rank) and each
  /// stage's model chunks (constructor, step 1).
  void place_ranks(const models::Plan& plan, const models::ModelSpec& model);
  /// Which (stage, chunk) of each replica holds each unit: embedding, layers, head, tied copy (step 2).
  void map_units(const models::Plan& plan, const models::ModelSpec& model);
  /// World, TP, DP (per unit and TP rank) and tied-embedding groups (step 3).
  void add_groups();
  int add_group(std::vector<int> ranks);
  int max_pp_ = 1;
  int interleave_ = 1;
  int zero_ = 0;
  int unit_count_ = 0;
  std::vector<bool> tied_copy_;                         // [replica]
  std::vector<RankPlace> places_;
  std::vector<std::vector<int>> first_rank_;            // [replica][stage]
  std::vector<std::vector<int>> tp_;                    // [replica][stage]
  std::vector<std::vector<std::vector<ChunkPlace>>> chunks_;
  std::vector<std::vector<UnitPlace>> units_;           // [replica][unit]
  std::vector<int> micro_batches_;
  std::vector<Group> groups_;
  std::vector<std::vector<int>> tp_group_ids_;
  std::vector<std::vector<int>> dp_group_ids_;          // [unit][shard]
  std::vector<int> tie_group_ids_;                      // [replica], -1: none
};

}  // namespace hetsim::exec
