// SPDX-License-Identifier: Apache-2.0
// The step beyond the pipeline: gradient sync (grad_sync_cost.cpp), tied-embedding sync,
// optimizer, memory feasibility, FLOPs and price.
#include "step_cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "comm_cost.hpp"
#include "dp_segments.hpp"
#include "grad_sync_rails.hpp"
#include "memory_cost.hpp"
#include "scratch_vector.hpp"
#include "small_copy.hpp"
#include "topology.hpp"
#include "units.hpp"

namespace hetsim::models {

// Bucketed gradient sync (grad_sync_cost.cpp uses these; declared in step_cost.hpp).
int grad_bucket_count(double params_per_gpu, int dp) {
  const double bucket = std::max(40e6, 1e6 * dp);
  return static_cast<int>(std::clamp(std::ceil(params_per_gpu / bucket), 1.0, static_cast<double>(kMaxGradBuckets)));
}

double overlapped_sync_exposed_s(double bucket_s, double backward_s, int buckets, int interleave, int depth) {
  const double b = std::max(1, buckets);
  if (interleave <= 1) return std::max(bucket_s, b * bucket_s - backward_s * (1 - 1 / b));
  // The single server of serial_buckets_end_s with bucket i ready r_i before the end (r_i falls
  // with i): the end is max_i (B - i) t - r_i.
  double end_s = bucket_s;
  for (int i = 0; i < buckets; ++i)
    end_s = std::max(end_s, (buckets - i) * bucket_s - bucket_ready_before_end_s(i, buckets, backward_s, interleave, depth));
  return end_s;
}

BucketChunkPoint bucket_chunk_point(int i, int buckets, int interleave) {
  const int v = std::max(1, interleave);
  const double done = static_cast<double>(i + 1) * v / std::max(1, buckets);  // chunks' worth produced
  const int order = std::clamp(static_cast<int>(std::ceil(done - 1e-9)) - 1, 0, v - 1);
  return {order, std::min(1.0, done - order)};
}

double bucket_ready_before_end_s(int i, int buckets, double backward_s, int interleave, int depth) {
  const int v = std::max(1, interleave);
  const double chunk_s = backward_s / v;
  const BucketChunkPoint at = bucket_chunk_point(i, buckets, v);
  return (v - 1 - at.order) * std::max(1, depth) * chunk_s + (1 - at.into) * chunk_s;
}

double serial_buckets_end_s(SyncBucket* first, SyncBucket* last) {
  std::stable_sort(first, last, [](const SyncBucket& x, const SyncBucket& y) { return x.ready_s < y.ready_s; });
  double t = -std::numeric_limits<double>::infinity();
  for (; first != last; ++first) t = std::max(t, first->ready_s) + first->busy_s;
  return t;
}

double optimizer_bytes_per_param(Dtype dtype, Optimizer optimizer) {
  const bool fp32 = dtype == Dtype::kFp32 || dtype == Dtype::kTf32;
  // The terms of step_cost.hpp: the update (Adam 28, SGD with momentum 20), then the grad norm
  // alone for fp32 (4), or for mixed precision unscale + inf check (8), norm (4), the copy to the
  // 16-bit weights (6) and the clip, 20 in all.
  const double update_bytes = optimizer == Optimizer::kAdam ? 28.0 : 20.0;
  return fp32 ? update_bytes + 4.0 : update_bytes + 20.0;
}

double grad_sync_bytes_per_param(const TrainingSpec& training) { return state_bytes_per_param(training).grads; }

namespace {

/// "needs 81.2 GiB of 80.0 GiB"; below a tenth of a GiB the sizes in their own units (a part of
/// 1 MiB read "needs 0.0 GiB of 0.0 GiB": s60 hunt).
std::string memory_need_text(double need_bytes, double capacity_bytes) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  if (std::min(need_bytes, capacity_bytes) < 0.1 * kGiB)
    return "needs " + format_size(need_bytes) + " of " + format_size(capacity_bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf, "needs %.1f GiB of %.1f GiB", need_bytes / kGiB, capacity_bytes / kGiB);
  return buf;
}

/// Per-GPU figures of a node type that the optimizer, MFU and memory checks need.
struct TypeFigures {
  const NodeType* type = nullptr;
  double peak_flop_per_s = 0;  ///< datasheet dense peak at the matmul dtype (utilisation_peak), 0 when unsupported
  double capacity_bytes = 0;
  double optimizer_Bps = 0;    ///< memory bandwidth the optimizer step streams at (optimizer_memory())
};

TypeFigures type_figures(const NodeType& nt, const TrainingSpec& training) {
  return {&nt, mfu_peak_flop_per_s(nt.gpu, training), nt.gpu.memory_bytes,
          nt.gpu.memory_bandwidth_Bps * nt.gpu.efficiency.optimizer_memory()};
}

/// Tied embeddings with pp > 1: the first and last stage all-reduce the word-embedding
/// gradient after their DP sync (Megatron-LM finalize_model_grads: each rank reduces its DP
/// groups, then _allreduce_embedding_grads; Shoeybi et al. 2019), so a replica's pairs start
/// once its own first and last stages have reduced (`ends`), not every stage of the plan.
/// Each stage holds vocab / tp of the rows (vocabulary-parallel embedding and LM head); when the
/// two stages' TP degrees differ, the rows fall into lcm(tp_first, tp_last) shards, each
/// all-reduced by the two GPUs that hold it, and a GPU of the lower degree is in several such
/// pairs (as the data-parallel shard groups, dp_segments.hpp GroupShard). Returns when the last
/// pair is done, from the slowest replica's end (-infinity without pairs); with `work`, every
/// pair as a group for the simulator.
double tied_embedding_sync_end_s(const StepInput& in, double grad_bpp, const GradSyncEnds& ends, PlanWork* work) {
  const Cluster& c = in.cluster;
  const Plan& plan = in.plan;
  const ModelSpec& m = in.workload.model;
  const int dp = plan.dp();
  const auto shards_of = [](const Replica& rep) {
    const int first = rep.stages.front().tp(), last = rep.stages.back().tp();
    return first == last ? first : std::lcm(first, last);  // the usual plan: no gcd loop
  };
  // Every pair of every replica runs its all-reduce at once, so a node's NICs are shared by the
  // pairs of the first- and last-stage GPUs it holds (one channel per pair a GPU is in), not by
  // all its GPUs (which the default concurrency of group_cost assumes for the DP sync).
  bool one_pair_a_gpu = true;
  for (const Replica& rep : plan.replicas)
    one_pair_a_gpu = one_pair_a_gpu && (rep.stages.size() < 2 || rep.stages.front().tp() == rep.stages.back().tp());
  // The usual plan: one pair per GPU of the two stages, all pairs alike, each node's senders
  // filling its rails. Mixed degrees: pairs of unequal size share rails, so each is priced alone
  // on its rails and each rail carries the sum of its pairs' bytes (the small ones finish and
  // leave it to the large; see grad_sync_rails.hpp), the slower of the two setting the time.
  ScratchVector<NodeSenders> senders(c.nodes.size(), one_pair_a_gpu ? NodeSenders{} : NodeSenders{1, 1});
  SyncRails rails(c);  // mixed degrees: every pair's bytes on its members' rails, all ready at once
  // Locals for what the loops read: their int stores could change any int the compiler cannot
  // see is distinct (max_pp, the tables' sizes), which it would then reload at every replica.
  const int max_pp = in.max_pp;
  const char* in_one_node = in.tp_in_one_node.data();
  const double* reduce_end = ends.reduce_end_s.data();
  if (one_pair_a_gpu)
    for (int r = 0; r < dp; ++r) {
      const Replica& rep = plan.replicas[r];
      if (rep.stages.size() < 2) continue;
      for (const std::size_t s : {std::size_t{0}, rep.stages.size() - 1}) {
        const std::vector<int>& gpus = rep.stages[s].gpus;
        if (in_one_node[static_cast<std::size_t>(r) * max_pp + s])  // the search's hot path
          senders[c.gpus[gpus.front()].node].senders += static_cast<int>(gpus.size());
        else
          for (int g : gpus) ++senders[c.gpus[g].node].senders;
      }
    }
  // Pairs whose stages lie in different zones: all of them cross the zones' WAN link at once,
  // each at its bytes' share of it (a replica's pairs move V h between them, whatever its shards:
  // by count, a TP-1 replica's one pair beside a TP-8 replica's eight got a ninth of the link for
  // half the bytes crossing it, 0.24 s where the simulator's max-min sharing takes 0.10 s).
  const double replica_bytes = static_cast<double>(m.vocab) * m.hidden * grad_bpp;
  ScratchVector<double> embedding_wan(c.zones.size() > 1 ? c.zones.size() * c.zones.size() : 0, 0.0);
  ScratchVector<double> pair_wan;  // one pair's share (wan_senders_for)
  for (const Replica& rep : plan.replicas) {
    if (rep.stages.size() < 2) continue;
    const int za = c.nodes[c.gpus[rep.stages.front().gpus.front()].node].zone;
    const int zb = c.nodes[c.gpus[rep.stages.back().gpus.front()].node].zone;
    if (za != zb) embedding_wan[zone_pair_index(c, za, zb)] += replica_bytes;
  }
  // The slowest pair sets the wait: every replica's pairs are priced (replica 0's alone would
  // miss a heterogeneous plan whose other replicas sit on slower or busier nodes). A pair's
  // time depends only on its two nodes' types and zones, whether they are one node, their NIC
  // sharing and the shard size, so pairs with equal keys (every replica of a uniform plan)
  // reuse one figure.
  struct PairKey {
    int type_a, type_b, zone_a, zone_b, same_node;
    NodeSenders senders_a, senders_b;
    int shards;
    bool operator==(const PairKey&) const = default;
  };
  ScratchVector<std::pair<PairKey, double>> priced;
  double worst = -std::numeric_limits<double>::infinity(), latest_start_s = worst;
  for (int r = 0; r < dp; ++r) {
    const Replica& rep = plan.replicas[r];
    if (rep.stages.size() < 2) continue;
    const Stage& a = rep.stages.front();
    const Stage& b = rep.stages.back();
    const int shards = shards_of(rep);
    const double bytes = replica_bytes / shards;
    if (!embedding_wan.empty()) wan_senders_for(embedding_wan, bytes, pair_wan);
    // Stages of one TP degree, each inside one node: every shard's pair joins the same two nodes,
    // so the first pair's time is every pair's (the search's hot path: priced once a replica).
    const std::size_t first_slot = static_cast<std::size_t>(r) * max_pp;
    const std::size_t last_slot = first_slot + rep.stages.size() - 1;
    const double start_s = std::max(reduce_end[first_slot], reduce_end[last_slot]);
    latest_start_s = std::max(latest_start_s, start_s);
    const bool alike = one_pair_a_gpu && in_one_node[first_slot] && in_one_node[last_slot];
    double t_alike = -1;
    for (int j = 0; j < shards; ++j) {
      if (alike && j > 0) {
        if (!work) break;
        DpGroup dg;
        dg.gpus = {a.gpus[j], b.gpus[j]};
        dg.size_bytes = bytes;
        dg.embedding = true;
        dg.time_s = t_alike;
        work->dp_groups.push_back(std::move(dg));
        continue;
      }
      const int pair[2] = {a.gpus[j * a.tp() / shards], b.gpus[j * b.tp() / shards]};
      const int node_a = c.gpus[pair[0]].node, node_b = c.gpus[pair[1]].node;
      const PairKey key{c.nodes[node_a].node_type, c.nodes[node_b].node_type, c.nodes[node_a].zone,
                        c.nodes[node_b].zone, node_a == node_b ? 1 : 0, senders[node_a], senders[node_b], shards};
      // A ring of two all-reduces by sending its shard once each way through each member's rail.
      if (!one_pair_a_gpu && node_a != node_b)
        for (const int g : pair)
          if (const int rail = rails.rail_of(g); rail >= 0) rails.add_reduce(rail, 0, bytes);
      double t = -1;  // times are >= 0
      for (const auto& [k, time_s] : priced)
        if (k == key) t = time_s;
      if (t < 0) {
        t = collective_time(CollectiveKind::kAllReduce, bytes,
                            group_cost(c, pair, 2, 0, embedding_wan.empty() ? nullptr : &pair_wan, &senders),
                            plan.grad_sync);
        priced.emplace_back(key, t);
      }
      worst = std::max(worst, start_s + t);
      t_alike = t;
      if (work) {
        DpGroup dg;
        dg.gpus = {pair[0], pair[1]};
        dg.size_bytes = bytes;
        dg.embedding = true;
        dg.time_s = t;
        work->dp_groups.push_back(std::move(dg));
      }
    }
  }
  // Mixed degrees: each rail carries its pairs' bytes from the latest replica's start.
  for (int r = 0; r < rails.count(); ++r) worst = std::max(worst, latest_start_s + rails.reduce_end_s(r));
  return worst;
}

/// What the optimizer, MFU and memory checks need of one stage (step_cost memoises them).
struct StageFigures {
  int shape, stage, pp, micro_batches, node_type;  ///< node_type -1: not kept (multi-node stage)
  double peaks_flop_per_s, capacity_bytes, optimizer_s, memory_bytes, flop;
};

/// The memo entries of one-node stages by their key (shape, stage, pp, micro-batches, node type):
/// scanned while few (a plan's stages mostly repeat: the predictor's hot path), indexed by a hash
/// once many. With shapes left distinct per replica (PlanWork kept for the simulator), 4000
/// replicas of 96 stages scanned 384,000 entries per stage: 95 s before the simulator started.
class StageMemoIndex {
 public:
  /// The entry of memo equal to `key` by `same`, or -1.
  template <class Same>
  int find(const std::vector<StageFigures>& memo, const StageFigures& key, Same&& same) {
    if (memo.size() <= kScanned) {
      for (std::size_t i = 0; i < memo.size(); ++i)
        if (same(memo[i])) return static_cast<int>(i);
      return -1;
    }
    for (; indexed_ < memo.size(); ++indexed_)
      if (memo[indexed_].node_type >= 0) index_.emplace(key_of(memo[indexed_]), static_cast<int>(indexed_));
    const auto it = index_.find(key_of(key));
    return it == index_.end() ? -1 : it->second;
  }

 private:
  static constexpr std::size_t kScanned = 32;
  struct Key {
    int shape, stage, pp, micro_batches, node_type;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      std::size_t h = 1469598103934665603ull;  // FNV-1a over the five ints
      for (int x : {k.shape, k.stage, k.pp, k.micro_batches, k.node_type})
        h = (h ^ static_cast<std::size_t>(static_cast<unsigned>(x))) * 1099511628211ull;
      return h;
    }
  };
  static Key key_of(const StageFigures& f) { return {f.shape, f.stage, f.pp, f.micro_batches, f.node_type}; }
  std::unordered_map<Key, int, KeyHash> index_;  ///< first entry of each key (emplace keeps it)
  std::size_t indexed_ = 0;                      ///< memo entries indexed so far
};

/// Stage s of replica `rep` (shape index `shape`): the summed peaks of its GPUs, the smallest
/// memory capacity and bandwidth among them, its optimizer step (memory-bound over its share of
/// the parameters, ZeRO >= 1 sharding it over the replicas), its memory (stage_memory) and its
/// FLOPs over the step. Marks the nodes of a multi-node stage in `node_used` (the caller marks
/// a one-node stage's); `figures` caches the figures of the node type a one-node stage met last.
StageFigures stage_figures(const StepInput& in, const Replica& rep, int s, int shape, int node_type,
                           TypeFigures& figures, std::vector<char>& node_used) {
  const Cluster& c = in.cluster;
  const Plan& plan = in.plan;
  const Workload& w = in.workload;
  const ModelSpec& m = w.model;
  const Dtype dtype = w.training.dtype;
  const int dp = plan.dp();
  const int v = std::max(1, plan.interleave);
  const int pp = static_cast<int>(rep.stages.size());
  const Stage& st = rep.stages[s];
  const bool one_node = node_type >= 0;
  const double opt_bpp = optimizer_bytes_per_param(dtype, w.training.optimizer);
  const StageCost& sc = in.costs[shape];
  double capacity_bytes = 0, peaks_flop_per_s = 0, optimizer_Bps = 0, reserve_bytes = 0;
  const int tp = st.tp();
  if (one_node) {
    // One node, one type: its figures are looked up once per type over all stages.
    const NodeType& nt = c.node_types[node_type];
    if (&nt != figures.type) figures = type_figures(nt, w.training);
    reserve_bytes = framework_reserve_bytes(nt.gpu.vendor);
    peaks_flop_per_s = tp * figures.peak_flop_per_s;
    capacity_bytes = figures.capacity_bytes;
    optimizer_Bps = figures.optimizer_Bps;
  } else {
    const NodeType* last = nullptr;
    double last_peak_flop_per_s = 0;
    int prev_node = -1, run = 0;  // GPUs of the current type not yet added to `peaks_flop_per_s`
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
        peaks_flop_per_s += run * last_peak_flop_per_s;
        run = 0;
        last = &nt;
        reserve_bytes = std::max(reserve_bytes, framework_reserve_bytes(nt.gpu.vendor));
        const TypeFigures f = type_figures(nt, w.training);
        last_peak_flop_per_s = f.peak_flop_per_s;
        capacity_bytes = capacity_bytes == 0 ? f.capacity_bytes : std::min(capacity_bytes, f.capacity_bytes);
        optimizer_Bps = optimizer_Bps == 0 ? f.optimizer_Bps : std::min(optimizer_Bps, f.optimizer_Bps);
      }
      ++run;
    }
    peaks_flop_per_s += run * last_peak_flop_per_s;
  }
  const double opt_params = sc.params / (plan.zero >= 1 ? dp : 1);
  StageMemoryInput mi;
  mi.model = &m;
  mi.dtype = dtype;
  mi.optimizer = w.training.optimizer;
  mi.fp32_grad_allreduce = w.training.fp32_grad_allreduce;
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
  mi.whole_vocab = w.training.engine_kernels;
  mi.params = sc.params;
  mi.reserve_bytes = reserve_bytes;
  return {shape, s, pp, rep.micro_batches, node_type, peaks_flop_per_s, capacity_bytes, opt_params * opt_bpp / optimizer_Bps,
          stage_memory(mi).total(), rep.micro_batches * (sc.forward.flop + sc.backward.flop) * st.tp()};
}

/// The simulator's per-stage figures of stage s of replica r (build_plan_work).
void record_stage_work(const StepInput& in, PlanWork& work, int r, int s, const StageFigures& f, double grad_bpp) {
  StageWork* sw = nullptr;
  for (StageWork& x : work.replicas[r])
    if (x.stage == s) sw = &x;
  if (!sw) return;
  const std::size_t k = static_cast<std::size_t>(r) * in.max_pp + s;
  sw->grad_sync_bytes = in.costs[f.shape].params * grad_bpp;
  sw->optimizer_s = f.optimizer_s;
  sw->memory_bytes = f.memory_bytes;
  sw->memory_capacity_bytes = f.capacity_bytes;
  sw->forward_s = in.times[k].forward_s;
  sw->backward_s = in.times[k].backward_s;
}

/// Price of the nodes a plan uses: whole nodes, each at its type's price_per_hour.
double price_of_used_nodes(const Cluster& c, const std::vector<char>& node_used) {
  double price = 0;
  for (std::size_t n = 0; n < node_used.size(); ++n)
    if (node_used[n]) price += c.node_types[c.nodes[n].node_type].price_per_hour;
  return price;
}

}  // namespace

double mfu_peak_flop_per_s(const GpuType& gpu, const TrainingSpec& training) {
  const Dtype dtype = gpu.matmul_dtype(training.dtype, training.allow_tf32);
  return gpu.supports(dtype) ? gpu.utilisation_peak(dtype) : 0;
}

StepCost step_cost(const StepInput& in, PlanWork* work) {
  const Cluster& c = in.cluster;
  const Plan& plan = in.plan;
  const Workload& w = in.workload;
  const int dp = plan.dp();
  const double grad_bpp = grad_sync_bytes_per_param(w.training);
  StepCost out;
  const std::size_t slots = static_cast<std::size_t>(dp) * in.max_pp;
  out.stage_memory_bytes.assign(slots, 0);
  out.stage_capacity_bytes.assign(slots, 0);
  if (w.model.tied_embeddings) {
    // The embedding pairs run between their stages' reductions and the weights' all-gather.
    GradSyncEnds ends;
    out.dp_exposed_s = grad_sync_exposed_s(in, work, &ends, &out.paced_replica);
    out.dp_exposed_s = std::max(out.dp_exposed_s, tied_embedding_sync_end_s(in, grad_bpp, ends, work) + ends.gather_s);
  } else {
    out.dp_exposed_s = grad_sync_exposed_s(in, work, nullptr, &out.paced_replica);
  }
  out.dp_exposed_s = std::max(0.0, out.dp_exposed_s);

  // Optimizer step (memory-bound, sharded by ZeRO >= 1), memory, FLOPs, peaks, price.
  ScratchVector<char> node_used(c.nodes.size(), 0);
  // A one-node stage's figures depend only on its shape, position, micro-batch count and node
  // type: stages with equal keys (the same stage of every replica of a uniform plan) share them.
  ScratchVector<StageFigures> memo;
  memo.reserve(2 * static_cast<std::size_t>(in.max_pp));
  ScratchVector<int> memo_of_stage(in.max_pp, -1);  ///< memo entry stage s used last
  StageMemoIndex memo_index;
  ScratchVector<int> memo_of_slot(in.copy_of ? slots : 0);  ///< memo entry of each stage, for copies
  // Sums and maxima in locals: fields of `out` are stored back to memory on every iteration,
  // which chains each add through a store and a load. The sums add each replica's subtotal, so
  // that a copy adds its base's (the same value, without walking its stages' figures again).
  double peak_sum = 0, hardware_flop = 0, optimizer_s = 0, memory_peak = 0;
  double worst_over = 1;  // the reason names the stage furthest over its capacity, not the first
  ScratchVector<double> replica_peak(in.copy_of ? dp : 0), replica_flop(in.copy_of ? dp : 0);
  TypeFigures figures;  // of the node type met last by a one-node stage
  for (int r = 0; r < dp; ++r) {
    const Replica& rep = plan.replicas[r];
    const int pp = static_cast<int>(rep.stages.size());
    const int base = in.copy_of ? (*in.copy_of)[r] : -1;
    if (base >= 0) {
      // A copy's stages are one-node stages with their base stages' shapes, positions, depth,
      // micro-batch count and node types: the memo entries base's stages found (or made), hence
      // base's sums, maxima and memory figures. A stage over capacity: base's (an earlier
      // replica) was too, and set the reason first. Only the nodes it uses are its own.
      const std::size_t k0 = static_cast<std::size_t>(r) * in.max_pp, b0 = static_cast<std::size_t>(base) * in.max_pp;
      copy_few(memo_of_slot.data() + b0, memo_of_slot.data() + k0, pp);
      copy_few(out.stage_memory_bytes.data() + b0, out.stage_memory_bytes.data() + k0, pp);
      copy_few(out.stage_capacity_bytes.data() + b0, out.stage_capacity_bytes.data() + k0, pp);
      const int* nodes = in.front_node->data() + k0;
      char* used = node_used.data();
      for (int s = 0; s < pp; ++s) used[nodes[s]] = 1;
      peak_sum += replica_peak[r] = replica_peak[base];
      hardware_flop += replica_flop[r] = replica_flop[base];
      continue;
    }
    double rep_peak = 0, rep_flop = 0;
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
        else hit = memo_index.find(memo, StageFigures{shape, s, pp, rep.micro_batches, node_type, 0, 0, 0, 0, 0}, same);
      }
      if (hit < 0) {
        memo.push_back(stage_figures(in, rep, s, shape, node_type, figures, node_used));
        hit = static_cast<int>(memo.size()) - 1;
      }
      if (one_node) memo_of_stage[s] = hit;
      if (in.copy_of) memo_of_slot[k] = hit;
      const StageFigures& f = memo[hit];
      rep_peak += f.peaks_flop_per_s;
      rep_flop += f.flop;
      const double opt_s = f.optimizer_s;
      optimizer_s = std::max(optimizer_s, opt_s);
      const double mem = f.memory_bytes, capacity = f.capacity_bytes;
      out.stage_memory_bytes[k] = mem;
      out.stage_capacity_bytes[k] = capacity;
      memory_peak = std::max(memory_peak, mem);
      if (mem > capacity * worst_over) {
        worst_over = mem / capacity;
        out.memory_reason = "stage " + std::to_string(s) + (dp > 1 ? " of replica " + std::to_string(r) : "") +
                            " " + memory_need_text(mem, capacity);
      }
      if (work) record_stage_work(in, *work, r, s, f, grad_bpp);
    }
    if (in.copy_of) replica_peak[r] = rep_peak, replica_flop[r] = rep_flop;
    peak_sum += rep_peak;
    hardware_flop += rep_flop;
  }
  out.peak_sum_flops = peak_sum;
  out.hardware_flop = hardware_flop;
  out.optimizer_s = optimizer_s;
  out.memory_peak_bytes = memory_peak;
  out.cost_per_hour = price_of_used_nodes(c, node_used);
  return out;
}

}  // namespace hetsim::models
