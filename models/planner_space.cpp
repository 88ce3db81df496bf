// SPDX-License-Identifier: Apache-2.0
// The planner's search space: pools, valid TP degrees, schedule memory factors, link estimates.
#include "planner_space.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "comm_cost.hpp"
#include "memory_cost.hpp"
#include "step_cost.hpp"
#include "topology.hpp"

namespace hetsim::models::planner {

namespace {

/// Two node types a plan cannot tell apart: the same GPU, fabric, NICs, host link and prices
/// (only the names differ, e.g. one node type per rack or per purchase).
bool same_hardware(const NodeType& a, const NodeType& b) {
  const auto intra = [](const IntraFabric& f) {
    return std::tuple(f.kind, f.bandwidth_Bps, f.latency_s, f.measured, f.peer_to_peer, f.mesh);
  };
  const auto nics = [](const NicSpec& n) {
    return std::tuple(n.count, n.bandwidth_Bps, n.latency_s, n.kind, n.gpu_direct, n.measured);
  };
  return a.gpu.name == b.gpu.name && a.gpus_per_node == b.gpus_per_node && intra(a.intra) == intra(b.intra) &&
         nics(a.nics) == nics(b.nics) && a.host_link_Bps == b.host_link_Bps && a.price_per_hour == b.price_per_hour &&
         a.spot_price_per_hour == b.spot_price_per_hour && a.preemption_rate_per_hour == b.preemption_rate_per_hour &&
         a.checkpoint_bandwidth_Bps == b.checkpoint_bandwidth_Bps && a.restart_time_s == b.restart_time_s;
}

}  // namespace

std::chrono::steady_clock::time_point search_deadline(double time_limit_s, std::chrono::steady_clock::time_point start) {
  using Clock = std::chrono::steady_clock;
  const double room_s = std::chrono::duration<double>(Clock::time_point::max() - start).count();
  return time_limit_s > 0 && time_limit_s < 0.5 * room_s
             ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit_s))
             : Clock::time_point::max();
}

std::vector<Pool> make_pools(const Cluster& cluster) {
  std::vector<Pool> pools;
  // Node types of the same hardware share a pool: the search grows with the number of pools,
  // and splitting identical nodes over several only hides plans that mix them.
  std::vector<int> canonical(cluster.node_types.size());
  for (std::size_t t = 0; t < cluster.node_types.size(); ++t) {
    canonical[t] = static_cast<int>(t);
    for (std::size_t u = 0; u < t; ++u)
      if (same_hardware(cluster.node_types[t], cluster.node_types[u])) {
        canonical[t] = canonical[u];
        break;
      }
  }
  std::map<std::pair<int, int>, int> index;  // (zone, canonical node type) -> pool
  for (int n = 0; n < static_cast<int>(cluster.nodes.size()); ++n) {
    const Node& node = cluster.nodes[n];
    const auto key = std::pair(node.zone, canonical[node.node_type]);
    auto it = index.find(key);
    if (it == index.end()) {
      Pool p;
      p.zone = node.zone;
      p.node_type = node.node_type;
      p.gpus_per_node = cluster.node_types[node.node_type].gpus_per_node;
      p.label = cluster.zones[node.zone].name + "/" + cluster.node_types[node.node_type].name;
      it = index.emplace(key, static_cast<int>(pools.size())).first;
      pools.push_back(std::move(p));
    }
    pools[it->second].nodes.push_back(n);
  }
  return pools;
}

std::vector<int> valid_tp_degrees(const ModelSpec& m, int gpus_per_node, const std::vector<int>& wanted) {
  std::vector<int> out;
  for (int tp : wanted) {
    if (tp < 1 || tp > gpus_per_node || gpus_per_node % tp != 0) continue;
    if (m.heads % tp != 0 || m.ffn_hidden % tp != 0) continue;
    if (m.kv_heads % tp != 0 && tp % m.kv_heads != 0) continue;
    out.push_back(tp);
  }
  return out;
}

bool sequence_parallel_fits(const ModelSpec& m, const std::vector<int>& tp_degrees) {
  // check_plan: SP splits the sequence over the TP ranks of every stage.
  return std::all_of(tp_degrees.begin(), tp_degrees.end(), [&](int tp) { return tp <= 1 || m.seq_len % tp == 0; });
}

double inflight_factor(int s, int stages, int micro_batches, int interleave) {
  const int v = std::max(1, interleave);
  return in_flight_chunks(v > 1 ? Schedule::kInterleaved : Schedule::k1f1b, s, stages, micro_batches, v) / v;
}

double zero_sharded_fraction(int zero, const TrainingSpec& training) {
  const StateBytes b = state_bytes_per_param(training);
  const double total = b.weights + b.grads + b.optimizer;
  switch (zero) {
    case 0: return 0.0;
    case 1: return b.optimizer / total;
    case 2: return (b.optimizer + b.grads) / total;
    default: return 1.0;
  }
}

double zero_weight_scale(int zero, int dp, const TrainingSpec& training) {
  const double f = zero_sharded_fraction(zero, training);
  return 1.0 - f + f / std::max(1, dp);
}

double p2p_estimate_s(const Cluster& c, int from, int tp_from, int to, int tp_to, double boundary_bytes,
                      int wan_pipelines, int copies_out, int copies_in) {
  if (boundary_bytes <= 0) return 0;
  (void)tp_to;  // each rank of the sending stage sends its slice, whatever the receiver's TP
  // Across zones the WAN link is shared by every flow crossing it (tp_from per pipeline), not by
  // one node's GPUs: 20 pipelines of a mixed kind over two zones were estimated at a node's share
  // (8 flows), 14% fast (geo-two-zones with a 5th A100 node, llama2-7b: 397,034 estimated tokens/s
  // for 346,723 predicted, which kept the better 64-GPU plan out of the predicted candidates).
  const bool crosses_zones = c.nodes[c.node_of_gpu(from)].zone != c.nodes[c.node_of_gpu(to)].zone;
  const int wan_senders = crosses_zones ? std::max(1, wan_pipelines) * tp_from : 0;
  // Flows of the sender's size on each side (the predictor's path_senders): a TP-8 stage sending
  // into a TP-1 one loads the receiving NIC with eight flows.
  return p2p_time(boundary_bytes / tp_from,
                  path_between(c, from, to, copies_out * tp_from, copies_in * tp_from, wan_senders));
}

BoundaryCrossings boundary_crossings(int j, int copies, int units_per_node, bool last_in_pool) {
  BoundaryCrossings b;
  const int upn = std::max(1, units_per_node);
  const int lo = j * copies, hi = lo + copies;  // stage j's units
  const int n = lo / upn;                       // copy 0's node
  const int node_end = (n + 1) * upn;
  // Stage j's units on node n; in the pool, unit u's peer u + copies is off the node iff
  // u + copies >= node_end.
  b.out = std::max(0, std::min(hi, node_end) - std::max(lo, last_in_pool ? lo : node_end - copies));
  if (last_in_pool) return b;
  const int m = hi / upn;  // the node of copy 0's receiver, unit hi
  // Stage j + 1's units on node m whose sender u - copies is off it: u < m*upn + copies.
  b.in = std::max(0, std::min({hi + copies, (m + 1) * upn, m * upn + copies}) - std::max(hi, m * upn));
  return b;
}

BoundaryCrossings with_same_parity_exchanges(BoundaryCrossings c, int j, int copies, int units_per_node,
                                             int stages, bool before, bool after) {
  const int upn = std::max(1, units_per_node);
  const auto first_stage = [&](int node) { return node * upn / copies; };
  const auto last_stage = [&](int node) { return std::min(stages - 1, ((node + 1) * upn - 1) / copies); };
  // Sender's node: its first stage's gradient leaves at boundary first - 1.
  const int n = j * copies / upn;
  const int fs = first_stage(n);
  if (c.out > 0 && fs < j && (fs > 0 || before) && (j - fs + 1) % 2 == 0) c.out *= 2;
  // Receiver's node: its last stage's gradient arrives at boundary last.
  const int m = (j + 1) * copies / upn;
  const int ls = last_stage(m);
  if (c.in > 0 && ls > j + 1 && (ls < stages - 1 || after) && (ls - j) % 2 == 0) c.in *= 2;
  return c;
}

SyncEstimate sync_estimate(const Cluster& c, const std::vector<int>& members, double bytes, int zero,
                           const TrainingSpec& training, bool overlapped) {
  if (members.size() <= 1 || bytes <= 0) return {};
  const GroupCost g = group_cost(c, members);
  const CollectiveKind reduce = zero == 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter;
  SyncEstimate e;
  const double params = bytes / grad_sync_bytes_per_param(training);
  e.buckets = overlapped ? grad_bucket_count(params, static_cast<int>(members.size())) : 1;
  e.reduce_s = collective_time(reduce, bytes, g);
  e.bucketed_reduce_s = e.buckets == 1 ? e.reduce_s : e.buckets * collective_time(reduce, bytes / e.buckets, g);
  // Both halves at the gradients' size made a BF16 plan's ZeRO-1 sync a third slower than the
  // predictor's (spot-mix llama2-7b: 1.95 s a segment for 1.46 s).
  if (zero > 0) e.gather_s = collective_time(CollectiveKind::kAllGather, bytes * zero_gather_per_grad_byte(training), g);
  return e;
}

double exposed_sync_s(const SyncEstimate& sync, double stage_s, double before_s) {
  // One hiding pass for both made the estimate a median 6% low on spot-mix's one-stage replicas
  // (gpt3-1.3b: 0.26 s exposed for the predictor's 0.17 s).
  const double backward_s = stage_s * 2.0 / 3.0, forward_s = stage_s - backward_s;
  // The gather starts the step: the stage's first forward and those of the stages before it
  // hide it (the predictor's replica_gather_delay_s).
  const double overlapped = overlapped_sync_exposed_s(sync.bucketed_reduce_s / sync.buckets, backward_s, sync.buckets) +
                            std::max(0.0, sync.gather_s - forward_s - before_s);
  return std::min(overlapped, sync.reduce_s + sync.gather_s);
}

double tied_embedding_estimate_s(const Cluster& c, const Workload& workload, int first_gpu, int tp_first,
                                 int last_gpu, int tp_last, int senders, int crossing_replicas) {
  if (first_gpu == last_gpu) return 0;
  const ModelSpec& m = workload.model;
  const int shards = std::lcm(std::max(1, tp_first), std::max(1, tp_last));
  const double bytes = static_cast<double>(m.vocab) * m.hidden * grad_sync_bytes_per_param(workload.training) / shards;
  if (bytes <= 0) return 0;
  const int za = c.nodes[c.node_of_gpu(first_gpu)].zone, zb = c.nodes[c.node_of_gpu(last_gpu)].zone;
  std::vector<double> wan;  // the pairs crossing the WAN link, by zone pair (group_cost's wan_senders)
  if (za != zb) {
    wan.assign(c.zones.size() * c.zones.size(), 0.0);
    wan[static_cast<std::size_t>(zone_pair_index(c, za, zb))] = std::max(1, crossing_replicas) * shards;
  }
  const int pair[2] = {first_gpu, last_gpu};
  return collective_time(CollectiveKind::kAllReduce, bytes,
                         group_cost(c, pair, 2, std::max(0, senders), wan.empty() ? nullptr : &wan));
}

double zero_gather_per_grad_byte(const TrainingSpec& training) {
  return activation_bytes(training.dtype) / grad_sync_bytes_per_param(training);
}

double nodes_price_per_hour(const Cluster& c, const std::vector<int>& gpus, bool spot) {
  std::set<int> nodes;
  for (int g : gpus) nodes.insert(c.node_of_gpu(g));
  double total = 0;
  for (int n : nodes) {
    const NodeType& t = c.node_types[c.nodes[n].node_type];
    total += t.price_per_hour_at(spot);
  }
  return total;
}

}  // namespace hetsim::models::planner
