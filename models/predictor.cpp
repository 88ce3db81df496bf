// SPDX-License-Identifier: Apache-2.0
// The analytic predictor: stage costs -> pipeline closed form per replica -> data-parallel
// step (slowest replica + exposed gradient sync + optimizer) -> Report. build_plan_work()
// runs the same evaluation and keeps every op for the simulator. The steps are members of
// Evaluation (predictor_evaluation.hpp), in the order run() calls them.
#include "predictor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "comm_cost.hpp"
#include "egress_cost.hpp"
#include "memory_cost.hpp"
#include "pipeline_time.hpp"
#include "predictor_evaluation.hpp"

namespace hetsim::models {

namespace {

/// Link figures of a TP group and the type it computes at, in one pass over its GPUs; a group
/// inside one node needs no ring walk, a group of one type no speed comparison.
GroupCost tp_group_cost(const Cluster& c, const std::vector<int>& gpus, const TrainingSpec& training,
                        const NodeType** type, const std::vector<NodeSenders>* senders_on_node) {
  const int node = c.gpus[gpus.front()].node;
  const int node_type = c.nodes[node].node_type;
  // GPUs are numbered node by node (Cluster::finalize), so an ascending contiguous range whose
  // ends share a node lies in that node: no per-GPU lookups needed.
  const bool contiguous = consecutive_gpus(gpus.data(), static_cast<int>(gpus.size()));
  bool one_node = true, one_type = true;
  if (!(contiguous && c.gpus[gpus.back()].node == node)) {
    for (int g : gpus) {
      const int n = c.gpus[g].node;
      one_node = one_node && n == node;
      one_type = one_type && c.nodes[n].node_type == node_type;
    }
  }
  *type = one_type ? &c.node_types[node_type] : &slowest_node_type(c, gpus, training);
  if (one_node) {
    GroupCost gc;
    gc.size = static_cast<int>(gpus.size());
    gc.nodes = 1;
    gc.min_per_node = gc.size;
    const NodeType& nt = c.node_types[node_type];
    gc.intra_bandwidth_Bps = gc.bus_bandwidth_Bps = intra_bandwidth_Bps(nt, gc.size);
    gc.intra_latency_s = gc.hop_latency_s = nt.intra.latency_s;
    return gc;
  }
  // Across nodes: each node's NICs are shared by its GPUs whose TP groups cross nodes too
  // (Evaluation::cross_node_tp_senders), each node its own count.
  return group_cost(c, gpus.data(), static_cast<int>(gpus.size()), 0, nullptr, senders_on_node);
}

}  // namespace

bool Evaluation::fail(std::string reason) {
  report.feasible = false;
  report.infeasible_reason = std::move(reason);
  if (work) {
    work->feasible = false;
    work->infeasible_reason = report.infeasible_reason;
  }
  return false;
}

bool Evaluation::run() {
  const int dp = plan.dp();
  interleave = std::max(1, plan.interleave);
  report.engine = "analytic";
  report.micro_batch = plan.micro_batch;
  if (dp == 0) return fail("plan has no replicas");
  if (std::string why = zero3_asymmetry(plan); !why.empty()) return fail(std::move(why));
  for (const Replica& r : plan.replicas) max_pp = std::max(max_pp, static_cast<int>(r.stages.size()));
  const std::size_t slots = static_cast<std::size_t>(dp) * max_pp;
  shape_of.assign(slots, -1);
  times.assign(slots, StageTimes{});
  p2p.assign(slots, StageTimes{});
  if (plan.overlap_p2p_comm) p2p_latency.assign(slots, StageTimes{}), send_delay.assign(slots, StageTimes{});
  if (interleave > 1) chunk_ends.assign(slots, ChunkEnds{});
  // Room for the few distinct shapes and paths of a plan up front: growing from empty would
  // reallocate each table several times per evaluation.
  shapes.reserve(8);
  costs.reserve(8);
  in_node_shapes.reserve(8);
  paths.reserve(4);
  p2p_times.reserve(4);
  tp_in_one_node.assign(slots, 0);

  const bool consecutive_on_a_node = find_copies(&stage_count, &gpu_count);
  // A plan that leaves GPUs idle: the GPUs of the plan on each node share its NICs (TP groups
  // that span nodes, pipeline sends and DP groups below), not every GPU of the node.
  partial = gpu_count < static_cast<int>(cluster.gpus.size());
  if (partial) {
    used_gpu.assign(cluster.gpus.size(), 0);
    for (const Replica& rep : plan.replicas)
      for (const Stage& st : rep.stages)
        for (int g : st.gpus) used_gpu[g] = 1;
    node_senders_of(cluster, used_gpu, used_senders_on_node);
    used_on_node.resize(used_senders_on_node.size());
    for (std::size_t n = 0; n < used_on_node.size(); ++n) used_on_node[n] = used_senders_on_node[n].senders;
  }

  // 1. Stage costs, deduplicated by shape.
  if (!cost_stages()) return false;
  // 2. Pipeline p2p sends.
  count_pipeline_nic_senders(consecutive_on_a_node);
  drop_copies_with_other_senders();
  count_pipeline_wan_senders();
  price_pipeline_sends();
  // 3. Per replica pipeline time.
  time_replicas();
  // 4. Data-parallel step: gradient sync, ZeRO collectives, optimizer, memory.
  const StepInput step{cluster,      workload,        plan,
                       max_pp,       shape_of,        costs,
                       times,        replica_time_s,  tp_in_one_node,
                       front_gpu,    slowest_replica, partial ? &used_on_node : nullptr, &copy_of,
                       &front_node};
  const StepCost sc = step_cost(step, work);
  if (work) record_sends(*work);
  // 5. Report.
  fill_report(sc);
  add_stage_rows(sc);
  if (!sc.memory_reason.empty()) return fail(sc.memory_reason);
  // Every input figure is bounded, but extreme ones together (a 1 FLOP/s peak under a large
  // workload) can still overflow a sum: such a plan is no result to rank or print.
  if (!std::isfinite(report.iteration_time_s))
    return fail("the iteration time overflows (not a finite number of seconds) with these GPU and link figures "
                "(expected figures of real hardware: check the catalog's or the profile's peaks and efficiencies)");
  return true;
}

bool Evaluation::cost_stages() {
  const int dp = plan.dp();
  const int max_pp = this->max_pp, v = interleave;
  const Dtype dtype = workload.training.dtype;
  for (int r = 0; r < dp; ++r) {
    const Replica& rep = plan.replicas[r];
    const int pp = static_cast<int>(rep.stages.size());
    if (copy_of[r] >= 0) {  // exact: see find_copies
      const std::size_t k0 = static_cast<std::size_t>(r) * max_pp, b0 = static_cast<std::size_t>(copy_of[r]) * max_pp;
      copy_few(&shape_of[b0], &shape_of[k0], pp);
      copy_few(&tp_in_one_node[b0], &tp_in_one_node[k0], pp);
      continue;
    }
    for (int s = 0; s < pp; ++s) {
      const Stage& st = rep.stages[s];
      // A TP group of consecutive GPUs in one node is fully described by its node type, size,
      // layers and position: stages seen before with the same key reuse their shape by ints.
      const InNodeKey in_key{cluster.nodes[front_node[r * max_pp + s]].node_type, st.tp(), st.layers / v,
                             (s == 0 ? 1 : 0) | (s == pp - 1 ? 2 : 0), -1};
      if (in_node[r * max_pp + s]) {
        // Stage s of a uniform plan matches the s-th key (pushed by the first replica): try it first.
        int hit = -1;
        if (s < static_cast<int>(in_node_shapes.size()) && in_node_shapes[s].same_stage(in_key)) hit = in_node_shapes[s].shape;
        for (std::size_t i = 0; i < in_node_shapes.size() && hit < 0; ++i)
          if (in_node_shapes[i].same_stage(in_key)) hit = in_node_shapes[i].shape;
        if (hit >= 0) {
          tp_in_one_node[r * max_pp + s] = 1;
          shape_of[r * max_pp + s] = hit;
          if (work) record_stage_ops(r, s, hit);
          continue;
        }
      }
      StageShape shape;
      shape.tp_group = tp_group_cost(cluster, st.gpus, workload.training, &shape.node_type,
                                     in_node[r * max_pp + s] ? nullptr : &cross_node_tp_senders());
      if (!shape.node_type->gpu.supports(dtype))
        return fail(std::string(shape.node_type->gpu.name) + " has no " + to_string(dtype) + " support (stage " +
                    std::to_string(s) + ")");
      shape.layers = st.layers / v;
      shape.tp = st.tp();
      shape.first = s == 0;
      shape.last = s == pp - 1;
      tp_in_one_node[r * max_pp + s] = shape.tp_group.nodes == 1;
      int idx = -1;
      for (std::size_t i = 0; i < shapes.size(); ++i)
        if (shapes[i] == shape) {
          idx = static_cast<int>(i);
          break;
        }
      if (idx < 0) {
        auto chunks = work ? std::make_shared<std::vector<ChunkWork>>() : nullptr;
        costs.push_back(stage_cost(shape, workload, plan, pp, chunks.get(), &layer_costs));
        shapes.push_back(shape);
        idx = static_cast<int>(shapes.size()) - 1;
        if (work) shape_ops.push_back(std::move(chunks));
      }
      shape_of[r * max_pp + s] = idx;
      if (work) record_stage_ops(r, s, idx);
      if (in_node[r * max_pp + s]) in_node_shapes.push_back({in_key.node_type, in_key.tp, in_key.layers, in_key.ends, idx});
    }
  }
  return true;
}

void Evaluation::record_stage_ops(int r, int s, int shape) {
  StageWork sw;
  sw.replica = r;
  sw.stage = s;
  sw.gpus = plan.replicas[r].stages[s].gpus;
  sw.chunk_ops = shape_ops[shape];
  work->replicas[r].push_back(std::move(sw));
}

/// In the steady state each pipeline boundary's tensor (the activation forward to the next stage,
/// its gradient back) crosses nodes as one flow from each rank of the sending stage to rank
/// pipeline_peer of the receiving one (price_pipeline_sends; the simulator's group_transfer), all
/// at once: they share the sending node's outgoing side of its NICs and the receiving node's
/// incoming side (full duplex, as the simulator's up and down links), each through its own GPU's
/// rail. The same boundary of the other replicas sends in step with it (a uniform plan's replicas
/// run the same schedule), so its flows through the same nodes share them too. So each send (a
/// boundary and a direction) counts its own flows per node and rail, not those of the replica's
/// other boundaries: a stage sends its activation and its gradient one after the other, and
/// different stages finish their passes at different phases of the schedule. (Counting every
/// flow through a node as concurrent, a TP-2 stage between two stages on one 25 Gb/s node sent
/// both ways at a quarter of that node's NIC where the simulator found half: 153 vs 77 ms.)
/// Approximate where two stages on one node send the same way at once: in a 1F1B steady state
/// whose forward and backward passes take alike, stage s + 1's activation and stage s's gradient
/// leave together. Not counted, that sharing makes such plans a little fast: the planner's best
/// GPT-3 6.7B plan on the 4090 + A100 cluster, whose boxes each hold two stages of every
/// replica, is predicted 4% faster than simulated (it was 11% slower with every flow counted).
/// A plan of equal TP degrees whose nodes each hold stages of one index only (the stage s of some
/// replicas) needs no counting: each of its sends out of a node leaves from every GPU of the plan
/// on it and arrives at every one, rank to rank: all of the node's GPUs when the plan uses them
/// all (path_between's default), else used_on_node; boundary_out and boundary_in stay empty.
void Evaluation::count_pipeline_nic_senders(bool consecutive_on_a_node) {
  bool mixed_tp = false;
  for (const Replica& rep : plan.replicas)
    for (int s = 0; s < static_cast<int>(rep.stages.size()) && !mixed_tp; ++s)
      if (const Stage* b = next_stage(rep, s)) mixed_tp = b->tp() != rep.stages[s].tp();
  // The interleaved schedule's steady state sends a stage's activation forward and its input's
  // gradient backward in one call (Megatron-LM send_forward_backward_recv_forward_backward), so
  // a node of one stage index still sends two boundaries at once: the lockstep figure takes them
  // together (fold_same_parity_loads), which needs the loads send by send.
  const bool two_boundaries_at_once = lockstep_parity && interleave > 1;
  if (!mixed_tp && !consecutive_on_a_node && !two_boundaries_at_once && !stages_of_several_indices_share_a_node())
    return;
  const std::size_t nodes = cluster.nodes.size();
  boundary_out.reset(2 * static_cast<std::size_t>(max_pp), nodes);
  boundary_in.reset(2 * static_cast<std::size_t>(max_pp), nodes);
  // Tensors of the current send on each rail (a flow 1/t), by the slot first_gpu + rail of the
  // rail's node, and the slots to clear before the next send.
  std::vector<double> out_on_rail(cluster.gpus.size(), 0.0), in_on_rail(cluster.gpus.size(), 0.0);
  std::vector<int> touched;
  int current = -1;
  for_each_pipeline_flow([&](int send, int from, int to, int from_tp) {
    const int na = cluster.gpus[from].node, nb = cluster.gpus[to].node;
    if (na == nb) return;  // through the node's own fabric
    if (send != current) {
      for (int slot : touched) out_on_rail[slot] = in_on_rail[slot] = 0.0;
      touched.clear();
      current = send;
    }
    const int ra = rail_slot(from), rb = rail_slot(to);
    touched.push_back(ra);
    touched.push_back(rb);
    // A GPU sends one flow per send (it is in one stage), and a receiver of lower TP than its
    // sender gets several at once: each counts, for its bytes (path_senders).
    const double tensor = 1.0 / from_tp;
    NicLoad& out = boundary_out.at(send, na);
    out.tensors += tensor;
    out.on_busiest_rail = std::max(out.on_busiest_rail, out_on_rail[ra] += tensor);
    NicLoad& in = boundary_in.at(send, nb);
    in.tensors += tensor;
    in.on_busiest_rail = std::max(in.on_busiest_rail, in_on_rail[rb] += tensor);
  });
  if (lockstep_parity) fold_same_parity_loads();
}

/// Whether a node holds stages of two indices (of one replica or of two): then its GPUs do not all
/// send at once, and count_pipeline_nic_senders counts them send by send.
bool Evaluation::stages_of_several_indices_share_a_node() const {
  std::vector<int> index_on_node(cluster.nodes.size(), -1);
  const auto holds = [&](int node, int s) {
    int& i = index_on_node[node];
    if (i >= 0 && i != s) return true;
    i = s;
    return false;
  };
  for (int r = 0; r < plan.dp(); ++r) {
    const Replica& rep = plan.replicas[r];
    for (int s = 0; s < static_cast<int>(rep.stages.size()); ++s) {
      const std::size_t k = static_cast<std::size_t>(r) * max_pp + s;
      if (in_node[k]) {  // consecutive GPUs of one node (find_copies)
        if (holds(front_node[k], s)) return true;
        continue;
      }
      for (int g : rep.stages[s].gpus)
        if (holds(cluster.gpus[g].node, s)) return true;
    }
  }
  return false;
}

int Evaluation::path_index(int ga, int gb, int send, int sender_tp) {
  // Paths between nodes of the same types and zones, with the same senders, have the same
  // figures: reuse them.
  const int na = cluster.gpus[ga].node, nb = cluster.gpus[gb].node;
  const auto [sending, receiving] = path_senders(send, na, nb, sender_tp);
  const int za = cluster.nodes[na].zone, zb = cluster.nodes[nb].zone;
  const int zones = static_cast<int>(cluster.zones.size());
  // A flow carries 1/sender_tp of the tensor: its share of the link is that over the tensors
  // crossing it (count_pipeline_wan_senders), as senders of its own size.
  const int wan =
      za == zb ? 0 : flows_of_size(boundary_wan[(static_cast<std::size_t>(send) * zones + za) * zones + zb], sender_tp);
  const PathKey key{cluster.nodes[na].node_type, cluster.nodes[nb].node_type, za, zb, na == nb ? 1 : 0, sending, receiving, wan};
  for (std::size_t i = 0; i < paths.size(); ++i)
    if (paths[i].first == key) return static_cast<int>(i);
  paths.emplace_back(key, path_between(cluster, ga, gb, sending, receiving, wan));
  return static_cast<int>(paths.size()) - 1;
}

/// Boundaries between zones: the flows of a send that cross the WAN link between two zones share
/// it with those of the same boundary of every replica crossing it the same way (in step, as on
/// the NICs: count_pipeline_nic_senders), one flow per rank of the sending stage, each with 1/t of
/// the tensor. The link carries each direction at its rate (the simulator's two links per zone
/// pair), and a replica's other boundaries send at other times. Shared by the bytes crossing it
/// (the tensors, a flow counting 1/t), so that all end together as under max-min sharing: by flow
/// count a TP-1 stage's one flow beside a TP-8 stage's eight got a ninth of the link for half its
/// bytes (14 ms a send for the simulator's 3 ms). (All boundaries of a plan counted as one, a
/// pipeline crossing the WAN three times, with TP 1, 8, 2, 1, priced its TP-1 stage's one flow at
/// 1/16 of the link: 55 ms a send where the simulator took 31.6 ms, of which 30 ms the WAN's latency.)
void Evaluation::count_pipeline_wan_senders() {
  const int zones = static_cast<int>(cluster.zones.size());
  if (zones < 2) return;
  boundary_wan.assign(2 * static_cast<std::size_t>(max_pp) * zones * zones, 0.0);
  const auto zone_of = [&](int gpu) { return cluster.nodes[cluster.gpus[gpu].node].zone; };
  for_each_pipeline_flow([&](int send, int from, int to, int from_tp) {
    const int za = zone_of(from), zb = zone_of(to);
    if (za != zb) boundary_wan[(static_cast<std::size_t>(send) * zones + za) * zones + zb] += 1.0 / from_tp;
  });
}

/// Each TP rank sends its 1/t slice of the boundary activation (Megatron-LM scatter-gather
/// optimisation, Narayanan et al. SC'21 §4.1) to the same rank of the next stage, and the
/// gradient comes back the same way. Between stages of different TP degrees each rank of the
/// sending stage still sends its 1/t slice (with sequence parallelism it holds no more) to rank
/// pipeline_peer of the receiving stage, so the whole tensor crosses once in each direction, split
/// over the sender's t ranks (the simulator's flows, sim/stage_flows.cpp transfer, are the same). Each
/// send is priced on its own boundary's NIC and WAN counts (count_pipeline_nic_senders).
void Evaluation::price_pipeline_sends() {
  const ModelSpec& m = workload.model;
  boundary_bytes = boundary_activation_bytes(m, plan.micro_batch, workload.training.dtype);
  const int max_pp = this->max_pp, v = interleave;
  for (int r = 0; r < plan.dp(); ++r) {
    const Replica& rep = plan.replicas[r];
    const int pp = static_cast<int>(rep.stages.size());
    if (pp < 2) continue;
    if (copy_of[r] >= 0) {  // exact: see find_copies
      copy_few(&p2p[copy_of[r] * max_pp], &p2p[r * max_pp], pp);
      if (plan.overlap_p2p_comm) copy_few(&p2p_latency[copy_of[r] * max_pp], &p2p_latency[r * max_pp], pp);
      continue;
    }
    for (int s = 0; s < pp; ++s) {
      const Stage* next = next_stage(rep, s);
      if (!next) continue;
      const bool wrap = s == pp - 1;  // interleaved: the last stage hands chunks back to the first
      const Stage& a = rep.stages[s];
      const Stage& b = *next;
      const int ga = a.gpus.front(), gb = b.gpus.front();
      const int forward = path_index(ga, gb, 2 * s, a.tp()), backward = path_index(gb, ga, 2 * s + 1, b.tp());
      const P2pTime* t = nullptr;
      for (const P2pTime& pt : p2p_times)
        if (pt.path_forward == forward && pt.path_backward == backward && pt.tp_a == a.tp() && pt.tp_b == b.tp()) t = &pt;
      if (!t) {
        p2p_times.push_back(
            {forward, backward, a.tp(), b.tp(),
             p2p_time(boundary_bytes / a.tp(), staged_send_path(cluster, ga, gb, a.tp(), b.tp(), paths[forward].second)),
             p2p_time(boundary_bytes / b.tp(), staged_send_path(cluster, gb, ga, b.tp(), a.tp(), paths[backward].second))});
        t = &p2p_times.back();
      }
      const double sends = wrap ? v - 1 : v;
      p2p[r * max_pp + s].forward_s += sends * t->forward_s;
      p2p[r * max_pp + (wrap ? 0 : s + 1)].backward_s += sends * t->backward_s;
      if (plan.overlap_p2p_comm) {
        p2p_latency[r * max_pp + s].forward_s += sends * paths[forward].second.latency_s;
        p2p_latency[r * max_pp + (wrap ? 0 : s + 1)].backward_s += sends * paths[backward].second.latency_s;
      }
    }
  }
}

namespace {

/// Interleaved: how many of stage s's v chunks send a micro-batch's activation on (all but the
/// last stage's last) and its gradient back (all but the first stage's first; the chunks'
/// boundaries wrap from the last stage to the first).
struct ChunkSenders {
  int forward, backward;
};
ChunkSenders chunk_senders(int s, int pp, int v) { return {s == pp - 1 ? v - 1 : v, s == 0 ? v - 1 : v}; }

/// Interleaved: stage s's first and last chunk a micro-batch, each with its sends: the stage's
/// sends `sends` split evenly over the chunks that send (chunk_senders).
ChunkEnds chunk_ends_of(const StageCost& c, const StageTimes& sends, int s, int pp, int v, bool overlapped) {
  const ChunkSenders senders = chunk_senders(s, pp, v);
  const auto chunk = [&](const StageTimes& walls, bool sends_forward, bool sends_backward) {
    return StageTimes{with_sends(walls.forward_s, sends_forward ? sends.forward_s / senders.forward : 0, overlapped),
                      with_sends(walls.backward_s, sends_backward ? sends.backward_s / senders.backward : 0, overlapped)};
  };
  return {chunk(c.first_chunk, true, s > 0), chunk(c.last_chunk, s < pp - 1, true)};
}

}  // namespace

/// Each replica's stage times (compute and its sends, with_sends) and its pipeline's closed
/// form (pipeline_time); the slowest replica sets the pace.
void Evaluation::time_replicas() {
  const int dp = plan.dp();
  const int max_pp = this->max_pp, v = interleave;
  double slowest_s = 0;
  double previous_t = 0, previous_min_pace_s = 0;
  replica_time_s.assign(dp, 0);
  for (int r = 0; r < dp; ++r) {
    const int pp = static_cast<int>(plan.replicas[r].stages.size());
    if (copy_of[r] >= 0) {  // exact: see find_copies; equal to base's time, so never slower
      copy_few(&times[copy_of[r] * max_pp], &times[r * max_pp], pp);
      if (v > 1) std::copy_n(&chunk_ends[copy_of[r] * max_pp], pp, &chunk_ends[r * max_pp]);
      previous_t = replica_time_s[r] = replica_time_s[copy_of[r]];
      continue;
    }
    for (int s = 0; s < pp; ++s) {
      const std::size_t k = r * max_pp + s;
      const StageCost& c = costs[shape_of[k]];
      // Sends beside the compute occupy the link for their bytes; their latency only delays
      // the receiver (interleaved_latency_pace below).
      const StageTimes occupied = plan.overlap_p2p_comm
                                      ? StageTimes{p2p[k].forward_s - p2p_latency[k].forward_s,
                                                   p2p[k].backward_s - p2p_latency[k].backward_s}
                                      : p2p[k];
      times[k].forward_s = with_sends(c.forward.wall_s(), occupied.forward_s, plan.overlap_p2p_comm);
      times[k].backward_s = with_sends(c.backward.wall_s(), occupied.backward_s, plan.overlap_p2p_comm);
      if (v > 1) chunk_ends[k] = chunk_ends_of(c, occupied, s, pp, v, plan.overlap_p2p_comm);
    }
    const double min_pace_s =
        plan.overlap_p2p_comm ? interleaved_latency_pace(&times[r * max_pp], &p2p_latency[r * max_pp], pp) : 0;
    // Sends beside the compute: the schedule waits for each to arrive. A chunk's send leaves when
    // its compute c is done and lasts its bytes b: it arrives b + latency after a pass that the
    // compute paces (c >= b), c + latency after one its link paces (the pass then lasts b).
    StageTimes* delay = nullptr;
    if (plan.overlap_p2p_comm && v > 1) {
      delay = &send_delay[r * max_pp];
      for (int s = 0; s < pp; ++s) {
        const std::size_t k = r * max_pp + s;
        const StageCost& c = costs[shape_of[k]];
        const ChunkSenders senders = chunk_senders(s, pp, v);
        const auto one = [&](double sends_s, double latency_s, double compute_s, int count) {
          return count > 0 ? (latency_s + std::min(sends_s - latency_s, compute_s * count / v)) / count : 0.0;
        };
        delay[s] = {one(p2p[k].forward_s, p2p_latency[k].forward_s, c.forward.wall_s(), senders.forward),
                    one(p2p[k].backward_s, p2p_latency[k].backward_s, c.backward.wall_s(), senders.backward)};
      }
    }
    // A replica whose stage times, depth and micro-batch count equal the previous one's has
    // the same pipeline time (the usual case of a uniform plan): no need to evaluate it again.
    const bool same_as_previous =
        r > 0 && pp == static_cast<int>(plan.replicas[r - 1].stages.size()) &&
        plan.replicas[r].micro_batches == plan.replicas[r - 1].micro_batches &&
        std::equal(&times[r * max_pp], &times[r * max_pp] + pp, &times[(r - 1) * max_pp]) &&
        (v == 1 || std::equal(&chunk_ends[r * max_pp], &chunk_ends[r * max_pp] + pp, &chunk_ends[(r - 1) * max_pp])) &&
        (!delay || std::equal(delay, delay + pp, &send_delay[(r - 1) * max_pp])) && min_pace_s == previous_min_pace_s;
    previous_min_pace_s = min_pace_s;
    const double t = same_as_previous
                         ? previous_t
                         : pipeline_time(&times[r * max_pp], pp, plan.replicas[r].micro_batches, v, plan.schedule, min_pace_s,
                                         v > 1 ? &chunk_ends[r * max_pp] : nullptr, delay);
    previous_t = replica_time_s[r] = t;
    if (t > slowest_s) {
      slowest_s = t;
      slowest_replica = r;
    }
  }
}

/// The simulator's per-send figures: each stage's sends per chunk pass.
void Evaluation::record_sends(PlanWork& w) const {
  for (auto& stages : w.replicas)
    for (StageWork& sw : stages) {
      const std::size_t k = sw.replica * max_pp + sw.stage;
      const int tp = static_cast<int>(sw.gpus.size());
      sw.activation_send_bytes = boundary_bytes / tp;
      sw.p2p_forward_s = p2p[k].forward_s / interleave;  // p2p sums the chunks' sends
      sw.p2p_backward_s = p2p[k].backward_s / interleave;
    }
}

/// Iteration time, its breakdown along the slowest replica's bottleneck stage, throughput,
/// utilisation and price.
void Evaluation::fill_report(const StepCost& sc) {
  const ModelSpec& m = workload.model;
  const double slowest_replica_s = replica_time_s[slowest_replica];
  // The critical path runs through the replica that paces the step: the slowest, or the one the
  // weights' gathers that start the step delay most (StepCost::paced_replica), whose wait and
  // the rest of the step beyond its pipeline are DP time (as the simulator's breakdown).
  const int paced = sc.paced_replica >= 0 ? sc.paced_replica : slowest_replica;
  const double paced_replica_s = replica_time_s[paced];
  const int pp_slow = static_cast<int>(plan.replicas[paced].stages.size());
  const StageTimes* st = &times[paced * max_pp];
  const int bn = bottleneck_stage(st, pp_slow);
  const StageCost& bc = costs[shape_of[paced * max_pp + bn]];
  const double mb = plan.replicas[paced].micro_batches;
  Breakdown& br = report.breakdown;
  br.compute_s = mb * (bc.forward.gpu_s + bc.forward.stall_s + bc.backward.gpu_s + bc.backward.stall_s);
  br.tp_comm_s = mb * (bc.forward.tp_comm_s + bc.backward.tp_comm_s);
  // The sends' exposed part: all of them, or what exceeds the compute when overlapped (with_sends).
  br.pp_comm_s = mb * ((st[bn].forward_s - bc.forward.wall_s()) + (st[bn].backward_s - bc.backward.wall_s()));
  // An interleaved makespan sums the bottleneck's chunk passes one by one: rounding can leave it
  // a few ulps under m x the stage's total (a bubble of "-0.000").
  br.bubble_s = std::max(0.0, paced_replica_s - mb * st[bn].total());
  if (br.bubble_s < 1e-9 * paced_replica_s) br.bubble_s = 0;
  br.dp_comm_s = sc.dp_exposed_s + (slowest_replica_s - paced_replica_s);
  br.optimizer_s = sc.optimizer_s;
  report.iteration_time_s = slowest_replica_s + sc.dp_exposed_s + sc.optimizer_s;

  const double global = plan.global_batch();
  const double tokens = global * m.seq_len;
  report.samples_per_s = global / report.iteration_time_s;
  report.tokens_per_s = tokens / report.iteration_time_s;
  const double model_flop = m.flops_per_token() * tokens;
  report.tflops_per_gpu = model_flop / report.iteration_time_s / gpu_count / 1e12;
  report.mfu = model_flop / report.iteration_time_s / sc.peak_sum_flops;
  report.hfu = sc.hardware_flop / report.iteration_time_s / sc.peak_sum_flops;
  report.memory_peak_bytes = sc.memory_peak_bytes;
  report.cost_per_hour = sc.cost_per_hour;
  if (!cluster.links.empty()) {  // traffic between zones pays its links' egress price
    const int dp = plan.dp();
    std::vector<double> params(static_cast<std::size_t>(dp) * max_pp, 0.0);
    for (int r = 0; r < dp; ++r)
      for (int s = 0; s < static_cast<int>(plan.replicas[r].stages.size()); ++s)
        params[static_cast<std::size_t>(r) * max_pp + s] = costs[shape_of[r * max_pp + s]].params;
    const double egress_dollars = egress_dollars_per_step(cluster, workload, plan, params, max_pp, boundary_bytes);
    report.extra["egress_dollars_per_step"] = egress_dollars;  // an engine with another step time reprices it
    report.cost_per_hour += egress_dollars / report.iteration_time_s * 3600.0;
  }
  report.cost_per_million_tokens = cost_per_million_tokens(report.cost_per_hour, report.tokens_per_s);
}

/// One StageReport per stage of every replica. Built in place: a StageReport moved into the
/// vector copies its string's inline buffer, and resize() would first write every element with
/// defaults in a pass of its own.
void Evaluation::add_stage_rows(const StepCost& sc) {
  const int dp = plan.dp();
  report.stages.reserve(stage_count);
  first_row.assign(dp, 0);
  for (int r = 0; r < dp; ++r) {
    const Replica& rep = plan.replicas[r];
    const int pp = static_cast<int>(rep.stages.size());
    first_row[r] = static_cast<int>(report.stages.size());
    if (copy_of[r] >= 0) {  // exact: see find_copies (step_cost copies the memory figures too)
      for (int s = 0; s < pp; ++s) report.stages.emplace_back(report.stages[first_row[copy_of[r]] + s]).replica = r;
      continue;
    }
    for (int s = 0; s < pp; ++s) {
      const std::size_t k = r * max_pp + s;
      StageReport& sr = report.stages.emplace_back();
      sr.replica = r;
      sr.stage = s;
      // A TP group across nodes may mix types: name them all ("a+b", in the group's order).
      sr.gpu_type = tp_in_one_node[k] ? shapes[shape_of[k]].node_type->gpu.name
                                      : cluster.gpu_types_label(rep.stages[s].gpus);
      sr.layers = rep.stages[s].layers;
      sr.tp = rep.stages[s].tp();
      sr.forward_s = times[k].forward_s;
      sr.backward_s = times[k].backward_s;
      sr.memory_bytes = sc.stage_memory_bytes[k];
      sr.memory_capacity_bytes = sc.stage_capacity_bytes[k];
    }
  }
}

PlanWork build_plan_work(const Cluster& cluster, const Workload& workload, const Plan& plan) {
  PlanWork work;
  work.replicas.assign(plan.replicas.size(), {});
  Evaluation ev(cluster, workload, plan, &work);
  ev.run();
  return work;
}

Report predict(const Cluster& cluster, const Workload& workload, const Plan& plan) {
  Evaluation ev(cluster, workload, plan, nullptr);
  ev.run();
  return std::move(ev.report);
}

}  // namespace hetsim::models
