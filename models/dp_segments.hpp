// SPDX-License-Identifier: Apache-2.0
// Which GPUs synchronise which gradients across data-parallel replicas.
//
// Megatron-LM reduces each parameter's gradient among the replicas that hold it (Shoeybi et al.
// 2019; Narayanan et al. SC'21 §2). When every replica splits the model into the same stages,
// that is stage s of every replica. A heterogeneous plan may split replicas differently (a
// replica of fast GPUs in 2 stages of 20 and 20 layers, one of slow GPUs in 3 stages of 10, 15
// and 15): layer 12 is then on stage 0 of the first and stage 1 of the second. A segment is a
// set of model parts (embedding, blocks, final norm and head) held by the same stage of every
// replica; each is one DP group, and a stage in several segments runs their collectives one
// after the other (exec/runner/rank_layout.cpp forms the same groups per unit).
#pragma once
#include <numeric>
#include <vector>

#include "cluster.hpp"
#include "plan.hpp"
#include "workload.hpp"

namespace hetsim::models {

class DpSegments {
 public:
  /// Keeps a pointer to `plan`: no copies of it are made in the aligned case (the predictor's
  /// inner loop), so the plan must outlive this object.
  /// `copy_of` (optional, [replica] -> an earlier replica with the same stages, -1: none) lets
  /// the alignment check skip the predictor's known copies.
  DpSegments(const Plan& plan, const ModelSpec& model, const int* copy_of = nullptr);
  DpSegments(Plan&&, const ModelSpec&, const int* = nullptr) = delete;  // would dangle

  /// Every replica has the same stage boundaries: segment s is stage s of every replica that
  /// has one (replicas of other depths cannot be aligned, so this also needs equal depths).
  bool aligned() const { return aligned_; }
  int count() const { return count_; }
  /// The stage of `replica` holding segment k; -1 when it holds none of it (only when aligned
  /// and the replica is shallower: a segment of a non-aligned plan is on every replica).
  int stage_of(int k, int replica) const {
    if (aligned_) return k < static_cast<int>(plan_->replicas[replica].stages.size()) ? k : -1;
    return stage_[static_cast<std::size_t>(k) * replicas_ + replica];
  }
  /// Parameters per GPU of `replica`'s share of segment k (before ZeRO sharding); not aligned only.
  /// `whole_vocab`: see stage_params.
  double params(int k, int replica, const ModelSpec& model, bool whole_vocab = false) const;
  /// Transformer blocks in segment k (all chunks); not aligned only.
  int layers(int k) const { return parts_[k].layers; }
  /// Where in `replica`'s last backward pass of its stage holding segment k the segment's
  /// gradients are produced, as fractions of the pass: the backward runs the stage's parts from
  /// the head down to the embedding, so a stage's later segments come first, each in proportion
  /// to its parameters (the share the buckets are cut by). {0, 1} when aligned (one segment a
  /// stage) and for interleaved stages (their chunks' parts are not contiguous).
  struct Window {
    double from = 0, to = 1;
  };
  Window backward_window(int k, int replica, const ModelSpec& model) const;

 private:
  struct Parts {
    int layers = 0;
    bool embedding = false, head = false;
  };
  const Plan* plan_;         ///< the plan it was made for (it must outlive this object)
  bool aligned_ = true;
  int count_ = 0;
  int replicas_ = 0;
  std::vector<int> stage_;   ///< [segment * replicas + replica], not aligned only
  std::vector<Parts> parts_; ///< [segment], not aligned only
};

/// The shards of a segment's gradients, one DP group each. Replicas holding the segment at
/// different TP degrees cut it into lcm(degrees) shards (tp2 beside tp1: 2; tp2 beside tp3: 6); a
/// member of TP degree tp holds shards/tp consecutive ones, its TP rank t the shards from
/// t * shards/tp (Megatron-LM's column/row split: TP rank t of tp holds the t-th 1/tp of each
/// matrix). exec cuts and groups them the same way (exec/runner/rank_layout.cpp).
struct GroupShard {
  int max_tp = 0;
  int shards = 0;     ///< lcm of the members' TP degrees
  double params = 0;  ///< per shard: the highest-TP member's parameters per GPU * max_tp / shards
  void add(int tp, double member_params) {
    if (max_tp == 0 || tp > max_tp || (tp == max_tp && member_params < max_tp_params_)) max_tp_params_ = member_params;
    if (tp > max_tp) max_tp = tp;
    shards = shards == 0 ? tp : std::lcm(shards, tp);
    params = max_tp_params_ * max_tp / shards;
  }
  /// The TP rank in group `shard` of a member of TP degree tp.
  int member_rank(int shard, int tp) const { return shard / (shards / tp); }

 private:
  double max_tp_params_ = 0;
};

/// NIC channels of the gradient sync: the data-parallel groups that cross nodes, per GPU and per
/// node. A GPU is a sender in each group it is in that spans nodes (a member of lower TP degree is
/// in several at once, one per shard it holds: GroupShard), and segments sync one after the
/// other, so a GPU's count is its most in any segment; a node's is the sum over its GPUs, 0 where
/// no group crosses. These counts, not the plan's GPUs on a node, share a node's NICs (group_cost
/// concurrent_on_node) when the plan leaves GPUs idle or mixes TP degrees in a group; both engines
/// use them (models/grad_sync_cost.cpp, sim/sim_layout.cpp). A node's rails carry the channels of
/// their own GPUs (node_senders_of): two GPUs on one rail, each in two groups, give it four.
struct DpNicChannels {
  std::vector<int> per_gpu;           ///< [global GPU index]
  std::vector<NodeSenders> per_node;  ///< [node index]
  std::vector<int> on_rail_of_gpu;    ///< [global GPU index]: the channels its rail carries
};
void dp_nic_channels(const Plan& plan, const Cluster& cluster, const DpSegments& segments, DpNicChannels& out);

/// Whether some GPU is in several data-parallel groups at the end of the step: the segments of a
/// plan whose replicas split the model differently, or (aligned) a replica whose stage s has
/// another TP degree than replica 0's. `copy_of` as DpSegments'.
bool stages_in_several_groups(const Plan& plan, bool aligned, const int* copy_of = nullptr);

/// WAN links shared by the DP groups that cross them at once. Each crossing of a group's ring
/// carries its members on the node before it (one channel each), and a group's `weight` is what
/// it moves (its shard's parameters; 1 to count senders): add_wan_crossings adds a group into
/// `directed` ([from zone * zones + to zone], grown on first use), wan_load_of gives per zone
/// pair (topology.hpp zone_pair_index) the busier direction's sum. Fair sharing ends every
/// group at the same time when the link paces them all: a group of weight w then gets w / load
/// of the link, i.e. it counts as load / w senders (wan_senders_for: the `wan_senders` figure of
/// group_cost). Groups of equal weight get the plain count of senders.
void add_wan_crossings(const Cluster& cluster, const int* members, int n, double weight, std::vector<double>& directed);
void wan_load_of(const Cluster& cluster, const std::vector<double>& directed, std::vector<double>& out);
void wan_senders_for(const std::vector<double>& load, double weight, std::vector<double>& out);

/// Where one replica holds a part of the model: its stage and that stage's chunk.
struct PartPlace {
  int stage = 0;
  int chunk = 0;
  bool operator==(const PartPlace&) const = default;
};

/// Place of each model part of one replica: [0] the embedding, [1..L] the blocks, [L+1] the
/// final norm and head. Interleaved stages hold `interleave` chunks in Megatron-LM's order
/// (model chunk j = chunk * pp + stage, the first chunks of a stage taking one block more;
/// Narayanan et al. SC'21 §2.2). The execution engine places its units by the same rule.
std::vector<PartPlace> place_model_parts(const Replica& replica, int interleave, int layers);

}  // namespace hetsim::models
