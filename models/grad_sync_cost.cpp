// SPDX-License-Identifier: Apache-2.0
// The gradient sync of a training step: data-parallel groups per model segment and shard, their
// collectives on the cluster's links, what the pipeline does not hide (step_cost.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "comm_cost.hpp"
#include "dp_segments.hpp"
#include "grad_sync_group_rails.hpp"
#include "grad_sync_own_sides.hpp"
#include "grad_sync_parts.hpp"
#include "grad_sync_wan_segments.hpp"
#include "scratch_vector.hpp"
#include "step_cost.hpp"  // declares what this file defines
#include "topology.hpp"

namespace hetsim::models {

namespace {

using namespace grad_sync_detail;  // the GradSync parts (grad_sync_parts.hpp)

/// The gradient sync, one group per (segment, TP rank) across replicas: a segment is stage s of
/// every replica when they all split the model alike, else the model parts one stage of each
/// replica holds (dp_segments.hpp). When every replica's part sits in one node, all TP ranks see
/// the same node sequence: one ring walk serves all. Replicas of different TP degrees cut the
/// gradients into lcm(degrees) shards, one group each (GroupShard); a member of lower TP degree
/// holds several and takes part in that many groups (exec syncs the same groups).
class GradSync {
 public:
  /// `gathers` (the steady-state cycle, gathers_lead_the_step): each stage's ZeRO-1/2 weight
  /// all-gather is recorded there ([replica * max_pp + stage]) and exposes nothing after the
  /// step; the caller shifts the replicas' timelines by what it delays them (replica_gather_delay_s).
  GradSync(const StepInput& in, PlanWork* work, GradSyncEnds* ends, std::vector<double>* gathers = nullptr)
      : gather_of_slot(gathers),
        in(in),
        c(in.cluster),
        plan(in.plan),
        work(work),
        ends(ends),
        dp(plan.dp()),
        interleave(plan.schedule == Schedule::kInterleaved ? std::max(1, plan.interleave) : 1),
        grad_bpp(grad_sync_bytes_per_param(in.workload.training)),
        weight_bpp(activation_bytes(in.workload.training.dtype)),
        copy_of(in.copy_of ? in.copy_of->data() : nullptr),
        front_gpu(in.front_gpu.data()),
        max_pp(in.max_pp),
        segments(plan, in.workload.model, copy_of),
        aligned(segments.aligned()),
        shared_gpus(stages_in_several_groups(plan, aligned, copy_of)),
        reduce_kind(plan.zero == 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter),
        traffic(pass_traffic(plan.zero, plan.recompute)),
        load(shared_gpus || traffic.any() ? static_cast<std::size_t>(dp) * max_pp : 0),
        slot_buckets(shared_gpus && plan.zero <= 2 ? load.size() : 0),
        group_rails(in.cluster, plan, max_pp, slot_buckets.size()),
        members(dp),
        member_slot(dp) {
    group_memo.signature.reserve(2 * static_cast<std::size_t>(dp));
    // A plan that leaves GPUs idle, or puts GPUs in several groups at once: a node's NICs are
    // shared by the channels of its groups that cross nodes (dp_nic_channels), not by all of
    // its GPUs (a uniform plan's case: nullptr).
    if (in.used_on_node || shared_gpus) {
      dp_nic_channels(plan, c, segments, channels);
      member_channels.resize(dp);
      nic_senders = &channels.per_node;
      if (work) work->dp_nic_senders = channels.per_node;
    }
  }

  /// The step's exposed gradient sync (grad_sync_exposed_s).
  double exposed_s() {
    load_wan_links();
    if (ends) ends->reduce_end_s.assign(static_cast<std::size_t>(dp) * max_pp, -std::numeric_limits<double>::infinity());
    for (int k = 0; k < segments.count(); ++k) sync_segment(k);
    wan_segments.ends([this](int k, double reduce_end_s, double gather_s) { note_segment_ends(k, reduce_end_s, gather_s); });
    stages_in_several_groups_ends();
    // Every stage's update waits for every reduction (the optimizer's gradient-norm all-reduce
    // joins them: Megatron-LM clip_grad_norm over the model-parallel group, the DP sync joining
    // the replicas), and the ZeRO-1/2 weight all-gathers follow the updates: the latest
    // reduction, then the slowest gather.
    double exposed = std::max(0.0, latest_reduce_end_s + slowest_gather_s);
    // The passes' traffic lengthens the pipelines; ZeRO-2's end-of-step sync then follows.
    if (traffic.any()) {
      const double later_s = pass_traffic_exposed_s(in, traffic, load.data(), !shared_gpus);
      exposed += later_s;
      if (ends)
        for (double& end_s : ends->reduce_end_s) end_s += later_s;
    }
    if (ends) ends->gather_s = slowest_gather_s;
    return exposed;
  }

 private:
  /// The stage of replica r holding segment k, -1: none (DpSegments::stage_of; aligned, from the
  /// plan's first-GPU table rather than through each replica's stage list).
  int stage_holding(int k, int r) const { return stage_holding(k, r, aligned, front_gpu, max_pp); }
  /// The same with the plan's figures in locals: the hot loops store ints and doubles, which
  /// the compiler must assume may change the object's members, reloading them at every replica.
  int stage_holding(int k, int r, bool is_aligned, const int* front, int stride) const {
    if (is_aligned) return front[r * stride + k] >= 0 ? k : -1;
    return segments.stage_of(k, r);
  }

  /// How long before replica r's end its stage s ends its last backward (t: the replica's times).
  double finish_offset(int r, const StageTimes* t, int s) const {
    const Replica& rep = plan.replicas[r];
    return backward_finish_offset(t, s, interleave, plan.schedule, static_cast<int>(rep.stages.size()), rep.micro_batches);
  }

  /// Per-GPU parameters of replica r's share of segment k (its stage s).
  double member_params(int k, int r, int s) const {
    return aligned ? in.costs[in.shape_of[r * max_pp + s]].params : segments.params(k, r, in.workload.model, in.workload.training.engine_kernels);
  }

  /// The group of shard j of segment k: its GPUs into `members`, their slots into `member_slot`.
  void shard_group(int k, int j, const GroupShard& shard) {
    count = 0;
    for (int r = 0; r < dp; ++r)
      if (const int s = stage_holding(k, r); s >= 0) {
        const Stage& st = plan.replicas[r].stages[s];
        member_slot[count] = r * max_pp + s;
        members[count++] = st.gpus[shard.member_rank(j, st.tp())];
      }
    order_ring_by_node(c, members.data(), count, member_slot.data());  // NCCL's ring
  }

  /// Groups that cross zones share each WAN link with every other group crossing it at once, in
  /// proportion to what each moves (wan_load_of): first the load of all of them.
  /// Each segment's own load of them is kept too (WanSegments::load_of): its groups alone on the
  /// links, and its part of each link's load.
  void load_wan_links() {
    if (c.zones.size() < 2) return;
    std::vector<double> directed, own_directed;
    for (int k = 0; k < segments.count(); ++k) {
      GroupShard shard;
      for (int r = 0; r < dp; ++r)
        if (const int s = stage_holding(k, r); s >= 0) shard.add(plan.replicas[r].stages[s].tp(), member_params(k, r, s));
      own_directed.assign(directed.size(), 0.0);
      for (int j = 0; j < shard.shards; ++j) {
        shard_group(k, j, shard);
        add_wan_crossings(c, members.data(), count, shard.params, own_directed);
      }
      directed.resize(own_directed.size(), 0.0);
      for (std::size_t i = 0; i < own_directed.size(); ++i) directed[i] += own_directed[i];
      wan_load_of(c, own_directed, wan_segments.load_of(k));
    }
    wan_load_of(c, directed, wan_load);
    if (!wan_load.empty()) wan = &wan_senders;
  }

  /// Segment k's groups: their times, what they put on their stages (load), the simulator's
  /// groups (work); when no stage is in several groups, what the step waits for them
  /// (note_segment_ends).
  void sync_segment(int k) {
    bool symmetric = true;
    const GroupShard shard = first_members(k, symmetric);
    if (shard.shards == 0) return;
    const double params = shard.params;
    if (wan) wan_senders_for(wan_load, params, wan_senders);
    const double grad_bytes = params * grad_bpp;
    const double gather_bytes = plan.zero >= 1 ? params * weight_bpp : 0;
    const int buckets = plan.overlap_grad_sync ? grad_bucket_count(params, count) : 1;
    const double ready_offset_s = readiness_offset_s(k);
    // Overlapped, or stages in several groups: when each bucket is ready, once for both uses.
    if (!slot_buckets.empty() || plan.overlap_grad_sync) segment_bucket_ready(k, buckets, ready_offset_s);
    double worst_s = 0, worst_gather_s = 0, worst_bucket_s = 0, worst_latency_s = 0;
    worst_alone_bucket_s = 0;
    // Groups across a WAN link (ZeRO 0-2, each stage in one group): also what they take with the
    // links to this segment's groups alone (WanSegments).
    const bool on_wan = wan && !shared_gpus && plan.zero <= 2 && wan_segments.crosses(k);
    double alone_reduce_s = 0, alone_bucket_s = 0;
    if (on_wan) wan_senders_for(wan_segments.load_of(k), params, wan_alone);
    const int ranks = symmetric && !work ? 1 : shard.shards;
    for (int j = 0; j < ranks; ++j) {
      if (j > 0) shard_group(k, j, shard);
      double t = 0;
      if (count > 1) {
        const GroupCost& g = dp_group_cost(c, members.data(), count, group_memo, nic_senders ? &channels : nullptr, wan);
        price_group(g, grad_bytes, gather_bytes, buckets);
        t = sync.sync_s;
        if (!load.empty()) add_slot_loads(g, ranks);
        if (on_wan) {
          const GroupCost& a = dp_group_cost(c, members.data(), count, alone_memo, nic_senders ? &channels : nullptr, &wan_alone);
          alone_reduce_s = std::max(alone_reduce_s, collective_time(reduce_kind, grad_bytes, a, plan.grad_sync));
          alone_bucket_s = std::max(alone_bucket_s, buckets > 1 ? collective_time(reduce_kind, grad_bytes / buckets, a, plan.grad_sync)
                                                                : alone_reduce_s);
        }
      }
      if (t > worst_s)
        worst_s = t, worst_gather_s = count > 1 ? sync.param_gather_s : 0, worst_bucket_s = sync.bucket_s,
        worst_latency_s = sync.bucket_latency_s;
      if (work && count > 1) record_group(k, grad_bytes, gather_bytes, buckets, t);
    }
    if (!load.empty()) close_segment_loads(k, alone_end_s(worst_alone_bucket_s));
    if (shared_gpus) return;  // stages in several groups: per stage (stages_in_several_groups_ends)
    // Overlapped (Megatron-Core overlap_grad_sync with overlap_param_gather): the gradients'
    // reduction runs bucket by bucket during the last backward pass, and the updated weights'
    // all-gather after the optimizer during the next step's first forward pass (it needs the new
    // weights, so the backward cannot hide it); each part is exposed beyond the pass that hides it.
    if (!plan.overlap_grad_sync) {
      if (on_wan && worst_s > 0) {
        // One bucket: the whole reduction, once every member has finished its passes.
        const double reduce_s = worst_s - worst_gather_s, ready_s = -ready_offset_s;
        wan_segments.add(k, {reduce_s + ready_s, alone_reduce_s + ready_s, worst_gather_s, worst_latency_s, reduce_s - worst_latency_s},
                         wan_load, &ready_s, 1);
        return;
      }
      note_segment_ends(k, worst_s - worst_gather_s - ready_offset_s, worst_gather_s);
      return;
    }
    // Bucket i starts once every member has produced it: the latest over the replicas of where
    // their last backward produces it (segment_bucket_ready), the buckets one after the other.
    // Taken from the replica whose backward ends last alone, a plan whose replicas end close
    // together started its early buckets too soon: the other replica's shorter backward produces
    // them later (4090 TP4 replicas ending 5.05 s, A100 TP4 ones 5.02 s: a 4090 made 10% faster,
    // so that the A100s end last, gave a step 3.5% longer; s56 engine hunt).
    if (on_wan && worst_bucket_s > 0) {
      wan_segments.add(k, {std::max(0.0, buckets_end_s(worst_bucket_s)), std::max(0.0, buckets_end_s(alone_bucket_s)),
                           overlapped_gather_exposed_s(k, worst_gather_s), worst_latency_s, worst_bucket_s - worst_latency_s},
                       wan_load, bucket_ready_s.data(), buckets);
      return;
    }
    note_segment_ends(k, std::max(0.0, buckets_end_s(worst_bucket_s)), overlapped_gather_exposed_s(k, worst_gather_s));
  }

  /// What segment k's weight all-gather, overlapped with the next step's first forward, exposes:
  /// in the steady state a stage hides it behind that forward and its replica's slack (how much
  /// before the slowest replica it ended its passes), max(0, gather - (forward + slack)) at the
  /// stage that hides least (as sim::hide_overlapped_gathers; tests/sim/gather_overlap_test.cpp).
  double overlapped_gather_exposed_s(int k, double gather_s) const {
    if (gather_s <= 0) return 0.0;
    if (gather_of_slot) {
      for (int r = 0; r < dp; ++r)
        if (const int s = stage_holding(k, r); s >= 0) {
          double& g = (*gather_of_slot)[static_cast<std::size_t>(r) * max_pp + s];
          g = std::max(g, gather_s);
        }
      return 0.0;
    }
    double exposed_s = 0;
    for (int r = 0; r < dp; ++r) {
      if (copy_of && copy_of[r] >= 0) continue;  // its original's figures
      const int s = stage_holding(k, r);
      if (s < 0) continue;
      exposed_s = std::max(exposed_s, gather_s - in.times[static_cast<std::size_t>(r) * max_pp + s].forward_s - slack_s(r));
    }
    return exposed_s;
  }
  /// How much before the slowest replica replica r ends its passes.
  double slack_s(int r) const { return in.replica_time_s[in.slowest_replica] - in.replica_time_s[r]; }

  /// Segment k's reduction ends `reduce_end_s` after the slowest replica's end, on every stage
  /// that holds it (GradSyncEnds), and its weights' all-gather exposes `gather_s`.
  void note_segment_ends(int k, double reduce_end_s, double gather_s) {
    latest_reduce_end_s = std::max(latest_reduce_end_s, reduce_end_s);
    slowest_gather_s = std::max(slowest_gather_s, gather_s);
    if (!ends) return;
    const bool is_aligned = aligned;
    const int* front = front_gpu;
    const int stride = max_pp;
    double* end = ends->reduce_end_s.data();
    for (int r = 0; r < dp; ++r)
      if (const int s = stage_holding(k, r, is_aligned, front, stride); s >= 0) {
        double& end_s = end[r * stride + s];
        end_s = std::max(end_s, reduce_end_s);
      }
  }

  /// Segment k's first group: TP rank 0 of every replica's stage holding it, into `members`.
  /// Returns how its gradients are cut (GroupShard); `symmetric` stays true when every member
  /// has one TP degree within one node (every TP rank's group is then alike).
  GroupShard first_members(int k, bool& symmetric) {
    GroupShard shard;
    int n = 0;  // locals: the member count kept in the object would chain each store to the next load
    const bool is_aligned = aligned;
    const int* front = front_gpu;
    const int stride = max_pp;
    const int* copies = copy_of;
    int* gpus = members.data();
    int* slots = member_slot.data();
    for (int r = 0; r < dp; ++r) {
      const int s = stage_holding(k, r, is_aligned, front, stride);
      if (s < 0) continue;
      // A copy has its base's TP degree, one-node flag, shape and stage split, and its base (an
      // earlier replica) is already in the tests, extremes and parameters below: only its member is new.
      const int slot = r * stride + s;
      slots[n] = slot;
      gpus[n++] = front[slot];
      if (copies && copies[r] >= 0) continue;
      const int tp = plan.replicas[r].stages[s].tp();
      symmetric = symmetric && (shard.max_tp == 0 || tp == shard.max_tp) && in.tp_in_one_node[slot];
      shard.add(tp, member_params(k, r, s));
    }
    count = n;
    // The ring NCCL builds visits each node once (a node's members in a row); the rails' and WAN
    // links' crossings below follow it.
    order_ring_by_node(c, members.data(), count, member_slot.data());
    return shard;
  }

  /// When segment k's groups can start. Each starts when the last of its members has finished its
  /// stage's backward: replica r does so backward_finish_offset before its own end (1F1B
  /// cool-down), at most at the slowest replica's end. Returns how long before that end it
  /// starts. A copy's base has the stage too.
  double readiness_offset_s(int k) const {
    bool any = false;
    double ready_s = 0;
    const bool is_aligned = aligned;
    const int* front = front_gpu;
    const int stride = max_pp;
    for (int r = 0; r < dp; ++r) {
      if (copy_of && copy_of[r] >= 0) continue;
      const int s = stage_holding(k, r, is_aligned, front, stride);
      if (s < 0) continue;
      const StageTimes* t = &in.times[static_cast<std::size_t>(r) * stride];
      const double ready_r_s = in.replica_time_s[r] - finish_offset(r, t, s);
      if (!any || ready_r_s > ready_s) ready_s = ready_r_s, any = true;
    }
    return std::max(0.0, in.replica_time_s[in.slowest_replica] - ready_s);
  }

  /// When segment k's `buckets` are ready (bucket_ready_s), from the slowest replica's end, for
  /// the stages in several groups. A group starts a bucket once every member has produced it
  /// (Megatron-Core's DistributedDataParallel: one per communicator, a bucket's reduction is
  /// launched when all its gradients are ready; Li et al. VLDB 2020, bucketing): the latest over the
  /// members of where its last backward produces it. A member's stage produces segment k within
  /// its window of that pass (DpSegments::backward_window: from the head down, so its later
  /// segments first), bucket i of B at (i + 1)/B of the window, as the simulator releases them
  /// (sim/grad_sync_actors.cpp BucketReleases); interleaved, each chunk's part at that chunk's
  /// own last backward (bucket_ready_before_end_s). Its last backward ends backward_finish_offset
  /// before its replica's end (readiness). Not overlapped: one bucket, when every member has
  /// finished its passes (readiness' offset).
  void segment_bucket_ready(int k, int buckets, double offset_s) {
    if (!plan.overlap_grad_sync) {
      bucket_ready_s.assign(static_cast<std::size_t>(buckets), -offset_s);
      return;
    }
    bucket_ready_s.assign(static_cast<std::size_t>(buckets), -std::numeric_limits<double>::infinity());
    const double slowest_s = in.replica_time_s[in.slowest_replica];
    for (int r = 0; r < dp; ++r) {
      const int s = stage_holding(k, r);
      if (s < 0 || (copy_of && copy_of[r] >= 0)) continue;  // a copy's base has the same times
      const StageTimes* t = &in.times[static_cast<std::size_t>(r) * max_pp];
      const double end_s = in.replica_time_s[r] - finish_offset(r, t, s) - slowest_s;
      const DpSegments::Window w = aligned ? DpSegments::Window{} : segments.backward_window(k, r, in.workload.model);
      const int depth = static_cast<int>(plan.replicas[r].stages.size());
      for (int i = 0; i < buckets; ++i) {
        const double produced = i + 1 == buckets ? w.to : w.from + (w.to - w.from) * (i + 1) / buckets;
        const double before_end_s = interleave > 1 ? bucket_ready_before_end_s(i, buckets, t[s].backward_s, interleave, depth)
                                                   : (1 - produced) * t[s].backward_s;
        bucket_ready_s[i] = std::max(bucket_ready_s[i], end_s - before_end_s);
      }
    }
  }

  /// Where the current segment's buckets end, one after the other at `bucket_s` each, each once
  /// ready (bucket_ready_s), from the slowest replica's end.
  double buckets_end_s(double bucket_s) {
    alone.clear();
    for (double ready_s : bucket_ready_s) alone.push_back({ready_s, bucket_s});
    return serial_buckets_end_s(alone.data(), alone.data() + alone.size());
  }

  /// Where the current segment's slowest group, alone on its links (`bucket_s` a bucket), is done
  /// with its buckets, from the slowest replica's end (stages in several groups; else unused).
  double alone_end_s(double bucket_s) {
    return slot_buckets.empty() ? -std::numeric_limits<double>::infinity() : buckets_end_s(bucket_s);
  }

  /// A bucket's time at the group's bottleneck less its latency steps: its bytes' time.
  double bucket_bytes_s() const { return sync.bucket_s - sync.bucket_latency_s; }

  /// The collective times of the current group (sync), kept while groups and sizes repeat.
  void price_group(const GroupCost& g, double grad_bytes, double gather_bytes, int buckets) {
    if (sync.generation == group_memo.generation && sync.grad_bytes == grad_bytes &&
        sync.gather_bytes == gather_bytes && sync.buckets == buckets)
      return;
    sync = {group_memo.generation, grad_bytes, gather_bytes, buckets, 0, 0, 0, 0, 0, 0};
    if (plan.zero <= 2) {
      // ZeRO-0: all-reduce; ZeRO-1/2: reduce-scatter gradients, all-gather updated weights
      // (ZeRO §5.1-5.2; ZeRO-2's earlier micro-batches reduce in their passes, scatter_s).
      sync.param_gather_s =
          plan.zero == 0 ? 0 : collective_time(CollectiveKind::kAllGather, gather_bytes, g, plan.grad_sync);
      sync.sync_s = collective_time(reduce_kind, grad_bytes, g, plan.grad_sync) + sync.param_gather_s;
      // Overlapped, each bucket is a collective of its own, latency terms included.
      if (buckets > 1) sync.bucket_s = collective_time(reduce_kind, grad_bytes / buckets, g, plan.grad_sync);
      else sync.bucket_s = sync.sync_s - sync.param_gather_s;
      sync.bucket_latency_s = std::min(sync.bucket_s, collective_time(reduce_kind, 1.0, g, plan.grad_sync));
      if (plan.zero == 2)
        sync.scatter_s = sharded_collective_time(CollectiveKind::kReduceScatter, grad_bytes, g, plan.sharded_collectives);
    } else {
      sync.gather_s = sharded_collective_time(CollectiveKind::kAllGather, gather_bytes, g, plan.sharded_collectives);
      sync.scatter_s = sharded_collective_time(CollectiveKind::kReduceScatter, grad_bytes, g, plan.sharded_collectives);
    }
  }

  /// What the current group puts on its members' stages (SlotLoad), each scaled by how far the
  /// member's own side of the ring is below the group's bottleneck.
  ///
  /// Stages in several groups (slot_buckets): the group's bottleneck shares a rail among every
  /// channel it carries for the whole sync, as if all the groups through it moved equal bytes;
  /// they do not (a GPU in a small segment's eight groups and a large segment's two), and under
  /// fair sharing the small groups finish and leave the rail to the large ones. So the rails are
  /// resources of their own (SyncRails: every crossing's bytes, in bucket order), a member's own
  /// side is what it has alone (its rail, its node's fabric, host staging), and what a group takes
  /// alone is its bytes over its smallest such side, group_s x max_i over_i, which keeps a far
  /// member's slow NIC (over 1). A group across zones keeps its time: the WAN link is nobody's
  /// side. (A segment's two 7.7 GB groups through a MI300X's rail, priced at 1/8 of it because of
  /// another segment's eight groups, took 1.3 s; the simulator 0.40 s, as the rail's bytes.)
  void add_slot_loads(const GroupCost& g, int ranks) {
    const bool by_rail = !slot_buckets.empty();
    if (nic_senders)
      for (int i = 0; i < count; ++i) member_channels[i] = channels.per_gpu[members[i]];
    member_over.resize(static_cast<std::size_t>(count));
    // The group's members and channels per node, tallied once (member_side_bandwidth_Bps).
    const bool by_channels = nic_senders && !by_rail;
    if (node_tally.size() < c.nodes.size()) node_tally.assign(c.nodes.size(), NodeTally{});
    for (int i = 0; i < count; ++i) {
      NodeTally& t = node_tally[static_cast<std::size_t>(c.gpus[members[i]].node)];
      ++t.members;
      t.channels += by_channels ? std::max(1, member_channels[i]) : 1;
    }
    double alone = 0;
    bool across_zones = false;
    for (int i = 0; i < count; ++i) {
      // Its own node's sending GPUs share its NICs (the group's figure takes the busiest node's);
      // by rail, the member's side is its own rail's (the sharing is SyncRails').
      NodeSenders own_node_senders;
      if (by_rail) own_node_senders = NodeSenders{1, 1};
      else if (nic_senders) {
        own_node_senders = (*nic_senders)[c.gpus[members[i]].node];
        own_node_senders.senders = std::max(1, own_node_senders.senders);
        own_node_senders.on_busiest_rail = std::max(1, channels.on_rail_of_gpu[members[i]]);  // its own rail
      }
      const double side_Bps =
          member_side_bandwidth_Bps(c, members.data(), count, i, own_node_senders, g.node_shared,
                                    node_tally[static_cast<std::size_t>(c.gpus[members[i]].node)], by_channels);
      member_over[i] = side_Bps > g.bus_bandwidth_Bps ? g.bus_bandwidth_Bps / side_Bps : 1.0;
      alone = std::max(alone, member_over[i]);
      across_zones = across_zones || c.nodes[c.gpus[members[i]].node].zone != c.nodes[c.gpus[members[0]].node].zone;
    }
    for (int i = 0; i < count; ++i) node_tally[static_cast<std::size_t>(c.gpus[members[i]].node)] = NodeTally{};
    if (!by_rail) alone = 1.0;
    if (by_rail) {  // a new group on the rails and WAN links, and what its members will wait for
      const RailGroup on_rails{members.data(), member_slot.data(), count, ranks, g.node_shared,
                               g.bus_bandwidth_Bps, sync.bucket_s, sync.bucket_latency_s, sync.param_gather_s,
                               bucket_ready_s.data(), static_cast<int>(bucket_ready_s.size())};
      alone = std::max(alone, group_rails.add(on_rails, across_zones));
    }
    // Alone, a bucket moves its bytes faster; its latency steps take as long (60 ms a bucket
    // for a reduce-scatter of three across a 30 ms WAN link, whatever the link's share).
    worst_alone_bucket_s = std::max(worst_alone_bucket_s, sync.bucket_latency_s + bucket_bytes_s() * alone);
    for (int i = 0; i < count; ++i) {
      const int slot = member_slot[i];
      // One group stands for every TP rank's when all are alike; else each TP rank of a
      // slot has its own groups, and the slot keeps their mean per GPU.
      const double weight = ranks == 1 ? 1.0 : 1.0 / plan.replicas[slot / max_pp].stages[slot % max_pp].tp();
      const double over = member_over[i];
      SlotLoad& l = load[static_cast<std::size_t>(slot)];
      l.traffic_on_tp_links = l.traffic_on_tp_links || shares_tp_links(slot, g);
      // Its own sides of the rings carry their part of its share of each bucket, each at its rate.
      if (!slot_buckets.empty()) {
        const OwnSides sides = own_sides_of(c, members.data(), count, i, g.node_shared);
        const double bytes = weight * sync.bucket_s * g.bus_bandwidth_Bps;  // its ring share, latency steps as bytes
        for (double ready_s : bucket_ready_s) slot_buckets.add(slot, sides, ready_s, bytes, weight * sync.bucket_s);
      }
      l.gather.add(sync.param_gather_s, over, weight, alone);
      l.segment_ag.add(sync.gather_s, over, weight, alone);
      l.segment_rs.add(sync.scatter_s, over, weight, alone);
    }
  }

  /// Whether a data-parallel group of figures `g` crosses the same kind of link as the TP
  /// collectives of the stage in `slot`: both inside one node, or both across nodes.
  bool shares_tp_links(int slot, const GroupCost& g) const {
    const std::vector<int>& tp_gpus = plan.replicas[slot / max_pp].stages[slot % max_pp].gpus;
    if (tp_gpus.size() < 2) return false;  // no TP collectives
    const int node = c.gpus[tp_gpus.front()].node;
    const bool tp_across_nodes =
        std::any_of(tp_gpus.begin(), tp_gpus.end(), [&](int gpu) { return c.gpus[gpu].node != node; });
    return tp_across_nodes == (g.nodes > 1);
  }

  /// The current group as the simulator lays it out (PlanWork::dp_groups).
  void record_group(int k, double grad_bytes, double gather_bytes, int buckets, double time_s) {
    DpGroup dg;
    dg.gpus.assign(members.begin(), members.begin() + count);
    dg.size_bytes = grad_bytes;
    dg.stage = segments.stage_of(k, 0);
    dg.gather_bytes = gather_bytes;
    dg.buckets = buckets;
    dg.time_s = time_s;
    if (!aligned)
      for (int i = 0; i < count; ++i) {
        const int slot = member_slot[i];
        const DpSegments::Window w = segments.backward_window(k, slot / max_pp, in.workload.model);
        dg.ready_from.push_back(w.from);
        dg.ready_to.push_back(w.to);
      }
    work->dp_groups.push_back(std::move(dg));
  }

  /// After segment k's groups: each stage holding it counts the segment, the end of its slowest
  /// group alone (`groups_end_s`) and the per-pass ZeRO traffic the segment gave it.
  void close_segment_loads(int k, double groups_end_s) {
    for (int r = 0; r < dp; ++r) {
      const int s = stage_holding(k, r);
      if (s < 0) continue;
      SlotLoad& l = load[static_cast<std::size_t>(r) * max_pp + s];
      ++l.groups;
      l.groups_end_s = std::max(l.groups_end_s, groups_end_s);
      l.ag_s += l.segment_ag.time_s();
      l.rs_s += l.segment_rs.time_s();
      l.segment_ag = l.segment_rs = Load{};
    }
  }

  /// Stages in several groups: a stage's reduction ends when its own sides of the rings have sent
  /// all its groups' buckets, each side one after the other in the order they become ready (each
  /// once every member has produced it: segment_bucket_ready), or when its slowest group alone is
  /// done (Load's two bounds, per bucket); overlapped or not, the end of those single-server queues
  /// (OwnSideQueues) beyond the slowest replica's end is exposed. With one group and one ready
  /// time per bucket this is sync_segment's overlapped_sync_exposed_s. The ZeRO-1/2 weight
  /// all-gather follows the reduction, or overlapped runs in the next step's first forward pass.
  void stages_in_several_groups_ends() {
    for (std::size_t slot = 0; slot < slot_buckets.size(); ++slot) {
      const SlotLoad& l = load[slot];
      if (l.groups == 0) continue;
      double reduce_end_s = std::max(l.groups_end_s, slot_buckets.end_s(slot));
      double gather_s = l.gather.time_s();
      // Its groups' ends on every rail they cross, its own GPUs' among them.
      group_rails.wait_for_groups(slot, reduce_end_s, gather_s);
      if (plan.overlap_grad_sync) {
        reduce_end_s = std::max(0.0, reduce_end_s);
        if (gather_of_slot) (*gather_of_slot)[slot] = std::max((*gather_of_slot)[slot], gather_s), gather_s = 0;
        else gather_s = std::max(0.0, gather_s - in.times[slot].forward_s - slack_s(static_cast<int>(slot) / max_pp));
      }
      latest_reduce_end_s = std::max(latest_reduce_end_s, reduce_end_s);
      slowest_gather_s = std::max(slowest_gather_s, gather_s);
      if (ends) ends->reduce_end_s[slot] = reduce_end_s;
    }
  }

  std::vector<double>* gather_of_slot;        ///< see the constructor; nullptr: the gathers' exposure after the step
  const StepInput& in;
  const Cluster& c;
  const Plan& plan;
  PlanWork* work;
  GradSyncEnds* ends;                         ///< each stage's reduction end, when asked for
  const int dp;
  /// Chunks a stage (interleaved schedule), else 1: each chunk's gradients come at its own last
  /// backward (bucket_ready_before_end_s), and a stage's last backward is one chunk's.
  const int interleave;
  const double grad_bpp, weight_bpp;
  const int* copy_of;
  /// StepInput::front_gpu and max_pp read through one pointer (the hot loops' stores may alias
  /// the vector's, which would reload it through `in` at every replica).
  const int* front_gpu;
  const int max_pp;
  const DpSegments segments;
  const bool aligned;
  const bool shared_gpus;
  const CollectiveKind reduce_kind;
  const PassTraffic traffic;                  ///< what every micro-batch's passes move (ZeRO-2/3)
  ScratchVector<SlotLoad> load;               ///< [slot], see SlotLoad (empty when not needed)
  /// [slot]: the buckets its own sides of the rings carry (stages in several groups, ZeRO 0-2;
  /// else empty): ready from the slowest replica's end, busy its share of each, a queue per side.
  OwnSideQueues slot_buckets;
  ScratchVector<double> bucket_ready_s;       ///< the current segment's, see segment_bucket_ready
  ScratchVector<SyncBucket> alone;            ///< scratch for buckets_end_s
  ScratchVector<double> member_over;          ///< add_slot_loads: each member's bottleneck over its side
  ScratchVector<NodeTally> node_tally;        ///< add_slot_loads: [node] the group's members there (zero between groups)
  GroupsOnRails group_rails;                  ///< stages in several groups: see add_slot_loads
  double worst_alone_bucket_s = 0;            ///< the current segment's slowest bucket alone (add_slot_loads)
  /// The latest reduction end of any stage (from the slowest replica's end) and the slowest
  /// ZeRO-1/2 weight gather's exposed part (note_segment_ends).
  double latest_reduce_end_s = -std::numeric_limits<double>::infinity(), slowest_gather_s = 0;
  ScratchVector<int> members, member_slot;    ///< the current group's GPUs and their slots
  DpNicChannels channels;                     ///< see the constructor
  ScratchVector<int> member_channels;         ///< the current group's members' channels.per_gpu
  const std::vector<NodeSenders>* nic_senders = nullptr;  ///< &channels.per_node, or nullptr: every GPU of a node
  int count = 0;                              ///< members of the current group
  DpGroupMemo group_memo;
  SyncTimes sync;
  std::vector<double> wan_load;               ///< by zone pair; empty with one zone
  std::vector<double> wan_alone;              ///< the current segment's groups' share, alone on the links
  DpGroupMemo alone_memo;                     ///< dp_group_cost's memo of the groups priced alone
  WanSegments wan_segments{c};                ///< segments across WAN links, their ends after all are priced
  std::vector<double> wan_senders;            ///< the current segment's groups' share
  const std::vector<double>* wan = nullptr;   ///< &wan_senders when groups cross zones
};

}  // namespace

namespace grad_sync_detail {

double grad_sync_pass_s(const StepInput& in, PlanWork* work, GradSyncEnds* ends, std::vector<double>* gathers) {
  return GradSync(in, work, ends, gathers).exposed_s();
}

}  // namespace grad_sync_detail

}  // namespace hetsim::models
