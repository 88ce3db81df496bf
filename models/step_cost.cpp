// SPDX-License-Identifier: Apache-2.0
// The data-parallel part of a training step.
#include "step_cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "comm_cost.hpp"
#include "dp_segments.hpp"
#include "memory_cost.hpp"
#include "topology.hpp"

namespace hetsim::models {

double optimizer_bytes_per_param(Dtype dtype, Optimizer optimizer) {
  const bool fp32 = dtype == Dtype::kFp32 || dtype == Dtype::kTf32;
  const double update = optimizer == Optimizer::kAdam ? 28.0 : 20.0;
  return fp32 ? update + 4.0 : update + 20.0;
}

double grad_sync_bytes_per_param(Dtype dtype) { return dtype == Dtype::kFp16 ? 2.0 : 4.0; }

double grad_sync_bytes_per_param(const TrainingSpec& training) {
  return training.fp32_grad_allreduce ? 4.0 : grad_sync_bytes_per_param(training.dtype);
}

int grad_bucket_count(double params_per_gpu, int dp) {
  const double bucket = std::max(40e6, 1e6 * dp);
  return static_cast<int>(std::clamp(std::ceil(params_per_gpu / bucket), 1.0, static_cast<double>(kMaxGradBuckets)));
}

double overlapped_sync_exposed_s(double bucket_s, double backward_s, int buckets) {
  const double b = std::max(1, buckets);
  return std::max(bucket_s, b * bucket_s - backward_s * (1 - 1 / b));
}

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

/// Per-GPU figures of a node type that the optimizer, MFU and memory checks need.
struct TypeFigures {
  const NodeType* type = nullptr;
  double peak = 0;       ///< dense peak at the training's matmul dtype, 0 when unsupported
  double capacity = 0;   ///< memory bytes
  double bandwidth = 0;  ///< achieved memory bandwidth
};

TypeFigures type_figures(const NodeType& nt, const TrainingSpec& training) {
  const Dtype dtype = nt.gpu.matmul_dtype(training.dtype, training.allow_tf32);
  return {&nt, nt.gpu.supports(dtype) ? nt.gpu.peak(dtype) : 0, nt.gpu.memory_bytes,
          nt.gpu.memory_bandwidth_Bps * nt.gpu.efficiency.memory_efficiency};
}

/// The last DP group's figures and what they depend on when its members sit on strictly
/// increasing nodes (one member per node): group_cost() is then a function of the members'
/// node types and zones alone, so the groups of a uniform plan's stages share one evaluation.
struct DpGroupMemo {
  std::vector<int> signature;  ///< node type, zone per member; empty when nothing is kept
  std::vector<double> wan;     ///< the WAN shares it was evaluated with (they differ per segment)
  GroupCost cost;
  int generation = 0;          ///< counts the evaluations of `cost`
};

const GroupCost& dp_group_cost(const Cluster& c, const int* members, int count, DpGroupMemo& memo,
                               const std::vector<int>* used_on_node, const std::vector<double>* wan_senders) {
  if (used_on_node) {
    // A plan that leaves GPUs idle: the NICs of a node are shared by the plan's GPUs on it.
    memo.cost = group_cost(c, members, count, group_concurrency(c, members, count, *used_on_node), wan_senders);
    ++memo.generation;
    memo.signature.clear();
    return memo.cost;
  }
  // Compared with the kept signature on the way; the new one is written only on a miss.
  bool increasing = true;
  bool same = !memo.signature.empty() && memo.signature.size() == 2 * static_cast<std::size_t>(count);
  int prev_node = -1;
  for (int i = 0; i < count && increasing; ++i) {
    const int node = c.gpus[members[i]].node;
    increasing = increasing && node > prev_node;
    prev_node = node;
    same = same && memo.signature[2 * i] == c.nodes[node].node_type && memo.signature[2 * i + 1] == c.nodes[node].zone;
  }
  if (increasing && same && (!wan_senders || *wan_senders == memo.wan)) return memo.cost;
  memo.cost = group_cost(c, members, count, 0, wan_senders);
  if (wan_senders) memo.wan = *wan_senders;
  ++memo.generation;
  memo.signature.clear();
  if (increasing) {
    for (int i = 0; i < count; ++i) {
      const Node& n = c.nodes[c.gpus[members[i]].node];
      memo.signature.push_back(n.node_type);
      memo.signature.push_back(n.zone);
    }
  }
  return memo.cost;
}

}  // namespace

StepCost step_cost(const StepInput& in, PlanWork* work) {
  const Cluster& c = in.cluster;
  const Plan& plan = in.plan;
  const Workload& w = in.workload;
  const Dtype dtype = w.training.dtype;
  const int dp = plan.dp();
  const int v = std::max(1, plan.interleave);
  const double grad_bpp = grad_sync_bytes_per_param(w.training);
  const double weight_bpp = activation_bytes(dtype);
  StepCost out;
  const std::size_t slots = static_cast<std::size_t>(dp) * in.max_pp;
  out.stage_memory_bytes.assign(slots, 0);
  out.stage_capacity_bytes.assign(slots, 0);


  // Gradient sync, one group per (segment, TP rank) across replicas: a segment is stage s of every
  // replica when they all split the model alike, else the model parts one stage of each replica
  // holds (dp_segments.hpp). When every replica's part sits in one node, all TP ranks see the
  // same node sequence: one ring walk serves all. Replicas of different TP degrees cut the
  // gradients into lcm(degrees) shards, one group each (GroupShard); a member of lower TP degree
  // holds several and takes part in that many groups (exec syncs the same groups).
  // Written by index, not pushed: push_back is a call per member in this loop.
  const int* copy_of = in.copy_of ? in.copy_of->data() : nullptr;
  const DpSegments segments(plan, w.model, copy_of);
  const bool aligned = segments.aligned();
  // What the groups put on each stage (replica * max_pp + stage), kept when a stage can be in
  // several groups (segments of a non-aligned plan; a member of lower TP degree holds several
  // shards, each in a group of its own, run one after the other) and for ZeRO-3, whose traffic
  // runs inside each replica's own passes.
  // A GPU's groups run side by side (separate communicators): they take as long as the slowest
  // of them, or as its own side of the rings lets all their bytes through, whichever is longer
  // (each group's time scaled by its bottleneck over that side: member_side_bandwidth_Bps). One
  // after the other, a lower-TP member would wait on each far side in turn.
  struct Load {
    double own_s = 0, max_s = 0;
    void add(double group_s, double over_own_side, double weight) {
      own_s += weight * group_s * over_own_side;
      max_s = std::max(max_s, group_s);
    }
    double time_s() const { return std::max(own_s, max_s); }
  };
  // ZeRO-3 gathers and scatters a segment's weights when its layers run: segments follow one
  // another within a pass, only a segment's shards run side by side.
  struct SlotLoad {
    Load reduce, gather;                ///< end-of-step reduction (all its buckets) and ZeRO-1/2 gather
    double offset_s = 0;                ///< earliest start of its groups before the step's end
    Load segment_ag, segment_rs;        ///< ZeRO-3 gather and reduce-scatter of the current segment
    double ag_s = 0, rs_s = 0;          ///< ZeRO-3 per chunk pass: the segments' sum
    int groups = 0, buckets = 0;
  };
  bool shared_gpus = !aligned;  // aligned: a replica whose stage s has another TP degree than replica 0's
  for (int r = 1; r < dp && !shared_gpus; ++r)
    for (std::size_t st = 0; (!copy_of || copy_of[r] < 0) && st < plan.replicas[r].stages.size() && !shared_gpus; ++st)
      shared_gpus = plan.replicas[r].stages[st].tp() != plan.replicas[0].stages[st].tp();
  std::vector<SlotLoad> load(shared_gpus || plan.zero >= 3 ? slots : 0);
  std::vector<int> members(dp), member_slot(dp);
  int count = 0;  // members of the current group
  DpGroupMemo group_memo;
  group_memo.signature.reserve(2 * static_cast<std::size_t>(dp));
  // Collective times of the last group and sizes: the middle stages of a uniform plan have equal
  // groups (same memo generation) and equal parameter counts, hence equal times.
  struct SyncTimes {
    int generation = -1;
    double grad_bytes = 0, gather_bytes = 0;
    int buckets = 1;
    double sync_s = 0;                   ///< gradient sync at the end of the step (ZeRO 0-2)
    double param_gather_s = 0;           ///< of which the ZeRO-1/2 weight all-gather
    double bucket_s = 0;                 ///< one bucket's reduction (overlapped sync)
    double gather_s = 0, scatter_s = 0;  ///< ZeRO-3 weight all-gather, gradient reduce-scatter
  } sync;
  const CollectiveKind reduce_kind = plan.zero == 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter;
  // Per-GPU parameters of replica r's share of segment k, and the shard a group of it moves.
  auto member_params = [&](int k, int r, int s) {
    return aligned ? in.costs[in.shape_of[r * in.max_pp + s]].params : segments.params(k, r, w.model);
  };
  // Groups that cross zones share each WAN link with every other group crossing it at once, in
  // proportion to what each moves (wan_load_of): first the load of all of them. ZeRO-3 moves a
  // segment's weights while its layers run: a stage holding several segments moves them one
  // after the other, so in a plan whose replicas split the model differently only a segment's
  // own shards share the link (aligned, each stage is one segment and the stages run at once).
  std::vector<double> wan_load;  // by zone pair; empty with one zone
  std::vector<std::vector<double>> segment_wan_load;  // ZeRO-3 not aligned: [segment] by zone pair
  if (c.zones.size() > 1) {
    std::vector<double> directed;
    for (int k = 0; k < segments.count(); ++k) {
      if (plan.zero >= 3 && !aligned) directed.clear();
      GroupShard shard;
      for (int r = 0; r < dp; ++r)
        if (const int s = segments.stage_of(k, r); s >= 0) shard.add(plan.replicas[r].stages[s].tp(), member_params(k, r, s));
      for (int j = 0; j < shard.shards; ++j) {
        count = 0;
        for (int r = 0; r < dp; ++r)
          if (const int s = segments.stage_of(k, r); s >= 0) {
            const Stage& st = plan.replicas[r].stages[s];
            members[count++] = st.gpus[shard.member_rank(j, st.tp())];
          }
        add_wan_crossings(c, members.data(), count, shard.params, directed);
      }
      if (plan.zero >= 3 && !aligned) wan_load_of(c, directed, segment_wan_load.emplace_back());
    }
    wan_load_of(c, directed, wan_load);
  }
  std::vector<double> wan_senders;  // the current segment's groups' share
  const std::vector<double>* wan = wan_load.empty() ? nullptr : &wan_senders;
  for (int k = 0; k < segments.count(); ++k) {
    GroupShard shard;
    bool symmetric = true;
    count = 0;  // TP rank 0 of every replica's stage holding segment k
    for (int r = 0; r < dp; ++r) {
      const int s = segments.stage_of(k, r);
      if (s < 0) continue;
      const Stage& st = plan.replicas[r].stages[s];
      // A copy has its base's TP degree, one-node flag, shape and stage split, and its base (an
      // earlier replica) is already in the tests, extremes and parameters below: only its member is new.
      member_slot[count] = r * in.max_pp + s;
      if (copy_of && copy_of[r] >= 0) {
        members[count++] = st.gpus.front();
        continue;
      }
      const int tp = st.tp();
      const double p = member_params(k, r, s);
      symmetric = symmetric && (shard.max_tp == 0 || tp == shard.max_tp) && in.tp_in_one_node[r * in.max_pp + s];
      shard.add(tp, p);
      members[count++] = st.gpus.front();
    }
    const double params = shard.params;
    if (shard.shards == 0) continue;
    if (wan) wan_senders_for(segment_wan_load.empty() ? wan_load : segment_wan_load[k], params, wan_senders);
    const double grad_bytes = params * grad_bpp;
    const double gather_bytes = plan.zero >= 1 ? params * weight_bpp : 0;
    const int buckets = plan.overlap_grad_sync ? grad_bucket_count(params, count) : 1;
    // The group starts when the last of its members has finished its stage's backward: replica r
    // does so backward_finish_offset before its own end (1F1B cool-down), at most at the slowest
    // replica's end. `offset` is how long before that end it starts; `late` is the replica that
    // decides it (replicas of other depths: the slowest may not even have the stage).
    const StageTimes* late = nullptr;  // a copy's base has the stage too: there is a member
    int late_stage = 0;
    double ready = 0;
    for (int r = 0; r < dp; ++r) {
      const int s = segments.stage_of(k, r);
      if (s < 0 || (copy_of && copy_of[r] >= 0)) continue;
      const StageTimes* t = &in.times[static_cast<std::size_t>(r) * in.max_pp];
      const double ready_r = in.replica_time_s[r] - backward_finish_offset(t, s);
      if (!late || ready_r > ready) ready = ready_r, late = t, late_stage = s;
    }
    const double offset = std::max(0.0, in.replica_time_s[in.slowest_replica] - ready);
    const double hidden = plan.overlap_grad_sync ? late[late_stage].backward_s : 0;
    double worst = 0, worst_gather = 0, worst_bucket = 0;
    const int ranks = symmetric && !work ? 1 : shard.shards;
    for (int j = 0; j < ranks; ++j) {
      if (j > 0) {
        count = 0;
        for (int r = 0; r < dp; ++r) {
          const int s = segments.stage_of(k, r);
          if (s < 0) continue;
          const Stage& st = plan.replicas[r].stages[s];
          member_slot[count] = r * in.max_pp + s;
          members[count++] = st.gpus[shard.member_rank(j, st.tp())];
        }
      }
      double t = 0;
      if (count > 1) {
        const GroupCost& g = dp_group_cost(c, members.data(), count, group_memo, in.used_on_node, wan);
        if (sync.generation != group_memo.generation || sync.grad_bytes != grad_bytes ||
            sync.gather_bytes != gather_bytes || sync.buckets != buckets) {
          sync = {group_memo.generation, grad_bytes, gather_bytes, buckets, 0, 0, 0, 0, 0};
          if (plan.zero <= 2) {
            // ZeRO-1/2: reduce-scatter gradients, all-gather updated weights (ZeRO §5.1-5.2).
            sync.param_gather_s =
                plan.zero == 0 ? 0 : collective_time(CollectiveKind::kAllGather, gather_bytes, g, plan.grad_sync);
            sync.sync_s = collective_time(reduce_kind, grad_bytes, g, plan.grad_sync) + sync.param_gather_s;
            // Overlapped, each bucket is a collective of its own, latency terms included.
            if (buckets > 1) sync.bucket_s = collective_time(reduce_kind, grad_bytes / buckets, g, plan.grad_sync);
            else sync.bucket_s = sync.sync_s - sync.param_gather_s;
          } else {
            sync.gather_s = zero3_collective_time(CollectiveKind::kAllGather, gather_bytes, g);
            sync.scatter_s = zero3_collective_time(CollectiveKind::kReduceScatter, grad_bytes, g);
          }
        }
        t = sync.sync_s;
        if (!load.empty()) {
          const int concurrent = in.used_on_node ? group_concurrency(c, members.data(), count, *in.used_on_node) : 0;
          const double reduce_s = buckets * (plan.zero <= 2 ? sync.bucket_s : 0);
          for (int i = 0; i < count; ++i) {
            const int slot = member_slot[i];
            // One group stands for every TP rank's when all are alike; else each TP rank of a
            // slot has its own groups, and the slot keeps their mean per GPU.
            const double weight = ranks == 1 ? 1.0 : 1.0 / plan.replicas[slot / in.max_pp].stages[slot % in.max_pp].tp();
            const double side = member_side_bandwidth_Bps(c, members.data(), count, i, concurrent, g.node_shared);
            const double over = side > g.bus_bandwidth_Bps ? g.bus_bandwidth_Bps / side : 1.0;
            SlotLoad& l = load[static_cast<std::size_t>(slot)];
            l.reduce.add(reduce_s, over, weight);
            l.gather.add(sync.param_gather_s, over, weight);
            l.segment_ag.add(sync.gather_s, over, weight);
            l.segment_rs.add(sync.scatter_s, over, weight);
          }
        }
      }
      if (t > worst) worst = t, worst_gather = count > 1 ? sync.param_gather_s : 0, worst_bucket = sync.bucket_s;
      if (work && count > 1) {
        DpGroup dg;
        dg.gpus.assign(members.begin(), members.begin() + count);
        dg.size_bytes = grad_bytes;
        dg.stage = segments.stage_of(k, 0);
        dg.gather_bytes = gather_bytes;
        dg.buckets = buckets;
        dg.time_s = t;
        work->dp_groups.push_back(std::move(dg));
      }
    }
    // Overlapped (Megatron-Core overlap_grad_sync with overlap_param_gather): the gradients'
    // reduction runs bucket by bucket during the last backward pass, and the updated weights'
    // all-gather after the optimizer during the next step's first forward pass (it needs the new
    // weights, so the backward cannot hide it); each part is exposed beyond the pass that hides it.
    // (Stages in several groups: per stage below.)
    if (!shared_gpus) {
      const double exposed =
          !plan.overlap_grad_sync
              ? worst - offset
              : std::max(0.0, overlapped_sync_exposed_s(worst_bucket, hidden, buckets) - offset) +
                    std::max(0.0, worst_gather - late[late_stage].forward_s);
      out.dp_exposed_s = std::max(out.dp_exposed_s, exposed);
    }
    if (!load.empty())
      for (int r = 0; r < dp; ++r) {
        const int s = segments.stage_of(k, r);
        if (s < 0) continue;
        SlotLoad& l = load[static_cast<std::size_t>(r) * in.max_pp + s];
        // A member of lower TP degree holds several shards, each in a group of its own.
        const int share = shard.groups_of(plan.replicas[r].stages[s].tp());
        l.offset_s = l.groups++ > 0 ? std::min(l.offset_s, offset) : offset;
        l.buckets += share * buckets;
        l.ag_s += l.segment_ag.time_s();
        l.rs_s += l.segment_rs.time_s();
        l.segment_ag = l.segment_rs = Load{};
      }
  }
  // Stages in several groups run their collectives back to back from the earliest start;
  // overlapped, the last backward pass hides their buckets as it hides one group's.
  for (std::size_t slot = 0; slot < load.size() && plan.zero <= 2; ++slot) {
    const SlotLoad& l = load[slot];
    if (l.groups == 0) continue;
    const double reduce_s = l.reduce.time_s(), gather_s = l.gather.time_s();
    const double exposed =
        !plan.overlap_grad_sync
            ? reduce_s + gather_s - l.offset_s
            : std::max(0.0, overlapped_sync_exposed_s(reduce_s / l.buckets, in.times[slot].backward_s, l.buckets) -
                                l.offset_s) +
                  std::max(0.0, gather_s - in.times[slot].forward_s);
    out.dp_exposed_s = std::max(out.dp_exposed_s, exposed);
  }
  // ZeRO-3: every micro-batch's passes gather the weights and reduce-scatter the gradients
  // (zero3_traffic), prefetched so that the pass's compute hides them: a pass lasts
  // max(compute, traffic), on each replica for each of its micro-batches; the slowest stage of a
  // replica paces its pipeline. Nothing is left for the end of the step.
  if (plan.zero >= 3) {
    const Zero3Traffic z = zero3_traffic(plan.recompute);
    const double slowest = in.replica_time_s[in.slowest_replica];
    for (int r = 0; r < dp; ++r) {
      const int pp = static_cast<int>(plan.replicas[r].stages.size());
      double per_micro_batch = 0;
      for (int s = 0; s < pp; ++s) {
        const std::size_t slot = static_cast<std::size_t>(r) * in.max_pp + s;
        const SlotLoad& l = load[slot];
        per_micro_batch = std::max(per_micro_batch, std::max(0.0, z.forward_gathers * l.ag_s - in.times[slot].forward_s) +
                                                        std::max(0.0, z.backward_gathers * l.ag_s +
                                                                          z.backward_reduce_scatters * l.rs_s -
                                                                          in.times[slot].backward_s));
      }
      out.dp_exposed_s =
          std::max(out.dp_exposed_s, in.replica_time_s[r] + plan.replicas[r].micro_batches * per_micro_batch - slowest);
    }
  }

  // Tied embeddings with pp > 1: the first and last stage all-reduce the word-embedding
  // gradient after the DP sync (Megatron-LM _allreduce_embedding_grads; Shoeybi et al. 2019).
  const ModelSpec& m = w.model;
  if (m.tied_embeddings) {
    // Every (replica, TP rank) pair runs its embedding all-reduce at once, so a node's NICs are
    // shared by the first- and last-stage GPUs it holds, not by all its GPUs (which the default
    // concurrency of group_cost assumes for the DP sync, where every GPU takes part).
    std::vector<int> embedding_gpus_on_node(c.nodes.size(), 0);
    auto count = [&](const Stage& st, std::size_t k) {
      if (in.tp_in_one_node[k]) embedding_gpus_on_node[c.gpus[st.gpus.front()].node] += st.tp();
      else
        for (int g : st.gpus) ++embedding_gpus_on_node[c.gpus[g].node];
    };
    // Pairs whose stages lie in different zones: all of them cross the zones' WAN link at once.
    std::vector<double> embedding_wan(c.zones.size() > 1 ? c.zones.size() * c.zones.size() : 0, 0.0);
    for (int r = 0; r < dp; ++r) {
      const Replica& rep = plan.replicas[r];
      if (rep.stages.size() < 2) continue;
      count(rep.stages.front(), static_cast<std::size_t>(r) * in.max_pp);
      count(rep.stages.back(), static_cast<std::size_t>(r) * in.max_pp + rep.stages.size() - 1);
      const int za = c.nodes[c.gpus[rep.stages.front().gpus.front()].node].zone;
      const int zb = c.nodes[c.gpus[rep.stages.back().gpus.front()].node].zone;
      if (za != zb) embedding_wan[zone_pair_index(c, za, zb)] += rep.stages.front().tp();
    }
    // The slowest pair sets the wait: every replica's pair is priced (replica 0's alone would
    // miss a heterogeneous plan whose other replicas sit on slower or busier nodes). A pair's
    // time depends only on its two nodes' types and zones, whether they are one node, the NIC
    // sharing and the shard size, so pairs with equal keys (every replica of a uniform plan)
    // reuse one figure.
    struct PairKey {
      int type_a, type_b, zone_a, zone_b, same_node, concurrent, tp;
      bool operator==(const PairKey&) const = default;
    };
    std::vector<std::pair<PairKey, double>> priced;
    double worst = 0;
    for (int r = 0; r < dp; ++r) {
      const Replica& rep = plan.replicas[r];
      if (rep.stages.size() < 2) continue;
      const Stage& a = rep.stages.front();
      const Stage& b = rep.stages.back();
      const double bytes = static_cast<double>(m.vocab) * m.hidden / a.tp() * grad_bpp;
      const int pair[2] = {a.gpus.front(), b.gpus.front()};
      const Node& na = c.nodes[c.gpus[pair[0]].node];
      const Node& nb = c.nodes[c.gpus[pair[1]].node];
      const int concurrent = std::max(embedding_gpus_on_node[c.gpus[pair[0]].node],
                                      embedding_gpus_on_node[c.gpus[pair[1]].node]);
      const PairKey key{na.node_type, nb.node_type, na.zone, nb.zone, &na == &nb ? 1 : 0, concurrent, a.tp()};
      double t = -1;  // times are >= 0
      for (const auto& [k, time_s] : priced)
        if (k == key) t = time_s;
      if (t < 0) {
        t = collective_time(CollectiveKind::kAllReduce, bytes,
                            group_cost(c, pair, 2, concurrent, embedding_wan.empty() ? nullptr : &embedding_wan),
                            plan.grad_sync);
        priced.emplace_back(key, t);
      }
      worst = std::max(worst, t);
      if (work) {
        // Every TP rank all-reduces its vocab/t shard with its peer at once (the price above
        // shares the NICs among them): one group per rank, so the simulator moves all shards.
        for (int j = 0; j < a.tp(); ++j) {
          DpGroup dg;
          dg.gpus = {a.gpus[j], b.gpus[j % b.tp()]};
          dg.size_bytes = bytes;
          dg.embedding = true;
          dg.time_s = t;
          work->dp_groups.push_back(std::move(dg));
        }
      }
    }
    out.dp_exposed_s += worst;
  }
  out.dp_exposed_s = std::max(0.0, out.dp_exposed_s);

  // Optimizer step (memory-bound, sharded by ZeRO >= 1), memory, FLOPs, peaks, price.
  const double opt_bpp = optimizer_bytes_per_param(dtype, w.training.optimizer);
  std::vector<char> node_used(c.nodes.size(), 0);
  // A one-node stage's figures depend only on its shape, position, micro-batch count and node
  // type: stages with equal keys (the same stage of every replica of a uniform plan) share them.
  struct StageFigures {
    int shape, stage, pp, micro_batches, node_type;  ///< node_type -1: not kept (multi-node stage)
    double peaks, capacity, opt_s, memory, flop;
  };
  std::vector<StageFigures> memo;
  memo.reserve(2 * static_cast<std::size_t>(in.max_pp));
  std::vector<int> memo_of_stage(in.max_pp, -1);  ///< memo entry stage s used last
  std::vector<int> memo_of_slot(in.copy_of ? slots : 0);  ///< memo entry of each stage, for copies
  // Sums and maxima in locals (same order of operations): fields of `out` are stored back to
  // memory on every iteration, which chains each add through a store and a load.
  double peak_sum = 0, hardware_flop = 0, optimizer_s = 0, memory_peak = 0;
  TypeFigures figures;  // of the node type met last by a one-node stage
  for (int r = 0; r < dp; ++r) {
    const Replica& rep = plan.replicas[r];
    const int pp = static_cast<int>(rep.stages.size());
    const int base = in.copy_of ? (*in.copy_of)[r] : -1;
    if (base >= 0) {
      // A copy's stages are one-node stages with their base stages' shapes, positions, depth,
      // micro-batch count and node types: the memo entries base's stages found (or made) are
      // the ones the lookup below would find. Sums and maxima are taken in the same order. A
      // stage over capacity: base's (an earlier replica) was too, and set the reason first.
      // Raw pointers: the char stores to node_used may alias anything, which would reload
      // every vector's storage at each stage.
      const std::size_t k0 = static_cast<std::size_t>(r) * in.max_pp;
      const int* from = memo_of_slot.data() + static_cast<std::size_t>(base) * in.max_pp;
      int* to = memo_of_slot.data() + k0;
      const int* nodes = in.front_node->data() + k0;
      double* memory = out.stage_memory_bytes.data() + k0;
      double* capacity = out.stage_capacity_bytes.data() + k0;
      char* used = node_used.data();
      const StageFigures* figures_of = memo.data();
      for (int s = 0; s < pp; ++s) {
        const StageFigures& f = figures_of[to[s] = from[s]];
        used[nodes[s]] = 1;
        peak_sum += f.peaks;
        hardware_flop += f.flop;
        optimizer_s = std::max(optimizer_s, f.opt_s);
        memory[s] = f.memory;
        capacity[s] = f.capacity;
        memory_peak = std::max(memory_peak, f.memory);
      }
      continue;
    }
    for (int s = 0; s < pp; ++s) {
      const std::size_t k = r * in.max_pp + s;
      const Stage& st = rep.stages[s];
      const int shape = in.shape_of[k];
      const bool one_node = in.tp_in_one_node[k];
      const int node = c.gpus[st.gpus.front()].node;
      const int node_type = one_node ? c.nodes[node].node_type : -1;
      auto same = [&](const StageFigures& f) {
        return f.node_type == node_type && f.shape == shape && f.stage == s && f.pp == pp &&
               f.micro_batches == rep.micro_batches;
      };
      int hit = -1;
      if (one_node) {
        node_used[node] = 1;
        const int hint = memo_of_stage[s];
        if (hint >= 0 && same(memo[hint])) hit = hint;
        else
          for (std::size_t i = 0; i < memo.size() && hit < 0; ++i)
            if (same(memo[i])) hit = static_cast<int>(i);
      }
      if (hit < 0) {
        const StageCost& sc = in.costs[shape];
        double capacity = 0, peaks = 0, bw = 0;
        const int tp = st.tp();
        if (one_node) {
          // One node, one type: its figures are looked up once per type over all stages.
          const NodeType& nt = c.node_types[node_type];
          if (&nt != figures.type) figures = type_figures(nt, w.training);
          peaks = tp * figures.peak;
          capacity = figures.capacity;
          bw = figures.bandwidth;
        } else {
          const NodeType* last = nullptr;
          double last_peak = 0;
          int prev_node = -1, run = 0;  // GPUs of the current type not yet added to `peaks`
          for (int g : st.gpus) {
            const int n = c.gpus[g].node;
            if (n == prev_node) {  // same node, same type: nothing new to look up
              ++run;
              continue;
            }
            prev_node = n;
            node_used[n] = 1;
            const NodeType& nt = c.node_types[c.nodes[n].node_type];
            if (&nt != last) {  // GPUs of a stage are usually of one type: look its figures up once
              peaks += run * last_peak;
              run = 0;
              last = &nt;
              const TypeFigures f = type_figures(nt, w.training);
              last_peak = f.peak;
              capacity = capacity == 0 ? f.capacity : std::min(capacity, f.capacity);
              bw = bw == 0 ? f.bandwidth : std::min(bw, f.bandwidth);
            }
            ++run;
          }
          peaks += run * last_peak;
        }
        const double opt_params = sc.params / (plan.zero >= 1 ? dp : 1);
        StageMemoryInput mi;
        mi.model = &m;
        mi.dtype = dtype;
        mi.optimizer = w.training.optimizer;
        mi.flash = w.training.flash_attention;
        mi.layers = st.layers;
        mi.tp = st.tp();
        mi.stage = s;
        mi.pp = pp;
        mi.dp = dp;
        mi.micro_batches = rep.micro_batches;
        mi.interleave = v;
        mi.zero = plan.zero;
        mi.micro = plan.micro_batch;
        mi.schedule = plan.schedule;
        mi.recompute = plan.recompute;
        mi.sequence_parallel = plan.sequence_parallel && st.tp() > 1;
        mi.params = sc.params;
        memo.push_back({shape, s, pp, rep.micro_batches, node_type, peaks, capacity, opt_params * opt_bpp / bw,
                        stage_memory(mi).total(), rep.micro_batches * (sc.forward.flop + sc.backward.flop) * st.tp()});
        hit = static_cast<int>(memo.size()) - 1;
      }
      if (one_node) memo_of_stage[s] = hit;
      if (in.copy_of) memo_of_slot[k] = hit;
      const StageFigures& f = memo[hit];
      peak_sum += f.peaks;
      hardware_flop += f.flop;
      const double opt_s = f.opt_s;
      optimizer_s = std::max(optimizer_s, opt_s);
      const double mem = f.memory, capacity = f.capacity;
      out.stage_memory_bytes[k] = mem;
      out.stage_capacity_bytes[k] = capacity;
      memory_peak = std::max(memory_peak, mem);
      if (mem > capacity && out.memory_reason.empty()) {
        out.memory_reason = "stage " + std::to_string(s) + (dp > 1 ? " of replica " + std::to_string(r) : "") +
                            " needs " + gib(mem) + " GiB of " + gib(capacity) + " GiB";
      }
      if (work) {
        StageWork* sw = nullptr;
        for (StageWork& x : work->replicas[r])
          if (x.stage == s) sw = &x;
        if (sw) {
          sw->param_count = in.costs[shape].params;
          sw->grad_sync_bytes = in.costs[shape].params * grad_bpp;
          sw->optimizer_s = opt_s;
          sw->memory_bytes = mem;
          sw->memory_capacity_bytes = capacity;
          sw->forward_s = in.times[k].forward_s;
          sw->backward_s = in.times[k].backward_s;
        }
      }
    }
  }
  out.peak_sum_flops = peak_sum;
  out.hardware_flop = hardware_flop;
  out.optimizer_s = optimizer_s;
  out.memory_peak_bytes = memory_peak;
  double price = 0;
  for (std::size_t n = 0; n < node_used.size(); ++n)
    if (node_used[n]) price += c.node_types[c.nodes[n].node_type].price_per_hour;
  out.cost_per_hour = price;
  return out;
}

}  // namespace hetsim::models
